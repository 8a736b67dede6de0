"""The ref page: one ref file of an agent, read a page at a time, confined to the agent folder.

Reads only. A ref that cannot be shown is a `RefRefused` carrying its words (in the reader's
language) and its HTTP status; the view answers it on the same page (or its JSON).
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from django.utils.translation import gettext as _

from agentfs.paths import LinkRefused, UnsafePath, confine
from agentfs.refs import read_ref_page, ref_names, ref_url_name, split_ref, unwrap_tool_result
from sessions import selectors
from sessions.models import Ref
from sessions.reader_words import refusal_words
from sessions.ref_render import code_to_html, markdown_to_html


class RefPage(TypedDict):
    """The page's JSON twin (the file's text, as read; never HTML)."""

    agent: str
    name: str
    url_name: str
    tool: str
    call_id: str
    timestamp: str
    total_bytes: int
    offset: int
    next_offset: int | None
    prev_offset: int | None
    paged: bool  # a large ref, shown a page of bytes at a time
    text: str
    result_text: str | None  # a whole ref: the tool's result below its header
    unwrapped_text: str | None  # that result's text when it is a JSON-stringified tool result


class RefHtml(TypedDict, total=False):
    """The page's HTML parts, sanitized (`sessions/ref_render.py`): the template's only."""

    header: str
    result: str
    raw: str


class RefRefused(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def ref_file(agent_slug: str, name: str) -> tuple[Ref, Path]:
    """The indexed ref `name` of the agent and its path (opened later without following links)."""
    agent = selectors.agent_get(agent_slug)
    ref = Ref.objects.filter(agent=agent, name__in=ref_names(name)).order_by("name").first()
    if ref is None:
        message = _("missing: ref %(name)r is not in this agent's folder") % {"name": name}
        raise RefRefused(message, 404)
    try:
        confine(Path(agent.path), ref.name)  # refuses names that leave the folder
    except UnsafePath as exc:
        raise RefRefused(_("refused: %(why)s") % {"why": refusal_words(exc)}, 400) from None
    path = Path(agent.path) / ref.name
    if not path.exists() and not path.is_symlink():
        raise RefRefused(_("missing: the file is gone from disk"), 404)
    return ref, path


def refused_opening(exc: OSError) -> RefRefused:
    """Why opening the ref's file failed, as the page says it."""
    if isinstance(exc, LinkRefused):
        return RefRefused(_("refused: %(why)s") % {"why": refusal_words(exc)}, 400)
    return RefRefused(_("unreadable: %(why)s") % {"why": exc.strerror}, 404)


def ref_page(agent_slug: str, name: str, offset: int, limit: int) -> tuple[RefPage, RefHtml]:
    """The ref from byte `offset` (at most `limit` bytes); a whole small ref is split into its
    header (markdown) and result (code, unwrapped from a JSON tool result)."""
    ref, path = ref_file(agent_slug, name)
    try:
        page = read_ref_page(path, offset=offset, limit=limit)
    except OSError as exc:
        raise refused_opening(exc) from None
    whole = page.offset == 0 and page.next_offset is None
    data: RefPage = {
        "agent": agent_slug,
        "name": ref.name,
        "url_name": ref_url_name(ref.name),
        "tool": ref.tool,
        "call_id": ref.call_id,
        "timestamp": ref.timestamp,
        "total_bytes": page.total_bytes,
        "offset": page.offset,
        "next_offset": page.next_offset,
        "prev_offset": max(0, page.offset - limit) if page.offset else None,
        "paged": not whole,
        "text": page.text,
        "result_text": None,
        "unwrapped_text": None,
    }
    if not whole:
        return data, {"result": code_to_html(page.text, "text")}
    header, result = split_ref(page.text)
    unwrapped = unwrap_tool_result(result)
    data["result_text"], data["unwrapped_text"] = result, unwrapped
    html: RefHtml = {
        "header": markdown_to_html(header),
        "result": code_to_html(unwrapped if unwrapped is not None else result),
        "raw": code_to_html(result) if unwrapped is not None else "",
    }
    return data, html
