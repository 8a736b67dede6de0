"""Browsing: the home, agent, session, ref and search pages, thin views over the index's
selectors (`sessions`) that also show canvases' state (liveness, lineage, reverts). Nothing
imports it but the URLs."""

from django.apps import AppConfig


class BrowseConfig(AppConfig):
    name = "browse"
    verbose_name = "Browse"
