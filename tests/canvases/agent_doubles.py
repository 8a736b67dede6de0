"""Test doubles of the plugin's writers, written from the format spec (§2, §4.6, §4.8, §5).

Checked against the plugin's `src/offload/storage.ts` (`patchMmd`, `writeMmd`,
`updateOffloadNodeIds` → `rewriteAllOffloadEntries`, `markOffloadStatus`) and
`state-manager.ts`; no code of it is copied. Every write is a plain non-atomic write, as the
plugin's are. No network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

CST = timezone(timedelta(hours=8))


def now_stamp(seconds_ago: float = 0) -> str:
    """`nowChinaISO()`: +08:00 with milliseconds."""
    moment = datetime.now(CST) - timedelta(seconds=seconds_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+08:00"


def _dump(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))  # JSON.stringify


@dataclass
class Block:
    """One replace block of an L2 reply: 1-based inclusive lines; end < start inserts."""

    start: int
    end: int
    content: str


class FakeAgent:
    """One live session of the agent: its L1 appends, L2 claims/replies/backfill, L3 marks."""

    def __init__(self, folder: Path, session_id: str) -> None:
        self.folder = folder
        self.session_file = folder / f"offload-{session_id}.jsonl"
        self.counter = 0
        # read once when the session manager is created, written back whole (spec §5)
        state = folder / "state.json"
        self.state = json.loads(state.read_text("utf-8")) if state.exists() else {}

    # ---- L1 -----------------------------------------------------------------------------
    def append_rows(self, count: int, *, node_id: str | None = None) -> list[str]:
        ids = []
        lines = []
        for _ in range(count):
            self.counter += 1
            call_id = f"call_live_{self.counter:04d}"
            ids.append(call_id)
            row = {
                "tool_call_id": call_id,
                "tool_call": f"exec(step {self.counter})",
                "summary": f"step {self.counter} ran",
                "timestamp": now_stamp(),
                "score": 6,
                "node_id": node_id,
            }
            lines.append(_dump(row) + "\n")
        with self.session_file.open("a", encoding="utf-8") as handle:  # appendFile
            handle.write("".join(lines))
        return ids

    # ---- the rewrite of every offload file (rewriteAllOffloadEntries) ---------------------
    def _rewrite_all(self, change: dict[str, Any], key: str) -> None:
        for path in sorted(self.folder.glob("offload-*.jsonl")):
            rows = [json.loads(x) for x in path.read_text("utf-8").split("\n") if x.strip()]
            for row in rows:
                if row.get("tool_call_id") in change:
                    row[key] = change[row["tool_call_id"]]
            text = "\n".join(_dump(r) for r in rows) + ("\n" if rows else "")
            path.write_text(text, "utf-8")  # writeFile, every file, changed or not

    def claim(self, ids: list[str]) -> None:
        """L2 marks the rows `wait` before its LLM call (the map-builder window opens)."""
        self._rewrite_all(dict.fromkeys(ids, "wait"), "node_id")

    def backfill(self, mapping: dict[str, str]) -> None:
        """`backfillNodeIds` / `updateOffloadNodeIds`: every row with the exact id."""
        self._rewrite_all(mapping, "node_id")

    # ---- L2 replies ---------------------------------------------------------------------
    def snapshot(self, mmd: str) -> str:
        return (self.folder / "mmds" / mmd).read_text("utf-8")

    def write_mode(self, mmd: str, content: str) -> None:
        """`writeMmd`: the whole file, trimmed fenced content."""
        (self.folder / "mmds" / mmd).write_text(content.strip(), "utf-8")

    def replace_mode(self, mmd: str, blocks: list[Block]) -> bool:
        """`patchMmd`: re-read at patch time, bottom-up splice, out-of-range blocks skipped."""
        path = self.folder / "mmds" / mmd
        original = path.read_text("utf-8")
        lines = original.split("\n")
        all_valid = True
        for block in sorted(blocks, key=lambda b: b.start, reverse=True):
            if block.start < 1 or block.start > len(lines) + 1:
                all_valid = False
                continue
            new = block.content.split("\n") if block.content else []
            if block.end < block.start:
                lines[block.start - 1 : block.start - 1] = new
            else:
                end = min(block.end, len(lines))
                lines[block.start - 1 : end] = new
        text = "\n".join(lines)
        if text != original:
            path.write_text(text, "utf-8")
        return all_valid

    # ---- L3 and state -------------------------------------------------------------------
    def mark_offload_status(self, updates: dict[str, Any]) -> None:
        """`markOffloadStatus`: this session's file, rewritten when a value differs."""
        rows = [json.loads(x) for x in self.session_file.read_text("utf-8").split("\n") if x.strip()]
        changed = False
        for row in rows:
            value = updates.get(row["tool_call_id"])
            if value is not None and row.get("offloaded") != value:
                row["offloaded"] = value
                changed = True
        if changed:
            self.session_file.write_text("\n".join(_dump(r) for r in rows) + "\n", "utf-8")

    def save_state(self, **values: Any) -> None:
        """The session's in-memory state written whole (2-space JSON, no final newline)."""
        self.state.update(values)
        text = json.dumps(self.state, indent=2, ensure_ascii=False)
        (self.folder / "state.json").write_text(text, "utf-8")
