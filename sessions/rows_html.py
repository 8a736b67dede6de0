"""The row list (`_rows.html`) built in Python: the session, agent and node pages list 50+ rows.

As a template loop it cost ~0.5 ms a row (two ``{% url %}`` and several translations each):
25-55 ms of a session page whose queries take 2 ms. The markup is the template's, value for
value: every interpolated value goes through ``conditional_escape`` after ``localize``, as the
template engine does, and URLs are the ``reverse`` of the same routes.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from agentfs.row_fields import is_wait

# reverse() quotes the whole path with these characters left as they are (django.urls.resolvers)
_URL_SAFE = "!$&'()*+,;=" + "/~:@"
_MARKER = "memviz-url-marker"


def _url_maker(route: str, agent_slug: str) -> Callable[[str], str]:
    """``route``'s URL for each last argument, reversed once: reverse() costs ~50 µs a call."""
    head, tail = reverse(route, args=[agent_slug, _MARKER]).split(_MARKER)
    return lambda value: conditional_escape(head + quote(str(value), safe=_URL_SAFE) + tail)


def _text(value: Any) -> str:
    kind = type(value)
    if kind is str:  # most values: localize() leaves text alone, escape() is html.escape
        return html.escape(value)
    if kind is int and not settings.USE_THOUSAND_SEPARATOR:  # ids, line numbers
        return str(value)
    return conditional_escape(localize(value))


def _node_url_maker(agent_slug: str) -> Callable[[str], str]:
    """A node id's locate link: the id is a query value (``/`` and ``..`` stay inside it)."""
    base = reverse("node-locate", args=[agent_slug]) + "?id="
    return lambda value: conditional_escape(base + quote(str(value), safe=""))


def rows_html(
    rows: Iterable[Mapping[str, Any]],
    *,
    agent_slug: str,
    show_node: bool,
    row_extra: Callable[[Mapping[str, Any]], SafeString] | None = None,
) -> SafeString:
    """The ``<ol class="rows">`` of ``rows`` (the dicts of ``sessions.selectors.rows_json``);
    ``row_extra(row)``, safe markup, ends each row (the review notes' opener)."""
    node_url = _node_url_maker(agent_slug)
    ref_url = _url_maker("ref", agent_slug)
    session_url = _url_maker("session", agent_slug)
    score_title = conditional_escape(gettext("replaceability score"))
    no_tool_call = conditional_escape(gettext("(no tool_call)"))
    open_word, loading = (
        conditional_escape(gettext("open")),
        conditional_escape(gettext("loading…")),
    )
    no_ref = conditional_escape(gettext("no result_ref"))
    parts = ['<ol class="rows">']
    for r in rows:
        offloaded = r.get("offloaded")
        deleted = " deleted" if offloaded == "deleted" else ""
        score = "–" if r.get("score") is None else _text(r["score"])
        tool_call = _text(r["tool_call"]) if r.get("tool_call") else no_tool_call
        head = [
            f'<li class="row{deleted}" id="row-{_text(r["id"])}">',
            '<div class="row-head">',
            f'<span class="score" title="{score_title}">{score}</span>',
            f'<code class="tool-call">{tool_call}</code>',
        ]
        if show_node:
            node_id = r.get("node_id")
            if node_id and not is_wait(node_id):
                node = f'<a href="{node_url(node_id)}">{_text(node_id)}</a>'
            else:
                node = _text(node_id) if node_id else "null"
            head.append(f'<span class="node-ref">{node}</span>')
        if offloaded:
            state = gettext("offloaded: %(state)s") % {"state": _text(offloaded)}
            head.append(f'<span class="badge offloaded-{_text(offloaded)}">{state}</span>')
        where = f"{_text(r.get('session'))}:{_text(r.get('line_no'))}"
        if r.get("session"):  # the row in its session's timeline, on the page that holds it
            at = f"?line={_text(r.get('line_no'))}#row-{_text(r['id'])}"
            where = f'<a href="{session_url(r["session"])}{at}">{where}</a>'
        stamp = _text(r.get("timestamp"))
        when = f'<time datetime="{stamp}">{stamp}</time>' if stamp else ""
        head.append(f'<span class="muted small">{when} · {where}</span>')
        head.append("</div>")
        head.append(f'<p class="summary">{_text(r.get("summary"))}</p>')
        ref = r.get("ref")
        if not ref:
            head.append(f'<p class="muted small">{no_ref}</p>')
        elif ref.get("error"):
            text = gettext("ref %(ref)s %(error)s") % {
                "ref": _text(r.get("result_ref")),
                "error": _text(ref["error"]),
            }
            head.append(f'<p class="warn small">{text}</p>')
        elif ref.get("exists"):
            url = ref_url(ref["url_name"])
            head.append(
                f'<details class="ref" hx-get="{url}" hx-trigger="toggle once" '
                'hx-target="find .ref-body">'
                f'<summary>{_text(ref["name"])} <a href="{url}" class="small">{open_word}</a>'
                "</summary>"
                f'<div class="ref-body"><span class="muted">{loading}</span></div></details>'
            )
        else:
            text = gettext("ref %(ref)s is missing on disk") % {"ref": _text(r.get("result_ref"))}
            head.append(f'<p class="warn small">{text}</p>')
        if row_extra is not None:
            head.append(row_extra(r))
        head.append("</li>")
        parts.append("\n".join(head))
    if len(parts) == 1:
        none = conditional_escape(gettext("No rows."))  # outside the f-string: xgettext skips those
        parts.append(f'<li class="empty">{none}</li>')
    parts.append("</ol>")
    return mark_safe("\n".join(parts))  # noqa: S308 - every interpolated value is escaped above
