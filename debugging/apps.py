"""Debugging a run: replay, diagnostics, the token ledger, reports, comparisons, offline files.

Reads the index (`sessions`) and the canvases (`canvases`); neither imports it back."""

from django.apps import AppConfig


class DebuggingConfig(AppConfig):
    name = "debugging"
    verbose_name = "Debugging"
