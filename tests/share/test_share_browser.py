"""A share link in chromium: the owner makes it with Share, a browser without an account opens
it (the secret only in the fragment: never in a request or a Referer), reads its agent, is
refused another agent, and sees a clear page once the owner revokes it on /tokens/."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client

from tests.conftest import SCREENSHOTS
from tests.share import share_fixture as fx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_share_link_flow(live_server, page, tmp_path: Path, settings) -> None:
    settings.MEMVIZ_ANONYMOUS_VIEW = False
    fx.build(tmp_path / "root")
    owner = Client()
    owner.force_login(get_user_model().objects.create_user("owner"))
    host = urlsplit(live_server.url).hostname
    cookie = owner.cookies[django_settings.SESSION_COOKIE_NAME].value
    browser = page.context.browser
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    page.context.add_cookies(
        [
            {
                "name": django_settings.SESSION_COOKIE_NAME,
                "value": cookie,
                "domain": host,
                "path": "/",
            }
        ]
    )
    page.goto(f"{live_server.url}/a/{fx.AGENT}/")
    page.select_option(".share-form select[name=days]", "1")
    page.screenshot(path=str(SCREENSHOTS / "share-agent-form.png"))
    page.click(".share-form button[type=submit]")
    url = page.inner_text("#share-url").strip()
    page.screenshot(path=str(SCREENSHOTS / "share-link-made.png"), full_page=True)
    secret = url.split("#", 1)[1]
    assert url.startswith(f"{live_server.url}/share/") and len(secret) >= 40

    guest = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    seen: list[tuple[str, str]] = []
    guest.on("request", lambda r: seen.append((r.url, r.headers.get("referer", ""))))
    guest.goto(url)
    guest.wait_for_url(f"{live_server.url}/a/{fx.AGENT}/")
    assert guest.locator("#share-view").is_visible()
    assert guest.locator(".share-form").count() == 0  # no Share for a link holder
    guest.click(f"a[href$='/c/{fx.FILE}/']")
    guest.wait_for_selector("#diagram svg g.node", timeout=20000)
    guest.screenshot(path=str(SCREENSHOTS / "share-guest-canvas.png"), full_page=True)
    response = guest.goto(f"{live_server.url}/a/{fx.OTHER}/")
    assert response is not None and response.status == 403
    assert "outside what your share link opens" in guest.inner_text("main")

    page.goto(f"{live_server.url}/tokens/")
    row = page.locator("tr[data-share]")
    assert fx.AGENT in row.inner_text() and "owner" in row.inner_text()
    page.screenshot(path=str(SCREENSHOTS / "share-tokens-page.png"), full_page=True)
    row.locator("button").click()
    page.wait_for_selector("tr.share-revoked")

    response = guest.goto(f"{live_server.url}/a/{fx.AGENT}/")
    assert response is not None and response.status == 410
    assert "expired or was revoked" in guest.inner_text("main")
    guest.screenshot(path=str(SCREENSHOTS / "share-guest-revoked.png"), full_page=True)
    assert seen and not [u for u, ref in seen if secret in u or secret in ref]
