"""No import cycles: between the project's modules (function-level and TYPE_CHECKING imports
included), and the Django-free cores import nothing from Django or from the apps above them."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("canvases", "sessions", "memviz", "reviews")
CORES = ("canvases/mermaid", "sessions/memory")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def test_no_module_import_cycle() -> None:
    graph = _graph()
    # a package's __init__ re-exporting its modules is not a cycle of the modules themselves
    for name in list(graph):
        if (REPO / Path(*name.split("."))).is_dir():
            graph[name] = set()
    assert _cycles(graph) == []


def test_no_app_imports_the_reviews_app() -> None:
    """reviews reads sessions and canvases; they show its notes through template tags only."""
    for name, imports in _graph().items():
        if not name.startswith("reviews"):
            assert not [i for i in imports if i.startswith("reviews")], name


def test_the_cores_know_nothing_of_django_or_the_apps() -> None:
    for core in CORES:
        for path in (REPO / core).rglob("*.py"):
            tree = ast.parse(path.read_text("utf-8"))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                for module in names:
                    top = module.split(".")[0]
                    allowed = {"sessions.memory", "canvases.mermaid"}
                    assert top != "django", f"{path}: imports {module}"
                    if top in PACKAGES:
                        assert any(module.startswith(a) for a in allowed), f"{path}: imports {module}"


ROOF = ("memviz.urls", "memviz.routing", "memviz.asgi", "memviz.wsgi", "memviz.consumers")
# sessions (the index and its pages) importing canvases (the curation app) beyond its Django-free
# engine: the back edges the app split of issue 24 is to remove. The list may only shrink: a new
# back edge fails here (docs/architecture.md, "One home for each rule", says where code goes).
KNOWN_BACK_EDGES = {
    ("sessions.canvas_search", "canvases.models"),
    ("sessions.compare_selectors", "canvases.models"),
    ("sessions.counters", "canvases.models"),
    ("sessions.debug_cache", "canvases.models"),
    ("sessions.debug_selectors", "canvases.models"),
    ("sessions.debug_views", "canvases"),
    ("sessions.debug_views", "canvases.liveness"),
    ("sessions.debug_views", "canvases.models"),
    ("sessions.debug_views", "canvases.node_removal"),
    ("sessions.ingest", "canvases"),
    ("sessions.ingest", "canvases.indexing"),
    ("sessions.ingest", "canvases.reverts"),
    ("sessions.ingest", "canvases.write_path"),
    ("sessions.management.commands.run", "canvases.write_path"),
    ("sessions.offline", "canvases.canvas_scene"),
    ("sessions.offline", "canvases.models"),
    ("sessions.replay", "canvases.canvas_scene"),
    ("sessions.selectors", "canvases.models"),
    ("sessions.share_views", "canvases.models"),
    ("sessions.templatetags.debug_badges", "canvases.models"),
    ("sessions.views", "canvases"),
    ("sessions.views", "canvases.lineage"),
    ("sessions.views", "canvases.liveness"),
    ("sessions.views", "canvases.reverts"),
}


def test_no_new_import_points_up() -> None:
    """The apps never import the roof (URLs, routing, consumers, the ASGI/WSGI entry points),
    and sessions imports no more of canvases than the known back edges above."""
    graph = _graph()
    up = sorted(
        (name, target)
        for name, imports in graph.items()
        if name.split(".")[0] in ("canvases", "sessions", "reviews")
        for target in imports
        if target in ROOF
    )
    assert up == []
    back = {
        (name, target)
        for name, imports in graph.items()
        if name.startswith("sessions.")
        for target in imports
        if target.split(".")[0] == "canvases" and not target.startswith("canvases.mermaid")
    }
    assert back <= KNOWN_BACK_EDGES, sorted(back - KNOWN_BACK_EDGES)
    # an edge removed is taken off the list, so it cannot come back unnoticed
    assert back == KNOWN_BACK_EDGES, sorted(KNOWN_BACK_EDGES - back)
