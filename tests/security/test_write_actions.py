"""Item 5 of issue 10: write actions need a signed-in user, always; uploads leave nothing behind
when refused or failed, and old ones can be deleted (files and index rows) from the UI."""

from __future__ import annotations

import io
import subprocess
import uuid
import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from sessions.models import Agent, IngestJob, Row
from tests.pages import attr, found, one

pytestmark = pytest.mark.django_db


def zip_of(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, "main/" + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def files_under(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*")) if folder.exists() else []


@pytest.fixture
def uploads(tmp_path: Path, settings) -> Path:
    settings.MEMVIZ_UPLOAD_ROOT = tmp_path / "uploads"
    return settings.MEMVIZ_UPLOAD_ROOT


@pytest.fixture
def signed_in(client: Client, django_user_model) -> Client:
    client.force_login(django_user_model.objects.create_user("ana"))
    return client


def test_anonymous_users_cannot_upload_ingest_or_retry_even_on_loopback(
    uploads: Path, fixtures_root: Path, settings
) -> None:
    assert settings.MEMVIZ_ANONYMOUS_VIEW  # loopback: reading is open to anyone
    client = Client(enforce_csrf_checks=True)
    home = client.get("/")
    page = BeautifulSoup(home.content, "html.parser")
    assert page.select_one("form.upload") is None and "log in" in page.get_text()
    token = client.cookies["csrftoken"].value
    archive = SimpleUploadedFile("main.zip", zip_of(fixtures_root / "fixture-a-upstream" / "main"))
    refused = client.post(
        "/upload/?format=json", {"archive": archive, "csrfmiddlewaretoken": token}
    )
    assert refused.status_code == 403 and "log in" in refused.json()["error"]
    form = client.post("/ingest/", {"csrfmiddlewaretoken": token})
    assert form.status_code == 302 and form["Location"].startswith("/login/")
    job = IngestJob.objects.create(path=str(uploads), status=IngestJob.FAILED)
    retry = client.post(f"/jobs/{job.pk}/retry/?format=json", {"csrfmiddlewaretoken": token})
    assert retry.status_code == 403
    assert client.get("/uploads/?format=json").status_code == 403
    assert files_under(uploads) == []
    assert IngestJob.objects.exclude(pk=job.pk).count() == 0 and Agent.objects.count() == 0


@pytest.mark.parametrize(
    "name,data",
    [
        ("notes.zip", b"this is not an archive"),
        ("escape.zip", "zip:../escape.md"),
        ("link.tar.gz", "tar-link"),
    ],
)
def test_refused_uploads_leave_no_folder_at_all(
    signed_in: Client, uploads: Path, tmp_path: Path, name: str, data
) -> None:
    if data == "zip:../escape.md":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            zf.writestr("main/state.json", "{}")
            zf.writestr("../escape.md", "x")
        data = buffer.getvalue()
    elif data == "tar-link":
        import tarfile

        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
            tf.addfile(tarfile.TarInfo("main/state.json"), io.BytesIO(b""))
            info = tarfile.TarInfo("main/refs/passwd.md")
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tf.addfile(info)
        data = buffer.getvalue()
    response = signed_in.post("/upload/?format=json", {"archive": SimpleUploadedFile(name, data)})
    assert response.status_code == 400 and response.json()["error"].startswith("upload refused")
    assert files_under(uploads) == []  # not even the empty per-upload folder
    assert not (tmp_path / "escape.md").exists()


def test_an_upload_that_fills_the_disk_leaves_nothing(
    signed_in: Client, uploads: Path, tmp_path: Path
) -> None:
    uploads.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(uploads)])
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    try:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("main/state.json", "{}")
            zf.writestr("main/refs/big.md", b"0" * (3 << 20))
        upload = SimpleUploadedFile("big.zip", buffer.getvalue())
        response = signed_in.post("/upload/?format=json", {"archive": upload})
        assert response.status_code == 400
        error = response.json()["error"]
        assert "No space left on device" in error and str(uploads) not in error
        assert files_under(uploads) == []
    finally:
        subprocess.run(["umount", str(uploads)], check=True)


def test_uploads_are_listed_and_deleted_with_their_index_rows(
    signed_in: Client, uploads: Path, fixtures_root: Path, django_capture_on_commit_callbacks
) -> None:
    archive = SimpleUploadedFile("main.zip", zip_of(fixtures_root / "fixture-a-upstream" / "main"))
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post("/upload/?format=json", {"archive": archive})
    assert response.status_code == 202
    agent = Agent.objects.get(name="main")
    assert Row.objects.filter(agent=agent).count() == 9
    listing = signed_in.get("/uploads/?format=json").json()["uploads"]
    assert len(listing) == 1 and listing[0]["agents"] == [agent.slug]
    assert agent.slug.startswith("main--")  # an upload never takes a data-root agent's name
    upload_id = listing[0]["id"]
    page = BeautifulSoup(signed_in.get("/uploads/").content, "html.parser")
    form = one(page, f"#upload-{upload_id} form")
    assert form["action"] == f"/uploads/{upload_id}/delete/"
    deleted = signed_in.post(attr(form, "action"))
    assert deleted.status_code == 302
    assert files_under(uploads) == []
    assert Agent.objects.count() == 0 and Row.objects.count() == 0
    assert IngestJob.objects.count() == 0
    assert signed_in.get("/uploads/?format=json").json()["uploads"] == []
    assert signed_in.post("/uploads/../delete/").status_code == 404
    assert signed_in.post("/uploads/zzzzzzzz/delete/?format=json").status_code == 404


@pytest.mark.slow
def test_a_real_server_refuses_an_anonymous_upload_with_a_valid_csrf_token(
    run_server, tmp_path: Path, fixtures_root: Path
) -> None:
    import http.client

    root = tmp_path / "root"
    root.mkdir()
    server = run_server(root, watch=False)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    connection.request("GET", "/")
    home = connection.getresponse()
    body = home.read().decode()
    assert home.status == 200  # anonymous reading on loopback
    csrf_name, csrf = found(r"([\w-]*csrftoken)=([^;]+)", home.getheader("Set-Cookie")).groups()
    boundary = uuid.uuid4().hex
    payload = zip_of(fixtures_root / "fixture-a-upstream" / "main")
    parts = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
            f'{csrf}\r\n--{boundary}\r\nContent-Disposition: form-data; name="archive"; '
            f'filename="main.zip"\r\nContent-Type: application/zip\r\n\r\n'
        ).encode()
        + payload
        + f"\r\n--{boundary}--\r\n".encode()
    )
    connection.request(
        "POST",
        "/upload/?format=json",
        body=parts,
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Cookie": f"{csrf_name}={csrf}",
            "Origin": server.url,
        },
    )
    refused = connection.getresponse()
    assert refused.status == 403, refused.read()[:300]
    assert files_under(Path(server.env["MEMVIZ_UPLOAD_ROOT"])) == []
    assert "Upload" not in BeautifulSoup(body, "html.parser").get_text().split("Agents")[1][:200]
