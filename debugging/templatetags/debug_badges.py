"""The agent page's badge slots: `{{ session_id|badge_slot }}` (the badges themselves are
computed by the page selectors, or fetched by the page after it is shown)."""

from __future__ import annotations

from django import template

from debugging import debug_selectors as ds

register = template.Library()
register.filter("badge_slot", ds.badge_slot)
