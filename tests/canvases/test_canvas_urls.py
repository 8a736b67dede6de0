"""Every URL under /a/<agent>/c/<canvas>/ loads its canvas the one way (`canvases.loading`).

Walked from the URL map, so a canvas page added later is held to the same rules: a canvas that
is not indexed is a 404 on every page, whatever the method; a change asked anonymously is refused
(403, with the reason) before anything is looked up; a page sent whole answers "too large" for a
canvas over the size limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from intake.ingest import ingest_path

pytestmark = pytest.mark.django_db
CANVAS = "002-migrate-orders-api.mmd"
ARGS = {"node": "002-N2", "number": "1"}


def _canvas_routes() -> list[tuple[str, object]]:
    """(route with <agent> and <canvas> left in, view) for each URL naming a canvas."""
    found: list[tuple[str, object]] = []

    def walk(patterns: list[URLPattern | URLResolver], prefix: str) -> None:
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, route)
            elif "<str:canvas>" in route:
                found.append((route, p.callback))

    walk(get_resolver().url_patterns, "/")
    return found


def _url(route: str, canvas: str) -> str:
    url = route.replace("<str:agent>", "main").replace("<str:canvas>", canvas)
    for key, value in ARGS.items():
        url = url.replace(f"<int:{key}>", value).replace(f"<str:{key}>", value)
    assert "<" not in url, url
    return url


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


def test_the_url_map_names_every_canvas_page() -> None:
    routes = [route for route, _ in _canvas_routes()]
    assert len(routes) >= 15
    assert "/a/<str:agent>/c/<str:canvas>/ops/" in routes
    assert "/a/<str:agent>/c/<str:canvas>/offline.html" in routes


def test_a_canvas_not_indexed_is_a_404_on_every_canvas_page(client: Client, upstream: Path) -> None:
    client.force_login(User.objects.create_user("ana", password="pw-123456-ok"))
    answers = {}
    for route, _ in _canvas_routes():
        for name in ("999-not-there.mmd", "..%2Fstate.json"):
            url = _url(route, name)
            answers[url] = (client.get(url).status_code, client.post(url).status_code)
    # a GET-only page answers a POST 405 (the method is checked first), a POST-only one a GET
    wrong = {u: a for u, a in answers.items() if 404 not in a or set(a) - {404, 405}}
    assert not wrong


def test_every_change_is_refused_anonymously_before_the_canvas_is_looked_up(
    client: Client, upstream: Path
) -> None:
    before = (upstream / "mmds" / CANVAS).read_bytes()
    refused = set()
    for route, _ in _canvas_routes():
        for name in (CANVAS, "999-not-there.mmd"):
            answer = client.post(_url(route, name) + "?format=json", {"op": "annotate"})
            # a page that only reads answers a POST 405; every other POST is refused
            assert answer.status_code in (403, 405), (route, name)
            if answer.status_code == 403:
                assert "log in" in answer.json()["error"]
                refused.add(route.removeprefix("/a/<str:agent>/c/<str:canvas>/"))
    assert refused == {"ops/", "sync/", "history/<int:number>/restore/", "resume/"}
    assert (upstream / "mmds" / CANVAS).read_bytes() == before


def test_pages_sent_whole_say_too_large_over_the_limit(
    client: Client, upstream: Path, settings
) -> None:
    settings.MEMVIZ_CANVAS_MAX_BYTES = 64
    whole = ["", "preview/", "lint/", "budget/", "compare/", "history/1/", "mermaid.json",
             "offline.html"]
    for page in whole:
        answer = client.get(f"/a/main/c/{CANVAS}/{page}?format=json")
        assert answer.status_code == 200, page
        assert answer.json().get("too_large") is True, page
    # the node panel and the history list send no canvas text: they still answer
    assert "too_large" not in client.get(f"/a/main/c/{CANVAS}/history/?format=json").json()
