"""Writes the bundled demo data root `demo/context-offload/` (deterministic; `python -m demo.make_demo`).

The folders follow the on-disk format of ../shared/format-spec.md exactly: upstream agents with
timestamp-named refs, one Enhanced-Edition agent (content-addressed refs, `seq`, boundaries), and a
few tolerated oddities (a truncated last line, a missing ref, an orphan `undefined` ref).
"""

# The content tables below hold long Chinese/English strings that read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from demo.agent_coder import CODER
from demo.agent_etl import ETL
from demo.agent_main import MAIN
from demo.agent_research import RESEARCH
from demo.model import AgentSpec, Call, Node, Task

OUT = Path(__file__).resolve().parent / "context-offload"
TEXT_TOOLS = {"read", "write", "edit"}  # OpenClaw returns {"content":[...]} for these


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+08:00"


def ref_name(timestamp: str) -> str:
    return timestamp.replace(":", "-").replace(".", "-").replace("+", "p") + ".md"


def session_uuid(agent: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"memviz-demo/{agent}/{index}"))


def call_id(agent: str, number: int, style: str) -> str:
    digest = hashlib.sha256(f"{agent}/{number}".encode()).hexdigest()
    if style == "anthropic":
        return "toolu_01" + digest[:22]
    return f"call_{number % 100:02d}_" + digest[:10]


def result_text(call: Call) -> str:
    if call.tool in TEXT_TOOLS and call.result != "undefined":
        return json.dumps(
            {"content": [{"type": "text", "text": call.result}]}, indent=2, ensure_ascii=False
        )
    return call.result


