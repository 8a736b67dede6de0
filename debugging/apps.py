"""Debugging a run: replay, diagnostics, the token ledger, reports, comparisons, offline files.

Reads the index (`sessions`) and the canvases (`canvases`); neither imports it back."""

from django.apps import AppConfig


class DebuggingConfig(AppConfig):
    name = "debugging"
    verbose_name = "Debugging"

    def ready(self) -> None:
        # The canvas page shows a canvas's findings (budget, stuck nodes) as badges: canvases
        # asks its providers, so it never imports this app (apps on floors).
        from canvases import page_extras
        from debugging.debug_selectors import canvas_badge_links

        page_extras.provide_badges(canvas_badge_links)
