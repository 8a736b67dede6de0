"""memviz's own files under ``var/``: private to the user who runs it (folder 0700, files 0600).

Other local users must not read the SQLite index (it holds session keys) or the secret key (it
signs session cookies), so both are created private, and an existing ``var/`` is tightened.
Imported by settings: standard library only, nothing here may touch Django.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import time
from pathlib import Path

SECRET_KEY_FILE = "secret_key"


def private_folder(path: Path) -> Path:
    """Create ``path`` (and parents) and make it 0700 when it is ours."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(PermissionError):
        info = path.stat()
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != 0o700:
            path.chmod(0o700)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty if it is missing, and make it 0600 (an SQLite file before first use).

    SQLite creates its -wal and -shm files with the mode of the database file, so they follow.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def private_sqlite(name: str) -> None:
    """Make the SQLite database ``name`` and its companions 0600, wherever DATABASE_URL puts it.

    A missing database is created empty and private first (SQLite would create it 0644 under the
    usual umask, and its -wal/-shm after it); companions a previous run left are tightened too.
    In-memory and ``file:`` URI databases have no path of ours to protect.
    """
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    path = Path(os.path.realpath(name))  # a configured link is followed to the real file
    if not path.parent.is_dir():
        return  # SQLite will refuse to open it; nothing to protect yet
    private_file(path)
    for suffix in SQLITE_COMPANIONS:
        companion = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError, PermissionError):
            info = companion.lstat()
            mine = stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
            if mine and stat.S_IMODE(info.st_mode) != 0o600:
                companion.chmod(0o600)


def secret_key(var_dir: Path) -> str:
    """The key in ``var/secret_key``, generated at first use (0600, written atomically).

    Two processes starting at once both end up with the key that won the ``link``.
    """
    path = var_dir / SECRET_KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    temp = var_dir / f".{SECRET_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, secrets.token_urlsafe(50).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)  # fails if another process got there first: its key wins
    except FileExistsError:
        pass
    finally:
        temp.unlink()
    return _read_key(path)


def _read_key(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if stat.S_IMODE(os.fstat(handle.fileno()).st_mode) & 0o077:
            os.fchmod(handle.fileno(), 0o600)
        key = handle.read().decode("ascii").strip()
    if len(key) < 32:
        raise ValueError(f"{path.name} holds no usable key; delete it to generate a new one")
    return key


def demo_copy(source: Path, var_dir: Path) -> Path:
    """The bundled demo data root, copied once into ``var/demo/`` and served from there.

    Curating the demo then edits memviz's own copy, never a tracked file of the clone. The copy
    is an agent at rest: its files are dated a day back (a fresh clone's times would read as an
    agent writing right now). It appears whole: made beside and renamed into place, so two
    processes starting at once both see one copy.
    """
    target = var_dir / "demo" / source.name
    if target.is_dir():
        return target
    private_folder(target.parent)
    temp = target.parent / f".{source.name}.{os.getpid()}.{secrets.token_hex(4)}"
    shutil.copytree(source, temp, symlinks=True)
    at_rest = time.time() - 86_400
    for path in temp.rglob("*"):
        os.utime(path, (at_rest, at_rest), follow_symlinks=False)
    try:
        temp.rename(target)
    except OSError:  # another process put its copy in place first
        shutil.rmtree(temp, ignore_errors=True)
    return target


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    host = host.strip().strip("[]").lower()
    if host in {"localhost", "::1", "ip6-localhost"}:
        return True
    parts = host.split(".")
    return len(parts) == 4 and parts[0] == "127" and all(p.isdigit() for p in parts)


def anonymous_view_allowed(bind_host: str, *, published: bool, wanted: bool = True) -> bool:
    """Anonymous viewing: only on a loopback bind that no proxy publishes, and if not turned off.

    ``published`` is True behind a reverse proxy (trusted origins or the TLS proxy are set):
    then even a loopback bind is reachable from elsewhere.
    """
    return wanted and is_loopback(bind_host) and not published


def cookie_names(port: int, *, tls: bool) -> tuple[str, str]:
    """(session, CSRF) cookie names of a server on ``port``.

    Browsers keep cookies per host, not per port: every program on 127.0.0.1 receives (and may
    overwrite) the cookies of every other. A name carrying the port keeps memviz's apart from
    another local app's ``sessionid``. Behind TLS the ``__Host-`` prefix makes the browser refuse
    any such cookie not set by a secure page of this very host (the port is the proxy's there).
    """
    if tls:
        return "__Host-memviz_session", "__Host-memviz_csrftoken"
    return f"memviz{port}_session", f"memviz{port}_csrftoken"
