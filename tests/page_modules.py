"""The page's own script modules, for a browser test to call.

memviz's scripts are ES modules and set no globals. A test that drives the canvas page through
its API (the view, the scene, find) imports the module the page loaded: by its hashed name, as
the page's script tags and imports name it, so it gets the same instance and state. `expose`
binds what it imported to `window.mv` in that tab, for the test's own expressions only.
"""

from __future__ import annotations

from typing import Any

from django.templatetags.static import static

# key in window.mv -> (static file, export; None for the whole module)
MODULES = {
    "canvas": ("js/canvas.js", "canvas"),
    "nav": ("js/canvas-nav.js", None),
    "mermaid": ("js/canvas-mermaid.js", "mermaidView"),
    "draw": ("js/canvas-draw.js", None),
}

_BIND = """async (modules) => {
  window.mv = window.mv || {};
  for (const [key, url, name] of modules) { const m = await import(url); window.mv[key] = name ? m[name] : m; }
}"""


def expose(page: Any, *keys: str) -> None:
    """`window.mv.<key>` for each key of MODULES (default: the canvas page's API)."""
    wanted = keys or ("canvas",)
    page.evaluate(_BIND, [[key, static(MODULES[key][0]), MODULES[key][1]] for key in wanted])
