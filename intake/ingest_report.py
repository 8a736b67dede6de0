"""What one ingest did: counts for the command line and the job page, and the live deltas."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from memviz.broadcast import AgentDelta


@dataclass
class IngestReport:
    agents: list[str] = field(default_factory=list)
    files_read: int = 0
    files_skipped: int = 0
    rows_added: int = 0
    sessions_reread: int = 0
    refs_indexed: int = 0
    canvases_changed: int = 0
    problems: int = 0
    seconds: float = 0.0
    deltas: list[AgentDelta] = field(default_factory=list)

    def as_dict(self) -> dict:
        data = asdict(self)
        data.pop("deltas")
        return data
