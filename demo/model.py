"""The demo's content model: tool calls, canvas nodes, tasks and agents, and two helpers the
content tables use. `make_demo.py` writes them out; `agent_*.py` hold the content."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

CST = timezone(timedelta(hours=8))


@dataclass
class Call:
    session: int
    tool: str
    tool_call: str
    summary: str
    result: str
    score: float | None = 7
    offloaded: bool | str | None = None
    node: str | None = ""  # "" = the node it is listed under; None / "wait" for unplaced rows
    missing_ref: bool = False
    has_row: bool = True


@dataclass
class Node:
    title: str
    status: str
    summary: str
    calls: list[Call] = field(default_factory=list)
    shape: str = "rect"
    subgraph: str | None = None


@dataclass
class Task:
    label: str
    goal: str
    progress: int
    start: datetime
    nodes: list[Node]
    edges: list[tuple[int, int, str]]  # node indexes (0 = root label node), edge label
    subgraph_titles: dict[str, str] = field(default_factory=dict)
    unplaced: list[Call] = field(default_factory=list)


@dataclass
class AgentSpec:
    name: str
    sessions: list[str]  # session keys, index = Call.session
    tasks: list[Task]
    active: int  # index of the active task
    id_style: str = "openai"
    enhanced: bool = False
    pre_id_session: int | None = None  # written as offload-main.jsonl, no registry entry
    truncated_tail: str | None = None  # a half-written last line for that session


def t(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 6, day, hour, minute, 0, tzinfo=CST)


def log_lines(count: int) -> str:
    """A long, deterministic deploy log, so one ref is big enough to page."""
    steps = ["pull image", "run migrations", "warm cache", "health check", "route 10% traffic"]
    return "\n".join(
        f"2026-06-12T08:{30 + i // 60:02d}:{i % 60:02d}Z INFO [{steps[i % 5]}] "
        f"pod api-canary-{i % 4} step {i}/{count} ok (latency {40 + (i * 7) % 90} ms)"
        for i in range(count)
    )
