"""The words of a node label: the status vocabulary and the memory fields a label carries."""

from __future__ import annotations

from dataclasses import dataclass, field

STATUS_VOCABULARY = ("done", "doing", "todo", "paused", "blocked")


@dataclass(slots=True)
class LabelFields:
    title: str = ""
    status: str | None = None
    summary: str | None = None
    timestamp: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    phase: str | None = None
    action: str | None = None
