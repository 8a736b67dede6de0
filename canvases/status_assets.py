"""The statuses' CSS and script, made from their one home (`canvases/mermaid/vocabulary.py`).

`scripts/export_statuses.py` writes them to `static/css/statuses.css` and `static/js/statuses.js`;
`tests/canvases/test_status_assets.py` fails when the files there differ from what this makes, as
`makemigrations --check` does for models. Plain Python.
"""

from __future__ import annotations

import json
from pathlib import Path

from canvases.mermaid.vocabulary import (
    STATUS_ACTIVE,
    STATUS_STYLES,
    STATUS_VOCABULARY,
    URGENCY,
    Look,
    StatusStyle,
)

CSS_NAME = "css/statuses.css"
JS_NAME = "js/statuses.js"
_HEAD = "Generated from canvases/mermaid/vocabulary.py by scripts/export_statuses.py: do not edit."


def _variables(theme: str) -> str:
    def one(style: StatusStyle) -> str:
        look: Look = getattr(style, theme)
        key = style.key
        return f"--{key}: {look.fill}; --{key}-line: {look.line}; --{key}-text: {look.text};"

    return "\n".join(f"  {one(style)}" for style in STATUS_STYLES)


def _rules(style: StatusStyle) -> list[str]:
    key = style.key
    border = " border-style: dashed;" if style.dashed_border else ""
    outline = "".join(f" {name}: {value};" for name, value in style.outline)
    return [
        f".status-{key} {{ background: var(--{key}); border-color: var(--{key}-line);{border} }}",
        f".mc .mvz_{key} .shape {{ fill: var(--{key}); stroke: var(--{key}-line);{outline} }}",
        f".mc .mvz_{key} .label {{ fill: var(--{key}-text); }}",
        # a junction, a fork bar: filled with the node's border colour, as mermaid fills them
        f".mc .mvz_{key} .shape.shape-filled {{ fill: var(--{key}-line); }}",
        f".minimap .mm-node.mvz_{key} {{ fill: var(--{key}-line); }}",
    ]


def status_css() -> str:
    """Custom properties per status and theme, and the rules that use them. Loaded after
    memviz.css: a status's fill wins over the plain node's at equal specificity."""
    lines = [f"/* {_HEAD} */", ":root {", _variables("light"), "}"]
    lines += ["@media (prefers-color-scheme: dark) {", "  :root {"]
    lines += [f"  {line}" for line in _variables("dark").splitlines()]
    lines += ["  }", "}"]
    for style in STATUS_STYLES:
        lines += _rules(style)
    return "\n".join(lines) + "\n"


def status_script() -> str:
    """The module `statuses.js`: the word lists the drawing scripts import."""
    data = {
        "vocabulary": list(STATUS_VOCABULARY),
        "urgency": list(URGENCY),
        "active": list(STATUS_ACTIVE),
    }
    return (
        f"// {_HEAD}\n"
        f"export const statuses = Object.freeze({json.dumps(data, separators=(', ', ': '))});\n"
    )


def generated() -> dict[str, str]:
    """Static file name → its text."""
    return {CSS_NAME: status_css(), JS_NAME: status_script()}


def stale(static_dir: Path) -> list[str]:
    """The generated files under ``static_dir`` that are missing or differ from the table."""
    out = []
    for name, text in generated().items():
        path = static_dir / name
        if not path.is_file() or path.read_text("utf-8") != text:
            out.append(name)
    return out


def write(static_dir: Path) -> list[str]:
    """Write the files that are stale; their names."""
    changed = stale(static_dir)
    texts = generated()
    for name in changed:
        (static_dir / name).write_text(texts[name], "utf-8")
    return changed