def ref_body(call: Call, cid: str, timestamp: str) -> str:
    return (
        f"# Tool Result: {call.tool}\n\n**Timestamp:** {timestamp}\n\n---\n\n"
        f"**Tool:** {call.tool}\n**Call ID:** {cid}\n\n**Result:**\n```\n{result_text(call)}\n```"
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def node_label(prefix: str, k: int, node: Node, timestamp: str) -> str:
    text = (
        f"{node.title}<br/>status: {node.status}<br/>summary: {node.summary}"
        f"<br/>Timestamp: {timestamp}"
    )
    open_, close = {"rect": ('["', '"]'), "hexagon": ('{{"', '"}}'), "stadium": ('(["', '"])')}[
        node.shape
    ]
    return f"{prefix}-N{k}{open_}{text}{close}"


def build_agent(spec: AgentSpec, out: Path) -> None:
    root = out / spec.name
    (root / "refs").mkdir(parents=True)
    (root / "mmds").mkdir()
    rows: dict[int, list[dict]] = {i: [] for i in range(len(spec.sessions))}
    number = 0
    last_time = spec.tasks[0].start
    for task_index, task in enumerate(spec.tasks, start=1):
        prefix = f"{task_index:03d}"
        moment = task.start
        node_times: dict[int, str] = {}
        placed: list[tuple[int | None, Call]] = [
            (k, c) for k, n in enumerate(task.nodes, start=2) for c in n.calls
        ]
        placed += [(None, c) for c in task.unplaced]
        for k, call in placed:
            number += 1
            moment += timedelta(seconds=37 + (number * 53) % 170, milliseconds=(number * 131) % 997)
            timestamp = iso(moment)
            cid = call_id(spec.name, number, spec.id_style)
            body = ref_body(call, cid, timestamp)
            name = (
                hashlib.sha256(body.encode()).hexdigest() + ".md"
                if spec.enhanced
                else (ref_name(timestamp))
            )
            if not call.missing_ref:
                write(root / "refs" / name, body)
            if not call.has_row:
                continue  # an orphan ref: L1 failed after the ref was written
            node_id = f"{prefix}-N{k}" if k is not None and call.node == "" else call.node
            row = {
                "tool_call_id": cid,
                "tool_call": call.tool_call,
                "summary": call.summary,
                "timestamp": timestamp,
                "score": call.score,
                "node_id": node_id,
                "result_ref": f"refs/{name}",
            }
            if call.offloaded is not None:
                row["offloaded"] = call.offloaded
            rows[call.session].append(row)
            if k is not None:
                node_times[k] = timestamp
        last_time = max(last_time, moment)
        stamps = [node_times.get(k, iso(moment)) for k in range(2, len(task.nodes) + 2)]
        write_canvas(root / "mmds" / f"{prefix}-{task.label}.mmd", prefix, task, stamps)
    write_sessions(root, spec, rows)
    active = spec.tasks[spec.active]
    state = {
        "activeMmdFile": f"{spec.active + 1:03d}-{active.label}.mmd",
        "activeMmdId": active.label,
        "mmdCounter": len(spec.tasks),
        "lastSessionKey": spec.sessions[-1],
        "lastOffloadedToolCallId": None,
        "lastL2TriggerTime": iso(last_time + timedelta(seconds=20)),
    }
    if spec.enhanced:
        state["lastProcessedSeq"] = max(len(r) for r in rows.values()) - 1
    state["estimatedSystemOverhead"] = 17000 + 731 * len(spec.name)
    write(root / "state.json", json.dumps(state, indent=2, ensure_ascii=False))


def write_canvas(path: Path, prefix: str, task: Task, node_times: list[str]) -> None:
    created = iso(task.start + timedelta(seconds=5))
    meta = {
        "taskGoal": task.goal,
        "progress": str(task.progress),
        "createdTime": created,
        "updatedTime": max(node_times) if node_times else created,
    }
    members = ", ".join(
        f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items()
    )
    lines = ["%%{ " + members + " }%%", "flowchart TD", f'    {prefix}-N1["{task.label}"]']
    open_group: str | None = None
    for k, (node, stamp) in enumerate(zip(task.nodes, node_times, strict=True), start=2):
        if node.subgraph != open_group:
            if open_group is not None:
                lines.append("    end")
            if node.subgraph is not None:
                title = task.subgraph_titles.get(node.subgraph, node.subgraph)
                lines.append(f'    subgraph {node.subgraph} ["{title}"]')
            open_group = node.subgraph
        indent = "        " if open_group else "    "
        lines.append(indent + node_label(prefix, k, node, stamp))
    if open_group is not None:
        lines.append("    end")
    for source, target, label in task.edges:
        arrow = "-.->" if label.startswith("~") else "-->"
        text = label.lstrip("~")
        lines.append(
            f"    {prefix}-N{source + 1} {arrow}{f'|{text}|' if text else ''} {prefix}-N{target + 1}"
        )
    classes = sorted({n.status for n in task.nodes} & {"blocked", "doing", "paused"})
    colours = {
        "blocked": "#fde2e2,stroke:#c0392b",
        "doing": "#e3f2fd,stroke:#1e88e5",
        "paused": "#fff8e1,stroke:#f9a825",
    }
    for status in classes:
        lines.append(f"    classDef {status} fill:{colours[status]}")
        ids = ",".join(f"{prefix}-N{k}" for k, n in enumerate(task.nodes, 2) if n.status == status)
        lines.append(f"    class {ids} {status}")
    write(path, "\n".join(lines))  # L2 write mode trims: no trailing newline


def write_sessions(root: Path, spec: AgentSpec, rows: dict[int, list[dict]]) -> None:
    registry: dict[str, dict[str, str]] = {}
    for index, key in enumerate(spec.sessions):
        items = rows[index]
        if spec.enhanced:
            for seq, row in enumerate(items):
                row["seq"] = seq
        if index == spec.pre_id_session:
            sid = "main"
        else:
            sid = session_uuid(spec.name, index)
            updated = datetime.fromisoformat(items[-1]["timestamp"]).astimezone(UTC)
            registry[key] = {
                "sessionId": sid,
                "offloadFile": f"offload-{sid}.jsonl",
                "updatedAt": updated.strftime("%Y-%m-%dT%H:%M:%S.")
                + f"{updated.microsecond // 1000:03d}Z",
            }
        text = "".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in items
        )
        if index == spec.pre_id_session and spec.truncated_tail:
            text += spec.truncated_tail  # a write cut short: no closing brace, no newline
        write(root / f"offload-{sid}.jsonl", text)
        if spec.enhanced:
            target = f"{index + 1:03d}-{spec.tasks[min(index, len(spec.tasks) - 1)].label}.mmd"
            boundary = {"startSeq": 0, "result": "long", "targetMmd": target}
            line = json.dumps(boundary, separators=(",", ":"))
            write(root / f"boundaries-{sid}.jsonl", line + "\n")
    write(root / "sessions-registry.json", json.dumps(registry, indent=2, ensure_ascii=False))


AGENTS = [MAIN, CODER, RESEARCH, ETL]


def make_demo(out: Path = OUT) -> int:
    """(Re)write the demo root at `out`; returns its total size in bytes."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for spec in AGENTS:
        build_agent(spec, out)
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def main() -> None:
    print(f"wrote {OUT} ({make_demo()} bytes)")


if __name__ == "__main__":
    main()
