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

from reviews.page_types import QueueItemJson
from sessions.page_types import Evidence, FindingJson


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

    def as_json(self) -> QueueItemJson:
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


def _item(kind: str, evidence: Evidence) -> QueueItem:
    if "rows" in evidence:  # a loop: where it starts names it
        first = evidence["rows"][0]
        call = evidence["tool_call"]
        key = _digest(kind, first["session"], call, first["line_no"])
        # more repeats of the same loop is a new diagnosis
        fingerprint = _digest(evidence["repeats"], [r["line_no"] for r in evidence["rows"]])
        return QueueItem(
            key, fingerprint, kind, first["session"], first["line_no"], first["row"], "", "", call
        )
    if "canvas" in evidence:
        canvas, node_id, args = evidence["canvas"], evidence.get("node_id", ""), evidence["detail_args"]
        # over budget stays one diagnosis while the canvas stays over; a stuck node's is its
        # status and since when
        fingerprint = _digest(evidence["detail_code"], args.get("status"), args.get("stamp"))
        return QueueItem(
            _digest(kind, canvas, node_id),
            fingerprint,
            kind,
            "",
            None,
            None,
            canvas,
            node_id,
            evidence["detail"],
        )
    session, line_no = evidence["session"], evidence["line_no"]
    detail = evidence.get("detail_code") or evidence["detail"]
    fingerprint = _digest(detail, evidence["node_id"], evidence["tool_call"])
    return QueueItem(
        _digest(kind, session, line_no),
        fingerprint,
        kind,
        session,
        line_no,
        evidence["row"],
        "",
        evidence["node_id"] or "",
        evidence["tool_call"] or evidence["detail"],
    )


def queue_items(findings: Iterable[FindingJson]) -> list[QueueItem]:
    """Every evidence item of ``findings`` (``Finding.as_json()``), once each, in their order."""
    seen: dict[str, QueueItem] = {}
    for finding in findings:
        for evidence in finding["evidence"]:
            item = _item(finding["kind"], evidence)
            seen.setdefault(item.key, item)
    return list(seen.values())


def open_items(
    items: Iterable[QueueItem], decisions: Mapping[str, tuple[str, str]]
) -> list[QueueItem]:
    """The items still to look at: ``decisions`` maps a key to (state, fingerprint decided on)."""
    return [i for i in items if decisions.get(i.key, ("", ""))[1] != i.fingerprint]
