"""Writes the bundled demo data root `demo/context-offload/` (deterministic; run to regenerate).

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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).resolve().parent / "context-offload"
CST = timezone(timedelta(hours=8))
TEXT_TOOLS = {"read", "write", "edit"}  # OpenClaw returns {"content":[...]} for these


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


MAIN = AgentSpec(
    name="main",
    sessions=["agent:main:main", "agent:main:telegram:direct:8812345", "agent:main:wecom:group:be"],
    id_style="openai",
    active=1,
    tasks=[
        Task(
            label="fix-login-timeout",
            goal="修复登录会话 30 分钟强制登出 (fix login session timeout)",
            progress=100,
            start=t(10, 9, 10),
            nodes=[
                Node(
                    "定位: 读 session.ts + grep SESSION_TTL (merged 2 calls)",
                    "done",
                    "TTL 硬编码 1800s，refresh 未续期",
                    [
                        Call(
                            0,
                            "read",
                            "read: src/auth/session.ts",
                            "session.ts 中 SESSION_TTL 硬编码为 1800s；touchSession 只读不续期。",
                            'import { redis } from "../infra/redis";\n\nexport const SESSION_TTL = '
                            "1800; // 30 min, hard-coded\n\nexport async function touchSession(id: "
                            "string) {\n  // TODO: refresh should extend TTL\n  return redis.get("
                            "`sess:${id}`);\n}\n",
                            8,
                            offloaded=True,
                        ),
                        Call(
                            0,
                            "exec",
                            'exec: grep -rn "SESSION_TTL" src/',
                            "SESSION_TTL 仅在 session.ts 定义；refresh.ts 第 18 行确认 refresh 不应用 TTL。",
                            "src/auth/session.ts:3:export const SESSION_TTL = 1800; // 30 min\n"
                            "src/auth/refresh.ts:18:  // SESSION_TTL not applied on refresh",
                            9,
                            offloaded=True,
                        ),
                    ],
                ),
                Node(
                    "修复: TTL 读 env + refresh 时 EXPIRE",
                    "done",
                    "改为 env SESSION_TTL，refresh 续期",
                    [
                        Call(
                            0,
                            "edit",
                            "edit: src/auth/session.ts (TTL from env, EXPIRE on refresh)",
                            "SESSION_TTL 改读 process.env，touchSession 内调用 redis.expire 续期。",
                            "Successfully replaced text in src/auth/session.ts.",
                            6,
                        ),
                    ],
                ),
                Node(
                    "验证: npm test auth",
                    "done",
                    "42/42 passed",
                    [
                        Call(
                            0,
                            "exec",
                            "exec: npm test -- auth",
                            "auth 测试 42/42 通过 (passed)。",
                            "> api@2.3.1 test\n> vitest run auth\n\n ✓ src/auth/session.test.ts (17)\n"
                            " ✓ src/auth/refresh.test.ts (25)\n\n Test Files  2 passed (2)\n"
                            "      Tests  42 passed (42)",
                            6,
                        ),
                    ],
                    shape="hexagon",
                ),
            ],
            edges=[(0, 1, ""), (1, 2, "根因确认"), (2, 3, "改配置后回归")],
        ),
        Task(
            label="migrate-orders-api",
            goal="把 orders API 迁移到 v2 (Decimal money + cursor pagination)",
            progress=55,
            start=t(11, 14, 0),
            nodes=[
                Node(
                    "调研: v2 规范 + orders router (merged 2 calls, 2 sessions)",
                    "done",
                    "v2 要 Decimal 字符串 + cursor 分页；v1 有 6 个 endpoint",
                    [
                        Call(
                            0,
                            "read",
                            "read: docs/orders-v2.md",
                            "Orders API v2 规范：金额用 Decimal 字符串，列表改 cursor 分页，v1 于 2026-09 下线。",
                            '# Orders API v2\n\n- 金额字段统一使用 Decimal 字符串 ("12.30")\n'
                            "- 列表接口改为 cursor 分页 (`?cursor=&limit=`)\n- v1 将于 2026-09 下线\n",
                            7,
                        ),
                        Call(
                            1,
                            "read",
                            "read: src/orders/router.ts",
                            "router 暴露 6 个 v1 endpoint；金额直接以 float 返回，分页用 offset。",
                            'router.get("/orders", listOrders);        // offset pagination\n'
                            'router.get("/orders/:id", getOrder);\nrouter.post("/orders", createOrder);\n'
                            'router.patch("/orders/:id", updateOrder);\n'
                            'router.post("/orders/:id/refund", refund);\n'
                            'router.get("/orders/:id/items", listItems);\n',
                            8,
                        ),
                    ],
                ),
                Node(
                    "测试: pytest tests/orders",
                    "done",
                    "3 failed — 0.1+0.2 float 精度",
                    [
                        Call(
                            1,
                            "exec",
                            "exec: pytest tests/orders -q",
                            "3 failed / 21 passed：test_total 断言 0.30000000000000004 == 0.3。",
                            "FAILED tests/orders/test_amount.py::test_total - assert "
                            "0.30000000000000004 == 0.3\nFAILED tests/orders/test_amount.py::"
                            "test_refund_partial\nFAILED tests/orders/test_serializer.py::"
                            "test_amount_str\n3 failed, 21 passed in 2.41s",
                            7,
                        ),
                    ],
                    shape="hexagon",
                ),
                Node(
                    "尝试: 复用 v1 AmountField",
                    "blocked",
                    "仍经 float 中转，方案废弃，勿再尝试",
                    [
                        Call(
                            1,
                            "edit",
                            "edit: src/orders/v2/serializer.py (reuse v1 AmountField)",
                            "复用 v1 AmountField 后金额仍经 float 中转，精度问题未解决 —— 此路不通。",
                            "Successfully replaced text in src/orders/v2/serializer.py.",
                            5,
                        ),
                    ],
                ),
                Node(
                    "实现: money.py (Decimal quantize)",
                    "doing",
                    "to_money() 统一 quantize(0.01)",
                    [
                        Call(
                            1,
                            "write",
                            "write: src/orders/v2/money.py (Decimal quantize helper)",
                            "新增 money.py：to_money() 统一 Decimal(str(x)).quantize(Decimal('0.01'))。",
                            "Successfully wrote 812 bytes to src/orders/v2/money.py",
                            8,
                        ),
                    ],
                    subgraph="impl",
                ),
                Node(
                    "Implement: cursor pagination",
                    "paused",
                    "waiting for the API review of the cursor format",
                    [
                        Call(
                            2,
                            "read",
                            "read: src/orders/pagination.ts",
                            "Offset pagination helper; cursor must encode (created_at, id) to be stable.",
                            "export function paginate(q, { offset = 0, limit = 50 }) {\n"
                            "  return q.orderBy('created_at').offset(offset).limit(limit);\n}\n",
                            7,
                        ),
                    ],
                    subgraph="impl",
                ),
            ],
            edges=[(0, 1, ""), (1, 2, ""), (2, 3, "测试失败"), (3, 4, "~放弃, 改走"), (1, 5, "")],
            subgraph_titles={"impl": "阶段二 · Implementation"},
            unplaced=[
                Call(
                    1,
                    "exec",
                    "exec: pytest tests/orders -q",
                    "接入 money.py 后 24 passed，orders 回归全部通过 (all green)。",
                    "........................\n24 passed in 2.18s",
                    9,
                    node=None,
                ),
                Call(
                    2,
                    "exec",
                    "exec: git diff --stat",
                    "3 files changed: money.py, serializer.py, test_amount.py (+96 −41).",
                    " src/orders/v2/money.py      | 38 +++++++++\n"
                    " src/orders/v2/serializer.py | 57 +++++-----\n"
                    " tests/orders/test_amount.py | 42 ++++----\n"
                    " 3 files changed, 96 insertions(+), 41 deletions(-)",
                    6,
                    node="wait",
                ),
            ],
        ),
        Task(
            label="add-rate-limiter",
            goal="Add a per-user rate limiter to the public API (token bucket in Redis)",
            progress=20,
            start=t(12, 10, 30),
            nodes=[
                Node(
                    "Research: token bucket with a Redis Lua script",
                    "doing",
                    "INCR+EXPIRE is racy; use one EVALSHA per request",
                    [
                        Call(
                            2,
                            "exec",
                            "exec: redis-cli --eval scripts/bucket.lua rl:user:42 , 10 1",
                            "Lua bucket returns remaining tokens atomically; 10 req/s burst works.",
                            "(integer) 9",
                            7,
                        ),
                        Call(
                            2,
                            "read",
                            "read: src/middleware/index.ts",
                            "Middlewares are registered in order auth → cors → router; limiter goes "
                            "after auth so it can key on the user id.",
                            "app.use(auth());\napp.use(cors());\napp.use(router);\n",
                            6,
                        ),
                    ],
                ),
            ],
            edges=[(0, 1, "")],
            unplaced=[
                Call(2, "read", "read: HEARTBEAT.md", "heartbeat ok", "ok", 5, node=None),
            ],
        ),
    ],
)

CODER = AgentSpec(
    name="coder",
    sessions=["agent:coder:main", "agent:coder:telegram:direct:77120"],
    id_style="anthropic",
    active=1,
    pre_id_session=0,
    truncated_tail='{"tool_call_id":"toolu_01Zz9","tool_call":"exec: kubectl rollout status '
    'deploy/api -n prod","summary":"canary 100% rollout 完成，4/4 replicas avail',
    tasks=[
        Task(
            label="k8s-canary-deploy",
            goal="k8s 灰度发布 api 服务 (canary 10% → 100%)",
            progress=70,
            start=t(12, 16, 38),
            nodes=[
                Node(
                    "准备: helm 渲染 + 校验 values",
                    "done",
                    "canary weight=10, replicas 1/4",
                    [
                        Call(
                            0,
                            "exec",
                            "exec: helm template api ./charts/api -f values-canary.yaml",
                            "渲染成功：canary weight=10，replicas 1/4。",
                            "---\n# Source: api/templates/deployment.yaml\nspec:\n  replicas: 1\n---\n"
                            "# Source: api/templates/canary.yaml\n  weight: 10",
                            8,
                            offloaded=True,
                        ),
                        Call(
                            0,
                            "exec",
                            "exec: kubectl apply -f rendered/ -n prod",
                            "部署 canary，滚动日志 300 行全部 ok。",
                            log_lines(300),
                            4,
                        ),
                    ],
                ),
                Node(
                    "观察: rollout 卡住 + 502 日志",
                    "blocked",
                    "readinessProbe 指向 /healthz（不存在）→ pod 永不 Ready",
                    [
                        Call(
                            0,
                            "exec",
                            "exec: kubectl logs deploy/api -n prod --since=10m | grep ERROR",
                            "canary pod 报 502 upstream connect error；readinessProbe 指向不存在的 /healthz。",
                            "2026-06-12T08:51:40Z ERROR upstream connect error or disconnect/reset "
                            "before headers. reset reason: connection failure\n2026-06-12T08:51:44Z "
                            "ERROR readiness probe failed: HTTP probe failed with statuscode: 404 "
                            "(GET /healthz)",
                            6,
                            offloaded="deleted",
                        ),
                    ],
                    subgraph="rollout",
                ),
                Node(
                    "修复: probe path → /ready",
                    "paused",
                    "等人工确认后再推 100%",
                    [
                        Call(
                            0,
                            "edit",
                            "edit: charts/api/values-canary.yaml readinessProbe.path",
                            "修正 readinessProbe 路径为 /ready。",
                            "undefined",
                            7,
                            has_row=False,
                        ),
                        Call(
                            0,
                            "edit",
                            "edit: charts/api/values-canary.yaml readinessProbe.path /ready",
                            "修正 readinessProbe 路径为 /ready，等待人工确认。",
                            "Successfully replaced text in charts/api/values-canary.yaml.",
                            7,
                        ),
                    ],
                    subgraph="rollout",
                ),
            ],
            edges=[(0, 1, ""), (1, 2, "rollout"), (2, 3, "~根因")],
            subgraph_titles={"rollout": "Rollout 阶段"},
            unplaced=[
                Call(
                    0,
                    "exec",
                    'exec({"command":"kubectl rollout status deploy/api -n prod --timeout=120s"})',
                    '[L1 degraded] exec: Waiting for deployment "api" rollout to finish: 1 of 4 '
                    "updated replicas are available...",
                    'Waiting for deployment "api" rollout to finish: 1 of 4 updated replicas are '
                    "available...\nerror: timed out waiting for the condition",
                    0,
                    node="wait",
                ),
            ],
        ),
        Task(
            label="修复CI缓存",
            goal="修复 CI 依赖缓存失效 (stale pnpm cache)",
            progress=40,
            start=t(13, 11, 19),
            nodes=[
                Node(
                    "诊断: ci.yml + 失败日志 (merged 2 calls)",
                    "done",
                    "key 缺 lockfile hash → ERR_PNPM_OUTDATED_LOCKFILE",
                    [
                        Call(
                            1,
                            "read",
                            "read: .github/workflows/ci.yml",
                            "CI 用 actions/cache@v3，key 只含 runner.os，没有 pnpm-lock 哈希 → 永远命中旧依赖。",
                            "- uses: actions/cache@v3\n  with:\n    path: ~/.pnpm-store\n"
                            "    key: ${{ runner.os }}-pnpm\n",
                            7.5,
                        ),
                        Call(
                            1,
                            "exec",
                            "exec: gh run view 91827364 --log-failed",
                            "失败原因 ERR_PNPM_OUTDATED_LOCKFILE：缓存的 node_modules 与 lockfile 不一致。",
                            "build\tInstall deps\t ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "
                            '"frozen-lockfile" because pnpm-lock.yaml is not up to date',
                            8,
                        ),
                    ],
                ),
                Node(
                    "结论: 需要 hashFiles('pnpm-lock.yaml')",
                    "doing",
                    "待 CI 验证新 key",
                    [
                        Call(
                            1,
                            "edit",
                            "edit: .github/workflows/ci.yml cache key += hashFiles(...)",
                            "已把 lockfile 哈希加入 cache key，待 CI 验证。",
                            "Successfully replaced text in .github/workflows/ci.yml.",
                            8,
                            missing_ref=True,
                        ),
                    ],
                    shape="stadium",
                ),
            ],
            edges=[(0, 1, ""), (1, 2, "root cause")],
            unplaced=[
                Call(
                    1,
                    "exec",
                    "exec: gh run watch --exit-status",
                    "新 key 首次运行 cache miss（预期），安装耗时 58s。",
                    "✓ build  Install deps (58s)\n✓ build  Test (1m12s)\nRun completed",
                    7,
                    node=None,
                ),
            ],
        ),
    ],
)

RESEARCH = AgentSpec(
    name="research",
    sessions=["agent:research:main", "agent:research:slack:C042:thread-9"],
    id_style="openai",
    active=1,
    tasks=[
        Task(
            label="benchmark-vector-db",
            goal="Pick a vector store for 1M embeddings: recall@10 ≥ 0.95 at p95 < 20 ms",
            progress=100,
            start=t(8, 10, 0),
            nodes=[
                Node(
                    "Survey: candidate engines",
                    "done",
                    "pgvector, qdrant, faiss-ivf shortlisted",
                    [
                        Call(
                            0,
                            "read",
                            "read: notes/vector-db-candidates.md",
                            "Shortlist: pgvector (HNSW), qdrant, FAISS IVF-PQ; Milvus dropped (ops cost).",
                            "# Candidates\n\n| engine | index | notes |\n|---|---|---|\n"
                            "| pgvector 0.8 | HNSW | in our Postgres |\n| qdrant 1.12 | HNSW | "
                            "separate service |\n| faiss | IVF-PQ | in-process, no filtering |\n",
                            7,
                        ),
                    ],
                ),
                Node(
                    "Load: 1M × 768d embeddings into each",
                    "done",
                    "load times 4–11 min",
                    [
                        Call(
                            0,
                            "exec",
                            "exec: python bench/load.py --engine all --n 1000000",
                            "Loaded 1M vectors: pgvector 11m02s, qdrant 6m40s, faiss 4m12s.",
                            "pgvector  loaded 1000000 in 662.1s\nqdrant    loaded 1000000 in 400.4s\n"
                            "faiss     loaded 1000000 in 252.0s",
                            6,
                        ),
                    ],
                ),
                Node(
                    "Measure: recall@10 and p95 latency (merged 2 calls)",
                    "done",
                    "pgvector 0.962 @ 14 ms; qdrant 0.971 @ 9 ms; faiss 0.91 @ 3 ms",
                    [
                        Call(
                            0,
                            "exec",
                            "exec: python bench/query.py --engine pgvector,qdrant",
                            "pgvector recall 0.962 p95 14.1 ms; qdrant recall 0.971 p95 9.3 ms.",
                            "engine    recall@10  p50_ms  p95_ms\npgvector  0.962      6.8     14.1\n"
                            "qdrant    0.971      4.2     9.3",
                            9,
                        ),
                        Call(
                            1,
                            "exec",
                            "exec: python bench/query.py --engine faiss",
                            "faiss IVF-PQ recall 0.91 (below target) p95 3.1 ms.",
                            "engine  recall@10  p50_ms  p95_ms\nfaiss   0.910      1.4     3.1",
                            8,
                        ),
                    ],
                ),
                Node(
                    "Decide: pgvector HNSW (m=16, ef=80)",
                    "done",
                    "meets target, no new service to run",
                    [
                        Call(
                            1,
                            "write",
                            "write: docs/adr/0007-vector-store.md",
                            "ADR 0007: choose pgvector HNSW; qdrant faster but adds an ops dependency.",
                            "Successfully wrote 2143 bytes to docs/adr/0007-vector-store.md",
                            8,
                        ),
                    ],
                ),
            ],
            edges=[(0, 1, ""), (1, 2, ""), (2, 3, ""), (3, 4, "meets target")],
        ),
        Task(
            label="write-benchmark-report",
            goal="Write the vector-store benchmark report for the platform team",
            progress=35,
            start=t(9, 15, 0),
            nodes=[
                Node(
                    "Draft: methodology section",
                    "done",
                    "dataset, hardware, query mix described",
                    [
                        Call(
                            1,
                            "write",
                            "write: reports/vector-bench.md (methodology)",
                            "Methodology drafted: 1M MS MARCO passages, e5-base 768d, 8 vCPU / 32 GB.",
                            "Successfully wrote 3880 bytes to reports/vector-bench.md",
                            7,
                        ),
                    ],
                ),
                Node(
                    "Chart: latency vs recall",
                    "doing",
                    "matplotlib chart, ef sweep 40–200",
                    [
                        Call(
                            1,
                            "exec",
                            "exec: python reports/plot_tradeoff.py --ef 40,80,120,200",
                            "Chart written; knee of the curve at ef=80 for pgvector.",
                            "ef=40  recall=0.931 p95=8.9ms\nef=80  recall=0.962 p95=14.1ms\n"
                            "ef=120 recall=0.971 p95=19.8ms\nef=200 recall=0.979 p95=31.5ms\n"
                            "saved reports/img/tradeoff.png",
                            8,
                        ),
                    ],
                ),
                Node(
                    "Review: numbers with the platform team",
                    "paused",
                    "waiting for Thursday sync",
                    [],
                ),
            ],
            edges=[(0, 1, ""), (1, 2, ""), (2, 3, "~after chart")],
            unplaced=[
                Call(
                    1,
                    "exec",
                    "exec: wc -w reports/vector-bench.md",
                    "Report is 1,240 words so far.",
                    "1240 reports/vector-bench.md",
                    4,
                    node=None,
                ),
            ],
        ),
    ],
)

ETL = AgentSpec(
    name="etl",
    sessions=["agent:etl:wecom:group:ops", "agent:etl:main"],
    id_style="openai",
    active=1,
    enhanced=True,
    tasks=[
        Task(
            label="etl-memory-error",
            goal="排查 nightly ETL OOM (MemoryError on 2GB CSV)",
            progress=100,
            start=t(14, 20, 0),
            nodes=[
                Node(
                    "了解: README + dry-run (merged)",
                    "done",
                    "etl.py 用 read_csv 一次性读 2GB，未分块",
                    [
                        Call(
                            0,
                            "read",
                            "read: README.md",
                            "ETL 入口 scripts/etl.py，输入为每日 2GB CSV，输出 parquet。",
                            "# nightly-etl\n\nInput: s3://raw/daily/*.csv (~2GB)\n"
                            "Run: python scripts/etl.py [--dry-run]\n",
                            6,
                        ),
                        Call(
                            0,
                            "exec",
                            "exec: python scripts/etl.py --dry-run",
                            "dry-run 读取前 1000 行正常；read_csv 未设置 chunksize。",
                            "[dry-run] loaded 1000 rows, 42 columns\n[dry-run] transform ok\n",
                            7,
                        ),
                    ],
                ),
                Node(
                    "运行: 全量 etl.py",
                    "blocked",
                    "MemoryError at read_csv（8GB 容器）→ 必须分块",
                    [
                        Call(
                            0,
                            "exec",
                            "exec: python scripts/etl.py",
                            "全量运行在 read_csv 处 MemoryError（容器 8GB），需要分块读取。",
                            'Traceback (most recent call last):\n  File "scripts/etl.py", line 31, '
                            "in main\n    df = pd.read_csv(src)\nMemoryError: Unable to allocate "
                            "6.1 GiB for an array",
                            8,
                        ),
                    ],
                ),
            ],
            edges=[(0, 1, ""), (1, 2, "全量运行")],
        ),
        Task(
            label="etl-chunked-rewrite",
            goal="Rewrite ETL to chunked read (分块读取)",
            progress=60,
            start=t(15, 9, 30),
            nodes=[
                Node(
                    "阅读: scripts/etl.py",
                    "done",
                    "transform() 可逐块调用",
                    [
                        Call(
                            1,
                            "read",
                            "read: scripts/etl.py",
                            "transform() 是逐行纯函数，可以按 chunk 调用。",
                            "def transform(df):\n    return df.assign(total=df.qty * df.price)\n\n"
                            "def main():\n    df = pd.read_csv(src)\n    transform(df).to_parquet(dst)\n",
                            7,
                        ),
                    ],
                    subgraph="code",
                ),
                Node(
                    "修改: read_csv(chunksize=50_000)",
                    "doing",
                    "逐块 transform + 追加写 parquet",
                    [
                        Call(
                            1,
                            "edit",
                            "edit: scripts/etl.py read_csv(chunksize=50_000) + append parquet",
                            "改为 for chunk in read_csv(chunksize=50_000) 逐块 transform 并追加写 parquet。",
                            "Successfully replaced text in scripts/etl.py.",
                            8,
                        ),
                    ],
                    subgraph="code",
                ),
            ],
            edges=[(0, 1, ""), (1, 2, "可分块")],
            subgraph_titles={"code": "Code changes · 代码修改"},
            unplaced=[
                Call(
                    1,
                    "exec",
                    'exec({"command":"python scripts/etl.py --chunksize 50000"})',
                    "[L1 degraded] exec: processed chunk 1/41 ...\nprocessed chunk 41/41\nwrote "
                    "2,031,554 rows to out/daily.parquet (peak RSS 1.2 GiB)",
                    "processed chunk 1/41 ...\nprocessed chunk 41/41\nwrote 2,031,554 rows to "
                    "out/daily.parquet (peak RSS 1.2 GiB)",
                    None,
                    node=None,
                ),
            ],
        ),
    ],
)

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
