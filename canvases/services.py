"""The one write path of canvas curation: edit, undo/redo, restore, re-apply and resume.

Every change goes file first (atomic write with a hash precondition, then the JSONL remap), then
the index (`canvas_apply_text`, `Row.node_id`), then a `Revision`. A refused edit writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from canvases.indexing import canvas_apply_text, canvas_index_file, parsed, revision_record
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import EditError, EditResult, content_hash, edits
from canvases.models import Canvas, Revision
from sessions.ingest import _offloaded_text
from sessions.memory import remap
from sessions.memory.atomic import PreconditionFailed, lock_folder, write_atomic
from sessions.memory.paths import confine
from sessions.memory.state_edit import (
    CANVAS_BUDGET_CHARS,
    estimate_tokens,
    resume_block,
    set_active_canvas,
)
from sessions.models import Agent, Row

EDIT_OPS = (
    "merge",
    "annotate",
    "prune",
    "set_status",
    "edit",
    "add_edge",
    "remove_edge",
    "set_meta",
    "repair",
)
OP_FIELDS = {
    "merge": ("nodes", "into", "label", "summary", "status"),
    "annotate": ("node", "text"),
    "prune": ("node", "bridge", "drop_from_context"),
    "set_status": ("node", "status"),
    "edit": ("node", "title", "summary"),
    "add_edge": ("source", "target", "label"),
    "remove_edge": ("source", "target"),
    "set_meta": ("task_goal", "progress"),
    "repair": (),
}
HISTORY_OPS = ("undo", "redo", "restore", "reapply", "adopt")
OPS = EDIT_OPS + HISTORY_OPS
LIVE_WINDOW = timedelta(minutes=2)
AGENT_AUTHOR = "agent"


class EditRefused(Exception):
    """A bad request (unknown node, empty merge, vanished file…); nothing was written."""

    status = 400


class EditConflict(EditRefused):
    """The file changed on disk since the edit's base and the edit does not re-apply cleanly."""

    status = 409

    def __init__(self, message: str, current_hash: str | None = None) -> None:
        super().__init__(message)
        self.current_hash = current_hash


@dataclass
class EditOutcome:
    revision: Revision
    hash: str
    text: str
    reapplied: bool = False
    rows_changed: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "hash": self.hash,
            "revision": self.revision.number,
            "op": self.revision.op,
            "reapplied_on_newer_text": self.reapplied,
            "rows_changed": self.rows_changed,
            "warnings": self.warnings,
            "text": self.text,
        }


# ---------------------------------------------------------------------------------------------
# paths and disk


def canvas_file(canvas: Canvas) -> Path:
    return confine(Path(canvas.agent.path), f"mmds/{canvas.filename}")


