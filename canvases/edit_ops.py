"""The curation operations: their names and fields, and how each runs on the canvas engine.

No database and no files here: text in, `EditResult` out, or `EditRefused` with a message meant
for people. `canvases.services` runs these under the agent's write lock.
"""

from __future__ import annotations

from typing import Any

from canvases import budget, landing
from canvases.indexing import parsed
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import EditError, EditResult, agent_view, edits

EDIT_OPS = (
    "merge",
    "annotate",
    "prune",
    "set_status",
    "edit",
    "add_edge",
    "remove_edge",
    "set_meta",
    "agent_meta",
    "repair",
    "dedupe",
    "batch",
    "bulk",
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
    "agent_meta": (),
    "repair": (),
    "dedupe": ("node", "keep"),
    "batch": ("steps",),
    "bulk": ("action", "group", "nodes", "status", "query"),
}
# Ops whose result re-points the rows of the nodes they take off the canvas (`EditResult.id_map`).
MOVES_ROWS = ("merge", "batch", "bulk")
HISTORY_OPS = ("undo", "redo", "restore", "reapply", "adopt", "drop_again")
OPS = EDIT_OPS + HISTORY_OPS


class EditRefused(Exception):
    """A bad request (unknown node, empty merge, vanished file…); nothing was written."""

    status = 400


class EditConflict(EditRefused):
    """The file changed on disk since the edit's base and the edit does not re-apply cleanly."""

    status = 409

    def __init__(self, message: str, current_hash: str | None = None) -> None:
        super().__init__(message)
        self.current_hash = current_hash


class WriteFailed(EditRefused):
    """The disk refused a write (full, read-only, no permission); nothing was changed."""

    status = 507

    def __init__(self, message: str, *, file: str, reason: str) -> None:
        super().__init__(message)
        self.file = file
        self.reason = reason


def text_param(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise EditRefused(f"{key!r} is required")
    if not isinstance(value, str):
        raise EditRefused(f"{key!r} must be text")
    return value


def optional_param(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise EditRefused(f"{key!r} must be text")
    return value


def flag_param(params: dict[str, Any], key: str, default: bool) -> bool:
    value = params.get(key, default)
    if isinstance(value, str):
        return value.lower() in {"1", "true", "on", "yes"}
    return bool(value)


def op_params(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """The fields an op uses (the page sends its whole selection with every op)."""
    return {k: params[k] for k in OP_FIELDS.get(op, ()) if params.get(k) not in (None, "", [])}


def touched_nodes(op: str, params: dict[str, Any]) -> list[str]:
    """The node ids an operation reads or changes (for the clean re-apply rule)."""
    if op == "merge":
        ids = list(params.get("nodes") or [])
        return ids + ([params["into"]] if params.get("into") else [])
    if op in ("annotate", "prune", "set_status", "edit", "dedupe"):
        return [params.get("node") or ""]
    if op in ("add_edge", "remove_edge"):
        return [params.get("source") or "", params.get("target") or ""]
    if op == "batch":
        return budget.step_nodes(params.get("steps"))
    return []  # a bulk op chooses its nodes on the text it runs on: never re-applied


def engine_apply(text: str, op: str, params: dict[str, Any]) -> EditResult:
    """Run one engine edit; raises EditRefused with the engine's message."""
    try:
        return _dispatch(text, op, params)
    except EditError as exc:
        raise EditRefused(str(exc)) from None


def _dispatch(text: str, op: str, params: dict[str, Any]) -> EditResult:
    if op == "merge":
        return budget.merge_fields(text, params)
    if op == "annotate":
        return edits.annotate(text, text_param(params, "node"), text_param(params, "text"))
    if op == "prune":
        return edits.prune(
            text, text_param(params, "node"), bridge=flag_param(params, "bridge", True)
        )
    if op == "set_status":
        return edits.set_status(text, text_param(params, "node"), text_param(params, "status"))
    if op == "edit":
        return edits.edit_label(
            text,
            text_param(params, "node"),
            title=optional_param(params, "title"),
            summary=optional_param(params, "summary"),  # empty means "leave it as it is"
        )
    if op == "add_edge":
        return edits.add_edge(
            text,
            text_param(params, "source"),
            text_param(params, "target"),
            label=optional_param(params, "label"),
        )
    if op == "remove_edge":
        return edits.remove_edge(
            text, text_param(params, "source"), text_param(params, "target")
        )
    if op == "set_meta":
        values: dict[str, object] = {}
        if params.get("task_goal") not in (None, ""):
            values["taskGoal"] = str(params["task_goal"])
        if params.get("progress") not in (None, ""):
            values["progress"] = params["progress"]
        return edits.set_meta(text, **values)
    if op == "agent_meta":
        return edits.agent_meta(text)
    if op == "repair":
        return edits.repair_oneliner(text)
    if op == "dedupe":
        try:
            return landing.dedupe(text, text_param(params, "node"), int(params.get("keep") or 0))
        except ValueError as exc:
            raise EditRefused(str(exc)) from None
    if op == "batch":
        return budget.apply_steps(text, params.get("steps"))
    if op == "bulk":
        return budget.apply_steps(text, budget.bulk_steps(text, params))
    raise EditRefused(f"unknown operation {op!r}; expected one of {', '.join(OPS)}")


def visible_to_running_agent(before: str, after: str) -> str:
    """`after`, made different from `before` in what a running agent compares after a tool call.

    The plugin re-injects the active canvas only when its length or its first 64 characters
    changed; an edit that keeps both (`done` → `todo` deep in the file) would wait for the next
    prompt. Adding or removing the final newline changes the length and nothing else: the
    agent's injected text, mermaid and the plugin's readers all ignore it.
    """
    if agent_view.visible_at_next_tool_call(before, after):
        return after
    return after[:-1] if after.endswith("\n") else after + "\n"


def check_parses(before: str, after: str) -> None:
    """Refuse a result with more parse errors than the text it was made from."""

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
    if op in ("set_meta", "agent_meta"):
        return base.meta.values == current.meta.values
    if op == "repair":
        return False
    ids = [i for i in touched_nodes(op, params) if i]
    return bool(ids) and all(
        _node_signature(base, i) is not None
        and _node_signature(base, i) == _node_signature(current, i)
        for i in ids
    )
