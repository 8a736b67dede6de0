"""The offline file itself: one HTML document that needs no network and runs no foreign script.

Plain Python. Its CSS and script are memviz's own static files, inlined (the script modules joined
by `offline_script`); the data is JSON in a
``<script type="application/json">`` (not executable; ``<``, ``>``, ``&`` escaped so no text
can close it). A ``<meta>`` Content-Security-Policy allows exactly the inline scripts by their
SHA-256, so even markup that slipped through sanitizing could not run, and forbids every fetch,
connection, form and frame: ``default-src 'none'``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any

from debugging import offline_script

STYLES = ("css/memviz.css", "css/statuses.css", "css/debug.css", "css/offline.css")
_JSON_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


def _asset(assets: Path, name: str) -> str:
    """One of memviz's own static files (never a memory-folder file)."""
    return (assets / name).read_text("utf-8")


def script_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def policy(scripts: list[str]) -> str:
    return (
        "default-src 'none'; script-src " + " ".join(script_hash(s) for s in scripts) + "; "
        "style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; "
        "form-action 'none'; base-uri 'none'; object-src 'none'; frame-src 'none'"
    )


def document(
    payload: dict[str, Any], *, strings: dict[str, str], assets: Path, lang: str = "en"
) -> str:
    scripts = [offline_script.joined(lambda name: _asset(assets, name))]
    for text in scripts:
        if "</script" in text.lower():  # would end the inline element early
            raise ValueError("a static script holds </script")
    css = "\n".join(_asset(assets, name) for name in STYLES).replace("</", "<\\/")
    data = json.dumps(payload, ensure_ascii=False, allow_nan=False).translate(_JSON_ESCAPES)
    words = "".join(
        f'<span data-k="{html.escape(k)}">{html.escape(v)}</span>' for k, v in strings.items()
    )
    title = html.escape(str(payload.get("title", "memviz")))
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in payload.get("notes", []))
    inline = "".join(f"<script>{s}</script>\n" for s in scripts)
    return f"""<!doctype html>
<html lang="{html.escape(lang)}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{html.escape(policy(scripts))}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · memviz</title>
<style>{css}</style>
</head>
<body class="offline">
<header class="offline-head"><h1>{title}</h1>
<p class="muted small" id="offline-about"></p>
<ul class="small offline-notes" id="offline-notes">{notes}</ul></header>
<main>
<div class="replay-controls">
<button type="button" data-step="-1" aria-label="previous">◀</button>
<input type="range" id="offline-slider" min="0" max="0" value="0">
<button type="button" data-step="1" aria-label="next">▶</button>
<span id="offline-frame"></span>
</div>
<div class="replay-grid">
<div><div id="offline-diagram" class="diagram"><div class="mermaid-host"></div>
<p class="render-error warn" hidden></p></div>
<p class="muted small" id="offline-hint"></p></div>
<div><div id="offline-node" class="node-detail" hidden></div>
<h2 id="offline-rows-title"></h2><ol id="offline-rows" class="rows compact" reversed></ol></div>
</div>
</main>
<template id="offline-strings">{words}</template>
<script type="application/json" id="offline-data">{data}</script>
{inline}</body>
</html>
"""
