"""The comparison page's pair list and node table built in Python, as ``rows_html`` does.

As template loops with an include per side and per node they cost ~5 ms a pair: half a second
for a page of 100 pairs beside a 200-node table, where the data takes a few milliseconds. Every
interpolated value is escaped (``rows_html._text``); the labels come translated from the view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from django.template.defaultfilters import filesizeformat, floatformat
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from debugging.page_types import CompareNode, ComparePair, NodeRef, PairSide
from memviz.templatetags.memviz import status_class
from sessions.rows_html import _text

if TYPE_CHECKING:  # a development dependency: the labels are lazy translations
    from django_stubs_ext import StrOrPromise

CALL_CHARS, SUMMARY_CHARS, TITLE_CHARS = 300, 400, 80


def truncatechars(text: str, size: int) -> str:
    """The template filter's result, without its per-call locale lookups (~0.2 ms each)."""
    return text if len(text) <= size else text[: size - 1] + "…"


def node_html(node: NodeRef | None, no_node: str = "") -> str:
    if not node:
        return f'<span class="muted">{no_node or _text(gettext("no node"))}</span>'
    parts = [
        f'<span class="compare-node"><a href="{_text(node["url"])}"><code>{_text(node["id"])}</code></a>'
    ]
    if node["title"]:
        parts.append(" " + _text(truncatechars(node["title"], TITLE_CHARS)))
    if status := node["status"]:
        parts.append(f' <span class="pill {status_class(status)}">{_text(status)}</span>')
    return "".join(parts) + "</span>"


def _words() -> dict[str, str]:
    """The escaped words of the list, translated once per page rather than once per row."""
    words = {
        "no_row": gettext("no row"),
        "line": gettext("line %(line)s"),
        "score": gettext("score"),
        "ref": gettext("ref"),
        "ref_missing": gettext("ref missing"),
        "no_node": gettext("no node"),
        "partner": gettext("the other place"),
    }
    return {k: v if k == "line" else _text(v) for k, v in words.items()}


def _side(side: PairSide | None, letter: str, words: dict[str, str]) -> str:
    css = f"pair-side side-{letter.lower()}"
    if side is None:
        return f'<div class="{css} empty"><span class="gap" aria-label="{words["no_row"]}">—</span></div>'
    line = words["line"] % {"line": side["line_no"]}
    head = [f'<a href="{_text(side["row_url"])}">{letter} · {_text(line)}</a>']
    if side["score"] is not None:
        head.append(f"{words['score']} {_text(floatformat(side['score'], -1))}")
    if side["ref_url"]:
        size = _text(filesizeformat(side["result_size"] or 0))
        head.append(f'<a href="{_text(side["ref_url"])}">{words["ref"]}</a> {size}')
    elif side["result_ref"]:
        head.append(f'<span class="muted">{words["ref_missing"]}</span>')
    return (
        f'<div class="{css}"><div class="row-head">{" · ".join(head)}</div>'
        f'<code class="call">{_text(truncatechars(side["tool_call"], CALL_CHARS))}</code>'
        f'<p class="summary">{_text(truncatechars(side["summary"], SUMMARY_CHARS))}</p></div>'
    )


def pairs_html(
    rows: list[ComparePair],
    nodes: list[CompareNode],
    labels: Mapping[str, StrOrPromise],
    differs: Mapping[str, StrOrPromise],
    here: str,
) -> SafeString:
    """The ``<ol class="pairs">``: A | status | B per pair, a node header where the group changes."""
    words = _words()
    parts = ['<ol class="pairs">']
    group: int | None = -1  # no pair's group: the first pair opens one
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            node = nodes[group] if group is not None else None
            a, b = (node["a"], node["b"]) if node is not None else (None, None)
            parts.append(
                f'<li class="pair-group">{node_html(a, words["no_node"])} '
                f'<span aria-hidden="true">⇄</span> {node_html(b, words["no_node"])}</li>'
            )
        status = _text(r["status"])
        fields = "".join(
            f' <span class="small differs">{_text(differs[d])}</span>' for d in r["differs"]
        )
        if r["partner"] is not None:  # the same call in the other run, maybe on another page
            fields += (
                f' <a class="small partner" href="{_text(here)}&amp;at={r["partner"]}'
                f'#pair-{r["partner"]}">{words["partner"]}</a>'
            )
        parts.append(
            f'<li class="pair status-{status}" id="pair-{r["index"]}" data-status="{status}">'
            f"{_side(r['a'], 'A', words)}"
            f'<div class="pair-status"><span class="badge">{_text(labels[r["status"]])}</span>{fields}</div>'
            f"{_side(r['b'], 'B', words)}</li>"
        )
    if len(parts) == 1:
        none = conditional_escape(gettext("No rows to show."))
        parts.append(f'<li class="empty">{none}</li>')
    parts.append("</ol>")
    return mark_safe("".join(parts))  # noqa: S308 - every interpolated value is escaped above


def nodes_html(
    nodes: list[CompareNode], how: Mapping[str, StrOrPromise], rows_link: str
) -> SafeString:
    """The node table's rows; ``rows_link``: this comparison's URL, to which ``&at=`` is added."""
    only = {"a": _text(gettext("only A")), "b": _text(gettext("only B"))}
    rows_word = _text(gettext("rows"))
    no_node = _text(gettext("no node"))
    parts = []
    for n in nodes:
        one_side = "" if n["a"] and n["b"] else "one-side"
        if n["how"]:
            matched = _text(how[n["how"]]) + (f" ({n['shared']})" if n["shared"] else "")
        else:
            matched = only["a"] if n["a"] else only["b"]
        if n["first"] is not None:
            matched += f' · <a href="{_text(rows_link)}&amp;at={n["first"]}#pairs">{rows_word}</a>'
        parts.append(
            f'<tr class="{one_side}"><td>{node_html(n["a"], no_node)}</td><td class="num">{n["a_rows"]}</td>'
            f'<td>{node_html(n["b"], no_node)}</td><td class="num">{n["b_rows"]}</td>'
            f'<td class="small">{matched}</td></tr>'
        )
    return mark_safe("\n".join(parts))  # noqa: S308 - every interpolated value is escaped above
