"""The curation operations, one entry each (`OPERATIONS`): name, fields, the engine function,
the nodes it touches (the clean re-apply rule), what it does to rows, and the toolbar button
that opens its form (label, title, keyboard key — the toolbar, the keyboard help and canvas.js
read them). A new operation is one entry here (and its form in `_editor.html`).

No database and no files here: text in, `EditResult` out, or `EditRefused` with a message meant
for people. `canvases.services` runs these under the agent's write lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from canvases import budget, landing
from canvases.indexing import parsed
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import EditError, EditResult, agent_view, edits
from canvases.messages import Said

HISTORY_OPS = ("undo", "redo", "restore", "reapply", "adopt", "drop_again")


class EditRefused(Exception):
    """A bad request (unknown node, empty merge, vanished file…); nothing was written. Its
    argument is the reason: a `Said` (canvases/messages.py: a code, shown in the reader's
    language by ``str()``) or the engine's own text."""

    status = 400

    @property
    def code(self) -> str | None:
        said = self.args[0] if self.args else None
        return said.code if isinstance(said, Said) else None


class EditConflict(EditRefused):
    """The file changed on disk since the edit's base and the edit does not re-apply cleanly."""

    status = 409

    def __init__(self, message: str | Said, current_hash: str | None = None) -> None:
        super().__init__(message)
        self.current_hash = current_hash


class WriteFailed(EditRefused):
    """The disk refused a write (full, read-only, no permission); nothing was changed."""

    status = 507

    def __init__(self, message: str | Said, *, file: str, reason: str) -> None:
        super().__init__(message)
        self.file = file
        self.reason = reason


