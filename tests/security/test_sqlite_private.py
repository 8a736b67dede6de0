"""Issue 22 item 6: every SQLite file memviz creates or opens is 0600, whatever DATABASE_URL says.

With ``DATABASE_URL=sqlite:///…`` the index (and its -wal and -shm) came out 0644 under the usual
umask; reading it gave a live session key to any local user.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_database_url_sqlite_file_and_its_companions_are_private(
    served, http_session, tmp_path: Path
) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    database = folder / "index.sqlite3"
    server = served(users=[("ana", "pw-123456-ok", True)], DATABASE_URL=f"sqlite:///{database}")
    client = http_session(server)
    assert client.login("ana", "pw-123456-ok") == 302  # a session row: the WAL is written
    assert client.request("GET", "/?format=json").status == 200
    files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
    assert all(f.exists() for f in files), sorted(p.name for p in folder.iterdir())
    assert {f.name: oct(_mode(f)) for f in files} == {f.name: "0o600" for f in files}


def test_an_existing_world_readable_database_is_tightened_at_start(
    served, tmp_path: Path
) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    database = folder / "index.sqlite3"
    for name in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
        name.touch()
        name.chmod(0o644)
    served(DATABASE_URL=f"sqlite:///{database}")
    assert oct(_mode(database)) == "0o600"
    for companion in (Path(f"{database}-wal"), Path(f"{database}-shm")):
        if companion.exists():  # SQLite may have checkpointed and removed it
            assert oct(_mode(companion)) == "0o600"
