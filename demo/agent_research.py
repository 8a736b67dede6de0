"""The demo agent `research`: upstream, a main and a Slack-thread session."""

# Long Chinese/English strings read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

from demo.model import AgentSpec, Call, Node, Task, t

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
