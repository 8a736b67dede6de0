"""Reads of review notes, marks and the queue (the queue joins live diagnoses with decisions)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db.models import Count, Q
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from debugging.debug_selectors import agent_findings
from debugging.diagnosis_labels import TITLES, titled
from reviews.models import KINDS, QueueDecision, ReviewMark, ReviewNote
from reviews.page_types import (
    MarkItem,
    NoteItem,
    QueueEntry,
    ReviewPage,
    Thread,
    ThreadPage,
)
from reviews.queue import QueueItem, open_items, queue_items
from sessions.models import Agent, AgentSession, CanvasNode, Row

NOTE_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Target:
    kind: str
    scope: str
    item: str

    def where(self) -> dict[str, str]:
        return {"kind": self.kind, "scope": self.scope, "item": self.item}

    def dom_id(self) -> str:
        raw = f"{self.kind}\0{self.scope}\0{self.item}".encode()
        return "review-" + hashlib.blake2s(raw, digest_size=8).hexdigest()


def target_get(agent: Agent, kind: str, scope: str, item: str) -> Target | None:
    """The target if it exists in the agent's index now (notes are only added to what is shown)."""
    if kind not in KINDS or not scope:
        return None
    if kind == "node":
        found = CanvasNode.objects.filter(
            agent=agent, canvas__filename=scope, node_id=item
        ).exists()
    elif kind == "row":
        found = item.isdigit() and (
            Row.objects.filter(agent=agent, session__session_id=scope, line_no=int(item)).exists()
        )
    else:
        item = ""
        found = AgentSession.objects.filter(agent=agent, session_id=scope).exists()
    return Target(kind, scope, item) if found else None


def target_url(agent: Agent, target: Target) -> str:
    """The page that shows the target."""
    if target.kind == "node":
        return reverse("node", args=[agent.slug, target.scope, target.item])
    page = reverse("session", args=[agent.slug, target.scope])
    if target.kind == "row":
        return f"{page}?line={target.item}"
    return page


def target_label(target: Target) -> str:
    if target.kind == "node":
        return _("node %(node)s of %(canvas)s") % {"node": target.item, "canvas": target.scope}
    if target.kind == "row":
        return _("row %(session)s:%(line)s") % {"session": target.scope, "line": target.item}
    return _("session %(session)s") % {"session": target.scope}


def thread_url(agent: Agent, target: Target) -> str:
    return reverse("review-thread", args=[agent.slug]) + "?" + urlencode(target.where())


def _note_json(note: ReviewNote) -> NoteItem:
    return {
        "id": note.pk,
        "author": note.author,
        "created_at": note.created_at,
        "text": note.text,
        "promoted_revision": note.promoted_revision,
    }


def _mark_json(mark: ReviewMark | None) -> MarkItem | None:
    return None if mark is None else {"author": mark.author, "created_at": mark.created_at}


def _target_filter(target: Target) -> Q:
    return Q(kind=target.kind, scope=target.scope, item=target.item)


def thread(agent: Agent, target: Target) -> Thread:
    """The target's notes, oldest first, each with its replies oldest first; its mark."""
    notes = list(ReviewNote.objects.filter(_target_filter(target), agent=agent))
    roots = [n for n in notes if n.thread_id is None]
    replies: dict[int, list[NoteItem]] = {}
    for note in notes:
        if note.thread_id is not None:
            replies.setdefault(note.thread_id, []).append(_note_json(note))
    mark = ReviewMark.objects.filter(_target_filter(target), agent=agent).first()
    return {
        "target": {
            "kind": target.kind,
            "scope": target.scope,
            "item": target.item,
            "url": target_url(agent, target),
        },
        "reviewed": _mark_json(mark),
        "notes": [{**_note_json(n), "replies": replies.get(n.pk, [])} for n in roots],
        "promotable": target.kind == "node",
        "thread_url": thread_url(agent, target),
        "dom_id": target.dom_id(),
    }


