"""Turn untrusted ref text (tool output) into safe HTML: markdown for the header, code for results."""

from __future__ import annotations

import re

import markdown
import nh3

from sessions.memory import json_text

ALLOWED_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "dd",
    "del",
    "details",
    "div",
    "dl",
    "dt",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "span",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {"*": {"class"}, "a": {"href", "title"}, "td": {"align"}, "th": {"align"}}
BACKTICK_RUN = re.compile(r"`+")


def sanitize_html(html: str) -> str:
    """Strip scripts, event handlers, styles and non-http(s) links from HTML."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def markdown_to_html(text: str) -> str:
    html = markdown.markdown(
        text,
        extensions=["fenced_code", "codehilite", "tables", "sane_lists"],
        extension_configs={"codehilite": {"guess_lang": False, "css_class": "hl"}},
        output_format="html",
    )
    return sanitize_html(html)


def _looks_like_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return False
    try:
        json_text.loads(stripped)
    except (ValueError, RecursionError):  # a tool result nested thousands deep is plain text
        return False
    return True


def code_to_html(text: str, language: str | None = None) -> str:
    """A highlighted code block; the fence outgrows any backtick run inside the text."""
    if language is None:
        language = "json" if _looks_like_json(text) else "text"
    longest = max((len(m.group(0)) for m in BACKTICK_RUN.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return markdown_to_html(f"{fence}{language}\n{text}\n{fence}")
