"""Text people type, made safe to write into a canvas: it never reads as structure to the agent
(format spec §4.5, §4.8.2–4.8.3) or to mermaid, and it still reads as typed.

The main tool is U+2060 WORD JOINER (WJ): invisible in mermaid and in the agent's raw injected
text, not a word character for any regex (so it breaks `N7`, `%%`, `status:` where it sits), and
not in the plugin's unsafe-character strip (which removes U+200B–U+200F), so it survives the
agent's own readers. Entity codes are used only where no invisible break works (`"`, `|`).
`human_text_display` is the exact inverse on what `human_text` writes: entities decoded first,
then every WJ removed (a WJ a person typed is dropped on the way in, so nothing is ambiguous).
"""

from __future__ import annotations

import html
import re
from typing import Literal

WJ = "\u2060"
Context = Literal["label", "edge_label", "meta"]

# JS `\s` (the plugin's regexes are JS): ASCII spaces plus NBSP, Zs, line/paragraph separators, BOM.
JS_SPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# The injector's node-index pattern in JS semantics (`\d`, `\b` ASCII); it also covers the
# map-builder's `\b\d{3}-N\d+\b`: any match of that one starts a match of this one.
ID_TOKEN = re.compile(r"\b(\d+-N\d+|N\d+)\b", re.ASCII)
# Line breaks (JS `.` stops at \n \r \u2028 \u2029), other controls, lone surrogates: a space.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_PERCENT_PAIR = re.compile(r"%(?=%)")
# `status:` / `summary:` / `Timestamp:` key shapes: the agent reads `status:\s*(\w+)` over the
# whole file; the engine reads `timestamp\s*[:：]`. A WJ before the colon breaks all of them.
_FIELD_KEY = re.compile(r"(status|summary|timestamp)(\s*)(?=[:：])", re.IGNORECASE)
# The history injector's `class\s+([\w,-]+)\s+(done|doing|todo)` (no `i`, JS `\w` and `\s`).
_CLASS_SHAPE = re.compile(rf"class(?=[{JS_SPACE}]+[A-Za-z0-9_,-]+[{JS_SPACE}]+(?:done|doing|todo))")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")  # would start an HTML tag or `<br/>` in mermaid
_ENTITY_AMP = re.compile(r"&(?=[A-Za-z#])")  # an HTML entity, with or without its `;`
_ENTITY_HASH = re.compile(r"#(?=\w+;)")  # a mermaid `#name;` entity (`\w` wider than JS's)
MERMAID_ENTITY = re.compile(r"#(\w+);")

# What `human_text` changes, for docs/write-back.md and the tests that compare read-back text.
SUBSTITUTIONS: tuple[tuple[str, str, str], ...] = (
    ("line breaks, tabs, control characters", "one space each; the text is then trimmed", "all"),
    ("U+2060 typed by a person", "dropped (it is the marker below)", "all"),
    (
        "`N` + digits forming an id-like token (`N9`, `001-N7`, `1001-N3`, `fix-N3`)",
        "`N` WJ digits",
        "all",
    ),
    ("`%%`", "`%` WJ `%`", "all"),
    ("`status:` `summary:` `timestamp:` (any case, `:` or `：`)", "WJ before the colon", "all"),
    ("`class <ids> done|doing|todo`", "`class` WJ …", "all"),
    ("`<` before a letter, `/`, `!` or `?`", "`<` WJ", "label, edge_label"),
    ("`&` before a letter or `#`", "`&` WJ", "label, edge_label"),
    ("`#` of a `#name;` entity", "`#` WJ", "label, edge_label"),
    ("a leading `` ` `` (mermaid markdown string)", "WJ before it", "label, edge_label"),
    ("a trailing `\\`", "`\\` WJ", "label, edge_label"),
    ('`"`', "`#quot;`", "label, edge_label"),
    ("`|`", "`#124;`", "edge_label"),
)


def human_text(text: str, context: Context = "label") -> str:
    """`text` as typed, made safe for a label (`label`), an edge label or a metadata value.

    `meta` is for JSON values on line 1 (`taskGoal`): JSON escapes quotes there and nothing is
    rendered, so only the agent-facing rules apply (no line break, `%%`, ids or key shapes).
    """
    text = _BREAKS.sub(" ", text.replace("\r\n", " ")).replace(WJ, "").strip()
    if not text:
        return text
    text = break_percent_pairs(text)
    text = _FIELD_KEY.sub(lambda m: m.group(1) + m.group(2) + WJ, text)
    text = _CLASS_SHAPE.sub("class" + WJ, text)
    if context != "meta":
        text = _TAG_OPEN.sub("<" + WJ, text)
        text = _ENTITY_AMP.sub("&" + WJ, text)
        text = _ENTITY_HASH.sub("#" + WJ, text)
        if text[0] == "`":
            text = WJ + text
        if text[-1] == "\\":
            text += WJ
    text = break_ids(text)
    if context != "meta":
        text = text.replace('"', "#quot;")
        if context == "edge_label":
            text = text.replace("|", "#124;")
    return text


def break_ids(text: str) -> str:
    """A WJ after the `N` of every id-like token, until the agent's pattern finds none.

    Breaking one token can expose another (`N5-N6` → `5-N6` after the first break), so repeat;
    each pass adds a WJ, so it ends.
    """
    while True:
        found = [m.start(1) + m.group(1).index("N") + 1 for m in ID_TOKEN.finditer(text)]
        if not found:
            return text
        pieces, last = [], 0
        for at in found:
            pieces += [text[last:at], WJ]
            last = at
        text = "".join(pieces) + text[last:]


def break_percent_pairs(text: str) -> str:
    """`%%` (a mermaid directive or comment start) written as `%` WJ `%`."""
    return _PERCENT_PAIR.sub("%" + WJ, text) if "%%" in text else text


def has_id_token(text: str) -> bool:
    """True when the agent's node-index pattern finds an id-like token in `text`."""
    return ID_TOKEN.search(text) is not None


def human_text_display(written: str) -> str:
    """Display text of a label as written: what a person typed, from what `human_text` wrote.

    A label that is one markdown string (`` `…` ``) loses its backticks; `\\"` (written by other
    tools) reads as `"`; mermaid's `#name;` entities and HTML entities are decoded while the WJ
    breaks still hold; then the WJs are removed.
    """
    if "#" not in written and "&" not in written and "\\" not in written and "`" not in written:
        return written.replace(WJ, "") if WJ in written else written
    text = written
    if len(text) >= 2 and text[0] == "`" and text[-1] == "`":
        text = text[1:-1]
    text = text.replace('\\"', '"')
    if "#" in text:
        text = MERMAID_ENTITY.sub(_mermaid_entity, text)
    if "&" in text:
        text = html.unescape(text)
    return text.replace(WJ, "")


def _mermaid_entity(match: re.Match[str]) -> str:
    name = match.group(1)
    if name.isdigit():
        try:
            return chr(int(name))
        except (ValueError, OverflowError):
            return match.group(0)
    decoded = html.unescape(f"&{name};")
    return match.group(0) if decoded.startswith("&") else decoded
