"""The offline HTML file of a session or a canvas: self-contained, inert, bounded."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client

from debugging import offline
from debugging.offline_html import script_hash
from tests.share import share_fixture as fx

pytestmark = pytest.mark.django_db


class Parts(HTMLParser):
    """Every tag with its attributes, inline scripts and the CSP meta of a document."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[tuple[dict[str, str], str]] = []
        self._in: dict[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag == "script":
            self._in = dict(self.tags[-1][1])
            self.scripts.append((self._in, ""))

    def handle_data(self, data):
        if self._in is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None


def offline_parts(html: str) -> tuple[Parts, dict]:
    parts = Parts()
    parts.feed(html)
    urls = [
        v
        for _t, attrs in parts.tags
        for k, v in attrs.items()
        if k in {"src", "href", "action", "srcset", "poster", "data"}
    ]
    assert urls == [], urls  # nothing to fetch, not even a relative URL
    assert not {t for t, _a in parts.tags} & {
        "link",
        "img",
        "iframe",
        "object",
        "embed",
        "base",
        "a",
        "form",
    }
    (csp,) = [
        a["content"]
        for t, a in parts.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert (
        "default-src 'none'" in csp
        and "connect-src 'none'" in csp
        and "unsafe-inline" not in csp.split("style-src")[0]
    )
    inline = [text for attrs, text in parts.scripts if "type" not in attrs]
    assert len(inline) == 1 and all(script_hash(t) in csp for t in inline)  # only these may run
    (data,) = [text for attrs, text in parts.scripts if attrs.get("type") == "application/json"]
    assert "<" not in data  # no text can close the data element
    return parts, json.loads(data)


def test_session_and_canvas_files_need_no_network_and_keep_hostile_text_inert(
    tmp_path: Path, settings
) -> None:
    fx.build(tmp_path / "root")
    client = Client()  # loopback default: anonymous reading, as a local user
    response = client.get(f"/a/{fx.AGENT}/s/{fx.S1}/offline.html")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    html = response.content.decode()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    _parts, data = offline_parts(html)
    assert [r[4] for r in data["rows"]] == ["exec: make", "exec: hostile", "exec: pytest"]
    assert "secret-only-s2" not in html  # the other session's rows stay out
    hostile = data["refs"][f"refs/{fx.HOSTILE_REF}"]
    assert (
        "REF-BODY-MARKER" in hostile and "&lt;script&gt;window.pwned='body'" in hostile
    )  # as text
    for banned in ("<script", "onerror", "href", "<img", "evil.example/x.png"):
        assert banned not in hostile, banned
    assert "click me" in hostile  # a link becomes its text
    assert {s["file"] for s in data["scenes"]} == {fx.FILE} and data["notes"] == []

    canvas = client.get(f"/a/{fx.AGENT}/c/{fx.FILE}/offline.html").content.decode()
    _parts, cdata = offline_parts(canvas)
    assert {n["id"] for n in cdata["scenes"][-1]["nodes"]} == {"001-N1", "001-N2", "001-N3"}
    assert {r[4] for r in cdata["rows"]} == {
        "exec: make",
        "exec: hostile",
        "exec: pytest",
        "read: secret-only-s2",
    }
    assert "<b>bold" not in canvas  # a label's markup travels as escaped JSON text


def test_a_huge_session_is_cut_to_its_last_rows_with_a_note(tmp_path: Path, monkeypatch) -> None:
    fx.build(tmp_path / "root")
    monkeypatch.setattr(offline, "MAX_ROWS", 2)
    monkeypatch.setattr(offline, "MAX_REFS", 1)
    html = Client().get(f"/a/{fx.AGENT}/s/{fx.S1}/offline.html").content.decode()
    _parts, data = offline_parts(html)
    assert [r[4] for r in data["rows"]] == ["exec: hostile", "exec: pytest"]
    assert len(data["frames"]["scene"]) == 2
    assert data["notes"][0] == "The first 1 rows are left out: the file holds the last 2."
    assert "1 cited ref is left out (size limit)." in data["notes"]
    assert sum(v is None for v in data["refs"].values()) == 1
    assert "The first 1 rows are left out" in html.split("<script")[0]  # said on the page itself
