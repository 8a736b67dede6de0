"""The review queue: each piece of diagnosis evidence becomes one item to look at.

Plain Python. An item's ``key`` names what it is about (the kind and the row, loop or node);
its ``fingerprint`` names what was diagnosed there. A done or skipped item stays out of the
queue while its fingerprint is the one it was decided on, and comes back when it changes.
The queue is computed on every read, never stored: only the decisions are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class QueueItem:
    key: str
    fingerprint: str
    kind: str
    session: str  # "" for canvas-wide items
    line_no: int | None
    row_id: int | None  # the row's index id, for its #row- anchor (not part of the key)
    canvas: str
    node_id: str
    summary: str  # the tool call, or the detail, shown as the item's text

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fingerprint": self.fingerprint,
            "kind": self.kind,
            "session": self.session,
            "line_no": self.line_no,
            "canvas": self.canvas,
            "node_id": self.node_id,
            "summary": self.summary,
        }


def _digest(*parts: object) -> str:
    text = json.dumps(parts, ensure_ascii=False, default=str)
    return hashlib.blake2s(text.encode(), digest_size=16).hexdigest()


def _item(kind: str, evidence: Mapping[str, Any]) -> QueueItem:
    detail = evidence.get("detail_code") or evidence.get("detail") or ""
    if kind == "loop":
        rows = evidence.get("rows") or [{}]
        first = rows[0]
        call = str(evidence.get("tool_call", ""))
        key = _digest(kind, first.get("session"), call, first.get("line_no"))
        # more repeats of the same loop is a new diagnosis
        fingerprint = _digest(evidence.get("repeats"), [r.get("line_no") for r in rows])
        return QueueItem(
            key,
            fingerprint,
            kind,
            str(first.get("session", "")),
            first.get("line_no"),
            first.get("row"),
            "",
            "",
            call,
        )
    if "canvas" in evidence:
        canvas, node_id = str(evidence["canvas"]), str(evidence.get("node_id") or "")
        args = evidence.get("detail_args") or {}
        # over budget stays one diagnosis while the canvas stays over; a stuck node's is its
        # status and since when
        fingerprint = _digest(detail, args.get("status"), args.get("stamp"))
        return QueueItem(
            _digest(kind, canvas, node_id),
            fingerprint,
            kind,
            "",
            None,
            None,
            canvas,
            node_id,
            str(evidence.get("detail", "")),
        )
    session, line_no = str(evidence.get("session", "")), evidence.get("line_no")
    fingerprint = _digest(detail, evidence.get("node_id"), evidence.get("tool_call"))
    return QueueItem(
        _digest(kind, session, line_no),
        fingerprint,
        kind,
        session,
        line_no,
        evidence.get("row"),
        "",
        str(evidence.get("node_id") or ""),
        str(evidence.get("tool_call") or evidence.get("detail") or ""),
    )


def queue_items(findings: Iterable[Mapping[str, Any]]) -> list[QueueItem]:
    """Every evidence item of ``findings`` (``Finding.as_json()``), once each, in their order."""
    seen: dict[str, QueueItem] = {}
    for finding in findings:
        for evidence in finding.get("evidence", ()):
            item = _item(str(finding["kind"]), evidence)
            seen.setdefault(item.key, item)
    return list(seen.values())


def open_items(
    items: Iterable[QueueItem], decisions: Mapping[str, tuple[str, str]]
) -> list[QueueItem]:
    """The items still to look at: ``decisions`` maps a key to (state, fingerprint decided on)."""
    return [i for i in items if decisions.get(i.key, ("", ""))[1] != i.fingerprint]
