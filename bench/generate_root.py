"""Writes a large synthetic context-offload data root for benchmarks (rows, refs, canvases).

    python bench/generate_root.py OUT --rows 100000 [--agents 4 --sessions-per-agent 5
        --ref-bytes 1500 --canvas-nodes 300 --seed 0 --force]

Every row has its own ref, and every mapped row points at a node of a canvas of its agent; a
few rows stay `null` or `wait` as on real disks. Deterministic for a given set of arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import shutil
import sys
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

CST = timezone(timedelta(hours=8))
BASE_TIME = datetime(2026, 6, 1, 9, 0, 0, tzinfo=CST)
SMALL_CANVAS_NODES = 30
ROWS_PER_CANVAS = 1000
TOOLS = ("read", "exec", "edit", "write", "grep", "web_fetch")
STATUSES = ("done",) * 6 + ("blocked", "paused")
WORDS = [
    "cache",
    "key",
    "lockfile",
    "deploy",
    "canary",
    "rollout",
    "probe",
    "retry",
    "timeout",
    "session",
    "token",
    "migrate",
    "schema",
    "index",
    "query",
    "latency",
    "recall",
    "embedding",
    "chunk",
    "parquet",
    "pipeline",
    "worker",
    "queue",
    "缓存",
    "部署",
    "灰度",
    "超时",
    "重试",
    "会话",
    "迁移",
    "索引",
    "查询",
    "延迟",
    "分块",
    "管道",
    "队列",
    "日志",
    "测试",
    "修复",
    "回归",
]


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+08:00"


def ref_name(timestamp: str) -> str:
    return timestamp.replace(":", "-").replace(".", "-").replace("+", "p") + ".md"


def filler(rng: random.Random, size: int) -> str:
    """About `size` characters of log-like text, one pool sliced per ref for speed."""
    lines = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(12))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def canvas_text(prefix: str, label: str, nodes: list[tuple[str, str, str]], goal: str) -> str:
    """A canonical canvas: metadata line, `flowchart TD`, labelled nodes, subgraphs of 20."""
    stamps = [n[2] for n in nodes]
    meta = {
        "taskGoal": goal,
        "progress": str(min(100, 10 + len(nodes))),
        "createdTime": stamps[0],
        "updatedTime": max(stamps),
    }
    members = ", ".join(
        f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items()
    )
    lines = ["%%{ " + members + " }%%", "flowchart TD", f'    {prefix}-N1["{label}"]']
    for index, (title, status, stamp) in enumerate(nodes):
        k = index + 2
        if index % 20 == 0 and len(nodes) > 40:
            if index:
                lines.append("    end")
            lines.append(f'    subgraph phase{index // 20 + 1} ["阶段 {index // 20 + 1} · phase"]')
        lines.append(
            f'    {prefix}-N{k}["{title}<br/>status: {status}<br/>summary: step {k} of '
            f'{label}，结果已记录<br/>Timestamp: {stamp}"]'
        )
    if len(nodes) > 40:
        lines.append("    end")
    lines.extend(f"    {prefix}-N{k} --> {prefix}-N{k + 1}" for k in range(1, len(nodes) + 1))
    blocked = [f"{prefix}-N{i + 2}" for i, n in enumerate(nodes) if n[1] == "blocked"]
    if blocked:
        lines.append("    classDef blocked fill:#fde2e2,stroke:#c0392b")
        lines.append(f"    class {','.join(blocked)} blocked")
    return "\n".join(lines)


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def generate_root(
    out: Path,
    rows: int,
    *,
    agents: int = 4,
    sessions_per_agent: int = 5,
    ref_bytes: int = 1500,
    canvas_nodes: int = 300,
    seed: int = 0,
) -> dict[str, int]:
    """Write the root at `out` (which must not hold files yet) and return summary counts."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    rng = random.Random(seed)
    pool = filler(rng, max(ref_bytes * 4, 4096))
    counts = {"agents": 0, "sessions": 0, "rows": 0, "refs": 0, "canvases": 0, "nodes": 0}
    number = 0
    for agent_index, agent_rows in enumerate(_split(rows, agents)):
        name = f"agent-{agent_index:02d}"
        root = out / name
        (root / "refs").mkdir(parents=True)
        (root / "mmds").mkdir()
        canvases = max(2, math.ceil(agent_rows / ROWS_PER_CANVAS))
        sizes = [SMALL_CANVAS_NODES] * canvases
        if agent_index == 0:
            sizes[0] = canvas_nodes
        segments = _split(agent_rows, canvases)
        sids = [
            str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(sessions_per_agent)
        ]
        session_of_row = _split(agent_rows, sessions_per_agent)
        moment = BASE_TIME + timedelta(days=agent_index)
        session, left_in_session = 0, session_of_row[0]
        with contextlib.ExitStack() as stack:
            handles = [
                stack.enter_context(open(root / f"offload-{sid}.jsonl", "w", encoding="utf-8"))
                for sid in sids
            ]
            for canvas_index, (node_count, segment) in enumerate(zip(sizes, segments, strict=True)):
                prefix = f"{canvas_index + 1:03d}"
                label = f"task-{agent_index}-{canvas_index + 1}"
                node_stamps: list[str] = [iso(moment)] * node_count
                for j in range(segment):
                    while left_in_session == 0:
                        session += 1
                        left_in_session = session_of_row[session]
                    left_in_session -= 1
                    number += 1
                    moment += timedelta(milliseconds=1000 + (number * 7919) % 60000)
                    stamp = iso(moment)
                    node = 2 + j * node_count // max(segment, 1)
                    roll = number % 100
                    node_id: str | None = f"{prefix}-N{node}"
                    if roll == 0:
                        node_id = "wait"
                    elif roll < 5:
                        node_id = None
                    else:
                        node_stamps[node - 2] = stamp
                    tool = TOOLS[number % len(TOOLS)]
                    call_id = f"call_{number % 100:02d}_{number:010d}"
                    start = (number * 131) % (len(pool) - ref_bytes)
                    result = pool[start : start + ref_bytes]
                    if tool in ("read", "edit", "write"):
                        result = json.dumps(
                            {"content": [{"type": "text", "text": result}]},
                            indent=2,
                            ensure_ascii=False,
                        )
                    ref = ref_name(stamp)
                    (root / "refs" / ref).write_text(
                        f"# Tool Result: {tool}\n\n**Timestamp:** {stamp}\n\n---\n\n"
                        f"**Tool:** {tool}\n**Call ID:** {call_id}\n\n**Result:**\n```\n"
                        f"{result}\n```",
                        encoding="utf-8",
                    )
                    row = {
                        "tool_call_id": call_id,
                        "tool_call": f"{tool}: src/module_{number % 997}.py",
                        "summary": f"{tool} 完成 step {j}: " + pool[start : start + 60],
                        "timestamp": stamp,
                        "score": number % 11,
                        "node_id": node_id,
                        "result_ref": f"refs/{ref}",
                    }
                    if roll in (10, 20, 30):
                        row["offloaded"] = True
                    handles[session].write(
                        json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
                    )
                nodes = [
                    (f"step {k + 2}: {label}", STATUSES[(k * 5) % len(STATUSES)], node_stamps[k])
                    for k in range(node_count)
                ]
                nodes[-1] = (nodes[-1][0], "doing", nodes[-1][2])
                (root / "mmds" / f"{prefix}-{label}.mmd").write_text(
                    canvas_text(prefix, label, nodes, f"Synthetic task {label} 合成任务"),
                    encoding="utf-8",
                )
                counts["canvases"] += 1
                counts["nodes"] += node_count + 1
        _write_agent_files(root, name, sids, f"{prefix}-{label}.mmd", sum(sizes), moment)
        counts["agents"] += 1
        counts["sessions"] += sessions_per_agent
        counts["rows"] += agent_rows
        counts["refs"] += agent_rows
    return counts


