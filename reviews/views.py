"""Review pages and their writes: thin, over reviews.selectors and reviews.services.

Every write needs a signed-in user and Django's CSRF check (no exemption here); htmx gets the
region it came from redrawn, JSON clients the result, others a redirect with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from canvases.op_input import Field, flag, number, optional, read_sent, request_data, value
from memviz.input_refused import InputRefused
from memviz.pages import render_page
from memviz.responders import HtmxHttpRequest, Outcome, respond
from reviews import selectors, services
from reviews.models import ReviewNote
from reviews.services import ReviewRefused
from sessions.access import signed_in_to_write
from sessions.models import Agent
from sessions.selectors import agent_get

# What each review write reads, typed as every write's input is (canvases/op_input.py). The
# target's fields and the note's text are optional here: an unknown target is a 404 and an empty
# note a refusal shown in the thread it was written in, not a bad request.
# A row's item is its line number, which a script may send as a number.
TARGET = (optional("kind"), value("scope"), value("item"))
INPUTS: dict[str, tuple[Field, ...]] = {
    "note": (*TARGET, optional("text"), number("reply_to")),
    "mark": (*TARGET, flag("reviewed")),
    "queue": (optional("key"), optional("state")),
    "promote": (),
}


def _target(agent: Agent, data: Mapping[str, Any]) -> selectors.Target:
    kind, scope, item = (str(data.get(name) or "") for name in ("kind", "scope", "item"))
    found = selectors.target_get(agent, kind, scope, item)
    if found is None:
        raise Http404(_("nothing to review there"))
    return found


def thread_context(
    request: HtmxHttpRequest, agent: Agent, target: selectors.Target
) -> dict[str, Any]:
    """The thread partial's context: the thread, and the helpers its forms need."""
    return {**selectors.thread(agent, target), **_thread_extra(request, agent)}


def _thread_extra(request: HtmxHttpRequest, agent: Agent) -> dict[str, Any]:
    return {"agent": agent.slug, "can_write": request.user.is_authenticated}


def _thread_answer(
    request: HtmxHttpRequest, agent: Agent, target: selectors.Target
) -> Callable[[Outcome], HttpResponse]:
    def answer(outcome: Outcome) -> HttpResponse:
        context = {**thread_context(request, agent, target), "outcome": outcome}
        return render(request, "reviews/_thread.html", context)

    return answer


def _write(
    request: HtmxHttpRequest,
    agent: str,
    write: str,
    run: Callable[
        [Agent, dict[str, Any]], tuple[Outcome, str, Callable[[Outcome], HttpResponse] | None]
    ],
) -> HttpResponse:
    """Read the ``write``'s input, run it, answer every kind of client the same way."""
    obj = agent_get(agent)
    back = reverse("agent-review", args=[agent])
    try:
        data = read_sent(INPUTS[write], request_data(request))
    except InputRefused as exc:
        return respond(request, Outcome.refused(str(exc), exc.status), redirect_to=back)
    htmx: Callable[[Outcome], HttpResponse] | None = None
    try:
        outcome, back, htmx = run(obj, data)
    except ReviewRefused as exc:
        outcome = Outcome.refused(str(exc), exc.status)
        if "kind" in data:  # redraw the thread with the refusal in it
            target = _target(obj, data)
            back, htmx = selectors.target_url(obj, target), _thread_answer(request, obj, target)
    return respond(request, outcome, redirect_to=back, htmx=htmx)


@require_POST
@signed_in_to_write
def note_view(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    def run(obj: Agent, data: dict[str, Any]) -> tuple[Outcome, str, Any]:
        target = _target(obj, data)
        note = services.note_add(
            obj, target, data.get("text", ""), request.user, data.get("reply_to")
        )
        body = {"note": note.pk, "thread": selectors.thread(obj, target)}
        outcome = Outcome(ok=True, message=_("note saved"), status=201, body=body)
        return outcome, selectors.target_url(obj, target), _thread_answer(request, obj, target)

    return _write(request, agent, "note", run)


@require_POST
@signed_in_to_write
def mark_view(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    def run(obj: Agent, data: dict[str, Any]) -> tuple[Outcome, str, Any]:
        target = _target(obj, data)
        reviewed = data["reviewed"]
        services.mark_set(obj, target, reviewed, request.user)
        message = _("marked reviewed") if reviewed else _("reviewed mark removed")
        outcome = Outcome(ok=True, message=message, body=selectors.thread(obj, target))
        return outcome, selectors.target_url(obj, target), _thread_answer(request, obj, target)

    return _write(request, agent, "mark", run)


@require_POST
@signed_in_to_write
def queue_view(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    def run(obj: Agent, data: dict[str, Any]) -> tuple[Outcome, str, Any]:
        def redraw(o: Outcome) -> HttpResponse:  # the queue, with what happened on top
            context = {**selectors.agent_review(obj), **_page_extra(request), "outcome": o}
            return render(request, "reviews/review.html#queue", context)

        back = reverse("agent-review", args=[obj.slug])
        key, state = data.get("key", ""), data.get("state", "")
        try:
            decision = services.queue_decide(obj, key, state, request.user)
        except ReviewRefused as exc:  # e.g. decided meanwhile in another tab
            return Outcome.refused(str(exc), exc.status), back, redraw
        body = {"key": key, "state": state}
        if decision is not None:
            body["fingerprint"] = decision.fingerprint
        words = dict(_page_extra(request)["states"] + [("open", _("back in the queue"))])
        message = _("queue item: %(state)s") % {"state": words.get(state, state)}
        return Outcome(ok=True, message=message, body=body), back, redraw

    return _write(request, agent, "queue", run)


@require_POST
@signed_in_to_write
def promote_view(request: HtmxHttpRequest, agent: str, note: int) -> HttpResponse:
    def run(obj: Agent, data: dict[str, Any]) -> tuple[Outcome, str, Any]:
        found = ReviewNote.objects.filter(agent=obj, pk=note).first()
        if found is None:
            raise Http404(_("no such note"))
        target = selectors.Target(found.kind, found.scope, found.item)
        answer = _thread_answer(request, obj, target)
        try:
            revision = services.note_promote(obj, found, request.user)
        except ReviewRefused as exc:
            return Outcome.refused(str(exc), exc.status), selectors.target_url(obj, target), answer
        message = _("r%(n)s: the note is now the node's annotation; the agent reads it") % {
            "n": revision.number
        }
        body = {"revision": revision.number, "op": revision.op, "note": found.pk}
        return (
            Outcome(ok=True, message=message, body=body),
            selectors.target_url(obj, target),
            answer,
        )

    return _write(request, agent, "promote", run)


@require_GET
def thread_view(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    """One target's thread: the partial the pages load, and its JSON twin."""
    obj = agent_get(agent)
    thread = selectors.thread(obj, _target(obj, request.GET.dict()))
    extra = {**thread, **_thread_extra(request, obj)}
    return render_page(request, "reviews/_thread.html", selectors.thread_page(thread), extra=extra)


@require_GET
def review_page(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    """The agent's review queue and notes; ``?q=`` filters the notes."""
    obj = agent_get(agent)
    data = selectors.agent_review(obj, request.GET.get("q", "").strip())
    return render_page(
        request, "reviews/review.html", data, extra=_page_extra(request), partial="notes"
    )


def _page_extra(request: HtmxHttpRequest) -> dict[str, Any]:
    states = [("done", _("Done")), ("skip", _("Skip"))]
    return {"can_write": request.user.is_authenticated, "states": states}
