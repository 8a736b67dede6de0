"""The scene's shape: what `canvas_scene` builds and the page's JSON twin and
``static/js/canvas-*.js`` read (``tests/js/scene.test.mjs``; the JSON shape tests check every page
that carries one). Only what differs from the usual is written: a 1000-node scene is sent on
every edit."""

# No `from __future__ import annotations` here: the keys' NotRequired must be seen at run time
# (tests/shapes.py reads __required_keys__).
from typing import NotRequired, TypedDict

from canvases.scene_labels import Run


class SceneNode(TypedDict):
    id: str
    lines: list[str]  # the label's plain lines
    rich: NotRequired[list[list[Run]]]  # bold/italic runs per line, when any
    shape: NotRequired[str]  # scene_shapes' name; absent: a rectangle
    key: NotRequired[str]  # the status class (statuses.js); absent: no status
    status: NotRequired[str | None]  # the word as written, when it is no known status
    css: NotRequired[str]  # the author's own style, made safe
    ts: NotRequired[str]
    group: NotRequired[str]


class SceneEdge(TypedDict):
    s: str
    t: str
    kind: str
    label: NotRequired[str]  # lines joined by \n
    rich: NotRequired[list[list[Run]]]
    css: NotRequired[str]


class SceneGroup(TypedDict):
    id: str
    title: str
    parent: str | None
    css: NotRequired[str]
    titleRich: NotRequired[list[Run]]
    dir: NotRequired[str]  # a `direction` written inside the subgraph
    auto: NotRequired[bool]  # consecutive loose nodes of a crowded block (auto_groups)


class Scene(TypedDict):
    accTitle: NotRequired[str]
    accDescr: NotRequired[str]
    small: bool  # opens fully expanded and fitted whole (a larger one: as an overview)
    direction: str
    nodes: list[SceneNode]
    edges: list[SceneEdge]
    groups: list[SceneGroup]
