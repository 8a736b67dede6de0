"""A small agent folder for the budget tests: a finished chain in a group, a node whose rows are
low-score or dropped, long summaries; optionally a map-builder claim made just now."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from intake.ingest import ingest_path

FILE = "008-budget.mmd"
URL = f"/a/budgeted/c/{FILE}/"
LONG = "读取配置并核对每个环境变量的默认值，" * 4
CANVAS = "\n".join([
    '%%{ "taskGoal": "fit the budget", "progress": "50" }%%',
    "flowchart TD",
    '    subgraph g1 ["阶段 1"]',
    f'        008-N1["read config<br/>status: done<br/>summary: {LONG}"]',
    f'        008-N2["run tests<br/>status: done<br/>summary: {LONG}"]',
    '        008-N3["fix ttl<br/>status: done<br/>summary: TTL fixed"]',
    "    end",
    '    008-N4["noise<br/>status: done<br/>summary: retried a flaky download"]',
    f'    008-N5["deploy<br/>status: doing<br/>summary: {LONG}"]',
    "    008-N1 --> 008-N2",
    "    008-N2 --> 008-N3",
    "    008-N3 --> 008-N4",
    "    008-N4 --> 008-N5",
    "    classDef doing fill:#ffd",
]) + "\n"
# node -> the scores of its rows ("deleted": a row dropped from context)
ROWS: dict[str, list[int | str]] = {"008-N1": [8, 7], "008-N2": [9, 6], "008-N3": [8], "008-N4": [1, "deleted"], "008-N5": [7]}


def jsonl(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))  # as JSON.stringify writes


def write_folder(root: Path, *, wait_row: bool = False) -> Path:
    folder = root / "budgeted"
    (folder / "mmds").mkdir(parents=True)
    (folder / "mmds" / FILE).write_text(CANVAS, "utf-8")
    lines = []
    for node, scores in ROWS.items():
        for k, score in enumerate(scores):
            row = {"tool_call_id": f"call_{node[-1]}{k}", "tool_call": "exec: make", "summary": "ok",
                   "timestamp": "2026-06-10T09:00:00.000+08:00", "node_id": node,
                   "score": 0 if score == "deleted" else score}
            if score == "deleted":
                row["offloaded"] = "deleted"
            lines.append(jsonl(row))
    if wait_row:  # the map-builder claimed a row just now: its reply is in flight
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        lines.append(jsonl({"tool_call_id": "call_w", "tool_call": "exec: ls", "summary": "",
                                 "timestamp": now, "node_id": "wait", "score": 5}))
    (folder / "offload-s1.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "state.json").write_text(json.dumps({"activeMmdFile": FILE, "mmdCounter": 8}))
    ingest_path(root)
    return folder
