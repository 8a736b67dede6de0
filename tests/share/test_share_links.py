"""Share links: a read-only, expiring, revocable link to one agent or session, for no account."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from sessions.models import ShareLink
from tests.share import share_fixture as fx

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://[^/\s<]+(/share/([\w-]+)/)#([\w-]+)")


@pytest.fixture
def world(tmp_path: Path, settings):
    settings.MEMVIZ_ANONYMOUS_VIEW = False  # reachable from other hosts: no anonymous reading
    settings.MEMVIZ_DATA_ROOT = tmp_path / "root"
    folder = fx.build(tmp_path / "root")
    users = get_user_model().objects
    owner = users.create_user("owner")  # force_login: no password to hash
    other = users.create_user("other")
    return folder, owner, other


def make_link(owner, path: str, days: str = "7") -> tuple[str, str, str]:
    client = Client()
    client.force_login(owner)
    response = client.post(path, {"days": days})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    found = LINK.search(response.content.decode())
    assert found, response.content[:2000]
    return found.group(1), found.group(2), found.group(3)


def holder(entry: str, secret: str) -> Client:
    client = Client()
    landing = client.get(entry)
    assert landing.status_code == 200 and "no-store" in landing["Cache-Control"]
    response = client.post(entry, {"secret": secret})
    assert response.status_code == 302, response.content[:500]
    return client


def test_agent_link_reads_its_agent_only_and_never_writes(world) -> None:
    folder, owner, _ = world
    entry, key, secret = make_link(owner, f"/a/{fx.AGENT}/share/")
    stored = ShareLink.objects.get(key=key)
    assert stored.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(list(ShareLink.objects.values_list()))  # only its hash is kept
    assert timedelta(days=6, hours=23) < stored.expires_at - timezone.now() <= timedelta(days=7)

    assert Client().get(f"/a/{fx.AGENT}/").status_code == 302  # no link: the login page
    assert Client().post(entry, {"secret": secret[:-2] + "xx"}).status_code == 403
    client = holder(entry, secret)
    refs = fx.ref_names(folder)
    a = f"/a/{fx.AGENT}"
    for path in (
        f"{a}/",
        f"{a}/?format=json",
        f"{a}/c/{fx.FILE}/",
        f"{a}/c/{fx.FILE}/n/001-N2/",
        f"{a}/s/{fx.S1}/",
        f"{a}/s/{fx.S2}/replay/",
        f"{a}/refs/{refs[fx.S2]}",
        f"{a}/c/{fx.FILE}/history/",
        f"{a}/diagnostics/",
        f"{a}/compare/?a={fx.S1}&b={fx.S2}",
        f"{a}/c/{fx.FILE}/budget/",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
    for path in (f"{a}/",):  # and what the agent page asks for once shown (its badges)
        shown = BeautifulSoup(client.get(path).content, "html.parser")
        loaders = [str(tag["hx-get"]) for tag in shown.select("[hx-get][hx-trigger='load']")]
        assert loaders, path
        for url in loaders:
            assert client.get(url).status_code == 200, url
    page = client.get(f"{a}/").content.decode()
    assert "shared read-only view" in page and 'name="q"' not in page  # no search box
    assert str(folder.parent) not in page  # where the data lives is for staff only
    for path in (
        f"/a/{fx.OTHER}/",
        f"/a/{fx.OTHER}/c/{fx.FILE}/",
        f"/a/{fx.OTHER}/refs/own.md",
        f"/a/{fx.OTHER}/compare/",
        f"{a}/review/",
        "/",
        "/search/?q=make",
        "/sessions/",
        "/tokens/",
        "/uploads/",
        "/admin/",
    ):
        response = client.get(path)
        assert response.status_code == 403, path
        assert "outside what your share link opens" in response.content.decode()
    writes = [
        (f"{a}/c/{fx.FILE}/ops/", {"op": "set_status", "node": "001-N2", "status": "done"}),
        (f"{a}/c/{fx.FILE}/sync/", {}),
        (f"{a}/c/{fx.FILE}/resume/", {}),
        (f"{a}/share/", {"days": "7"}),
        ("/ingest/", {}),
        ("/upload/", {}),
        (f"/tokens/share/{key}/revoke/", {}),
    ]
    for path, body in writes:
        assert client.post(path, body).status_code == 403, path
    assert ShareLink.objects.count() == 1 and ShareLink.objects.get().revoked_at is None
    assert (folder / "mmds" / fx.FILE).read_text("utf-8") == fx.CANVAS


def test_session_link_opens_that_session_and_the_refs_it_cites(world) -> None:
    folder, owner, _ = world
    entry, _key, secret = make_link(owner, f"/a/{fx.AGENT}/s/{fx.S1}/share/", days="1")
    client = holder(entry, secret)
    refs = fx.ref_names(folder)
    a = f"/a/{fx.AGENT}"
    for path in (
        f"{a}/s/{fx.S1}/",
        f"{a}/s/{fx.S1}/replay/",
        f"{a}/s/{fx.S1}/diagnostics/",
        f"{a}/s/{fx.S1}/?format=json",
        f"{a}/refs/{refs[fx.S1]}",
        f"{a}/refs/{fx.HOSTILE_REF}",
        f"{a}/s/{fx.S1}/offline.html",
    ):
        assert client.get(path).status_code == 200, path
    for path in (
        f"{a}/",
        f"{a}/s/{fx.S2}/",
        f"{a}/s/{fx.S2}/replay/",
        f"{a}/refs/{refs[fx.S2]}",
        f"{a}/c/{fx.FILE}/",
        f"{a}/ledger/",
        f"/a/{fx.OTHER}/",
    ):
        assert client.get(path).status_code == 403, path
    session_json = client.get(f"{a}/s/{fx.S1}/?format=json").json()
    assert "secret-only-s2" not in str(session_json)


def test_expired_and_revoked_links_answer_410_and_only_owner_or_staff_revoke(world) -> None:
    _folder, owner, other = world
    entry, key, secret = make_link(owner, f"/a/{fx.AGENT}/share/")
    client = holder(entry, secret)
    page = f"/a/{fx.AGENT}/"
    assert client.get(page).status_code == 200

    listing = Client()
    listing.force_login(owner)
    tokens = listing.get("/tokens/").content.decode()
    row = re.search(rf'<tr data-share="{key}".*?</tr>', tokens, re.S)
    assert row and fx.AGENT in row.group(0) and "owner" in row.group(0) and "Revoke" in row.group(0)
    assert secret not in tokens

    intruder = Client()
    intruder.force_login(other)
    assert intruder.post(f"/tokens/share/{key}/revoke/?format=json").status_code == 403
    assert client.get(page).status_code == 200
    assert listing.post(f"/tokens/share/{key}/revoke/").status_code == 302
    gone = client.get(page)
    assert gone.status_code == 410 and "expired or was revoked" in gone.content.decode()
    assert Client().post(entry, {"secret": secret}).status_code == 410  # cannot be redeemed again

    entry2, key2, secret2 = make_link(owner, f"/a/{fx.AGENT}/share/")
    client2 = holder(entry2, secret2)
    ShareLink.objects.filter(key=key2).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client2.get(page).status_code == 410
    assert client2.get(f"{page}?format=json").json()["error"]
    assert Client().post(entry2, {"secret": secret2}).status_code == 410


def test_lifetime_is_one_offered_and_never_past_ninety_days(world) -> None:
    _folder, owner, _ = world
    for asked, days in (("30", 30), ("1000", 7), ("x", 7)):
        _entry, key, _secret = make_link(owner, f"/a/{fx.AGENT}/share/", days=asked)
        left = ShareLink.objects.get(key=key).expires_at - timezone.now()
        assert timedelta(days=days) - timedelta(minutes=1) < left <= timedelta(days=days)
    assert Client().post(f"/a/{fx.AGENT}/share/", {"days": "7"}).status_code in (302, 403)
    assert ShareLink.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_live_socket_follows_an_agent_link_only(world) -> None:
    from asgiref.sync import async_to_sync
    from channels.testing import WebsocketCommunicator
    from django.conf import settings as django_settings

    from memviz.asgi import application

    _folder, owner, _ = world
    agent_holder = holder(*make_link(owner, f"/a/{fx.AGENT}/share/")[::2])
    session_holder = holder(*make_link(owner, f"/a/{fx.AGENT}/s/{fx.S1}/share/")[::2])
    origin = [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]

    def opens(client: Client, agent: str) -> bool:
        cookie = f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}"

        async def scenario() -> bool:
            socket = WebsocketCommunicator(
                application, f"/ws/live/{agent}/", headers=[*origin, (b"cookie", cookie.encode())]
            )
            ok, _ = await socket.connect()
            await socket.disconnect()
            return ok

        return async_to_sync(scenario)()

    assert opens(agent_holder, fx.AGENT) is True
    assert opens(agent_holder, fx.OTHER) is False
    assert opens(session_holder, fx.AGENT) is False  # its pages are the session's only
