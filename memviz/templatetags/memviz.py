"""Small display filters shared by the templates."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:g}×"


@register.filter
def status_class(value: str | None) -> str:
    known = {"done", "doing", "todo", "paused", "blocked"}
    return f"status-{value}" if value in known else "status-other"


@register.filter
def get(mapping: dict, key: str) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def make_list_of_words(value: str) -> list[str]:
    return value.split()
