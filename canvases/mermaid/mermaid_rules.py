"""What mermaid reads outside the flowchart grammar, reported as problems of the canvas.

Before it parses, mermaid removes every directive `%%{word…` anywhere in the text, up to the
next `}%%` or to the end of the file, and every line that starts with `%%` (a comment); a quoted
label that starts with a backtick is a markdown string and must be exactly `` `…` ``. All three
were checked against mermaid 11 in chromium (tests/conformance/test_mermaid_agreement.py).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from .human_text import JS_SPACE
from .model import Canvas, Problem, Statement

# mermaid's directiveRegex starts `%{2}{\s*(?:(\w+)\s*:|(\w+))` (JS: `\w` ASCII, `\s` Unicode).
DIRECTIVE_START = re.compile(rf"%%\{{[{JS_SPACE}]*[A-Za-z0-9_]")
MARKDOWN_STRING = re.compile(r"`[^`]+`")
QUOTED_EDGE_LABEL = re.compile(r'\|[ \t]*"(`[^"]*)"[ \t]*\|')
NOT_LABELS = {"meta", "meta_broken", "meta_comment", "comment", "fence", "front_matter"}


def mermaid_text_problems(canvas: Canvas) -> None:
    """Append the problems of `%%` and markdown strings inside statements to `canvas.problems`."""
    text = canvas.text
    # single-character scans first: they are several times faster on a large canvas
    line_two = canvas.line_starts[1] if len(canvas.line_starts) > 1 else len(text)
    line_one_labels = not text.lstrip("\ufeff \t").startswith("%") and "%" in text[:line_two]
    if line_one_labels or text.find("%", line_two) >= 0:
        _percent_problems(canvas)
    if "`" in text and '"`' in text:
        _markdown_problems(canvas)


def _statement_at(canvas: Canvas, offset: int) -> Statement | None:
    index = bisect_right(canvas.statements, offset, key=_start) - 1
    if index < 0:
        return None
    statement = canvas.statements[index]
    return statement if statement.start <= offset < statement.stop else None


def _occurrences(text: str, needle: str) -> list[int]:
    """Offsets of `needle` (str.find: far faster than a regex scan of a large canvas)."""
    found, at = [], text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


def _start(statement: Statement) -> int:
    return statement.start


def _percent_problems(canvas: Canvas) -> None:
    text = canvas.text
    reported: dict[int, str] = {}  # the worst per statement: `%%{…}%%` holds two `%%`
    for at in _occurrences(text, "%%"):
        statement = _statement_at(canvas, at)
        if statement is None or statement.kind in NOT_LABELS:
            continue
        line = canvas.line_of(at)
        col = at - canvas.line_starts[line - 1] + 1
        before = text[canvas.line_starts[line - 1] : at]
        if DIRECTIVE_START.match(text, at):
            severity, code = "error", "directive_in_statement"
        elif line > statement.line and not before.strip():
            severity, code = "error", "percent_line"
        else:
            severity, code = "warning", "percent_in_label"
        if reported.get(id(statement)) in (severity, "error"):
            continue
        reported[id(statement)] = severity
        canvas.problems.append(Problem(line, col, code, severity))


def _markdown_problems(canvas: Canvas) -> None:
    text = canvas.text
    seen: set[int] = set()
    for at in _occurrences(text, '"`'):
        statement = _statement_at(canvas, at)
        if statement is None or statement.kind != "chain" or id(statement) in seen:
            continue
        seen.add(id(statement))
        labels = [
            (ref.start, ref.label_raw)
            for group in statement.groups
            for ref in group
            if ref.quoted and ref.label_raw and ref.label_raw.startswith("`")
        ]
        labels += [
            (link.start, m.group(1))
            for link in statement.links
            if (m := QUOTED_EDGE_LABEL.search(link.raw))
        ]
        for offset, label in labels:
            if MARKDOWN_STRING.fullmatch(label) is None:
                line = canvas.line_of(offset)
                col = offset - canvas.line_starts[line - 1] + 1
                said = {"label": label[:30]}
                canvas.problems.append(Problem(line, col, "markdown_string", "error", said))
