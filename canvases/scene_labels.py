"""Label text as mermaid.js shows it: lines, and bold/italic runs where the author asked for them.

mermaid reads ``<b>``/``<strong>``/``<i>``/``<em>`` in a label as formatting (its HTML labels,
through DOMPurify) and a markdown string ("`**bold** _it_`") as markdown; other formatting tags
show their text only. memviz draws the same: the tags never reach the page as markup, the runs
are plain text with a flag ("b", "i" or "bi") that canvas-draw.js draws as a tspan style.
"""

from __future__ import annotations

import re

from canvases.mermaid.labels import decode_label, split_segments

Run = list[str]  # [text, flags]
FORMAT_TAG = re.compile(
    r"<(/?)(b|strong|i|em|u|s|del|ins|code|span|small|sup|sub|mark)(?:\s[^<>]*)?>", re.I
)
BOLD_TAGS, ITALIC_TAGS = {"b", "strong"}, {"i", "em"}
# `fa:fa-car`: mermaid puts a Font Awesome <i> there, blank without the site's icon font
ICON = re.compile(r"(?<![\w-])fa[bsrld]?:fa-[\w-]+[ \t]?")
MARKDOWN = re.compile(r"\*\*(.+?)\*\*|__(.+?)__|\*(.+?)\*|(?<![\w])_(.+?)_(?![\w])")


def _html_runs(raw: str) -> list[Run]:
    runs: list[Run] = []
    bold = italic = 0
    pos = 0
    for tag in FORMAT_TAG.finditer(raw):
        if tag.start() > pos:
            runs.append([decode_label(raw[pos : tag.start()]), _flags(bold, italic)])
        step = -1 if tag.group(1) else 1
        name = tag.group(2).lower()
        if name in BOLD_TAGS:
            bold = max(0, bold + step)
        elif name in ITALIC_TAGS:
            italic = max(0, italic + step)
        pos = tag.end()
    if pos < len(raw):
        runs.append([decode_label(raw[pos:]), _flags(bold, italic)])
    return runs


def _markdown_runs(line: str, outer: str = "") -> list[Run]:
    runs: list[Run] = []
    pos = 0
    for match in MARKDOWN.finditer(line):
        if match.start() > pos:
            runs.append([line[pos : match.start()], outer])
        if match.group(1) is not None or match.group(2) is not None:
            inner, flag = match.group(1) or match.group(2), "b"
        else:
            inner, flag = match.group(3) or match.group(4), "i"
        runs += _markdown_runs(inner, "".join(sorted(set(outer + flag))))
        pos = match.end()
    if pos < len(line):
        runs.append([line[pos:], outer])
    return runs


def _flags(bold: int, italic: int) -> str:
    return ("b" if bold else "") + ("i" if italic else "")


def rich_lines(raw: str, fallback: str) -> tuple[list[str], list[list[Run]] | None]:
    """(plain lines, runs per line or None when nothing is formatted) of a label as written.

    No label at all shows the fallback (the node's id, as mermaid); a label of icons only shows
    nothing, as mermaid without the icon font."""
    written = bool(raw)
    raw = raw or fallback
    if len(raw) >= 2 and raw[0] == "`" and raw[-1] == "`":
        lines = [line.strip() for line in raw[1:-1].split("\n")]
        runs = [_markdown_runs(decode_label(line)) for line in lines if line]
    else:
        runs = [_html_runs(segment) for segment in split_segments(raw)]
    runs = [[[ICON.sub("", r[0]), r[1]] for r in line] for line in runs]
    runs = [[r for r in line if r[0]] for line in runs]
    plain = ["".join(r[0] for r in line) for line in runs]
    if not any(plain):
        return ([""] if written else [fallback]), None
    formatted = any(r[1] for line in runs for r in line)
    return plain, (runs if formatted else None)
