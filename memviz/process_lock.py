"""Locks between processes, on every machine that shares the database: one watcher, one migrate.

On PostgreSQL a session advisory lock on a connection of its own (not the pool's: the lock lives
exactly as long as that connection, so a process that dies, even by ``kill -9``, releases it as
the server sees its socket close). On SQLite (one machine) ``flock`` on a file beside the
database, released by the kernel when the process dies. The holder's ``host:pid`` is readable by
others (``lock_holder``), for operators and tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from django.db import connections

CONNECT_TIMEOUT_S = 2


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class HeldLock(Protocol):
    def alive(self) -> bool: ...
    def release(self) -> None: ...


def _is_postgres() -> bool:
    return connections["default"].vendor == "postgresql"


def _key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``."""
    digest = hashlib.sha256(f"memviz:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _pg_connect(name: str) -> Any:
    import psycopg

    db = connections["default"].settings_dict
    params = {
        "dbname": db["NAME"],
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or None,
        "port": db["PORT"] or None,
    }
    return psycopg.connect(
        **{k: v for k, v in params.items() if v},
        autocommit=True,
        connect_timeout=CONNECT_TIMEOUT_S,
        application_name=f"memviz {name} {holder_name()}"[:63],
    )


class _PgLock:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def alive(self) -> bool:
        """False once the connection (and with it the lock) is gone: a database restart."""
        try:
            self.conn.execute("SELECT 1")
            return True
        except Exception:  # noqa: BLE001 - any failure means the lock may be someone else's
            return False

    def release(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()  # the server drops a closed session's advisory locks


class _FileLock:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def alive(self) -> bool:
        return True

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)  # closing the only descriptor releases the flock


def _lock_path(name: str) -> Path:
    """Beside the SQLite database, so every process using that database meets the same file."""
    db = Path(connections["default"].settings_dict["NAME"])
    return db.with_name(f"{db.name}.{name}.lock")


def _file_lock(name: str, *, wait: bool) -> _FileLock | None:
    fd = os.open(_lock_path(name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.pwrite(fd, holder_name().encode(), 0)
    return _FileLock(fd)


class Contender:
    """Asks for the lock ``name`` as often as it likes, on one connection kept between asks
    (a standby watcher asks every second: a new server backend each time would be waste)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.conn: Any = None

    def attempt(self) -> HeldLock | None:
        """The lock until ``release`` (or this process's death); None while another has it.

        Raises the database's error when PostgreSQL cannot be reached.
        """
        if not _is_postgres():
            return _file_lock(self.name, wait=False)
        if self.conn is None or self.conn.closed:
            self.conn = _pg_connect(self.name)
        try:
            row = self.conn.execute("SELECT pg_try_advisory_lock(%s)", [_key(self.name)])
            got = row.fetchone()[0]
        except Exception:
            self.close()
            raise
        if not got:
            return None
        held, self.conn = _PgLock(self.conn), None  # the lock's connection is the lock's now
        return held

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.close()
            self.conn = None


def lock_try(name: str) -> HeldLock | None:
    """One attempt at the lock ``name`` (see ``Contender.attempt``)."""
    contender = Contender(name)
    try:
        return contender.attempt()
    finally:
        contender.close()


@contextlib.contextmanager
def lock_held(name: str) -> Iterator[None]:
    """Wait for the lock ``name`` and hold it for the block (e.g. around ``migrate``)."""
    held: HeldLock | None
    if _is_postgres():
        conn = _pg_connect(name)
        conn.execute("SELECT pg_advisory_lock(%s)", [_key(name)])
        held = _PgLock(conn)
    else:
        held = _file_lock(name, wait=True)
    try:
        yield
    finally:
        if held is not None:
            held.release()


def lock_holder(name: str) -> str | None:
    """``host:pid`` of the process holding ``name``, None when nobody does."""
    if not _is_postgres():
        path = _lock_path(name)
        if not path.exists():
            return None
        return _file_lock_probe(path)
    prefix = f"memviz {name} "
    with contextlib.closing(_pg_connect(f"{name}-probe")) as conn:
        row = conn.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE %s "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [prefix + "%"],
        ).fetchone()
    return row[0][len(prefix) :] if row else None


def _file_lock_probe(path: Path) -> str | None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 200, 0).decode(errors="replace") or "?"
        return None  # we could take it: nobody holds it
    finally:
        os.close(fd)
