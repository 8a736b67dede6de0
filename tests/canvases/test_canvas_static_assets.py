"""Static files as a product serves them: hashed names, brotli/gzip, a year of caching, and the
canvas scripts only on canvas pages (WhiteNoise, as under `manage.py run` / daphne)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from intake.ingest import ingest_path
from tests.pages import attr, streamed

pytestmark = pytest.mark.django_db
HASHED = re.compile(r"^/static/.+\.[0-9a-f]{12}\.(js|css)$")


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root


def assets(client: Client, url: str) -> list[str]:
    soup = BeautifulSoup(client.get(url).content, "html.parser")
    return [attr(s, "src") for s in soup.select("script[src]")] + [
        attr(link, "href") for link in soup.select("link[rel=stylesheet], link[rel=modulepreload]")
    ]


def test_pages_name_hashed_files_and_only_canvas_pages_load_the_canvas_code(client: Client, upstream: Path) -> None:
    canvas = assets(client, "/a/main/c/002-migrate-orders-api.mmd/")
    home = assets(client, "/")
    assert canvas and all(HASHED.match(url) for url in canvas + home), canvas + home
    assert any("canvas-draw" in url for url in canvas) and any("noto-sans-sc" in url for url in canvas)
    assert not any("canvas" in url or "noto-sans" in url for url in home)
    # the 3.5 MB bundle: injected by canvas-mermaid.js only when a user asks for mermaid.js
    assert not any("mermaid.min" in url for url in canvas + home)


def test_statics_are_compressed_and_cached_for_a_year(client: Client, upstream: Path) -> None:
    for url in assets(client, "/a/main/c/002-migrate-orders-api.mmd/"):
        for encoding in ("br", "gzip"):
            response = client.get(url, HTTP_ACCEPT_ENCODING=encoding)
            assert response.status_code == 200, url
            assert response["Content-Encoding"] == encoding, url
            assert "immutable" in response["Cache-Control"] and "max-age=315360000" in response["Cache-Control"]
            streamed(response)


def test_font_files_keep_hashed_names_inside_the_css(client: Client, upstream: Path) -> None:
    css_url = next(u for u in assets(client, "/a/main/c/002-migrate-orders-api.mmd/") if "noto-sans-sc" in u)
    response = client.get(css_url)
    css = streamed(response).decode()
    fonts = re.findall(r"url\(\"?([^)\"]+\.woff2)\"?\)", css)
    assert len(fonts) > 90 and all(re.search(r"\.[0-9a-f]{12}\.woff2$", f) for f in fonts)
    first = client.get(urljoin(css_url, fonts[0]))
    assert first.status_code == 200 and "immutable" in first["Cache-Control"]
