"""The demo agent `etl`: the Enhanced-Edition agent (content-addressed refs, seq, boundaries)."""

# Long Chinese/English strings read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

from demo.model import AgentSpec, Call, Node, Task, t

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
