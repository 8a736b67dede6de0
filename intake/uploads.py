"""Uploaded archives: stored under MEMVIZ_UPLOAD_ROOT/<id>/<name>/, listed, and deleted with the
index rows of the agents found in them. A refused or failed upload leaves nothing behind.

Each upload belongs to the user who sent it (its id in ``<id>/.owner``): only that user and staff
list it or delete it, with the agents indexed from it. An upload with no owner file (made before
owners were kept) is staff's to manage.
"""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from agentfs.paths import read_regular
from intake.archive import ArchiveError, unpack_archive
from sessions.models import Agent, IngestJob

UPLOAD_ID = re.compile(r"[0-9a-f]{8}")
SAFE_STEM = re.compile(r"[^\w.-]+")
OWNER_FILE = ".owner"


class UploadBusy(Exception):
    """An ingest of the upload is queued or running; it can be deleted once that ends."""


@dataclass(frozen=True)
class Upload:
    id: str
    name: str
    folder: Path
    uploaded_at: datetime
    agents: list[str]


def upload_root() -> Path:
    return Path(settings.MEMVIZ_UPLOAD_ROOT)


def upload_stem(filename: str) -> str:
    stem = re.sub(r"(\.tar\.gz|\.tgz|\.zip|\.tar)$", "", filename or "upload")
    return SAFE_STEM.sub("_", stem).strip("._") or "upload"


def upload_store(chunks: Iterable[bytes], filename: str, *, owner: Any = None) -> Path:
    """Unpack the uploaded bytes into a new upload folder owned by ``owner``; returns the folder
    to ingest.

    Raises ArchiveError; then neither the upload folder nor the temporary copy remains.
    """
    upload_root().mkdir(parents=True, exist_ok=True)
    holder = upload_root() / secrets.token_hex(4)
    try:
        with tempfile.NamedTemporaryFile(suffix=".upload", dir=upload_root()) as tmp:
            for chunk in chunks:
                tmp.write(chunk)
            tmp.flush()
            root = unpack_archive(
                Path(tmp.name),
                holder / upload_stem(filename),
                max_bytes=settings.MEMVIZ_UNPACKED_MAX_BYTES,
                max_files=settings.MEMVIZ_UPLOAD_MAX_FILES,
            )
        if owner is not None:
            (holder / OWNER_FILE).write_text(str(owner.pk), encoding="ascii")
        return root
    except OSError as exc:
        shutil.rmtree(holder, ignore_errors=True)
        raise ArchiveError("not_stored", error=exc.strerror or type(exc).__name__) from exc
    except BaseException:
        shutil.rmtree(holder, ignore_errors=True)
        raise


def _holder(upload_id: str) -> Path:
    if not UPLOAD_ID.fullmatch(upload_id):
        raise LookupError(f"no upload {upload_id!r}")
    folder = upload_root() / upload_id
    if not folder.is_dir() or folder.is_symlink():
        raise LookupError(f"no upload {upload_id!r}")
    return folder


def _owner_id(holder: Path) -> int | None:
    try:
        return int(read_regular(holder / OWNER_FILE, limit=64).decode("ascii").strip())
    except (OSError, ValueError):
        return None


def may_manage(holder: Path, user: Any) -> bool:
    """Staff manage every upload; any other user only the uploads they sent."""
    if user is None or not user.is_authenticated:
        return False
    return bool(user.is_staff) or _owner_id(holder) == user.pk


def _agents_in(folder: Path):
    prefix = str(folder.resolve()) + "/"
    return Agent.objects.filter(path__startswith=prefix)


def _jobs_in(folder: Path):
    resolved = str(folder.resolve())
    return IngestJob.objects.filter(path__startswith=resolved + "/") | IngestJob.objects.filter(
        path=resolved
    )


def uploads_list(user: Any) -> list[Upload]:
    """The uploads ``user`` may manage (all of them for staff), newest first."""
    root = upload_root()
    if not root.is_dir():
        return []
    found = []
    for holder in sorted(root.iterdir()):
        if not UPLOAD_ID.fullmatch(holder.name) or holder.is_symlink() or not holder.is_dir():
            continue
        if not may_manage(holder, user):
            continue
        names = sorted(p.name for p in holder.iterdir() if not p.name.startswith("."))
        found.append(
            Upload(
                id=holder.name,
                name=", ".join(names) or "(empty)",
                folder=holder,
                uploaded_at=datetime.fromtimestamp(holder.stat().st_mtime, tz=UTC),
                agents=list(_agents_in(holder).values_list("slug", flat=True)),
            )
        )
    return sorted(found, key=lambda u: u.uploaded_at, reverse=True)


def upload_delete(upload_id: str, user: Any) -> list[str]:
    """Delete an upload's files, its agents' index rows and its jobs; returns the agent slugs.

    Another user's upload is not found (LookupError), as if it did not exist.
    """
    folder = _holder(upload_id)
    if not may_manage(folder, user):
        raise LookupError(f"no upload {upload_id!r}")
    jobs = _jobs_in(folder)
    if jobs.filter(status__in=[IngestJob.PENDING, IngestJob.RUNNING]).exists():
        raise UploadBusy("its ingest is still queued or running; delete it when that ends")
    with transaction.atomic():
        agents = _agents_in(folder)
        slugs = list(agents.values_list("slug", flat=True))
        agents.delete()  # sessions, rows, refs, canvases and revisions go with them
        jobs.delete()
    shutil.rmtree(folder)
    return slugs
