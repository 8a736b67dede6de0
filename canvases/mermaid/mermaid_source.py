"""The agent's text as mermaid.js reads it: the file itself, minus what mermaid rejects or is unsafe.

``render_body`` rebuilds a canvas statement by statement for memviz's own drawing (labels as plain
text, memviz's status classes last). The mermaid.js view is meant to show mermaid's own picture
of the file instead, so this keeps every line as written and changes only:

- the plugin's metadata header (``%%{ "taskGoal": … }%%``, and any other ``%%{ }%%`` / ``%{ }%``
  line that is not a mermaid directive): mermaid 11 reads it as a directive and fails with
  "Parse error on line 1"; it becomes a ``%%`` comment;
- code fences (```` ```mermaid ```` … ```` ``` ````): "No diagram type detected"; also comments;
- ``click`` statements: links and callbacks out of an untrusted drawing (mermaid's "strict"
  level disables callbacks; this also drops the links); also comments;
- what an agent escaped that mermaid does not unescape: arrows written as ``--&gt;`` (lexical
  error) and quotes inside labels written as ``\\"`` (parse error), read as ``-->`` and ``#quot;``;
- spaces at line ends (and CR of CRLF): mermaid's grammar refuses ``class a hot `` with one;
- a one-line file full of literal ``\\n`` (an LLM reply that was not JSON): unescaped first.

Changed lines become comments, so mermaid's "on line N" still names the file's line N. What is
left to mermaid: its "strict" security level (DOMPurify on labels, no scripts), and the page's
Content-Security-Policy (no inline script, no remote fetch).

``status_lines`` are memviz's status colours as mermaid statements, for a user who asks for them
(they override the author's own ``classDef`` colours, so they are never added by default).
"""

from __future__ import annotations

import re

from .model import Canvas
from .parser import parse_drawn
from .render import _status_lines
from .repair import FENCE_LINE, repair_text

# `%%{init: …}%%`, `%%{ "init": … }%%`, `%%{wrap}%%`: mermaid's own directives, kept.
DIRECTIVE = re.compile(r"""[ \t]*%%\{[ \t]*["']?(?:init|initialize|wrap)\b""")
BRACED = re.compile(r"[ \t]*%{1,2}\{")
CLICK = re.compile(r"[ \t]*click[ \t]")
ARROW_ENTITY = re.compile(r"(?<=[-=.])&gt;|&lt;(?=[-=.])")
ARROWS = {"&gt;": ">", "&lt;": "<"}
ESCAPED_QUOTE = re.compile(r'(?<!\[)\\"')  # not the `[\"…"\]` shape's own opening
# mermaid takes a line as a comment only with something after the `%%`
COMMENT = "%% (left out for mermaid.js)"


def mermaid_source(text: str) -> str:
    """The canvas text for mermaid.js: the same lines, those mermaid rejects made comments."""
    repaired = repair_text(text)
    if repaired is not None:
        text = repaired
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    for number, line in enumerate(lines):
        braced = BRACED.match(line) and not DIRECTIVE.match(line)
        if braced or FENCE_LINE.match(line) or CLICK.match(line):
            lines[number] = COMMENT
        else:
            line = ARROW_ENTITY.sub(lambda m: ARROWS[m.group(0)], line)
            lines[number] = ESCAPED_QUOTE.sub("#quot;", line).rstrip()
    return "\n".join(lines)


def status_lines(text: str, doc: Canvas | None = None) -> str:
    """memviz's status colours (``classDef mvz_* …`` + ``class …``) for every node of `text`.

    ``doc``: ``parse(text)`` when the caller has it (the pages' parse is cached per text)."""
    return "\n".join(_status_lines(parse_drawn(text, doc), {}, {}))


def mermaid_view(text: str, doc: Canvas | None = None) -> dict[str, str]:
    """What the mermaid.js view is given: the text it draws, and the status colours apart."""
    return {"text": mermaid_source(text), "status": status_lines(text, doc)}
