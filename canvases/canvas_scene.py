"""What the browser draws: a canvas's render-ready text read into nodes, edges and groups.

The scene is derived from ``render_body(text)`` on every request (never stored), so the canvas
stays the agent's own mermaid text. memviz's renderer (``static/js/canvas-*.js``) lays it out and
draws it in mermaid's look; see docs/canvas-rendering.md for why it does not hand big canvases
to mermaid.js.
"""

from __future__ import annotations

import math
import re
from typing import Any

from canvases.mermaid import Canvas
from canvases.mermaid.parser import parse_drawn
from canvases.mermaid.render import STATUS_CLASS_PREFIX, status_key
from canvases.scene_labels import rich_lines
from canvases.scene_shapes import drawn_shape
from canvases.scene_types import Scene, SceneEdge, SceneGroup, SceneNode

# Up to this many nodes a canvas opens fully expanded; a larger one as an overview of its
# top-level groups (canvases/selectors.py default_collapsed, static/js/canvas.js).
OVERVIEW_NODES = 40
# A block (the canvas or a subgraph) with more loose nodes than this is shown as groups of
# consecutive nodes (the order the agent wrote them, i.e. time) that expand on demand.
AUTO_GROUP_OVER = 60
AUTO_GROUP_SIZE = 30
# Subgraphs nested deeper are drawn inside their ancestor at this depth (the layout recurses
# once per level, and no one reads a box inside twenty others).
MAX_GROUP_DEPTH = 16
CSS_PROPERTY = re.compile(
    r"^(fill|stroke|stroke-width|stroke-dasharray|color|font-weight|font-style|opacity"
    r"|fill-opacity|stroke-opacity|font-size)$"
)
CSS_VALUE = re.compile(r"^[#\w\s.,%()+-]{1,60}$")
CSS_FUNCTION = re.compile(r"([a-z-]*)\(")
COLOUR_FUNCTIONS = {"rgb", "rgba", "hsl", "hsla"}
CLASS_SUFFIX = re.compile(r":::([\w-]+)")
HHMM = re.compile(r"T(\d\d:\d\d)")
BOTH_ENDS = {"o": "circle_both", "x": "cross_both"}
DIRECTIONS = {"TB", "TD", "BT", "LR", "RL"}


def safe_css(declarations: str) -> str:
    """The agent's style text, limited to drawing properties (no url(), no other property)."""
    kept = []
    for part in declarations.replace(";", ",").split(","):
        name, sep, value = part.partition(":")
        name, value = name.strip().lower(), value.strip().removesuffix("!important").strip()
        functions = set(CSS_FUNCTION.findall(value.lower()))
        if sep and CSS_PROPERTY.match(name) and CSS_VALUE.match(value) and functions <= COLOUR_FUNCTIONS:
            kept.append(f"{name}:{value}")
    # stroke-dasharray values are written "4 3" or "4,3": the split above took the comma form
    return ";".join(kept)


def _statement_text(doc: Canvas, statement: Any) -> str:
    return doc.text[statement.start : statement.stop].strip().rstrip(";")


def _styles(doc: Canvas) -> tuple[dict[str, str], dict[str, list[str]], dict[str, str], dict]:
    """(classDef name -> css, node/subgraph id -> classes, id -> style, edge index -> style).

    ``linkStyle default`` is kept under the key "default"; it applies to every edge.
    """
    class_defs: dict[str, str] = {}
    classes: dict[str, list[str]] = {}
    styles: dict[str, str] = {}
    link_styles: dict[int | str, str] = {}
    for statement in doc.statements:
        kind = statement.kind
        if kind == "classDef":
            parts = _statement_text(doc, statement).split(None, 2)
            if len(parts) == 3:
                for name in parts[1].split(","):
                    class_defs[name] = safe_css(parts[2])
        elif kind == "class":
            for target in statement.ids:
                classes.setdefault(target, []).append(statement.name)
        elif kind == "style" and statement.ids:
            styles[statement.ids[0]] = safe_css(statement.name)
        elif kind == "linkStyle":
            parts = _statement_text(doc, statement).split(None, 2)
            if len(parts) == 3:
                for index in parts[1].split(","):
                    if index.isdigit() or index == "default":
                        key = int(index) if index.isdigit() else index
                        link_styles[key] = ";".join(
                            c for c in (link_styles.get(key), safe_css(parts[2])) if c
                        )
        elif kind == "chain":
            for group in statement.groups:
                for ref in group:
                    start = ref.shape_end if ref.shape_end > 0 else ref.id_end
                    suffix = CLASS_SUFFIX.search(doc.text, start, ref.end)
                    if suffix:
                        classes.setdefault(ref.id, []).append(suffix.group(1))
    return class_defs, classes, styles, link_styles