def text_param(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise EditRefused(Said("field_required", field=repr(key)))
    if not isinstance(value, str):
        raise EditRefused(Said("field_text", field=repr(key)))
    return value


def optional_param(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise EditRefused(Said("field_text", field=repr(key)))
    return value


def flag_param(params: dict[str, Any], key: str, default: bool) -> bool:
    value = params.get(key, default)
    if isinstance(value, str):
        return value.lower() in {"1", "true", "on", "yes"}
    return bool(value)


def op_params(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """The fields an op uses (the page sends its whole selection with every op)."""
    fields = OPERATIONS[op].fields if op in OPERATIONS else ()
    return {k: params[k] for k in fields if params.get(k) not in (None, "", [])}


def touched_nodes(op: str, params: dict[str, Any]) -> list[str]:
    """The node ids an operation reads or changes (for the clean re-apply rule)."""
    return OPERATIONS[op].touches(params) if op in OPERATIONS else []


def engine_apply(text: str, op: str, params: dict[str, Any]) -> EditResult:
    """Run one engine edit; raises EditRefused with the engine's message."""
    try:
        return _dispatch(text, op, params)
    except EditError as exc:
        raise EditRefused(Said.refusal(exc)) from None


def _dispatch(text: str, op: str, params: dict[str, Any]) -> EditResult:
    entry = OPERATIONS.get(op)
    if entry is None:
        raise EditRefused(Said("unknown_op", op=op, ops=", ".join(OPS)))
    return entry.run(text, params)


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
        raise EditRefused(Said("would_not_parse"))


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
    rule = OPERATIONS[op].reapply if op in OPERATIONS else "never"
    if rule == "never":
        return False
    base, current = parsed(base_text), parsed(current_text)
    if rule == "meta":
        return base.meta.values == current.meta.values
    ids = [i for i in touched_nodes(op, params) if i]
    return bool(ids) and all(
        _node_signature(base, i) is not None
        and _node_signature(base, i) == _node_signature(current, i)
        for i in ids
    )


# ---- the registry ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tool:
    """The toolbar button that opens an op's form (`data-open`/`data-form` in _editor.html)."""

    form: str
    key: str  # its keyboard shortcut (KeyboardEvent.key)
    needs: int  # selected nodes it needs (0: none)
    label: Promise
    title: Promise
    help: Promise  # its line in the keyboard help
    key_label: Promise | str = ""  # how the help names the key, when not the key itself


def _no_nodes(_params: dict[str, Any]) -> list[str]:
    return []  # a bulk op chooses its nodes on the text it runs on: never re-applied by node


def _one_node(params: dict[str, Any]) -> list[str]:
    return [params.get("node") or ""]


def _edge_ends(params: dict[str, Any]) -> list[str]:
    return [params.get("source") or "", params.get("target") or ""]


def _merged(params: dict[str, Any]) -> list[str]:
    return list(params.get("nodes") or []) + ([params["into"]] if params.get("into") else [])


def _dropped_from_context(params: dict[str, Any]) -> set[str]:
    return {params["node"]} if flag_param(params, "drop_from_context", False) else set()


def _nothing_dropped(_params: dict[str, Any]) -> set[str]:
    return set()


@dataclass(frozen=True, slots=True)
class Op:
    """One curation operation."""

    name: str
    fields: tuple[str, ...]  # what it reads from a request (and keeps in its revision)
    run: Callable[[str, dict[str, Any]], EditResult]  # the engine
    touches: Callable[[dict[str, Any]], list[str]] = _no_nodes  # the clean re-apply rule
    reapply: str = "nodes"  # re-applied over a changed file when: "nodes" untouched, "meta" unchanged, "never"
    moves_rows: bool = False  # re-points the rows of the nodes it takes off (`EditResult.id_map`)
    drops_rows: Callable[[dict[str, Any]], set[str]] = _nothing_dropped  # rows marked offloaded
    flags: tuple[str, ...] = ()  # yes/no fields (a form's unticked box sends nothing: no)
    whole_editor: bool = False  # its answer redraws the whole editor, not only the drawing
    tool: Tool | None = None


def _set_meta(text: str, params: dict[str, Any]) -> EditResult:
    values: dict[str, object] = {}
    if params.get("task_goal") not in (None, ""):
        values["taskGoal"] = str(params["task_goal"])
    if params.get("progress") not in (None, ""):
        values["progress"] = params["progress"]
    return edits.set_meta(text, **values)


def _dedupe(text: str, params: dict[str, Any]) -> EditResult:
    try:
        keep = int(params.get("keep") or 0)
    except (TypeError, ValueError):
        raise EditRefused(Said("field_number", field="'keep'")) from None
    return landing.dedupe(text, text_param(params, "node"), keep)


_OPERATIONS = (
    Op(
        "merge",
        ("nodes", "into", "label", "summary", "status"),
        budget.merge_fields,
        touches=_merged,
        moves_rows=True,
        tool=Tool("merge", "m", 2, _("Merge"), _("Merge the selected nodes (m)"), _("merge the selected nodes")),
    ),
    Op(
        "annotate",
        ("node", "text"),
        lambda text, p: edits.annotate(text, text_param(p, "node"), text_param(p, "text")),
        touches=_one_node,
        tool=Tool("annotate", "a", 1, _("Annotate"), _("Add a note to the selected node (a)"), _("annotate")),
    ),
    Op(
        "prune",
        ("node", "bridge", "drop_from_context"),
        lambda text, p: edits.prune(text, text_param(p, "node"), bridge=flag_param(p, "bridge", True)),
        touches=_one_node,
        drops_rows=_dropped_from_context,
        flags=("bridge", "drop_from_context"),
        tool=Tool(
            "prune", "Delete", 1, _("Prune"), _("Take the selected node off the canvas (Delete)"),
            _("prune"), key_label=pgettext_lazy("keyboard key", "Delete"),
        ),
    ),
    Op(
        "set_status",
        ("node", "status"),
        lambda text, p: edits.set_status(text, text_param(p, "node"), text_param(p, "status")),
        touches=_one_node,
        tool=Tool("status", "s", 1, _("Status"), _("Set the status (s)"), _("set status")),
    ),
    Op(
        "edit",
        ("node", "title", "summary"),
        lambda text, p: edits.edit_label(
            text,
            text_param(p, "node"),
            title=optional_param(p, "title"),
            summary=optional_param(p, "summary"),  # empty means "leave it as it is"
        ),
        touches=_one_node,
        tool=Tool("edit", "e", 1, _("Edit"), _("Edit title / summary (e)"), _("edit title / summary")),
    ),
    Op(
        "add_edge",
        ("source", "target", "label"),
        lambda text, p: edits.add_edge(
            text, text_param(p, "source"), text_param(p, "target"), label=optional_param(p, "label")
        ),
        touches=_edge_ends,
        tool=Tool(
            "edge", "g", 2, _("Edge"), _("Add or remove an edge between two selected nodes (g)"),
            _("add / remove an edge"),
        ),
    ),
    Op(
        "remove_edge",
        ("source", "target"),
        lambda text, p: edits.remove_edge(text, text_param(p, "source"), text_param(p, "target")),
        touches=_edge_ends,
    ),
    Op(
        "set_meta",
        ("task_goal", "progress"),
        _set_meta,
        reapply="meta",
        whole_editor=True,
        tool=Tool("meta", "t", 0, _("Goal"), _("Edit the task goal and progress (t)"), _("task goal and progress")),
    ),
    Op("agent_meta", (), lambda text, _p: edits.agent_meta(text), reapply="meta", whole_editor=True),
    Op("repair", (), lambda text, _p: edits.repair_oneliner(text), reapply="never", whole_editor=True),
    Op("dedupe", ("node", "keep"), _dedupe, touches=_one_node),
    Op(
        "batch",
        ("steps",),
        lambda text, p: budget.apply_steps(text, p.get("steps")),
        touches=lambda p: budget.step_nodes(p.get("steps")),
        moves_rows=True,
    ),
    Op(
        "bulk",
        ("action", "group", "nodes", "status", "query"),
        lambda text, p: budget.apply_steps(text, budget.bulk_steps(text, p)),
        moves_rows=True,
    ),
)
OPERATIONS: dict[str, Op] = {op.name: op for op in _OPERATIONS}
EDIT_OPS = tuple(OPERATIONS)
OPS = EDIT_OPS + HISTORY_OPS
# The toolbar's buttons, in its order.
TOOLS = tuple(op.tool for op in _OPERATIONS if op.tool is not None)
