"""The demo agent `coder`: upstream, Anthropic-style call ids, a session from before ids and a
half-written last line."""

# Long Chinese/English strings read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

from demo.model import AgentSpec, Call, Node, Task, log_lines, t

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
