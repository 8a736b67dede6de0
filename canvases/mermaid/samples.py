"""Synthetic real-shaped canvases (any size, English and Chinese) for benches, tests, demos."""

from __future__ import annotations

import random

from .vocabulary import STATUS_VOCABULARY

PHASES = ["Read", "Run", "Edit", "Test", "定位", "修复", "验证", "调研"]
ACTIONS = [
    "src/orders/router.ts",
    "pytest tests/orders -q",
    "读取 session.ts + grep TTL",
    "helm template api ./charts/api",
    "重构 export.py 分页",
    "kubectl rollout status deploy/api",
]
SUMMARIES = [
    "3 failed / 21 passed: float precision in test_total",
    "TTL 硬编码 1800s，refresh 未续期",
    "canary weight=10, replicas 1/4",
    "缓存 key 缺 lockfile hash → ERR_PNPM_OUTDATED_LOCKFILE",
    "to_money() quantizes to 0.01 everywhere",
]
STATUSES = ["done"] * 2 + list(STATUS_VOCABULARY)  # done three times in seven, as boards are
SHAPES = [('["', '"]'), ('["', '"]'), ('["', '"]'), ('("', '")'), ('{{"', '"}}'), ('(["', '"])')]


def sample_canvas(nodes: int = 300, *, prefix: str = "015", seed: int = 7) -> str:
    """A canvas the way the agent writes one: metadata line, subgraphs, labelled nodes, edges."""
    rng = random.Random(seed)
    lines = [
        '%%{ "taskGoal": "Migrate orders API to v2 (迁移订单接口)", "progress": "55", '
        '"createdTime": "2026-06-10T10:02:11.530+08:00", '
        '"updatedTime": "2026-06-11T14:15:30.004+08:00" }%%',
        "flowchart TD",
        f'    {prefix}-N1["migrate-orders-api"]',
    ]
    edges: list[str] = []
    statuses: dict[str, list[str]] = {}
    subgraph_open = False
    for k in range(2, nodes + 1):
        if k % 50 == 2:
            if subgraph_open:
                lines.append("    end")
            lines.append(f'    subgraph s{k} ["阶段 {k // 50 + 1} · Stage {k // 50 + 1}"]')
            subgraph_open = True
        status = rng.choice(STATUSES)
        opener, closer = rng.choice(SHAPES)
        minute = k % 60
        label = (
            f"{rng.choice(PHASES)}: {rng.choice(ACTIONS)}<br/>status: {status}"
            f"<br/>summary: {rng.choice(SUMMARIES)}"
            f"<br/>Timestamp: 2026-06-11T{10 + k // 60 % 10:02d}:{minute:02d}:00.000+08:00"
        )
        lines.append(f"        {prefix}-N{k}{opener}{label}{closer}")
        statuses.setdefault(status, []).append(f"{prefix}-N{k}")
        source = rng.randrange(1, k) if k % 7 == 0 else k - 1
        link = rng.choice(["-->", "-->", "-.->", "-->|next|", "==>"])
        edges.append(f"    {prefix}-N{source} {link} {prefix}-N{k}")
    if subgraph_open:
        lines.append("    end")
    lines.extend(edges)
    lines.append("    classDef blocked fill:#fde2e2,stroke:#c0392b")
    if statuses.get("blocked"):
        lines.append(f"    class {','.join(statuses['blocked'][:20])} blocked")
    return "\n".join(lines)