def _inline_style(ids: str, class_defs: dict, classes: dict, styles: dict, *, node: bool) -> str:
    """The agent's classDefs and style lines as inline css, in mermaid's order of precedence.

    The author's colours win over memviz's status colours (a stylesheet): a node the author
    coloured is drawn as mermaid.js draws the file, and the status colours fill in where the
    author set none. ``classDef default`` applies to every node, under its own classes; between
    two classes of one node the one given last wins (mermaid writes them inline in that order),
    and a ``style`` line wins over both.
    """
    css = [class_defs["default"]] if node and "default" in class_defs else []
    css += [
        class_defs[name]
        for name in classes.get(ids, [])
        if name in class_defs and name != "default" and not name.startswith(STATUS_CLASS_PREFIX)
    ]
    if ids in styles:
        css.append(styles[ids])
    return ";".join(c for c in css if c)


def _time_range(nodes: list[SceneNode]) -> str:
    stamps = sorted(t for n in nodes if (t := n.get("ts")))
    if not stamps:
        return ""
    first, last = HHMM.search(stamps[0]), HHMM.search(stamps[-1])
    if not first or not last:
        return ""
    day = stamps[0][5:10] if stamps[0][:10] == stamps[-1][:10] else ""
    span = first.group(1) if first.group(1) == last.group(1) else f"{first.group(1)}–{last.group(1)}"
    return f"{day} {span}".strip()


def auto_groups(nodes: list[SceneNode], groups: list[SceneGroup]) -> list[SceneGroup]:
    """Consecutive runs of the loose nodes of any crowded block, as groups of their own.

    Sets each chunked node's ``group`` to its new group; returns the new groups.
    """
    loose: dict[str | None, list[SceneNode]] = {}
    for node in nodes:
        loose.setdefault(node.get("group"), []).append(node)
    made: list[SceneGroup] = []
    for parent, members in loose.items():
        if len(members) <= AUTO_GROUP_OVER:
            continue
        count = math.ceil(len(members) / AUTO_GROUP_SIZE)
        base, extra = divmod(len(members), count)
        start = 0
        for k in range(count):
            chunk = members[start : start + base + (k < extra)]
            start += len(chunk)
            group_id = f"~{k + 1}" if parent is None else f"~{parent}~{k + 1}"
            when = _time_range(chunk)
            title = f"{chunk[0]['id']} … {chunk[-1]['id']}" + (f" · {when}" if when else "")
            made.append({"id": group_id, "title": title, "parent": parent, "auto": True})
            for node in chunk:
                node["group"] = group_id
    return made


def safe_groups(doc: Canvas) -> tuple[list[Any], dict[str, str | None], dict[str, str]]:
    """The subgraphs to draw, and where each subgraph id's members go, on any structure.

    The parser keeps what the agent wrote; the layout needs a tree with unique ids. So a
    reopened (duplicate) subgraph id is one group (its first), a parent that does not come first
    is no parent (no cycle can form), groups nested deeper than MAX_GROUP_DEPTH are flattened
    into their ancestor at that depth, and a group whose id is also a node's is renamed.
    Returns (kept subgraphs, subgraph id -> id of the group drawn for it or None, new names).
    Linear in the number of subgraphs.
    """
    node_ids = set(doc.nodes)
    first: dict[str, int] = {}
    for index, sub in enumerate(doc.subgraphs):
        first.setdefault(sub.id, index)
    shown_as: dict[str, str | None] = {}
    depth: dict[str, int] = {}
    kept = []
    for index, sub in enumerate(doc.subgraphs):
        if first[sub.id] != index:
            continue
        parent = sub.parent if sub.parent in first and first[sub.parent] < index else None
        level = depth[parent] + 1 if parent is not None else 1
        if parent is not None and level > MAX_GROUP_DEPTH:
            shown_as[sub.id] = shown_as[parent]  # flattened into its deepest kept ancestor
            depth[sub.id] = depth[parent]
            continue
        shown_as[sub.id] = sub.id
        depth[sub.id] = level
        kept.append((sub, parent))
    taken = node_ids | set(first)
    names: dict[str, str] = {}
    for sub, _parent in kept:
        if sub.id in node_ids:  # a node and its group share an id: the group gets a new one
            name, k = f"{sub.id}~group", 1
            while name in taken:
                k += 1
                name = f"{sub.id}~group{k}"
            taken.add(name)
            names[sub.id] = name
    return kept, shown_as, names


