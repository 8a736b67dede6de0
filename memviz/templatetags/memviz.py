"""Small display filters shared by the templates."""

from __future__ import annotations

from django import template

from agentfs.row_fields import is_wait as row_is_wait
from canvases.mermaid.render import status_key
from canvases.mermaid.vocabulary import STATUS_VOCABULARY

register = template.Library()


@register.filter
def ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:g}×"


@register.filter
def status_class(value: str | None) -> str:
    """A status's CSS class, as the canvas styles it (`render.status_key`): its own, "other" for
    any other word, "none" for no status."""
    return f"status-{status_key(value)}"


@register.filter
def is_wait(node_id: object) -> bool:
    """A row's node_id that the map-builder claimed (on no canvas yet: no link to a node)."""
    return row_is_wait(node_id)


@register.filter
def get(mapping: dict, key: str) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.simple_tag
def statuses() -> tuple[str, ...]:
    """The status words a node can take (`{% statuses as words %}`), from the engine's vocabulary."""
    return STATUS_VOCABULARY
