"""The editor's toolbar and keyboard help, read from the op registry."""

from __future__ import annotations

from django import template

from canvases.edit_ops import TOOLS, Tool

register = template.Library()


@register.simple_tag
def edit_tools() -> tuple[Tool, ...]:
    """The toolbar's buttons and their keys (`{% edit_tools as tools %}`)."""
    return TOOLS
