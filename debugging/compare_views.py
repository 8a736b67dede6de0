"""The session comparison page: two sessions of an agent side by side (and its JSON twin)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from debugging import session_compare as sc
from debugging.compare_html import nodes_html, pairs_html
from debugging.compare_selectors import page_data
from debugging.ledger_selectors import session_ledger
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
    chosen = {side: params.get(side, "") for side in ("a", "b")}
    choices = AgentSession.objects.filter(agent=obj).order_by("session_id")
    picker = {
        "picked": chosen,
        "choices": [
            {"id": s, "rows": n} for s, n in choices.values_list("session_id", "rows_count")
        ],
    }
    if not (chosen["a"] and chosen["b"]):
        return render_page(request, "debugging/compare.html", {"agent": obj.slug, **picker})
    found = {s.session_id: s for s in choices.filter(session_id__in=chosen.values())}
    missing = [v for v in chosen.values() if v not in found]
    if missing:
        raise Http404(f"no session {missing[0]!r} in agent {obj.slug!r}")
    a, b = found[chosen["a"]], found[chosen["b"]]
    if params.get("part") == "tokens":
        return _tokens(request, obj, a, b)
    data = page_data(obj, a, b, params)
    if wants_json(request):  # the twin needs none of the HTML built below
        if any(k in params for k in ("after", "before", "at")):
            data["nodes"] = None  # a cursor page: the first page has the node table
        return render_page(request, "debugging/compare.html", {**data, **picker})
    this = f"?{urlencode({'a': chosen['a'], 'b': chosen['b'], 'show': data['show']})}"
    htmx = getattr(request, "htmx", None)
    # the pager swaps the list alone: it needs no node table
    list_only = htmx is not None and bool(htmx) and not htmx.history_restore_request
    extra = {
        "pairs_html": pairs_html(data["rows"], data["nodes"], LABELS, DIFFERS, this),
        "nodes_html": "" if list_only else nodes_html(data["nodes"], HOW, this),
        "this": this,
    }
    return render_page(
        request, "debugging/compare.html", {**data, **picker}, extra=extra, partial="pairs"
    )


def _tokens(request: HttpRequest, agent: Agent, a: AgentSession, b: AgentSession) -> HttpResponse:
    """Both sessions' token totals from their ledgers: asked for after the page is shown, as
    a ledger reads every ref of its session (seconds on a long run, memoized after)."""
    data = {
        side: {k: v["tokens"] for k, v in session_ledger(agent, s)["layers"].items()}
        for side, s in (("a", a), ("b", b))
    }
    sides = [("A", data["a"]), ("B", data["b"])]
    return render_page(request, "debugging/_compare_tokens.html", data, extra={"sides": sides})