def _read_disk(canvas: Canvas) -> tuple[str, str]:
    """The canvas text on disk and its hash; refuses a vanished or non-UTF-8 file."""
    path = canvas_file(canvas)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise EditRefused(
            f"{canvas.filename} vanished from disk (the agent may have deleted it); "
            "nothing was written"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EditRefused(
            f"{canvas.filename} holds bytes that are not UTF-8; editing it would lose them"
        ) from None
    return text, content_hash(text)


def _write(canvas: Canvas, text: str, expect_hash: str) -> str:
    try:
        return write_atomic(canvas_file(canvas), text.encode("utf-8"), expect_hash=expect_hash)
    except PreconditionFailed as exc:
        if exc.current_hash is None:
            raise EditRefused(str(exc)) from None
        raise EditConflict(
            "the agent changed this canvas while the edit was being written; reload and try again",
            exc.current_hash,
        ) from None


# ---------------------------------------------------------------------------------------------
# engine operations


def _text_param(params: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = params.get(key)
    if value is None or (isinstance(value, str) and not value.strip() and required):
        if required:
            raise EditRefused(f"{key!r} is required")
        return None
    if not isinstance(value, str):
        raise EditRefused(f"{key!r} must be text")
    return value


def _optional(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise EditRefused(f"{key!r} must be text")
    return value


def _flag(params: dict[str, Any], key: str, default: bool) -> bool:
    value = params.get(key, default)
    if isinstance(value, str):
        return value.lower() in {"1", "true", "on", "yes"}
    return bool(value)


def touched_nodes(op: str, params: dict[str, Any]) -> list[str]:
    """The node ids an operation reads or changes (for the clean re-apply rule)."""
    if op == "merge":
        ids = list(params.get("nodes") or [])
        return ids + ([params["into"]] if params.get("into") else [])
    if op in ("annotate", "prune", "set_status", "edit"):
        return [params.get("node") or ""]
    if op in ("add_edge", "remove_edge"):
        return [params.get("source") or "", params.get("target") or ""]
    return []


def engine_apply(text: str, op: str, params: dict[str, Any]) -> EditResult:
    """Run one engine edit; raises EditRefused with the engine's message."""
    try:
        if op == "merge":
            nodes = params.get("nodes")
            if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
                raise EditRefused("'nodes' must be a list of node ids")
            if len(set(nodes) | ({params["into"]} if params.get("into") else set())) < 2:
                raise EditRefused("select at least two nodes to merge")
            return edits.merge(
                text,
                nodes,
                into=_optional(params, "into"),
                label=_optional(params, "label"),
                summary=_optional(params, "summary"),
                status=_optional(params, "status"),
            )
        if op == "annotate":
            note = _text_param(params, "text")
            return edits.annotate(text, _text_param(params, "node") or "", note or "")
        if op == "prune":
            return edits.prune(
                text, _text_param(params, "node") or "", bridge=_flag(params, "bridge", True)
            )
        if op == "set_status":
            return edits.set_status(
                text, _text_param(params, "node") or "", _text_param(params, "status") or ""
            )
        if op == "edit":
            return edits.edit_label(
                text,
                _text_param(params, "node") or "",
                title=_optional(params, "title"),
                summary=_optional(params, "summary"),  # empty means "leave it as it is"
            )
        if op == "add_edge":
            return edits.add_edge(
                text,
                _text_param(params, "source") or "",
                _text_param(params, "target") or "",
                label=_optional(params, "label"),
            )
        if op == "remove_edge":
            return edits.remove_edge(
                text, _text_param(params, "source") or "", _text_param(params, "target") or ""
            )
        if op == "set_meta":
            values: dict[str, object] = {}
            if params.get("task_goal") not in (None, ""):
                values["taskGoal"] = str(params["task_goal"])
            if params.get("progress") not in (None, ""):
                values["progress"] = params["progress"]
            return edits.set_meta(text, **values)
        if op == "repair":
            return edits.repair_oneliner(text)
    except EditError as exc:
        raise EditRefused(str(exc)) from None
    raise EditRefused(f"unknown operation {op!r}; expected one of {', '.join(OPS)}")


def _check_parses(before: str, after: str) -> None:
    def errors(text: str) -> int:
        return sum(1 for p in parsed(text).problems if p.severity == "error")

    if errors(after) > errors(before):
        raise EditRefused("the edited canvas would not parse; nothing was written")


def _node_signature(doc: ParsedCanvas, node_id: str) -> tuple | None:
    node = doc.nodes.get(node_id)
    if node is None:
        return None
    edges = sorted(
        (e.source, e.target, e.label or "") for e in doc.edges if node_id in (e.source, e.target)
    )
    return (node.label, node.shape, node.subgraph, tuple(edges))


def applies_cleanly(base_text: str, current_text: str, op: str, params: dict[str, Any]) -> bool:
    """True when the nodes (or the metadata) the edit touches are the same in both texts."""
    base, current = parsed(base_text), parsed(current_text)
    if op == "set_meta":
        return base.meta.values == current.meta.values
    if op == "repair":
        return False
    ids = [i for i in touched_nodes(op, params) if i]
    return bool(ids) and all(
        _node_signature(base, i) is not None
        and _node_signature(base, i) == _node_signature(current, i)
        for i in ids
    )


def _base_text(canvas: Canvas, base_hash: str) -> str | None:
    if canvas.content_hash == base_hash:
        return canvas.text
    revision = canvas.revisions.filter(after_hash=base_hash).order_by("-number").first()
    return revision.after_text if revision else None


# ---------------------------------------------------------------------------------------------
# rows


def _aliases(node_id: str) -> list[str]:
    return [node_id, node_id[2:]] if node_id.startswith("n_") else [node_id]


def _alias_map(id_map: dict[str, str]) -> dict[str, str]:
    """The Go port draws `n_001-N1` for rows that say `001-N1`: map both forms."""
    out = dict(id_map)
    for old, new in id_map.items():
        if old.startswith("n_") and new.startswith("n_"):
            out[old[2:]] = new[2:]
    return out


class _RecordingEditor(remap.RowEditor):
    """The forward remap, noting each changed row's old `node_id` / `offloaded` for an exact undo."""

    def __init__(self, node_map: dict[str, str], mark_deleted: set[str]) -> None:
        super().__init__(node_map, mark_deleted)
        self.seen: dict[str, list] = {}

    def _edit_line(self, line: bytes) -> bytes | None:
        edited = super()._edit_line(line)
        if edited is not None:
            row = json.loads(line)
            self.seen.setdefault(
                str(row["tool_call_id"]),
                [row.get("node_id"), row.get("offloaded", "__absent__")],
            )
        return edited


def _remap_recorded(
    agent_dir: Path, node_map: dict[str, str], deleted: set[str]
) -> tuple[dict[str, dict[str, list]], int, list[str]]:
    """`remap_rows`, one editor per file so the changed rows are known per file.

    Runs the same per-file rewrite (`remap._rewrite_file`: append-safe, late-append recovery)
    under the same folder lock as `remap.remap_rows`.
    """
    rows: dict[str, dict[str, list]] = {}
    changed, files = 0, []
    with lock_folder(agent_dir):
        for path in remap.offload_files(agent_dir):
            editor = _RecordingEditor(node_map, deleted)
            count, _ = remap._rewrite_file(path, editor.apply, editor.apply)
            if count:
                rows[path.name] = editor.seen
                changed += count
                files.append(path.name)
    return rows, changed, files


class _RowRestorer(remap.RowEditor):
    """Puts back the `node_id` / `offloaded` a remap changed, row by row (the undo of a remap)."""

    def __init__(self, rows: dict[str, list], node_map: dict[str, str], deleted: set[str]) -> None:
        super().__init__({}, set(node_map.values()) | deleted)
        self.rows = rows
        self.forward = node_map
        self.deleted = deleted

    def _edit_line(self, line: bytes) -> bytes | None:
        try:
            row = json.loads(line)
        except ValueError:
            return None
        if not isinstance(row, dict):
            return None
        original = self.rows.get(str(row.get("tool_call_id")))
        if original is None:
            return None
        node_id, offloaded = original
        changed = False
        if self.forward.get(node_id) == row.get("node_id"):
            row["node_id"] = node_id
            changed = True
        if node_id in self.deleted and row.get("offloaded") == "deleted" and offloaded != "deleted":
            if offloaded == "__absent__":
                row.pop("offloaded", None)
            else:
                row["offloaded"] = offloaded
            changed = True
        if not changed:
            return None
        head = line[: len(line) - len(line.lstrip())]
        tail = line[len(line.rstrip()) :]
        return head + json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + tail


def _rows_restore(agent_dir: Path, remaps: dict[str, Any]) -> int:
    node_map = remaps.get("node_map") or {}
    deleted = set(remaps.get("mark_deleted") or [])
    changed = 0
    # remap.py keeps its safe rewrite private; its per-file helper is what makes this undo
    # as append-safe as the forward remap (see docs/curation.md).
    with lock_folder(agent_dir):
        for name, rows in (remaps.get("rows") or {}).items():
            editor = _RowRestorer(rows, node_map, deleted)
            if not editor.active:
                continue
            count, _ = remap._rewrite_file(agent_dir / name, editor.apply, editor.apply)
            changed += count
    return changed


def _rows_index(agent: Agent, remaps: dict[str, Any], *, undo: bool) -> None:
    """Mirror a file remap (or its undo) in the Row index, a few queries per node id."""
    node_map = remaps.get("node_map") or {}
    deleted = set(remaps.get("mark_deleted") or [])
    by_node: dict[str, list[str]] = {}
    by_offloaded: dict[tuple[str, object], list[str]] = {}
    for rows in (remaps.get("rows") or {}).values():
        for tool_call_id, (node_id, offloaded) in rows.items():
            by_node.setdefault(node_id, []).append(tool_call_id)
            if node_id in deleted:
                by_offloaded.setdefault((node_id, offloaded), []).append(tool_call_id)
    chunk = 500
    if not undo:
        for old, new in node_map.items():  # the file remap moved every row of `old`
            Row.objects.filter(agent=agent, node_id=old).update(node_id=new)
    for node_id, ids in by_node.items():
        if node_id not in node_map or not undo:
            continue
        old, new = (node_map[node_id], node_id) if undo else (node_id, node_map[node_id])
        for i in range(0, len(ids), chunk):
            Row.objects.filter(
                agent=agent, node_id=old, tool_call_id__in=ids[i : i + chunk]
            ).update(node_id=new)
    for (_node_id, offloaded), ids in by_offloaded.items():
        value = "deleted" if not undo else (None if offloaded == "__absent__" else offloaded)
        for i in range(0, len(ids), chunk):
            Row.objects.filter(agent=agent, tool_call_id__in=ids[i : i + chunk]).update(
                offloaded=_offloaded_text(value)
            )


def _remap_forward(agent: Agent, node_map: dict[str, str], deleted: set[str]) -> dict[str, Any]:
    if not node_map and not deleted:
        return {}
    agent_dir = Path(agent.path)
    node_map = _alias_map(node_map)
    deleted = {a for d in deleted for a in _aliases(d)}
    try:
        rows, changed, files = _remap_recorded(agent_dir, node_map, deleted)
    except remap.RemapConflict as exc:
        raise EditRefused(str(exc)) from None
    remaps = {
        "node_map": node_map,
        "mark_deleted": sorted(deleted),
        "rows": rows,
        "rows_changed": changed,
        "files": files,
    }
    _rows_index(agent, remaps, undo=False)
    return remaps


# ---------------------------------------------------------------------------------------------
# the write path


def _author(user: Any) -> str:
    return user.get_username() if user is not None and user.is_authenticated else "anonymous"


def _commit(
    canvas: Canvas,
    *,
    op: str,
    params: dict[str, Any],
    before: str,
    after: str,
    current_hash: str,
    user: Any,
    remaps: dict[str, Any] | None = None,
) -> Revision:
    _write(canvas, after, current_hash)
    with transaction.atomic():
        canvas_apply_text(canvas, after)
        with contextlib.suppress(FileNotFoundError):
            canvas.mtime_ns = canvas_file(canvas).stat().st_mtime_ns
            canvas.save(update_fields=["mtime_ns"])
        return revision_record(
            canvas,
            author=_author(user),
            op=op,
            before_text=before,
            after_text=after,
            params=params,
            remaps=remaps,
            user=user if getattr(user, "is_authenticated", False) else None,
        )


def _sync_from_disk(canvas: Canvas) -> None:
    """Record an agent rewrite seen on disk as an "agent" revision before we edit on top."""
    with contextlib.suppress(FileNotFoundError, ValueError):
        canvas_index_file(canvas.agent, canvas_file(canvas))
    canvas.refresh_from_db()


def canvas_apply_edit(
    *, canvas: Canvas, op: str, params: dict[str, Any], base_hash: str, user: Any
) -> EditOutcome:
    """Apply one operation to the canvas file on disk (and its rows); see docs/curation.md."""
    if op not in OPS:
        raise EditRefused(f"unknown operation {op!r}; expected one of {', '.join(OPS)}")
    if op == "undo":
        return canvas_undo(canvas=canvas, user=user)
    if op == "redo":
        return canvas_redo(canvas=canvas, user=user)
    if op == "restore":
        number = params.get("revision")
        if not isinstance(number, int):
            raise EditRefused("'revision' must be a revision number")
        return canvas_restore(canvas=canvas, number=number, base_hash=base_hash, user=user)
    if op == "reapply":
        number = params.get("revision")
        if not isinstance(number, int):
            raise EditRefused("'revision' must be a revision number")
        return canvas_reapply(canvas=canvas, number=number, user=user)
    if not isinstance(base_hash, str) or not base_hash:
        raise EditRefused("'base' (the content hash the edit was made on) is required")

    text, current = _read_disk(canvas)
    reapplied = False
    if current != base_hash:
        base_text = _base_text(canvas, base_hash)
        _sync_from_disk(canvas)
        if base_text is None or not applies_cleanly(base_text, text, op, params):
            raise EditConflict(
                "the agent changed this canvas since you loaded it, and the nodes you edited "
                "changed too; reload to see its version",
                current,
            )
        reapplied = True

    if op == "adopt":
        return _adopt(canvas, params, text, current, user)
    result = engine_apply(text, op, params)
    if result.text == text:
        raise EditRefused("this edit changes nothing")
    _check_parses(text, result.text)
    # The page sends the whole selection with every op; the revision keeps what the op used.
    clean = {k: params[k] for k in OP_FIELDS.get(op, ()) if params.get(k) not in (None, "", [])}
    revision = _commit(
        canvas, op=op, params=clean, before=text, after=result.text, current_hash=current, user=user
    )
    deleted = (
        {params["node"]} if op == "prune" and _flag(params, "drop_from_context", False) else set()
    )
    remaps = _remap_forward(canvas.agent, result.id_map if op == "merge" else {}, deleted)
    if remaps:
        revision.remaps = remaps
        revision.save(update_fields=["remaps"])
    outcome = EditOutcome(
        revision=revision,
        hash=content_hash(result.text),
        text=result.text,
        reapplied=reapplied,
        rows_changed=remaps.get("rows_changed", 0),
    )
    if reapplied:
        outcome.warnings.append(
            "the agent had changed this canvas since you loaded it; your edit touched "
            "nodes it did not change, so it was applied to the agent's newer version"
        )
    live = agent_live(canvas.agent)
    if live.live:
        outcome.warnings.append(
            "the agent is live: its map-builder may overwrite this edit within two minutes; "
            "memviz keeps the edit in its history and will offer to re-apply it"
        )
    return outcome


def _adopt(
    canvas: Canvas, params: dict[str, Any], text: str, current: str, user: Any
) -> EditOutcome:
    """Point rows whose node id is on no canvas at a node of this one (rows only, text kept)."""
    source = _text_param(params, "from") or ""
    node = _text_param(params, "node") or ""
    if node not in parsed(text).nodes:
        raise EditRefused(f"there is no node {node!r} in {canvas.filename}")
    if source == node:
        raise EditRefused("the rows already belong to that node")
    remaps = _remap_forward(canvas.agent, {source: node}, set())
    if not remaps.get("rows_changed"):
        raise EditRefused(f"no rows have node_id {source!r}")
    revision = revision_record(
        canvas,
        author=_author(user),
        op="adopt",
        before_text=text,
        after_text=text,
        params={"from": source, "node": node},
        remaps=remaps,
        user=user if getattr(user, "is_authenticated", False) else None,
    )
    return EditOutcome(
        revision=revision, hash=current, text=text, rows_changed=remaps["rows_changed"]
    )


# ---------------------------------------------------------------------------------------------
# history


def _human(canvas: Canvas) -> QuerySet[Revision]:
    # The texts are loaded only when used: listing revisions must not read every canvas copy.
    return canvas.revisions.exclude(author=AGENT_AUTHOR).defer("before_text", "after_text")


def undo_target(canvas: Canvas) -> Revision | None:
    return (
        _human(canvas)
        .exclude(op__in=("undo", "redo"))
        .filter(undone=False)
        .order_by("-number")
        .first()
    )


def redo_target(canvas: Canvas) -> Revision | None:
    for revision in _human(canvas).order_by("-number"):
        if revision.op == "redo":
            continue
        if revision.op != "undo":
            return None
        target = canvas.revisions.filter(number=revision.params.get("target"), undone=True).first()
        if target is not None:
            return target
    return None


def _swap(
    canvas: Canvas, *, target: Revision, op: str, to_text: str, from_hash: str, user: Any
) -> EditOutcome:
    text, current = _read_disk(canvas)
    if current != from_hash:
        _sync_from_disk(canvas)
        raise EditConflict(
            f"the canvas changed since revision {target.number} (the agent rewrote it or "
            "another edit followed); restore a revision from the history instead",
            current,
        )
    revision = (
        _commit(
            canvas,
            op=op,
            params={"target": target.number, "target_op": target.op},
            before=text,
            after=to_text,
            current_hash=current,
            user=user,
        )
        if to_text != text
        else revision_record(
            canvas,
            author=_author(user),
            op=op,
            before_text=text,
            after_text=text,
            params={"target": target.number, "target_op": target.op},
            user=user if getattr(user, "is_authenticated", False) else None,
        )
    )
    rows_changed = 0
    if target.remaps:
        if op == "undo":
            rows_changed = _rows_restore(Path(canvas.agent.path), target.remaps)
            _rows_index(canvas.agent, target.remaps, undo=True)
        else:
            again = _remap_forward(
                canvas.agent,
                target.remaps.get("node_map") or {},
                set(target.remaps.get("mark_deleted") or []),
            )
            rows_changed = again.get("rows_changed", 0)
            target.remaps = again or target.remaps
    target.undone = op == "undo"
    target.save(update_fields=["undone", "remaps"])
    return EditOutcome(
        revision=revision, hash=content_hash(to_text), text=to_text, rows_changed=rows_changed
    )


def canvas_undo(*, canvas: Canvas, user: Any) -> EditOutcome:
    target = undo_target(canvas)
    if target is None:
        raise EditRefused("nothing to undo")
    return _swap(
        canvas,
        target=target,
        op="undo",
        to_text=target.before_text,
        from_hash=target.after_hash,
        user=user,
    )


def canvas_redo(*, canvas: Canvas, user: Any) -> EditOutcome:
    target = redo_target(canvas)
    if target is None:
        raise EditRefused("nothing to redo")
    return _swap(
        canvas,
        target=target,
        op="redo",
        to_text=target.after_text,
        from_hash=target.before_hash,
        user=user,
    )


def canvas_restore(*, canvas: Canvas, number: int, base_hash: str, user: Any) -> EditOutcome:
    """Write revision `number`'s text back as a new revision (row remaps are left as they are)."""
    revision = canvas.revisions.filter(number=number).first()
    if revision is None:
        raise EditRefused(f"there is no revision {number}")
    text, current = _read_disk(canvas)
    if base_hash and current != base_hash:
        _sync_from_disk(canvas)
        raise EditConflict("the agent changed this canvas since you loaded it; reload", current)
    if revision.after_text == text:
        raise EditRefused(f"the canvas already has the text of revision {number}")
    _check_parses(text, revision.after_text)
    new = _commit(
        canvas,
        op="restore",
        params={"revision": number},
        before=text,
        after=revision.after_text,
        current_hash=current,
        user=user,
    )
    return EditOutcome(revision=new, hash=new.after_hash, text=revision.after_text)


def canvas_reapply(*, canvas: Canvas, number: int, user: Any) -> EditOutcome:
    """Apply a human edit again on the current text (after an agent rewrite dropped it)."""
    revision = canvas.revisions.filter(number=number).exclude(author=AGENT_AUTHOR).first()
    if revision is None or revision.op not in EDIT_OPS:
        raise EditRefused(f"revision {number} is not an edit that can be re-applied")
    _sync_from_disk(canvas)
    _, current = _read_disk(canvas)
    return canvas_apply_edit(
        canvas=canvas, op=revision.op, params=dict(revision.params), base_hash=current, user=user
    )


def dropped_edits(canvas: Canvas, *, limit: int = 30) -> list[dict[str, Any]]:
    """Human edits an agent rewrite (a later "agent" revision) no longer shows in the canvas."""
    last_agent = (
        canvas.revisions.filter(author=AGENT_AUTHOR)
        .defer("before_text", "after_text")
        .order_by("-number")
        .first()
    )
    if last_agent is None:
        return []
    doc = parsed(canvas.text)
    notes = {n.fields.extra.get("note") for n in doc.nodes.values()}
    out = []
    edits_before = (
        _human(canvas)
        .filter(number__lt=last_agent.number, op__in=("annotate", "merge"), undone=False)
        .order_by("-number")[:limit]
    )
    for revision in edits_before:
        if revision.op == "annotate":
            node = revision.params.get("node")
            if revision.params.get("text") not in notes:
                out.append(
                    {
                        "revision": revision.number,
                        "op": "annotate",
                        "node": node,
                        "what": f"note on {node}: {revision.params.get('text')}",
                    }
                )
        else:
            gone = (revision.remaps or {}).get("node_map") or {}
            back = [i for i in gone if i in doc.nodes]
            if back:
                out.append(
                    {
                        "revision": revision.number,
                        "op": "merge",
                        "node": ",".join(back),
                        "what": f"merge of {', '.join(back)} (they are back on the canvas)",
                    }
                )
    return out


# ---------------------------------------------------------------------------------------------
# liveness and resume


@dataclass
class LiveStatus:
    live: bool
    reasons: list[str]
    last_write_age: float | None

    def as_json(self) -> dict[str, Any]:
        return {"live": self.live, "reasons": self.reasons, "last_write_age": self.last_write_age}


def agent_live(agent: Agent, *, now: float | None = None) -> LiveStatus:
    """Recent writes by the agent to its folder (not ours), or recent `wait` rows."""
    now = time.time() if now is None else now
    folder = Path(agent.path)
    ours = (
        Revision.objects.filter(canvas__agent=agent)
        .exclude(author=AGENT_AUTHOR)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    ours_ts = ours.timestamp() + 1.0 if ours else 0.0
    newest: float | None = None
    candidates = [
        folder / "state.json",
        *folder.glob("offload-*.jsonl"),
        *folder.glob("mmds/*.mmd"),
    ]
    for path in candidates:
        with contextlib.suppress(OSError):
            mtime = path.stat().st_mtime
            if mtime > ours_ts and (newest is None or mtime > newest):
                newest = mtime
    reasons = []
    window = LIVE_WINDOW.total_seconds()
    age = now - newest if newest is not None else None
    if age is not None and age < window:
        reasons.append(f"its folder was written {int(age)} s ago")
    recent_wait = timezone.now() - LIVE_WINDOW
    waits = Row.objects.filter(agent=agent, node_id="wait")
    for row in waits[:50]:
        with contextlib.suppress(ValueError):
            stamp = datetime.fromisoformat(row.timestamp.replace("Z", "+00:00"))
            if stamp.tzinfo and stamp > recent_wait:
                reasons.append("its map-builder is mid-flight (recent wait rows)")
                break
    return LiveStatus(live=bool(reasons), reasons=reasons, last_write_age=age)


@dataclass
class ResumeOutcome:
    held: bool
    state_hash: str
    active: str
    message: str


def state_path(agent: Agent) -> Path:
    return confine(Path(agent.path), "state.json")


def state_active(agent: Agent) -> str | None:
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(state_path(agent).read_bytes().decode("utf-8"))
        value = data.get("activeMmdFile", data.get("active_mmd_file"))
        return value if isinstance(value, str) else None
    return None


def canvas_resume(*, canvas: Canvas, user: Any, confirm_live: bool = False) -> ResumeOutcome:
    """Make this canvas the agent's active canvas in state.json and check that it held."""
    agent = canvas.agent
    live = agent_live(agent)
    if live.live and not confirm_live:
        raise EditConflict(
            "the agent looks live ("
            + "; ".join(live.reasons)
            + "): a running gateway overwrites state.json within seconds. Stop it first, "
            "or confirm to write anyway."
        )
    path = state_path(agent)
    if not path.is_file():
        raise EditRefused("this agent has no state.json to edit")
    try:
        new_hash = set_active_canvas(path, canvas.filename)
    except PreconditionFailed as exc:
        raise EditConflict(str(exc)) from None
    except ValueError as exc:
        raise EditRefused(str(exc)) from None
    time.sleep(0.05 if live.live else 0)
    active = state_active(agent) or ""
    held = active == canvas.filename
    agent.active_mmd_file = active
    with contextlib.suppress(ValueError):
        agent.state_data = json.loads(path.read_bytes().decode("utf-8"))
    agent.save(update_fields=["active_mmd_file", "state_data"])
    message = (
        f"{canvas.filename} is now the active canvas in state.json"
        if held
        else f"state.json was overwritten right after the write (it names {active!r}): "
        "stop the agent's gateway and try again"
    )
    return ResumeOutcome(held=held, state_hash=new_hash, active=active, message=message)


def resume_preview(canvas: Canvas) -> dict[str, Any]:
    agent = canvas.agent
    doc = parsed(canvas.text)
    block = resume_block(agent.name, canvas.filename, canvas.text, doc.meta.task_goal or "")
    return {
        "block": block,
        "block_chars": len(block),
        "block_tokens": estimate_tokens(block),
        "canvas_chars": len(canvas.text),
        "canvas_tokens": estimate_tokens(canvas.text),
        "budget_chars": CANVAS_BUDGET_CHARS,
        "over_budget": len(canvas.text) > CANVAS_BUDGET_CHARS,
        "budget_percent": round(100 * len(canvas.text) / CANVAS_BUDGET_CHARS),
        "active": state_active(agent) == canvas.filename,
    }
