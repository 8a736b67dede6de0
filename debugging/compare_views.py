"""The session comparison page: two sessions of an agent side by side (and its JSON twin)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from debugging import session_compare as sc
from debugging.compare_html import nodes_html, pairs_html
from debugging.compare_selectors import compare_picker, page_data, token_totals
from memviz.pages import render_page, wants_json
from sessions.models import Agent, AgentSession
from sessions.selectors import agent_get

LABELS = {
    sc.SAME: _("same"),
    sc.RESULT: _("different result"),
    sc.CHANGED: _("other arguments"),
    sc.ONLY_A: _("only in A"),
    sc.ONLY_B: _("only in B"),
    sc.MOVED: _("at another place"),
}
DIFFERS = {
    "call": _("arguments"),
    "summary": _("summary"),
    "score": _("score"),
    "size": _("result size"),
}
HOW = {"calls": _("aligned calls"), "id": _("same id"), "title": _("same title")}


@require_GET
def session_compare_page(request: HttpRequest, agent: str) -> HttpResponse:
    """``?a=<session>&b=<session>``; with either missing, the form that picks them."""
    obj = agent_get(agent)
    params = request.GET.dict()
    picker = compare_picker(obj, params)
    chosen = picker["picked"]
    if not (chosen["a"] and chosen["b"]):
        return render_page(request, "debugging/compare.html", picker)
    picked = AgentSession.objects.filter(agent=obj, session_id__in=chosen.values())
    found = {s.session_id: s for s in picked}
    missing = [v for v in chosen.values() if v not in found]
    if missing:
        raise Http404(f"no session {missing[0]!r} in agent {obj.slug!r}")
    a, b = found[chosen["a"]], found[chosen["b"]]
    if params.get("part") == "tokens":
        return _tokens(request, obj, a, b)
    json_twin = wants_json(request)
    data = page_data(obj, a, b, params, picker, json_twin=json_twin)
    if json_twin:  # the twin needs none of the HTML built below
        return render_page(request, "debugging/compare.html", data)
    this = f"?{urlencode({'a': chosen['a'], 'b': chosen['b'], 'show': data['show']})}"
    htmx = getattr(request, "htmx", None)
    # the pager swaps the list alone: it needs no node table
    list_only = htmx is not None and bool(htmx) and not htmx.history_restore_request
    rows, nodes = data["rows"], data["nodes"] or []  # the page's nodes are never None
    extra = {
        "pairs_html": pairs_html(rows, nodes, LABELS, DIFFERS, this),
        "nodes_html": "" if list_only else nodes_html(nodes, HOW, this),
        "this": this,
    }
    return render_page(request, "debugging/compare.html", data, extra=extra, partial="pairs")


def _tokens(request: HttpRequest, agent: Agent, a: AgentSession, b: AgentSession) -> HttpResponse:
    """Both sessions' token totals from their ledgers: asked for after the page is shown, as
    a ledger reads every ref of its session (seconds on a long run, memoized after)."""
    data = token_totals(agent, a, b)
    sides = [("A", data["a"]), ("B", data["b"])]
    return render_page(request, "debugging/_compare_tokens.html", data, extra={"sides": sides})
