"""The curation operations, one entry each (`OPERATIONS`): name, fields, the engine function,
the nodes it touches (the clean re-apply rule), what it does to rows, and the toolbar button
that opens its form (label, title, keyboard key — the toolbar, the keyboard help and canvas.js
read them). A new operation is one entry here (and its form in `_editor.html`).

No database and no files here: text in, `EditResult` out, or `EditRefused` with a message meant
for people. `canvases.services` runs these under the agent's write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from canvases import budget, landing
from canvases import op_input as kinds
from canvases.indexing import parsed
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import EditError, EditResult, agent_view, edits
from canvases.messages import Said
from canvases.op_input import Field
from canvases.refused import EditRefused

HISTORY_OPS = ("undo", "redo", "restore", "reapply", "adopt", "drop_again")


def fields_of(op: str) -> tuple[Field, ...]:
    entry = OPERATIONS.get(op)
    return entry.fields if entry else kinds.OTHER_INPUTS.get(op, ())


def read_input(op: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """An op's input read by its fields' kinds (canvases/op_input.py): a JSON body's values, or a
    revision's stored ones when it is re-applied."""
    return kinds.read(fields_of(op), params)


def sent_input(op: str, data: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The op a request asks for and its input, from a JSON body or a form (`request_data`).

    The Status tool sets every selected node: `set_status` with more than one node is `bulk`."""
    if op == "set_status" and len(kinds.read_sent((kinds.ids("nodes"),), data).get("nodes", [])) > 1:
        return "bulk", kinds.read_sent(fields_of("bulk"), kinds.with_sent(data, "action", "set_status"))
    return op, kinds.read_sent(fields_of(op), data)


def op_params(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """The fields an op uses (the page sends its whole selection with every op)."""
    names = [f.name for f in OPERATIONS[op].fields] if op in OPERATIONS else []
    return {k: params[k] for k in names if params.get(k) not in (None, "", [])}


def touched_nodes(op: str, params: dict[str, Any]) -> list[str]:
    """The node ids an operation reads or changes (for the clean re-apply rule)."""
    return OPERATIONS[op].touches(params) if op in OPERATIONS else []


def engine_apply(text: str, op: str, params: dict[str, Any]) -> EditResult:
    """Run one engine edit; raises EditRefused with the engine's message."""
    try:
        return _dispatch(text, op, params)
    except EditError as exc:
        raise EditRefused(Said.engine(exc)) from None


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
    return {params["node"]} if params.get("drop_from_context") else set()


def _nothing_dropped(_params: dict[str, Any]) -> set[str]:
    return set()


@dataclass(frozen=True, slots=True)
class Op:
    """One curation operation."""

    name: str
    fields: tuple[Field, ...]  # what it reads from a request, typed (and keeps in its revision)
    run: Callable[[str, dict[str, Any]], EditResult]  # the engine
    touches: Callable[[dict[str, Any]], list[str]] = _no_nodes  # the clean re-apply rule
    reapply: str = "nodes"  # re-applied over a changed file when: "nodes" untouched, "meta" unchanged, "never"
    moves_rows: bool = False  # re-points the rows of the nodes it takes off (`EditResult.id_map`)
    drops_rows: Callable[[dict[str, Any]], set[str]] = _nothing_dropped  # rows marked offloaded
    whole_editor: bool = False  # its answer redraws the whole editor, not only the drawing
    tool: Tool | None = None


def _set_meta(text: str, params: dict[str, Any]) -> EditResult:
    values: dict[str, object] = {}
    if "task_goal" in params:
        values["taskGoal"] = params["task_goal"]
    if "progress" in params:
        values["progress"] = params["progress"]
    return edits.set_meta(text, **values)


_OPERATIONS = (
    Op(
        "merge",
        (
            kinds.ids("nodes"),
            kinds.optional("into"),
            kinds.optional("label"),
            kinds.optional("summary"),
            kinds.optional("status"),
        ),
        budget.merge_fields,
        touches=_merged,
        moves_rows=True,
        tool=Tool("merge", "m", 2, _("Merge"), _("Merge the selected nodes (m)"), _("merge the selected nodes")),
    ),
    Op(
        "annotate",
        (kinds.text("node"), kinds.text("text")),
        lambda canvas, p: edits.annotate(canvas, p["node"], p["text"]),
        touches=_one_node,
        tool=Tool("annotate", "a", 1, _("Annotate"), _("Add a note to the selected node (a)"), _("annotate")),
    ),
    Op(
        "prune",
        (kinds.text("node"), kinds.flag("bridge", default=True), kinds.flag("drop_from_context")),
        lambda canvas, p: edits.prune(canvas, p["node"], bridge=p["bridge"]),
        touches=_one_node,
        drops_rows=_dropped_from_context,
        tool=Tool(
            "prune", "Delete", 1, _("Prune"), _("Take the selected node off the canvas (Delete)"),
            _("prune"), key_label=pgettext_lazy("keyboard key", "Delete"),
        ),
    ),
    Op(
        "set_status",
        (kinds.text("node"), kinds.text("status")),
        lambda canvas, p: edits.set_status(canvas, p["node"], p["status"]),
        touches=_one_node,
        tool=Tool("status", "s", 1, _("Status"), _("Set the status (s)"), _("set status")),
    ),
    Op(
        "edit",
        (kinds.text("node"), kinds.optional("title"), kinds.optional("summary")),
        lambda canvas, p: edits.edit_label(  # a field left empty is left as it is
            canvas, p["node"], title=p.get("title"), summary=p.get("summary")
        ),
        touches=_one_node,
        tool=Tool("edit", "e", 1, _("Edit"), _("Edit title / summary (e)"), _("edit title / summary")),
    ),
    Op(
        "add_edge",
        (kinds.text("source"), kinds.text("target"), kinds.optional("label")),
        lambda canvas, p: edits.add_edge(canvas, p["source"], p["target"], label=p.get("label")),
        touches=_edge_ends,
        tool=Tool(
            "edge", "g", 2, _("Edge"), _("Add or remove an edge between two selected nodes (g)"),
            _("add / remove an edge"),
        ),
    ),
    Op(
        "remove_edge",
        (kinds.text("source"), kinds.text("target")),
        lambda canvas, p: edits.remove_edge(canvas, p["source"], p["target"]),
        touches=_edge_ends,
    ),
    Op(
        "set_meta",
        (kinds.optional("task_goal"), kinds.value("progress")),
        _set_meta,
        reapply="meta",
        whole_editor=True,
        tool=Tool("meta", "t", 0, _("Goal"), _("Edit the task goal and progress (t)"), _("task goal and progress")),
    ),
    Op("agent_meta", (), lambda text, _p: edits.agent_meta(text), reapply="meta", whole_editor=True),
    Op("repair", (), lambda text, _p: edits.repair_oneliner(text), reapply="never", whole_editor=True),
    Op(
        "dedupe",
        (kinds.text("node"), kinds.number("keep")),
        lambda canvas, p: landing.dedupe(canvas, p["node"], p.get("keep", 0)),
        touches=_one_node,
    ),
    Op(
        "batch",
        (kinds.steps("steps"),),
        lambda canvas, p: budget.apply_steps(canvas, p.get("steps")),
        touches=lambda p: budget.step_nodes(p.get("steps")),
        moves_rows=True,
    ),
    Op(
        "bulk",
        (
            kinds.text("action"),
            kinds.optional("group"),
            kinds.ids("nodes"),
            kinds.optional("status"),
            kinds.optional("query"),
        ),
        lambda canvas, p: budget.apply_steps(canvas, budget.bulk_steps(canvas, p)),
        moves_rows=True,
    ),
)
OPERATIONS: dict[str, Op] = {op.name: op for op in _OPERATIONS}
EDIT_OPS = tuple(OPERATIONS)
OPS = EDIT_OPS + HISTORY_OPS
# The toolbar's buttons, in its order.
TOOLS = tuple(op.tool for op in _OPERATIONS if op.tool is not None)
