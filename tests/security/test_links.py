"""Item 3 of issue 10: links never lead out of an agent folder.

Real symbolic links, through ingest, the pages, search and the watcher of a real `manage.py run`:
the content they point at never appears anywhere, and each refused link is named as a problem of
its agent. memviz follows no link inside a memory folder, not even one that stays inside (the
plugin never makes links; docs/security.md says why), and opens files with O_NOFOLLOW one folder
at a time, so a link swapped in after the folder was listed is refused too.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from django.test import Client

from agentfs import paths
from agentfs.jsonl import read_rows
from agentfs.layout import discover_agents
from agentfs.paths import LinkRefused, open_regular
from agentfs.refs import read_ref_page
from agentfs.state import read_state
from intake.ingest import ingest_path
from sessions.models import Agent

SECRET = "TOPSECRET-7f3a9c"
REF = "2026-06-10T09-12-03-417p08-00.md"


def outside(tmp_path: Path) -> Path:
    """Files outside every agent folder, each holding the secret."""
    out = tmp_path / "outside"
    (out / "mmds").mkdir(parents=True)
    (out / "refs").mkdir()
    canvas = f'flowchart TD\n    001-N1["{SECRET} canvas"]\n'
    (out / "secret.mmd").write_text(canvas)
    (out / "mmds" / "009-secret.mmd").write_text(canvas)
    (out / "state.json").write_text(json.dumps({"activeMmdFile": f"{SECRET}.mmd"}))
    (out / "registry.json").write_text(json.dumps({f"agent:{SECRET}:x": {"sessionId": "x"}}))
    row = json.dumps({"tool_call_id": f"call_{SECRET}", "summary": SECRET})
    (out / "rows.jsonl").write_text(row + "\n")
    ref = (
        f"# Tool Result: exec\n\n**Tool:** exec\n**Call ID:** c\n\n**Result:**\n```\n{SECRET}\n```"
    )
    (out / "secret.md").write_text(ref)
    (out / "refs" / "2026-01-01T00-00-00-000p08-00.md").write_text(ref)
    shutil.copytree(out / "mmds", out / "agent" / "mmds")
    (out / "agent" / "offload-s.jsonl").write_text(row + "\n")
    return out


def linked_root(tmp_path: Path, fixtures_root: Path) -> Path:
    """Three agents of fixture A, each with a different kind of link planted in it."""
    out = outside(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    source = fixtures_root / "fixture-a-upstream" / "main"
    for name in ("files", "folders", "inside"):
        shutil.copytree(source, root / name)
    files = root / "files"
    (files / "offload-passwd.jsonl").symlink_to("/etc/passwd")
    (files / "offload-secret.jsonl").symlink_to(out / "rows.jsonl")
    (files / "mmds" / "009-secret.mmd").symlink_to(out / "secret.mmd")
    (files / "refs" / "2026-01-01T00-00-00-000p08-00.md").symlink_to(out / "secret.md")
    (files / "state.json").unlink()
    (files / "state.json").symlink_to(out / "state.json")
    (files / "sessions-registry.json").unlink()
    (files / "sessions-registry.json").symlink_to(out / "registry.json")
    folders = root / "folders"
    shutil.rmtree(folders / "mmds")
    (folders / "mmds").symlink_to(out / "mmds")
    shutil.rmtree(folders / "refs")
    (folders / "refs").symlink_to(out / "refs")
    # a link that stays inside the folder is refused as well
    inside = root / "inside"
    (inside / "mmds" / "003-copy.mmd").symlink_to(inside / "mmds" / "001-fix-login-timeout.mmd")
    # and a whole agent folder that is a link
    (root / "linked-agent").symlink_to(out / "agent")
    return root


def test_layout_leaves_links_out_and_names_them(
    tmp_path: Path, fixtures_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = linked_root(tmp_path, fixtures_root)
    with caplog.at_level(logging.WARNING, logger="agentfs.layout"):
        agents = {a.name: a for a in discover_agents(root)}
    # the log (and the ingest command's console) says it in words
    assert "files: mmds/009-secret.mmd is a symbolic link: memviz does not follow" in caplog.text
    assert set(agents) == {"files", "folders", "inside"}  # the linked agent folder is not read
    files = agents["files"]
    assert "009-secret.mmd" not in [p.name for p in files.mmd_files]
    assert any(r.reason.startswith("mmds/009-secret.mmd is a symbolic link") for r in files.refused)
    folders = agents["folders"]
    assert folders.mmd_files == [] and folders.refs_dirs == [] and not folders.refs_dir.is_dir()
    assert {"mmds/ is a symbolic link", "refs/ is a symbolic link"} <= {
        r.reason.split(": memviz")[0] for r in folders.refused
    }
    assert [p.name for p in agents["inside"].mmd_files] == [
        "001-fix-login-timeout.mmd",
        "002-migrate-orders-api.mmd",
    ]


@pytest.mark.django_db
def test_ingest_pages_and_search_never_show_what_links_point_at(
    tmp_path: Path, fixtures_root: Path
) -> None:
    root = linked_root(tmp_path, fixtures_root)
    report = ingest_path(root)
    assert sorted(report.agents) == ["files", "folders", "inside"]
    files = Agent.objects.get(slug="files")
    assert files.state_data == {} and "symbolic link" in files.state_error
    assert "symbolic link" in files.registry_error
    problems = {s.session_id: s.problems for s in files.sessions.all()}
    assert "symbolic link" in problems["passwd"][0]["reason"]
    assert "symbolic link" in problems["secret"][0]["reason"]
    assert not files.refs.filter(name__contains="2026-01-01").exists()
    assert Agent.objects.get(slug="folders").refs_count == 0

    client = Client()
    for url in (
        "/",
        "/a/files/",
        "/a/folders/",
        "/a/inside/",
        "/a/files/s/passwd/",
        "/a/files/s/secret/",
        f"/search/?q={SECRET}",
        "/search/?q=root",
        "/a/files/refs/2026-01-01T00-00-00-000p08-00.md",
        "/a/folders/refs/2026-01-01T00-00-00-000p08-00.md",
        "/a/files/c/009-secret.mmd/",
        "/a/folders/c/009-secret.mmd/",
        "/a/inside/c/003-copy.mmd/",
    ):
        for suffix in ("", "?format=json"):
            response = client.get(url + suffix)
            assert response.status_code in (200, 400, 404), url
            body = response.content.decode()
            if url.startswith("/search/"):  # the page repeats the query: look at the results
                data = client.get(url + "&format=json").json()
                assert data["nodes"] == [] or "root" in url, url
                body = json.dumps([data["nodes"], data["rows"]])
            assert SECRET not in body and "root:x:0:0" not in body, url
    agent_page = client.get("/a/files/").content.decode()
    assert "not read: mmds/009-secret.mmd is a symbolic link" in agent_page
    assert "not read: mmds/ is a symbolic link" in client.get("/a/folders/").content.decode()
    assert "not read: mmds/003-copy.mmd" in client.get("/a/inside/").content.decode()


@pytest.mark.django_db
def test_a_link_swapped_in_after_indexing_is_refused_by_the_pages(
    tmp_path: Path, fixtures_root: Path
) -> None:
    out = outside(tmp_path)
    agent = tmp_path / "main"
    shutil.copytree(fixtures_root / "fixture-a-upstream" / "main", agent)
    ingest_path(agent)
    ref = agent / "refs" / REF
    ref.unlink()
    ref.symlink_to(out / "secret.md")
    response = Client().get(f"/a/main/refs/{REF}")
    assert SECRET not in response.content.decode() and response.status_code in (400, 404)
    refs = agent / "refs"
    shutil.move(refs, agent / "refs-real")
    refs.symlink_to(agent / "refs-real")  # a linked folder on the way is refused as well
    response = Client().get(f"/a/main/refs/{REF.replace('03-417', '41-902')}?raw=1")
    assert response.status_code in (400, 404)


@pytest.mark.parametrize("where", ["/proc", "walk"])
def test_open_refuses_links_on_every_level_and_fifos_without_blocking(
    tmp_path: Path, where: str, monkeypatch
) -> None:
    if where == "walk":  # systems without /proc open component by component instead
        monkeypatch.setattr(paths, "_descriptor_path", lambda fd: None)
    out = outside(tmp_path)
    agent = tmp_path / "agent"
    (agent / "refs").mkdir(parents=True)
    (agent / "refs" / "ok.md").write_text("ok")
    assert open_regular(agent / "refs" / "ok.md", folders=2).read() == b"ok"
    (agent / "refs" / "link.md").symlink_to(out / "secret.md")
    with pytest.raises(LinkRefused):
        open_regular(agent / "refs" / "link.md", folders=2)
    with pytest.raises(LinkRefused):
        read_ref_page(agent / "refs" / "link.md")
    shutil.move(agent / "refs", tmp_path / "moved")
    (agent / "refs").symlink_to(tmp_path / "moved")
    with pytest.raises(LinkRefused):
        open_regular(agent / "refs" / "ok.md", folders=2)
    # a FIFO where a file should be: refused at once (a plain open would wait for a writer)
    os.mkfifo(agent / "offload-fifo.jsonl")
    os.mkfifo(agent / "state.json")
    result: dict = {}
    worker = threading.Thread(
        target=lambda: result.update(
            chunk=read_rows(agent / "offload-fifo.jsonl"), state=read_state(agent / "state.json")
        ),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert "not a regular file" in result["chunk"].problems[0].reason
    assert "not a regular file" in (result["state"].error or "")


def _agents(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/?format=json", timeout=10) as response:
        return {a["slug"]: a for a in json.loads(response.read())["agents"]}


@pytest.mark.slow
def test_the_watcher_ignores_links_planted_while_it_runs(
    run_server, tmp_path: Path, fixtures_root: Path
) -> None:
    out = outside(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    agent = root / "main"
    shutil.copytree(fixtures_root / "fixture-a-upstream" / "main", agent)
    server = run_server(root)
    (agent / "offload-leak.jsonl").symlink_to(out / "rows.jsonl")
    (agent / "mmds" / "009-secret.mmd").symlink_to(out / "secret.mmd")
    (root / "linked-agent").symlink_to(out / "agent")
    time.sleep(0.5)
    # an ordinary write after them: once it shows, the watcher has seen the links too
    with open(agent / "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl", "a") as handle:
        handle.write(json.dumps({"tool_call_id": "call_after_links", "summary": "x"}) + "\n")
    deadline = time.monotonic() + 30
    while _agents(server.url)["main"]["rows"] != 10 and time.monotonic() < deadline:
        time.sleep(0.2)
    agents = _agents(server.url)
    assert set(agents) == {"main"} and agents["main"]["rows"] == 10
    for path in (
        "/a/main/",
        f"/search/?q={SECRET[:9]}",
        "/a/main/s/leak/",
        "/a/main/c/009-secret.mmd/",
    ):
        try:
            with urllib.request.urlopen(server.url + path, timeout=10) as response:
                body = response.read().decode()
        except urllib.error.HTTPError as error:
            body = error.read().decode()
        assert SECRET not in body, path
    assert server.proc.poll() is None


@pytest.mark.django_db
def test_refused_links_are_the_last_ingest_s_and_follow_the_folder(
    tmp_path: Path, fixtures_root: Path
) -> None:
    """The agent page names the links the last ingest left out (stored then: a page view never
    lists the folder), and the next ingest after a link is removed stops naming it."""
    root = linked_root(tmp_path, fixtures_root)
    ingest_path(root)
    link = root / "inside" / "mmds" / "003-copy.mmd"
    link.unlink()
    client = Client()
    assert "not read: mmds/003-copy.mmd" in client.get("/a/inside/").content.decode()
    ingest_path(root)
    assert "not read:" not in client.get("/a/inside/").content.decode()
    assert Agent.objects.get(slug="inside").refused_links == []
