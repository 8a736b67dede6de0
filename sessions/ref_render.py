"""Turn untrusted ref text (tool output) into safe HTML: markdown for the header, code for results."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import markdown
import nh3
from pygments.token import STANDARD_TYPES

from agentfs import json_text

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
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "td": {"align"}, "th": {"align"}}
# Classes only where the highlighter puts them: a ref must not borrow memviz's own classes (a
# badge, a button, what the page's scripts look for) to pass for part of the interface.
ALLOWED_CLASSES = {"div": {"hl"}, "span": set(STANDARD_TYPES.values()) - {""}}
BACKTICK_RUN = re.compile(r"`+")


def _outside_host(host: str) -> bool:
    """False for this machine and private networks: a ref's link must not lure to a local port."""
    host = host.strip("[]").lower()
    if host in {"localhost", ""} or host.endswith((".localhost", ".local")):
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return True
    return address.is_global


def safe_href(value: str) -> str | None:
    """``value`` when it may stay a link, else None (the text stays, not clickable).

    Refused: protocol-relative links (``//host/x``, ``\\host``: another host under this page's
    scheme) and links to loopback, private or link-local hosts (other programs on this machine).
    """
    if value.startswith(("//", "\\", "/\\", "\\/")):
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme in ("http", "https"):
        return value if _outside_host(parts.hostname or "") else None
    return value


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    return safe_href(value) if attribute == "href" else value


def sanitize_html(html: str) -> str:
    """Strip scripts, event handlers, styles, foreign classes and unsafe links from HTML."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        allowed_classes=ALLOWED_CLASSES,
        attribute_filter=_attribute_filter,
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
    return markdown_to_html(fenced(text, language))


def longest_backticks(text: str) -> int:
    """The longest run of backticks in ``text``: a code span or fence around it needs more."""
    return max((len(m.group(0)) for m in BACKTICK_RUN.finditer(text)), default=0)


def fenced(text: str, info: str = "") -> str:
    """``text`` as a fenced code block whose fence outgrows any backtick run inside it."""
    fence = "`" * max(3, longest_backticks(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"