def thread_page(thread: Thread) -> ThreadPage:
    """The thread's JSON twin: what a script reads of it (the page's HTML ids and links not)."""
    return {
        "target": thread["target"],
        "reviewed": thread["reviewed"],
        "notes": thread["notes"],
        "promotable": thread["promotable"],
    }


def row_marks(
    agent: Agent, rows: Iterable[dict[str, Any]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """(session, line) → notes count and reviewed, for the rows of one page (two queries)."""
    wanted = {(str(r.get("session")), str(r.get("line_no"))) for r in rows if r.get("session")}
    if not wanted:
        return {}
    scopes = {s for s, _ in wanted}
    items = {i for _, i in wanted}
    base = {"agent": agent, "kind": "row", "scope__in": scopes, "item__in": items}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    counts = ReviewNote.objects.filter(**base).values("scope", "item").annotate(n=Count("id"))
    for c in counts.order_by():
        out.setdefault((c["scope"], c["item"]), {"notes": 0, "reviewed": False})["notes"] = c["n"]
    for scope, item in ReviewMark.objects.filter(**base).values_list("scope", "item"):
        out.setdefault((scope, item), {"notes": 0, "reviewed": False})["reviewed"] = True
    return out


def queue(agent: Agent) -> tuple[list[QueueItem], list[tuple[QueueItem, QueueDecision]]]:
    """The items to look at, and the current items already done or skipped (with how)."""
    # details in the viewer's language; keys and fingerprints read the language-free codes
    findings = titled([f.as_json() for f in agent_findings(agent)["findings"]])
    items = queue_items(findings)
    made = {d.key: d for d in QueueDecision.objects.filter(agent=agent)}
    todo = open_items(items, {k: (d.state, d.fingerprint) for k, d in made.items()})
    still = {i.key for i in todo}
    return todo, [(i, made[i.key]) for i in items if i.key not in still]


def _queue_json(agent: Agent, item: QueueItem) -> QueueEntry:
    if item.session:
        url = reverse("session", args=[agent.slug, item.session])
        if item.line_no is not None:
            url += f"?line={item.line_no}" + (f"#row-{item.row_id}" if item.row_id else "")
    elif item.node_id:
        url = reverse("node", args=[agent.slug, item.canvas, item.node_id])
    else:
        url = reverse("canvas", args=[agent.slug, item.canvas])
    return {**item.as_json(), "url": url, "title": str(TITLES.get(item.kind, item.kind))}


class _Where(TypedDict):
    url: str
    label: str


def _where(agent: Agent, target: Target) -> _Where:
    return {"url": target_url(agent, target), "label": target_label(target)}


def agent_review(agent: Agent, query: str = "") -> ReviewPage:
    """The review page: the queue, and the agent's notes (newest first) matching ``query``."""
    todo, decided = queue(agent)
    notes = ReviewNote.objects.filter(agent=agent).order_by("-created_at", "-id")
    if query:
        notes = notes.filter(
            Q(text__icontains=query)
            | Q(author__icontains=query)
            | Q(scope__icontains=query)
            | Q(item__icontains=query)
        )
    marks = ReviewMark.objects.filter(agent=agent).order_by("-created_at", "-id")
    return {
        "agent": agent.slug,
        "query": query,
        "queue": [_queue_json(agent, i) for i in todo],
        "decided": [
            {
                **_queue_json(agent, item),
                "state": d.state,
                "author": d.author,
                "decided_at": d.decided_at,
            }
            for item, d in decided
        ],
        "notes": [
            {
                **_note_json(n),
                "kind": n.kind,
                "scope": n.scope,
                "item": n.item,
                "reply": n.thread_id is not None,
                **_where(agent, Target(n.kind, n.scope, n.item)),
            }
            for n in notes[:200]
        ],
        "reviewed": [
            {
                "kind": m.kind,
                "scope": m.scope,
                "item": m.item,
                "author": m.author,
                "created_at": m.created_at,
                **_where(agent, Target(m.kind, m.scope, m.item)),
            }
            for m in marks[:200]
        ],
    }
