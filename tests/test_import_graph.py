"""No import cycles between the project's modules (function-level and TYPE_CHECKING imports
included); the Django-free cores import nothing from Django or the apps; the apps import down
their floors only, and so do their migrations."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.code_tree import APP_PACKAGES

REPO = Path(__file__).resolve().parents[1]
PACKAGES = APP_PACKAGES
CORES = ("canvases/mermaid", "agentfs")


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
                    allowed = {"agentfs", "canvases.mermaid"}
                    assert top != "django", f"{path}: imports {module}"
                    if top in PACKAGES:
                        assert any(module.startswith(a) for a in allowed), f"{path}: imports {module}"


# The roof: what wires the apps together (and the server's front door, daphne_gate, which asks
# intake whether a push's token is good before its body is read).
ROOF = (
    "memviz.urls",
    "memviz.routing",
    "memviz.asgi",
    "memviz.wsgi",
    "memviz.consumers",
    "memviz.daphne_gate",
)
# The apps on floors (docs/architecture.md, "Apps on floors"): a module may import its own app
# and the apps below it. The Django-free cores are a floor of their own, under everything.
FLOORS = {
    "cores": 0,  # canvases.mermaid, agentfs
    "memviz": 1,  # pages, responders, broadcast, body gate, fields (the roof is apart: ROOF)
    "sessions": 2,  # the index, search and the browsing pages
    "canvases": 3,  # curation: the engine's Django side, the write path, edits, history
    "intake": 4,  # ingest, watch, stream, uploads, jobs, the commands that run them
    "debugging": 5,  # replay, diagnostics, ledger, reports, comparisons, offline files
    "reviews": 6,  # review notes and queue decisions
    "browse": 7,  # the home, agent, session, ref and search pages
    "roof": 8,  # urls, routing, consumers, asgi/wsgi
}


def _floor(module: str) -> int:
    if module in ROOF:
        return FLOORS["roof"]
    if module.startswith(("canvases.mermaid", "agentfs")):
        return FLOORS["cores"]
    return FLOORS[module.split(".")[0]]


def test_imports_point_down_the_floors() -> None:
    """Every import (function-level ones included) points to the module's own floor or one below
    it: no app reaches up."""
    up = sorted(
        (name, target)
        for name, imports in _graph().items()
        for target in imports
        if _floor(target) > _floor(name)
    )
    assert up == [], up


def test_migrations_depend_down_the_floors() -> None:
    """A migration depends on its own app's and lower floors' migrations only (apart from the
    one known back edge, applied everywhere already: changing it would break upgrades)."""
    labels = {"agent_sessions": "sessions", "canvases": "canvases", "memviz": "memviz"}
    known = {("sessions", "0003_kept_counts_and_search", "canvases")}
    up = set()
    for app in APP_PACKAGES:
        for path in sorted((REPO / app / "migrations").glob("0*.py")):
            tree = ast.parse(path.read_text("utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Tuple) and len(node.elts) == 2:
                    first = node.elts[0]
                    if isinstance(first, ast.Constant) and first.value in labels:
                        other = labels[first.value]
                        if FLOORS[other] > FLOORS[app]:
                            up.add((app, path.stem, other))
    assert up == known
