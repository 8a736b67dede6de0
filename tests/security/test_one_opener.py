"""Issue 22 item 1: every file memviz reads from a memory folder goes through one opener
(`agentfs.paths.open_regular` / `read_regular` / `open_append`), which refuses links,
FIFOs, devices and sockets without blocking and bounds what it reads.

The code is walked: any other file open or read in any app of the project (tests/code_tree.py) fails, unless
it is on the short list below of reads that never touch a memory folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.code_tree import APP_PACKAGES

REPO = Path(__file__).resolve().parents[2]
PACKAGES = APP_PACKAGES
READ_METHODS = {"read_text", "read_bytes", "open"}
OS_OPENERS = {"open", "fdopen"}

# (file, function) -> why it may open a file itself. Nothing here reads a memory-folder file.
ALLOWED = {
    ("agentfs/paths.py", "open_regular"): "the opener itself",
    ("agentfs/paths.py", "open_regular_fd"): "the opener itself",
    ("agentfs/paths.py", "_open_walk"): "the opener itself (no /proc)",
    ("agentfs/paths.py", "open_append"): "the opener for appends",
    ("agentfs/atomic.py", "open_temp_beside"): "creates a new temp file (O_EXCL)",
    ("agentfs/atomic.py", "fsync_folder"): "a folder (O_DIRECTORY), never a FIFO",
    ("agentfs/atomic.py", "lock_folder"): "a folder (O_DIRECTORY), never a FIFO",
    ("agentfs/atomic.py", "_current_umask"): "/proc/self/status, not a memory folder",
    ("agentfs/inode_io.py", "save_unplaced_bytes"): "creates a new file (O_EXCL)",
    ("agentfs/journal.py", "intent_load_all"): "memviz's own journal folder",
    ("intake/archive.py", "_copy_limited"): "writes an unpacked upload member (new file)",
    ("debugging/offline_html.py", "_asset"): "memviz's own static JS and CSS, inlined in a file",
    ("canvases/status_assets.py", "stale"): "memviz's own generated static CSS and JS, compared with the table",
    ("sessions/job_board.py", "board_read"): "memviz's own job-progress file under var/ (SQLite beat)",
    ("intake/archive.py", "_unpack_zip"): "a member of the uploaded archive",
    ("intake/archive.py", "_unpack_tar"): "the uploaded archive itself",
    ("intake/archive.py", "_zip_central_names"): "the uploaded archive (its member count)",
    ("intake/archive.py", "_open_decompressed"): "the uploaded archive (its member count)",
    ("memviz/local_state.py", "private_file"): "memviz's own var/ files (0600)",
    ("memviz/process_lock.py", "_file_lock"): "memviz's own lock file beside its database",
    ("memviz/process_lock.py", "_file_lock_probe"): "memviz's own lock file beside its database",
    ("memviz/local_state.py", "secret_key"): "the generated secret key",
    ("memviz/local_state.py", "_read_key"): "the generated secret key",
    ("memviz/push.py", "post"): "an HTTP answer (urlopen), not a file",
    ("memviz/push.py", "_text"): "the push client (standard library only) on the agent's side",
    ("memviz/push.py", "_json_event"): "the push client (standard library only)",
}


def _call_kind(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        return "open("
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id in {"os", "io", "codecs"}:
            return f"{owner.id}.{func.attr}(" if func.attr in OS_OPENERS else None
        if func.attr in READ_METHODS or func.attr == "urlopen":
            return f".{func.attr}("
    return None


def _reads() -> list[tuple[str, str, int, str]]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if "/migrations/" in relative:
                continue
            tree = ast.parse(path.read_text("utf-8"))
            functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
            owner = {}
            for function in functions:  # innermost function wins: walk outer ones first
                for node in ast.walk(function):
                    owner[id(node)] = function.name
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and (kind := _call_kind(node)):
                    found.append((relative, owner.get(id(node), "<module>"), node.lineno, kind))
    return found


def test_no_file_is_read_outside_the_one_opener() -> None:
    stray = [
        f"{file}:{line} {kind} in {function}()"
        for file, function, line, kind in _reads()
        if (file, function) not in ALLOWED
    ]
    assert not stray, "file reads outside agentfs.paths:\n" + "\n".join(stray)


def test_the_allow_list_names_only_reads_that_exist() -> None:
    present = {(file, function) for file, function, _, _ in _reads()}
    assert set(ALLOWED) <= present, set(ALLOWED) - present
