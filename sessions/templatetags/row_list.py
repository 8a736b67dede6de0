"""`{% row_list rows agent_slug show_node [row_extra] %}`: the row list, by ``sessions.rows_html``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from django import template
from django.utils.safestring import SafeString

from sessions.rows_html import rows_html

register = template.Library()


@register.simple_tag
def row_list(
    rows: list[Mapping[str, Any]],
    agent_slug: str,
    show_node: bool,
    row_extra: Callable[[Mapping[str, Any]], SafeString] | None = None,
) -> SafeString:
    """``row_extra``: markup another app adds to each row (an unset variable is "": none)."""
    extra = row_extra if callable(row_extra) else None
    return rows_html(rows, agent_slug=agent_slug, show_node=bool(show_node), row_extra=extra)


@register.filter
def filter_query(filters: dict[str, str]) -> str:
    """The set filters as a query string ending in ``&`` (or empty), for the pager's links."""
    given = {k: v for k, v in filters.items() if v}
    return urlencode(given) + "&" if given else ""
