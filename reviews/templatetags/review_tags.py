"""Review notes where their target is shown: ``{% review_thread %}`` (node panel, session page)
and ``{% review_row_hook %}`` (one "notes" opener per row of a row list)."""

from __future__ import annotations

from typing import Any

from django import template
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from reviews.selectors import Target, row_marks
from reviews.views import thread_context
from sessions.models import Agent

register = template.Library()


@register.inclusion_tag("reviews/_thread.html", takes_context=True)
def review_thread(
    context: template.Context, agent_slug: str, kind: str, scope: str, item: object = ""
) -> dict[str, Any]:
    """The thread of a target the page is showing (so it exists: no check here)."""
    agent = get_object_or_404(Agent, slug=agent_slug)
    target = Target(kind, scope, "" if kind == "session" else str(item))
    return {
        **thread_context(context["request"], agent, target),
        "csrf_token": context.get("csrf_token"),
    }


class RowReview:
    """Each row's review opener, its thread loaded when first opened (for ``row_list``)."""

    do_not_call_in_templates = True  # a template passes it on; only row_list calls it

    def __init__(self, agent: Agent, rows: list[dict[str, Any]]) -> None:
        self.marks = row_marks(agent, rows)
        self.base = reverse("review-thread", args=[agent.slug]) + "?"
        self.word, self.loading = gettext("review notes"), gettext("loading…")

    def __call__(self, row: dict[str, Any]) -> SafeString:
        session, line = str(row.get("session")), str(row.get("line_no"))
        mark = self.marks.get((session, line), {"notes": 0, "reviewed": False})
        url = self.base + urlencode({"kind": "row", "scope": session, "item": line})
        count = f" ({mark['notes']})" if mark["notes"] else ""
        reviewed = " ✓" if mark["reviewed"] else ""
        return format_html(
            '<details class="row-review" hx-get="{}" hx-trigger="toggle once" '
            'hx-target="find .review-body"><summary class="small">{}{}{}</summary>'
            '<div class="review-body"><span class="muted">{}</span></div></details>',
            url,
            self.word,
            count,
            reviewed,
            self.loading,
        )


@register.simple_tag
def review_row_hook(agent_slug: str, rows: list[dict[str, Any]]) -> RowReview:
    return RowReview(get_object_or_404(Agent, slug=agent_slug), rows)
