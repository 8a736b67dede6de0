"""What the browser draws: a canvas's render-ready text read into nodes, edges and groups.

The scene is derived from ``render_body(text)`` on every request (never stored), so the canvas
stays the agent's own mermaid text. memviz's renderer (``static/js/canvas-*.js``) lays it out and
draws it in mermaid's look; see docs/canvas-rendering.md for why it does not hand big canvases
to mermaid.js.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from canvases.indexing import parsed
from canvases.mermaid import Canvas, parse, render_body
from canvases.mermaid.labels import decode_label, split_segments
from canvases.mermaid.render import STATUS_CLASS_PREFIX, status_key

# A block (the canvas or a subgraph) with more loose nodes than this is shown as groups of
# consecutive nodes (the order the agent wrote them, i.e. time) that expand on demand.
AUTO_GROUP_OVER = 60
AUTO_GROUP_SIZE = 30
CSS_PROPERTY = re.compile(
    r"^(fill|stroke|stroke-width|stroke-dasharray|color|font-weight|font-style|opacity"
    r"|fill-opacity|stroke-opacity|font-size)$"
)
CSS_VALUE = re.compile(r"^[#\w\s.,%()+-]{1,60}$")
CLASS_SUFFIX = re.compile(r":::([\w-]+)")
STATUS_PROPERTIES = {"fill", "stroke", "color", "stroke-dasharray", "stroke-width"}
HHMM = re.compile(r"T(\d\d:\d\d)")


def safe_css(declarations: str) -> str:
    """The agent's style text, limited to drawing properties (no url(), no other property)."""
    kept = []
    for part in declarations.replace(";", ",").split(","):
        name, sep, value = part.partition(":")
        name, value = name.strip().lower(), value.strip().removesuffix("!important").strip()
        if sep and CSS_PROPERTY.match(name) and CSS_VALUE.match(value) and "url" not in value:
            kept.append(f"{name}:{value}")
    # stroke-dasharray values are written "4 3" or "4,3": the split above took the comma form
    return ";".join(kept)


def label_lines(node_label_raw: str, fallback: str) -> list[str]:
    raw = node_label_raw or fallback
    if len(raw) >= 2 and raw[0] == "`" and raw[-1] == "`":
        raw = raw[1:-1]
    return [decode_label(segment) for segment in split_segments(raw)] or [fallback]


def _statement_text(doc: Canvas, statement: Any) -> str:
    return doc.text[statement.start : statement.stop].strip().rstrip(";")


def _styles(doc: Canvas) -> tuple[dict[str, str], dict[str, list[str]], dict[str, str], dict]:
    """(classDef name -> css, node/subgraph id -> classes, id -> style, edge index -> style)."""
    class_defs: dict[str, str] = {}
    classes: dict[str, list[str]] = {}
    styles: dict[str, str] = {}
    link_styles: dict[int, str] = {}
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
                    if index.isdigit():
                        link_styles[int(index)] = safe_css(parts[2])
        elif kind == "chain":
            for group in statement.groups:
                for ref in group:
                    start = ref.shape_end if ref.shape_end > 0 else ref.id_end
                    suffix = CLASS_SUFFIX.search(doc.text, start, ref.end)
                    if suffix:
                        classes.setdefault(ref.id, []).append(suffix.group(1))
    return class_defs, classes, styles, link_styles


def _inline_style(ids: str, class_defs: dict, classes: dict, styles: dict) -> tuple[list, str]:
    """memviz's own classes stay class names (themed by CSS); the agent's become inline css."""
    names = [n for n in classes.get(ids, []) if n.startswith(STATUS_CLASS_PREFIX)]
    css = []
    for name in classes.get(ids, []):
        if name in class_defs and not name.startswith(STATUS_CLASS_PREFIX):
            # memviz's status class comes last in the render body and wins over the agent's
            css.append(class_defs[name] if not names else _without_colours(class_defs[name]))
    if ids in styles:
        css.append(styles[ids])
    return names, ";".join(c for c in css if c)


def _without_colours(css: str) -> str:
    return ";".join(d for d in css.split(";") if d.split(":")[0] not in STATUS_PROPERTIES)


def _time_range(nodes: list[dict]) -> str:
    stamps = sorted(t for n in nodes if (t := n.get("ts")))
    if not stamps:
        return ""
    first, last = HHMM.search(stamps[0]), HHMM.search(stamps[-1])
    if not first or not last:
        return ""
    day = stamps[0][5:10] if stamps[0][:10] == stamps[-1][:10] else ""
    span = first.group(1) if first.group(1) == last.group(1) else f"{first.group(1)}–{last.group(1)}"
    return f"{day} {span}".strip()


def auto_groups(nodes: list[dict], groups: list[dict]) -> list[dict]:
    """Consecutive runs of the loose nodes of any crowded block, as groups of their own.

    Sets each chunked node's ``group`` to its new group; returns the new groups.
    """
    loose: dict[str | None, list[dict]] = {}
    for node in nodes:
        loose.setdefault(node["group"], []).append(node)
    made = []
    for parent, members in loose.items():
        if len(members) <= AUTO_GROUP_OVER:
            continue
        count = math.ceil(len(members) / AUTO_GROUP_SIZE)
        size = math.ceil(len(members) / count)
        for k in range(count):
            chunk = members[k * size : (k + 1) * size]
            group_id = f"~{k + 1}" if parent is None else f"~{parent}~{k + 1}"
            when = _time_range(chunk)
            title = f"{chunk[0]['id']} … {chunk[-1]['id']}" + (f" · {when}" if when else "")
            made.append({"id": group_id, "title": title, "parent": parent, "auto": True})
            for node in chunk:
                node["group"] = group_id
    return made


def scene_of(doc: Canvas) -> dict[str, Any]:
    class_defs, classes, styles, link_styles = _styles(doc)
    subgraph_ids = {sub.id for sub in doc.subgraphs}
    nodes = []
    for node in doc.nodes.values():
        names, css = _inline_style(node.id, class_defs, classes, styles)
        fields = node.fields
        nodes.append(
            {
                "id": node.id,
                "lines": label_lines(node.label_raw, node.id),
                "shape": node.shape,
                "cls": names,
                "css": css,
                "status": fields.status or "",
                "key": status_key(fields.status),
                "ts": fields.timestamp or "",
                "group": node.subgraph if node.subgraph in subgraph_ids else None,
            }
        )
    groups = []
    for sub in doc.subgraphs:
        _, css = _inline_style(sub.id, class_defs, classes, styles)
        groups.append({"id": sub.id, "title": sub.title, "parent": sub.parent, "css": css})
    groups += auto_groups(nodes, groups)
    edges = []
    for index, edge in enumerate(doc.edges):
        item = {"s": edge.source, "t": edge.target, "kind": edge.kind}
        if edge.label:
            item["label"] = decode_label(edge.label)
        if index in link_styles:
            item["css"] = link_styles[index]
        edges.append(item)
    return {
        "direction": (doc.direction or "TD").upper(),
        "nodes": nodes,
        "edges": edges,
        "groups": groups,
    }


@lru_cache(maxsize=8)
def _scene_and_body(text: str) -> tuple[dict[str, Any], str]:
    body = render_body(text, doc=parsed(text))
    return scene_of(parse(body)), body


def canvas_scene(text: str) -> dict[str, Any]:
    """The scene of a canvas file's text (or of a render body: rendering it again is harmless)."""
    return _scene_and_body(text)[0]


def canvas_body(text: str) -> str:
    """The whole canvas as mermaid.js takes it (nothing collapsed): what "export" hands out."""
    return _scene_and_body(text)[1]
