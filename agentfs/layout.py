"""Finds agent folders under a data root and the files of each, in every layout of the spec.

No symbolic link below the data root is followed (see docs/security.md): a linked agent folder,
session folder, `mmds/` or `refs/`, or a linked `.mmd`, is left out and named in
``AgentFolder.refused``. Linked offload, state and registry files stay listed so that their
readers, which open without following links, report the refusal where the page shows problems.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentfs.paths import UnsafePath, check_relative, confine_file, is_link, open_regular
from agentfs.wording import Refusal

__all__ = [
    "AgentFolder",
    "SessionFile",
    "Variant",
    "discover_agents",
    "is_agent_folder",
    "is_ignored_name",
    "is_offload_file_name",
]

Variant = Literal["upstream", "enhanced", "go", "server"]

STATE_FILE = "state.json"
REGISTRY_FILE = "sessions-registry.json"
# Files of the server variant's per-session store (offload/<session>/...).
SERVER_ROW_FILES = ("entries.jsonl", "pending.jsonl")
SERVER_MARKERS = ("entries.jsonl", "pending.jsonl", "node-mapping.jsonl", "compact-state.json")
# Folders of an agent that are never agents themselves.
CANVAS_DIR = "mmds"  # an agent folder's canvases: <agent>/mmds/NNN-<task>.mmd
# The NNN- of a canvas file and of its nodes' ids (`003-k8s.mmd`, `003-N2`): the plugin's `^(\d+)-`.
NUMBER_PREFIX = re.compile(r"^(\d+)-")
REFS_DIR = "refs"  # its tool results: <agent>/refs/<timestamp>.md
AGENT_SUBDIRS = frozenset({REFS_DIR, CANVAS_DIR, "skills"})


def canvas_file(agent_dir: Path, filename: str) -> Path:
    """``<agent>/mmds/<filename>``, confined to the agent folder (UnsafePath otherwise).

    Its own name is not resolved (``confine_file``): a canvas swapped for a link is refused.
    """
    if len(check_relative(filename).parts) != 1:
        raise UnsafePath("path_leaves", path=filename)
    return confine_file(agent_dir, f"{CANVAS_DIR}/{filename}")
_ENHANCED_PREFIXES = ("boundaries-", "degraded-retry-")
# Never a folder (a path below a character device): the refs/ of an agent whose refs/ is a link.
NO_FOLDER = Path(os.devnull) / "refused-link"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SessionFile:
    session_id: str
    path: Path
    layout_dir: Path
    # Per-session state of the Go and server layouts; None when the agent shares one state.json.
    state_path: Path | None = None


@dataclass(frozen=True, slots=True)
class AgentFolder:
    name: str
    path: Path
    variant: Variant
    session_files: list[SessionFile]
    mmd_files: list[Path]
    refs_dir: Path
    state_path: Path | None
    registry_path: Path | None
    extra_files: list[Path]
    # Every refs/ folder of the agent: one for the shared layouts, one per session otherwise.
    refs_dirs: list[Path] = field(default_factory=list)
    # Links left out of the lists above, each naming its path relative to the agent.
    refused: list[Refusal] = field(default_factory=list)


def is_ignored_name(name: str) -> bool:
    """Dotfiles (E's crash temp files) and the reclaimer's `*.tmp.*` leftovers are never read."""
    return name.startswith(".") or ".tmp." in name or ".tmp-" in name or name.endswith(".tmp")


def is_offload_file_name(name: str) -> bool:
    """The plugin's own test for a session file."""
    return name.startswith("offload-") and name.endswith(".jsonl") and not is_ignored_name(name)


def offload_file_name(session_id: str) -> str:
    """The session file the plugin writes for ``session_id`` (`session_id_of` reads it back)."""
    return f"offload-{session_id}.jsonl"


def offload_files(agent_dir: Path) -> list[Path]:
    """An agent folder's session files, sorted: plain files only (a link is not followed), none
    when the folder is gone."""
    try:
        entries = list(os.scandir(agent_dir))
    except FileNotFoundError:
        return []
    return sorted(
        Path(entry.path)
        for entry in entries
        if is_offload_file_name(entry.name) and entry.is_file(follow_symlinks=False)
    )


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return sorted((e for e in scan if not is_ignored_name(e.name)), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def _files(folder: Path) -> list[Path]:
    """Regular files; links to files too (their readers refuse and report them)."""
    return [Path(e.path) for e in _entries(folder) if e.is_file()]


def _dirs(folder: Path) -> list[Path]:
    """Real folders only: a link to a folder is never entered."""
    return [Path(e.path) for e in _entries(folder) if e.is_dir(follow_symlinks=False)]


def _linked(folder: Path) -> list[Path]:
    return [Path(e.path) for e in _entries(folder) if e.is_symlink()]


def _mmds(folder: Path, refused: list[Refusal], base: Path) -> list[Path]:
    mmds = folder / CANVAS_DIR
    if is_link(mmds):
        refused.append(Refusal("is_link", {"name": f"{_rel(mmds, base)}/"}))
        return []
    found = []
    for path in _files(mmds):
        if not path.name.endswith(".mmd"):
            continue
        if is_link(path):
            refused.append(Refusal("is_link", {"name": _rel(path, base)}))
        else:
            found.append(path)
    return found


def _rel(path: Path, base: Path) -> str:
    return os.path.relpath(path, base)


def _refs_dir(folder: Path, refused: list[Refusal], base: Path) -> Path:
    refs = folder / REFS_DIR
    if is_link(refs):
        refused.append(Refusal("is_link", {"name": f"{_rel(refs, base)}/"}))
        return NO_FOLDER
    return refs


def _linked_dirs(folder: Path, refused: list[Refusal], base: Path) -> None:
    for path in _linked(folder):
        if path.name not in (CANVAS_DIR, REFS_DIR) and path.is_dir():
            refused.append(Refusal("is_link", {"name": f"{_rel(path, base)}/"}))


def _has_agent_markers(entries: list[os.DirEntry[str]]) -> bool:
    names = {e.name for e in entries}
    if STATE_FILE in names or REGISTRY_FILE in names:
        return True
    if any(is_offload_file_name(n) for n in names):
        return True
    return REFS_DIR in names and CANVAS_DIR in names


def is_agent_folder(path: Path) -> bool:
    """An upstream-style agent folder: offload files, state, registry, or the refs/+mmds/ pair.

    A folder whose own subfolders are agent folders is a data root instead (it may hold legacy
    root-level offload files). Only one level down is looked at, so a huge tree is not walked.
    """
    path = Path(path)
    if is_link(path) or not path.is_dir() or is_ignored_name(path.name):
        return False
    entries = _entries(path)
    if not _has_agent_markers(entries):
        return False
    return not any(
        e.is_dir(follow_symlinks=False)
        and e.name not in AGENT_SUBDIRS
        and _has_agent_markers(_entries(Path(e.path)))
        for e in entries
    )


def _is_server_session(path: Path) -> bool:
    return any((path / marker).is_file() for marker in SERVER_MARKERS)


def _is_go_session(path: Path) -> bool:
    # The Go port names its one offload file after its own folder; an upstream agent `main`
    # can hold `offload-main.jsonl` too, so also ask for a Go scope name or snake_case state.
    if not (path / offload_file_name(path.name)).is_file():
        return False
    if path.parent.name.startswith("agent_"):
        return True
    try:
        with open_regular(path / STATE_FILE, folders=1) as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"active_mmd_file"' in head or b'"mmd_counter"' in head


def _is_go_scope(path: Path) -> bool:
    return not _has_offload_files(path) and any(_is_go_session(d) for d in _dirs(path))


def _has_offload_files(path: Path) -> bool:
    return any(is_offload_file_name(p.name) for p in _files(path))


def _server_store(path: Path) -> Path | None:
    """The `offload/` folder of a server store at `path`, or `path` itself if it is one."""
    inner = path / "offload"
    if not is_link(inner) and inner.is_dir() and any(_is_server_session(d) for d in _dirs(inner)):
        return inner
    if not _has_offload_files(path) and any(_is_server_session(d) for d in _dirs(path)):
        return path
    return None


def _session_id(file_name: str) -> str:
    return file_name[len("offload-") : -len(".jsonl")]


def _upstream_agent(path: Path) -> AgentFolder:
    sessions: list[SessionFile] = []
    extras: list[Path] = []
    refused: list[Refusal] = []
    state_path = registry_path = None
    enhanced = False
    for file in _files(path):
        if is_offload_file_name(file.name):
            sessions.append(SessionFile(_session_id(file.name), file, path))
        elif file.name == STATE_FILE:
            state_path = file
        elif file.name == REGISTRY_FILE:
            registry_path = file
        elif is_link(file):
            refused.append(Refusal("is_link", {"name": file.name}))
        else:
            extras.append(file)
            enhanced = enhanced or file.name.startswith(_ENHANCED_PREFIXES)
    _linked_dirs(path, refused, path)
    mmds = _mmds(path, refused, path)
    refs_dir = _refs_dir(path, refused, path)
    if not enhanced:
        enhanced = any(n.startswith(".offload-") for n in os.listdir(path) if ".tmp-" in n)
    return AgentFolder(
        name=path.name,
        path=path,
        variant="enhanced" if enhanced else "upstream",
        session_files=sessions,
        mmd_files=mmds,
        refs_dir=refs_dir,
        state_path=state_path,
        registry_path=registry_path,
        extra_files=extras,
        refs_dirs=[] if refs_dir == NO_FOLDER else [refs_dir],
        refused=refused,
    )



def _newest(paths: Iterable[Path]) -> Path | None:
    existing = [p for p in paths if p.is_file()]
    if not existing:
        return None
    # The most recently written per-session state is the one that reflects the agent now.
    return max(existing, key=lambda p: (p.stat().st_mtime_ns, str(p)))


def _per_session_agent(
    path: Path,
    name: str,
    variant: Variant,
    session_dirs: list[Path],
    store: Path | None = None,
) -> AgentFolder:
    sessions: list[SessionFile] = []
    extras: list[Path] = []
    refused: list[Refusal] = []
    if store is not None:
        _linked_dirs(store, refused, path)
    mmds: list[Path] = []
    states: list[Path] = []
    registries: list[Path] = []
    for folder in session_dirs:
        state = folder / STATE_FILE
        state_path = state if state.is_file() else None
        if state_path:
            states.append(state_path)
        row_files: list[Path] = []
        for file in _files(folder):
            is_rows = (
                is_offload_file_name(file.name)
                if variant == "go"
                else file.name == _server_row_file(folder)
            )
            if is_rows:
                row_files.append(file)
            elif file.name == REGISTRY_FILE:
                registries.append(file)
            elif is_link(file):
                refused.append(Refusal("is_link", {"name": _rel(file, path)}))
            elif file.name != STATE_FILE:
                extras.append(file)
        for file in row_files:
            session_id = _session_id(file.name) if variant == "go" else folder.name
            sessions.append(SessionFile(session_id, file, folder, state_path))
        mmds.extend(_mmds(folder, refused, path))
    mmds.sort(key=lambda p: (p.name, str(p)))
    refs_dirs = [_refs_dir(folder, refused, path) for folder in session_dirs]
    refs_dirs = [folder for folder in refs_dirs if folder != NO_FOLDER]
    return AgentFolder(
        name=name,
        path=path,
        variant=variant,
        session_files=sessions,
        mmd_files=mmds,
        refs_dir=refs_dirs[0] if refs_dirs else _refs_dir(path, [], path),
        state_path=_newest(states),
        registry_path=_newest(registries),
        extra_files=extras,
        refs_dirs=refs_dirs,
        refused=refused,
    )


def _server_row_file(folder: Path) -> str | None:
    for name in SERVER_ROW_FILES:
        if (folder / name).is_file():
            return name
    return None


def _go_agent(scope: Path) -> AgentFolder:
    sessions = [d for d in _dirs(scope) if _is_go_session(d)]
    return _per_session_agent(scope, scope.name, "go", sessions, store=scope)


def _server_agent(root: Path, store: Path) -> AgentFolder:
    name = root.parent.name if root == store and root.name == "offload" else root.name
    sessions = [d for d in _dirs(store) if _is_server_session(d)]
    return _per_session_agent(root, name or "server", "server", sessions, store=store)


def _agent_at(path: Path) -> AgentFolder | None:
    """The agent rooted exactly at `path`, whatever its layout, or None."""
    store = _server_store(path)
    if store is not None:
        return _server_agent(path, store)
    if _is_server_session(path):
        return _per_session_agent(path, path.name, "server", [path])
    if _is_go_scope(path):
        return _go_agent(path)
    if _is_go_session(path):
        return _per_session_agent(path, path.parent.name or path.name, "go", [path])
    if is_agent_folder(path):
        return _upstream_agent(path)
    return None


def discover_agents(root: Path) -> list[AgentFolder]:
    """Agents under `root`, sorted by name then path.

    `root` may be a data root (a folder of agent folders), one agent folder, a Go-port root
    (`<root>/<scope>/<sessionId>/…`) or scope, or a server store (`offload/<session>/…`).
    Root-level legacy logs and loose offload files are ignored, as are dotfiles and temp files.
    """
    # Resolved once: links above the data root are the operator's; none below it is followed.
    root = Path(root).resolve()
    if not root.is_dir():
        return []
    per_session = _server_store(root) or _is_server_session(root) or _is_go_scope(root)
    # Otherwise agent children decide first: a data root may hold legacy offload files itself.
    agents = [] if per_session else _child_agents(root)
    if not agents:
        single = _agent_at(root)
        agents = [single] if single is not None else []
    for agent in agents:
        for item in agent.refused:
            log.warning("%s: %s", agent.name, item.reason)
    return agents


def _child_agents(root: Path) -> list[AgentFolder]:
    agents: list[AgentFolder] = []
    for child in _linked(root):
        if child.is_dir():
            refusal = Refusal("is_link", {"name": child.name})
            log.warning("%s (not read as an agent folder)", refusal.reason)
    for child in _dirs(root):
        if child.name in AGENT_SUBDIRS:
            continue
        agent = _agent_at(child)
        if agent is not None:
            agents.append(agent)
    agents.sort(key=lambda a: (a.name, str(a.path)))
    return agents


