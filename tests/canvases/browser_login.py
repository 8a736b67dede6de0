"""Signing the curation tests' person in through the login form, as a browser does."""

from __future__ import annotations

from typing import Any

USER, PASSWORD = "erin", "curate-me"


def log_in(page: Any, live_server: Any, next_url: str) -> None:
    page.goto(f"{live_server.url}/login/?next={next_url}")
    page.fill("input[name=username]", USER)
    page.fill("input[name=password]", PASSWORD)
    page.click("button.primary")
    page.wait_for_url(f"**{next_url}")