def _write_agent_files(
    root: Path, name: str, sids: list[str], active: str, nodes: int, moment: datetime
) -> None:
    state = {
        "activeMmdFile": active,
        "activeMmdId": active[4:-4],
        "mmdCounter": int(active[:3]),
        "lastSessionKey": f"agent:{name}:main",
        "lastOffloadedToolCallId": None,
        "lastL2TriggerTime": iso(moment),
        "estimatedSystemOverhead": 18000 + nodes,
    }
    (root / "state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
    updated = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    registry = {
        f"agent:{name}:session-{i}": {
            "sessionId": sid,
            "offloadFile": f"offload-{sid}.jsonl",
            "updatedAt": updated,
        }
        for i, sid in enumerate(sids)
    }
    (root / "sessions-registry.json").write_text(json.dumps(registry, indent=2), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--sessions-per-agent", type=int, default=5)
    parser.add_argument("--ref-bytes", type=int, default=1500)
    parser.add_argument("--canvas-nodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="delete OUT first if it exists")
    args = parser.parse_args(argv)
    if args.force and args.out.exists():
        shutil.rmtree(args.out)
    counts = generate_root(
        args.out,
        args.rows,
        agents=args.agents,
        sessions_per_agent=args.sessions_per_agent,
        ref_bytes=args.ref_bytes,
        canvas_nodes=args.canvas_nodes,
        seed=args.seed,
    )
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
