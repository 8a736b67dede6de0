"""The demo agent `main`: an upstream agent with three sessions and their canvases."""

# Long Chinese/English strings read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

from demo.model import AgentSpec, Call, Node, Task, t

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
