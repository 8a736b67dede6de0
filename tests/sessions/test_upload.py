"""Uploading a .zip or .tar.gz of memory folders: unpacked safely, then ingested."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import translation
from django.utils.translation import gettext

from intake.archive import TEXTS as archive_texts
from intake.archive import ArchiveError, unpack_archive
from sessions.models import Agent

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(client: Client, django_user_model) -> Client:
    """Uploading needs a signed-in user (tests/security covers the refusal)."""
    django_user_model.objects.create_user("ana", password="pw-123456")
    client.login(username="ana", password="pw-123456")
    return client


def zip_of(folder: Path, arc_prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, arc_prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def test_upload_zip_of_agent_folder_is_ingested(
    client: Client,
    fixtures_root: Path,
    settings,
    tmp_path: Path,
    django_capture_on_commit_callbacks,
) -> None:
    settings.MEMVIZ_UPLOAD_ROOT = tmp_path / "uploads"
    data = zip_of(fixtures_root / "fixture-a-upstream" / "main")
    upload = SimpleUploadedFile("main.zip", data, content_type="application/zip")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/upload/?format=json", {"archive": upload})
    assert response.status_code == 202, response.content
    job = client.get(f"/jobs/{response.json()['id']}/?format=json").json()
    assert job["job"]["status"] == "done", job  # eager Celery in tests
    assert job["job"]["percent"] == 100
    agent = Agent.objects.get(name="main")
    assert agent.rows_count == 9 and agent.canvases_count == 2
    assert Path(agent.path).is_relative_to(tmp_path / "uploads")


def test_upload_tar_gz_of_data_root(
    client: Client,
    fixtures_root: Path,
    settings,
    tmp_path: Path,
    django_capture_on_commit_callbacks,
) -> None:
    settings.MEMVIZ_UPLOAD_ROOT = tmp_path / "uploads"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        tf.add(fixtures_root / "fixture-b-wild", arcname="export")
    upload = SimpleUploadedFile("export.tar.gz", buffer.getvalue())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/upload/?format=json", {"archive": upload})
    assert response.status_code == 202
    assert Agent.objects.get(name="coder").rows_count == 8


@pytest.mark.parametrize(
    "member",
    ["../escape.md", "/abs/escape.md", "a/../../escape.md", "a\\..\\escape.md"],
)
def test_zip_path_escapes_are_refused(tmp_path: Path, member: str) -> None:
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("main/state.json", "{}")
        zf.writestr(member, "x")
    with pytest.raises(ArchiveError):
        unpack_archive(archive, tmp_path / "out", max_bytes=1 << 20)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.md").exists()


def tar_with_a_link(archive: Path) -> Path:
    with tarfile.open(archive, "w:gz") as tf:
        info = tarfile.TarInfo("main/refs/passwd.md")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
    return archive


def test_tar_links_are_refused(tmp_path: Path) -> None:
    archive = tar_with_a_link(tmp_path / "links.tar.gz")
    with pytest.raises(ArchiveError, match="links"):
        unpack_archive(archive, tmp_path / "out", max_bytes=1 << 20)


def test_zip_bomb_is_stopped_by_the_size_limit(tmp_path: Path) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("main/refs/big.md", b"0" * (5 << 20))
    assert archive.stat().st_size < 100_000
    with pytest.raises(ArchiveError, match="size limit"):
        unpack_archive(archive, tmp_path / "out", max_bytes=1 << 20)
    assert not (tmp_path / "out").exists()


def test_bad_upload_gets_a_clear_error_and_keeps_nothing(
    client: Client, settings, tmp_path: Path
) -> None:
    settings.MEMVIZ_UPLOAD_ROOT = tmp_path / "uploads"
    upload = SimpleUploadedFile("notes.zip", b"this is not an archive")
    response = client.post("/upload/?format=json", {"archive": upload})
    assert response.status_code == 400
    assert "not a .zip or .tar.gz" in response.json()["error"]
    leftovers = (
        [p for p in (tmp_path / "uploads").rglob("*") if p.is_file()]
        if (tmp_path / "uploads").exists()
        else []
    )
    assert leftovers == []
    assert Agent.objects.count() == 0
    shutil.rmtree(tmp_path / "uploads", ignore_errors=True)


def test_a_refused_upload_says_why_in_the_readers_language(client: Client) -> None:
    """The intake views answer through respond(): JSON for scripts, the reason in the page's
    messages for a browser's form, in the language of the page."""
    refused = client.post("/upload/?format=json", {}, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert refused.status_code == 400
    assert refused.json()["error"] == "请选择要上传的 .zip 或 .tar.gz 文件"
    bad = SimpleUploadedFile("notes.txt", b"not an archive")
    form = client.post("/upload/", {"archive": bad}, follow=True)
    assert form.redirect_chain == [("/", 302)]
    assert "upload refused" in form.content.decode()
    assert Agent.objects.count() == 0  # nothing half-ingested


def test_why_an_archive_is_refused_reads_in_the_readers_language(
    client: Client, settings, tmp_path: Path
) -> None:
    """Every refusal of an archive is a code (intake/archive.py TEXTS): English for scripts
    in the exception, the reader's language on the page, the name it refused kept as data."""
    settings.MEMVIZ_UPLOAD_ROOT = tmp_path / "uploads"
    archive = tar_with_a_link(tmp_path / "links.tar.gz")
    with pytest.raises(ArchiveError) as refused:
        unpack_archive(archive, tmp_path / "out", max_bytes=1 << 20)
    assert (refused.value.code, str(refused.value)) == (
        "link",
        "links are refused: 'main/refs/passwd.md'",
    )
    upload = SimpleUploadedFile("links.tar.gz", archive.read_bytes())
    chinese = client.post(
        "/upload/?format=json", {"archive": upload}, HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).json()["error"]
    assert "拒绝链接：'main/refs/passwd.md'" in chinese and "links are refused" not in chinese
    for code, text in archive_texts.items():
        names = re.findall(r"%\((\w+)\)[sr]", text)
        with translation.override("zh-hans"):
            said = gettext(text) % dict.fromkeys(names, "<x>")
        assert said != text % dict.fromkeys(names, "<x>"), code
