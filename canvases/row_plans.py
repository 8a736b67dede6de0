"""What an edit does to the agent's offload rows, and how that is mirrored in the index.

A merge re-points the rows of the merged-away nodes (`forward`); a prune with "drop from
context" marks its rows `offloaded: "deleted"` (`forward`); an undo of either puts back exactly
what was recorded (`restore`). Each plan gives one editor per offload file (`agentfs`'s
row editors) and is idempotent, so a journaled write that died part-way can run it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfs.layout import offload_files
from agentfs.remap import Editor
from agentfs.row_edits import ABSENT, RecordingEditor, RowEditor, RowRestorer
from agentfs.row_fields import alias_map, aliases_of_all, offloaded_text
from sessions.models import AgentSession, Row

INDEX_CHUNK = 500


@dataclass
class RowPlan:
    kind: str  # "forward" | "restore"
    node_map: dict[str, str]
    mark_deleted: list[str]
    # file name -> {line number: [tool_call_id, original node_id, original offloaded]}
    rows: dict[str, dict] = field(default_factory=dict)
    editors: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def forward(cls, node_map: dict[str, str], deleted: set[str]) -> RowPlan | None:
        if not node_map and not deleted:
            return None
        return cls("forward", alias_map(node_map), sorted(aliases_of_all(deleted)))

    @classmethod
    def restore(cls, remaps: dict[str, Any]) -> RowPlan | None:
        rows = remaps.get("rows") or {}
        if not rows:
            return None
        return cls(
            "restore",
            dict(remaps.get("node_map") or {}),
            list(remaps.get("mark_deleted") or []),
            rows={name: dict(recorded) for name, recorded in rows.items()},
        )

    def files(self, agent_dir: Path) -> list[Path]:
        if self.kind == "forward":
            return offload_files(agent_dir)
        return [agent_dir / name for name in sorted(self.rows) if "/" not in name]

    def editor(self, path: Path) -> Editor:
        """The editor of one file (kept, so a recording editor's notes can be read back)."""
        if self.kind == "forward":
            editor: Any = RecordingEditor(self.node_map, set(self.mark_deleted))
        else:
            editor = RowRestorer(self.rows.get(path.name, {}), self.node_map, set(self.mark_deleted))
        self.editors[path.name] = editor
        return editor

    def replay_editor(self, path: Path) -> Editor:
        """An editor that completes an interrupted run without re-recording what it changes."""
        if self.kind == "forward":
            return RowEditor(self.node_map, set(self.mark_deleted))
        return RowRestorer(self.rows.get(path.name, {}), self.node_map, set(self.mark_deleted))

    def collect(self) -> None:
        """After a forward run: keep what each file's recording editor noted."""
        if self.kind != "forward":
            return
        for name, editor in self.editors.items():
            if editor.recorded:
                self.rows[name] = {str(k): v for k, v in sorted(editor.recorded.items())}

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "node_map": self.node_map,
            "mark_deleted": self.mark_deleted,
            "rows": self.rows,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RowPlan:
        return cls(data["kind"], data["node_map"], data["mark_deleted"], rows=data["rows"])

    def remaps(self, rows_changed: int) -> dict[str, Any]:
        """What a revision keeps of a forward run: enough to undo it exactly."""
        return {
            "node_map": self.node_map,
            "mark_deleted": self.mark_deleted,
            "rows": self.rows,
            "rows_changed": rows_changed,
            "files": sorted(self.rows),
        }


def rows_index_apply(agent_pk: int, plan: RowPlan) -> None:
    """Mirror a plan's file edits in the Row index, a few queries per node and file.

    The watcher re-reads the rewritten files afterwards anyway; this keeps the pages right
    in the meantime (and rows appended since the last ingest are not in the index yet).
    """
    if plan.kind == "forward":
        for old, new in plan.node_map.items():  # every row of `old` moved, recorded or not
            Row.objects.filter(agent_id=agent_pk, node_id=old).update(node_id=new)
        if plan.mark_deleted:
            Row.objects.filter(agent_id=agent_pk, node_id__in=plan.mark_deleted).update(
                offloaded="deleted"
            )
        return
    sessions = dict(AgentSession.objects.filter(agent_id=agent_pk).values_list("relpath", "pk"))
    deleted = set(plan.mark_deleted)
    for name, recorded in plan.rows.items():
        groups: dict[tuple[tuple[str, str], ...], list[tuple[int | None, str]]] = {}
        for key, (tool_call_id, node_id, offloaded) in recorded.items():
            values = {}
            if node_id in plan.node_map:
                values["node_id"] = node_id
            if node_id in deleted and offloaded != "deleted":
                values["offloaded"] = offloaded_text(None if offloaded == ABSENT else offloaded)
            line = int(key) if str(key).isdigit() else None
            groups.setdefault(tuple(sorted(values.items())), []).append((line, tool_call_id))
        for values_key, rows in groups.items():
            if not values_key:
                continue
            lines = [line for line, _ in rows if line is not None]
            legacy = [tool_call_id for line, tool_call_id in rows if line is None]
            session_pk = sessions.get(name)
            for start in range(0, len(lines), INDEX_CHUNK):
                if session_pk is not None:
                    Row.objects.filter(
                        session_id=session_pk, line_no__in=lines[start : start + INDEX_CHUNK]
                    ).update(**dict(values_key))
            for start in range(0, len(legacy), INDEX_CHUNK):
                Row.objects.filter(
                    agent_id=agent_pk, tool_call_id__in=legacy[start : start + INDEX_CHUNK]
                ).update(**dict(values_key))
