"""Item 6 of issue 10: login throttling, push-token ownership, control characters in pushed
session ids, the websocket origin check with its port, and error texts without local paths."""

from __future__ import annotations

import json
import urllib.parse
from datetime import timedelta
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from intake.push_tokens import token_create
from memviz.models import LoginFailure
from sessions.models import IngestJob, StreamToken
from tests.pages import found

pytestmark = pytest.mark.django_db
PASSWORD = "pw-123456-ok"


@pytest.fixture
def ana(django_user_model, settings):
    # a fast hasher: these tests check dozens of passwords, not the hasher
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return django_user_model.objects.create_user("ana", password=PASSWORD)


def attempt(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_ten_failures_lock_the_account_at_that_address_even_for_the_right_password(
    ana, settings
) -> None:
    client = Client()
    for _ in range(settings.MEMVIZ_LOGIN_MAX_FAILURES):
        assert attempt(client, "ana", "wrong").status_code == 200
    locked = attempt(client, "ana", PASSWORD)  # the same (account, address) pair
    assert locked.status_code == 429 and "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    # the admin's login form goes through the same check
    ana.is_staff = True
    ana.save()
    as_admin = Client()
    as_admin.post(
        "/admin/login/", {"username": "ana", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1"
    )
    assert "_auth_user_id" not in as_admin.session
    # a guesser elsewhere does not lock the owner out of their own address (issue 22 item 7)
    assert attempt(Client(), "ana", PASSWORD, address="10.0.0.2").status_code == 302
    # cooling off: once the failures are older than the window, the right password works
    LoginFailure.objects.update(
        at=timezone.now() - timedelta(seconds=settings.MEMVIZ_LOGIN_COOLOFF_SECONDS + 1)
    )
    assert attempt(client, "ana", PASSWORD).status_code == 302
    assert not LoginFailure.objects.filter(key__endswith="|ana").exists()


def test_failures_with_made_up_names_never_lock_a_real_account(ana, settings) -> None:
    client = Client()
    for number in range(settings.MEMVIZ_LOGIN_MAX_FAILURES * 2):
        attempt(client, f"guess{number}", "x", address="10.9.9.9")
    assert attempt(client, "ana", PASSWORD, address="10.9.9.9").status_code == 302


def test_the_lock_holds_across_server_processes(live_helpers, tmp_path: Path) -> None:
    """Two `manage.py run` processes on one database: failures on either count for both."""
    import http.client

    var, root = tmp_path / "var", tmp_path / "root"
    root.mkdir()
    env = live_helpers.server_env(
        var, root, DJANGO_SUPERUSER_PASSWORD=PASSWORD, MEMVIZ_LOGIN_MAX_FAILURES="4"
    )
    live_helpers.run_manage(env, "migrate", "-v", "0")
    live_helpers.run_manage(
        env, "createsuperuser", "--noinput", "--username", "ana", "--email", "a@b.example"
    )
    servers = []
    try:
        for name in ("a", "b"):
            port = live_helpers.free_port()
            args = ["run", "--no-worker", "--no-watch", "--port", str(port)]
            servers.append(live_helpers.Server(env, port, tmp_path / f"{name}.log", args))
            live_helpers.wait_port(port, timeout=60, proc=servers[-1].proc)

        def post(server, password: str) -> int:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
            connection.request("GET", "/login/")
            page = connection.getresponse()
            body = page.read().decode()
            csrf_name, csrf = found(r"([\w-]*csrftoken)=([^;]+)", page.getheader("Set-Cookie")).groups()
            token = found(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
            form = urllib.parse.urlencode(
                {"csrfmiddlewaretoken": token, "username": "ana", "password": password}
            )
            connection.request(
                "POST",
                "/login/",
                body=form,
                headers={
                    "Cookie": f"{csrf_name}={csrf}",
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Origin": server.url,
                },
            )
            response = connection.getresponse()
            response.read()
            return response.status

        for number in range(4):
            assert post(servers[number % 2], "wrong") == 200
        assert post(servers[0], PASSWORD) == 429
        assert post(servers[1], PASSWORD) == 429
    finally:
        for server in servers:
            server.stop()


def test_only_staff_or_the_creator_rotate_or_revoke_a_token(
    django_user_model, settings, tmp_path: Path
) -> None:
    settings.MEMVIZ_PUSH_ROOT = tmp_path / "pushed"
    ana = django_user_model.objects.create_user("ana")
    bob = django_user_model.objects.create_user("bob")
    boss = django_user_model.objects.create_user("boss", is_staff=True)
    as_ana, as_bob, as_boss = Client(), Client(), Client()
    as_ana.force_login(ana)
    as_bob.force_login(bob)
    as_boss.force_login(boss)
    token = as_ana.post("/tokens/?format=json", {"agent": "remote"}).json()["token"]
    # bob may neither rotate nor revoke ana's token
    assert as_bob.post("/tokens/?format=json", {"agent": "remote"}).status_code == 403
    assert as_bob.post("/tokens/remote/revoke/?format=json").status_code == 403
    stored = StreamToken.objects.get(agent_name="remote")
    assert stored.created_by == ana
    push = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    row = {"type": "row", "session": "s1", "row": {"tool_call_id": "c1"}}
    assert (
        push.post(
            "/api/stream/remote/", json.dumps(row), content_type="application/x-ndjson"
        ).status_code
        == 200
    )
    listed = as_bob.get("/tokens/?format=json").json()["tokens"]
    assert listed[0]["agent"] == "remote" and listed[0]["created_by"] == "ana"
    assert listed[0]["last_used_at"] is not None and listed[0]["may_manage"] is False
    assert "token_hash" not in json.dumps(listed)
    # ana rotates her own; staff may rotate and revoke anyone's
    assert as_ana.post("/tokens/?format=json", {"agent": "remote"}).status_code == 201
    rotated = as_boss.post("/tokens/?format=json", {"agent": "remote"}).json()["token"]
    assert as_boss.post("/tokens/remote/revoke/?format=json").status_code == 200
    refused = Client(HTTP_AUTHORIZATION=f"Bearer {rotated}").post(
        "/api/stream/remote/", json.dumps(row), content_type="application/x-ndjson"
    )
    assert refused.status_code == 401
    assert as_ana.get("/tokens/?format=json").json()["tokens"] == []


@pytest.mark.parametrize("session", ["s\x1b[31m", "s\u202ets", "line\nbreak", "s\x7f", "s\u2028"])
def test_push_refuses_session_ids_with_control_characters(
    session: str, settings, tmp_path: Path
) -> None:
    settings.MEMVIZ_PUSH_ROOT = tmp_path / "pushed"
    token = token_create("remote")
    event = {"type": "row", "session": session, "row": {"tool_call_id": "c1"}}
    response = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
        "/api/stream/remote/", json.dumps(event), content_type="application/x-ndjson"
    )
    assert response.status_code == 400
    assert "unsafe session id" in response.json()["errors"][0]["reason"]
    assert not list((tmp_path / "pushed").rglob("offload-*"))


def test_websocket_origin_must_match_host_and_port(transactional_db) -> None:
    from memviz.asgi import application
    from sessions.models import Agent

    Agent.objects.create(slug="main", name="main", path="/nonexistent/main", root="/nonexistent")

    async def connect(origin: str) -> bool:
        headers = [(b"host", b"127.0.0.1:8000"), (b"origin", origin.encode())]
        communicator = WebsocketCommunicator(application, "/ws/live/main/", headers=headers)
        connected, _ = await communicator.connect()
        await communicator.disconnect()
        return connected

    async def run() -> list[bool]:
        origins = [
            "http://127.0.0.1:8000",
            "http://127.0.0.1:9999",  # another program on the same host
            "http://127.0.0.1",
            "http://localhost:8000",
        ]
        return [await connect(origin) for origin in origins]

    assert async_to_sync(run)() == [True, False, False, False]


def test_error_texts_do_not_show_where_the_data_lives(settings, tmp_path: Path, ana) -> None:
    settings.MEMVIZ_DATA_ROOT = tmp_path / "root"
    settings.MEMVIZ_PUSH_ROOT = tmp_path / "pushed"
    client = Client()
    # a job that failed with a path in its exception text (as an OSError gives it)
    message = f"FileNotFoundError: [Errno 2] No such file: '{tmp_path}/root/main/state.json'"
    job = IngestJob.objects.create(path="x", status=IngestJob.FAILED, message=message)
    shown = client.get(f"/jobs/{job.pk}/?format=json").json()["job"]["message"]
    assert str(tmp_path) not in shown and "state.json" in shown
    assert str(tmp_path) not in client.get(f"/jobs/{job.pk}/").content.decode()
    # a push whose write fails: the reason names what failed, not where
    token = token_create("remote")
    (tmp_path / "pushed" / "remote").mkdir(parents=True)
    (tmp_path / "pushed" / "remote" / "mmds").write_text("a file where a folder should be")
    event = {"type": "canvas", "name": "001-a.mmd", "text": "flowchart TD\n  A"}
    response = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
        "/api/stream/remote/", json.dumps(event), content_type="application/x-ndjson"
    )
    assert response.status_code == 400
    reason = response.json()["errors"][0]["reason"]
    assert reason.startswith("could not write") and str(tmp_path) not in reason
    # refused ref names are shown relative to the agent folder
    for url in ("/a/none/refs/x.md", "/a/none/c/x.mmd/", "/jobs/999/"):
        assert str(tmp_path) not in client.get(url).content.decode()
