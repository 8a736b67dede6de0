"""Writes small memory folders in the plugin's format, for the debugging tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

CST = timezone(timedelta(hours=8))
T0 = datetime(2026, 6, 10, 9, 0, 0, tzinfo=CST)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+08:00"


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def node(node_id: str, title: str, status: str, minutes: float | None) -> str:
    label = f"{title}<br/>status: {status}<br/>summary: {title} done"
    if minutes is not None:
        label += f"<br/>Timestamp: {stamp(at(minutes))}"
    return f'    {node_id}["{label}"]'


def canvas(goal: str, lines: list[str], edges: Sequence[tuple[str, str]] = ()) -> str:
    meta = json.dumps({"taskGoal": goal, "progress": "50"}, ensure_ascii=False)[1:-1]
    body = ["%%{ " + meta + " }%%", "flowchart TD", *lines]
    body += [f"    {a} --> {b}" for a, b in edges]
    return "\n".join(body)


def ref_text(tool: str, call_id: str, moment: datetime, result: str) -> str:
    return (
        f"# Tool Result: {tool}\n\n**Timestamp:** {stamp(moment)}\n\n---\n\n**Tool:** {tool}\n"
        f"**Call ID:** {call_id}\n\n**Result:**\n```\n{result}\n```"
    )


def write_agent(
    root: Path,
    name: str,
    sessions: dict[str, list[dict]],
    canvases: dict[str, str],
    *,
    active: str | None = None,
) -> Path:
    """rows: dicts with minutes, tool, node, summary, and optional result / ref (False: none)."""
    folder = root / name
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "mmds").mkdir(exist_ok=True)
    counter = 0
    for session_id, rows in sessions.items():
        lines = []
        for row in rows:
            counter += 1
            moment = at(row["minutes"])
            call_id = f"call_{counter:04d}"
            entry = {
                "tool_call_id": call_id,
                "tool_call": row["tool"],
                "summary": row.get("summary", f"did {row['tool']}"),
                "timestamp": stamp(moment),
                "score": row.get("score", 5),
                "node_id": row.get("node"),
            }
            ref = row.get("ref", True)
            if ref:
                name_ = stamp(moment).replace(":", "-").replace(".", "-").replace("+", "p") + ".md"
                entry["result_ref"] = f"refs/{name_}"
                if ref != "missing":
                    result = row.get("result", "ok: 12 lines\n" * 3)
                    (folder / "refs" / name_).write_text(
                        ref_text(row["tool"].split(":")[0], call_id, moment, result), "utf-8"
                    )
            lines.append(json.dumps(entry, ensure_ascii=False))
        (folder / f"offload-{session_id}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    for file, text in canvases.items():
        (folder / "mmds" / file).write_text(text, "utf-8")
    state = {"activeMmdFile": active or next(iter(canvases), None), "mmdCounter": len(canvases)}
    (folder / "state.json").write_text(json.dumps(state, indent=2), "utf-8")
    return folder


def write_big_agent(root: Path, name: str = "big", rows: int = 20_000) -> Path:
    """One agent of 8 offload JSONLs (rows / 8 each), a ref every 500 rows, an 8-node canvas."""
    nodes = [node(f"001-N{i}", f"step {i}", "done", i) for i in range(1, 9)]
    sessions = {
        f"s{s}": [
            {
                "minutes": s * 3000 + i / 10,
                "tool": "exec:ls",
                "node": f"001-N{s + 1}",
                "summary": f"listed folder {s}-{i}",
                "ref": i % 500 == 0,
            }
            for i in range(rows // 8)
        ]
        for s in range(8)
    }
    return write_agent(root, name, sessions, {"001-task.mmd": canvas("a big agent", nodes)})