def _directions(doc: Canvas) -> dict[str, str]:
    """subgraph id -> the `direction` written inside it (the innermost subgraph holding the line)."""
    found: dict[str, str] = {}
    for statement in doc.statements:
        if statement.kind != "direction":
            continue
        words = _statement_text(doc, statement).split()
        holding = [s for s in doc.subgraphs if s.line_start < statement.line < s.line_end]
        if len(words) == 2 and words[1].upper() in DIRECTIONS and holding:
            inner = min(holding, key=lambda s: s.line_end - s.line_start)
            found[inner.id] = "TB" if words[1].upper() == "TD" else words[1].upper()
    return found


def scene_of(doc: Canvas) -> Scene:
    class_defs, classes, styles, link_styles = _styles(doc)
    kept, shown_as, names = safe_groups(doc)

    def drawn(sub_id: str | None) -> str | None:
        target = shown_as.get(sub_id) if sub_id is not None else None
        return names.get(target, target) if target is not None else None

    nodes: list[SceneNode] = []
    for node in doc.nodes.values():
        css = _inline_style(node.id, class_defs, classes, styles, node=True)
        fields = node.fields
        key = status_key(fields.status)
        lines, rich = rich_lines(node.label_raw, node.id)
        item: SceneNode = {"id": node.id, "lines": lines}
        if rich is not None:
            item["rich"] = rich
        # only what differs from the usual is written: a 1000-node scene is sent on every edit
        shape = drawn_shape(node.shape)
        if shape != "rect":
            item["shape"] = shape
        if key != "none":
            item["key"] = key
        if key == "other":
            item["status"] = fields.status
        if css:
            item["css"] = css
        if fields.timestamp:
            item["ts"] = fields.timestamp
        if (group := drawn(node.subgraph)) is not None:
            item["group"] = group
        nodes.append(item)
    groups: list[SceneGroup] = []
    directions = _directions(doc)
    for sub, parent in kept:
        css = _inline_style(sub.id, class_defs, classes, styles, node=False)
        group_id = names.get(sub.id, sub.id)
        entry: SceneGroup = {"id": group_id, "title": sub.title, "parent": drawn(parent), "css": css}
        if sub.title_raw:  # markdown strings and <b>/<i> in a title, as in a node label
            title_lines, title_rich = rich_lines(sub.title_raw, sub.title)
            entry["title"] = " ".join(line for line in title_lines if line)
            if title_rich is not None:
                entry["titleRich"] = [
                    run for k, line in enumerate(title_rich) for run in ([[" ", ""]] if k else []) + line
                ]
        if sub.id in directions:
            entry["dir"] = directions[sub.id]
        groups.append(entry)
    groups += auto_groups(nodes, groups)
    edges: list[SceneEdge] = []
    for index, edge in enumerate(doc.edges):
        kind = edge.kind
        if kind == "bidirectional" and edge.arrow[:1] in BOTH_ENDS:  # o--o, x--x
            kind = BOTH_ENDS[edge.arrow[0]]
        line: SceneEdge = {"s": edge.source, "t": edge.target, "kind": kind}
        if edge.label:
            # mermaid breaks an edge label at <br/> too; the lines travel joined by \n
            label_lines, label_rich = rich_lines(edge.label, "")
            line["label"] = "\n".join(label_lines).strip()
            if label_rich is not None:  # bold/italic, as in a node label
                line["rich"] = label_rich
        css = ";".join(c for c in (link_styles.get("default"), link_styles.get(index)) if c)
        if css:
            line["css"] = css
        edges.append(line)
    drawn_scene: Scene = {
        # opens fully expanded and fitted whole (a larger one: as an overview, canvas.js)
        "small": len(doc.nodes) <= OVERVIEW_NODES,
        "direction": (doc.direction or "TD").upper(),
        "nodes": nodes,
        "edges": edges,
        "groups": groups,
    }
    if doc.acc_title:
        drawn_scene["accTitle"] = doc.acc_title
    if doc.acc_descr:
        drawn_scene["accDescr"] = doc.acc_descr
    return drawn_scene


def canvas_scene(text: str, doc: Canvas | None = None) -> Scene:
    """The scene of a canvas text: what ``render_body(text)`` gives mermaid.js, read directly.

    The same reading of the text (a one-line literal-``\\n`` file is drawn from its repair) and
    the same status classes, without writing and parsing the render body again. ``doc`` is
    ``parse(text)`` when the caller has it (its label fields are then read only once).
    """
    return scene_of(parse_drawn(text, doc))
