"""Merge remap on an agent with 100,000 rows in 20 offload files, against the floor of one rewrite.

Usage: python bench/bench_remap.py [--quick]

The data is generated here into a temp folder: rows of ~300-500 bytes with Chinese summaries,
node ids spread over 60 nodes so that every file holds rows of the merged node. Figures:
- remap: `remap_rows` merging two nodes into one (about 3% of rows change, all 20 files are
  rewritten), durable: temp file, fsync, rename, folder fsync, late-append check;
- floor (bytes): read every file and write the same bytes back, no fsync;
- floor (bytes+fsync): the same with an fsync per file, the least a crash-safe rewrite costs;
- floor (json): read, json.loads + json.dumps every line, write, no fsync (a naive remap).
Each figure is the best of several runs, each run on a fresh copy of the data.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentfs.remap import remap_rows  # noqa: E402

WORDS = [
    "定位",
    "修复",
    "缓存",
    "测试",
    "通过",
    "失败",
    "依赖",
    "版本",
    "配置",
    "迁移",
    "接口",
    "分页",
    "金额",
    "精度",
    "日志",
    "部署",
]


def generate(folder: Path, rows: int, files: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    handles = [open(folder / f"offload-{i:04d}-session.jsonl", "w") for i in range(files)]  # noqa: SIM115
    try:
        for n in range(rows):
            row = {
                "tool_call_id": f"call_{n:07d}_{rng.getrandbits(40):010x}",
                "tool_call": f"exec: pytest tests/module_{n % 97}.py -q -k case_{n}",
                "summary": "".join(rng.choice(WORDS) for _ in range(rng.randint(20, 45)))
                + f"，第 {n} 步 (step {n})",
                "timestamp": f"2026-06-11T14:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}+08:00",
                "score": rng.randint(0, 10),
                "node_id": f"001-N{rng.randint(1, 60)}",
                "result_ref": f"refs/2026-06-11T14-{n:07d}p08-00.md",
            }
            line = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
            handles[n % files].write(line + "\n")
    finally:
        for handle in handles:
            handle.close()


def floor_bytes(folder: Path, fsync: bool) -> None:
    for path in sorted(folder.glob("offload-*.jsonl")):
        data = path.read_bytes()
        with open(path, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())


def floor_json(folder: Path) -> None:
    for path in sorted(folder.glob("offload-*.jsonl")):
        out = []
        for line in path.read_bytes().splitlines():
            row = json.loads(line)
            out.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
        path.write_bytes(("\n".join(out) + "\n").encode())


def merge(folder: Path) -> None:
    result = remap_rows(folder, node_map={"001-N7": "001-N3", "001-N8": "001-N3"})
    assert len(result.files_changed) == len(list(folder.glob("offload-*.jsonl")))


def best_of(runs: int, source: Path, work: Path, action) -> float:
    times = []
    for _ in range(runs):
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(source, work)
        for path in work.iterdir():
            path.read_bytes()  # warm the page cache like the copy a live agent keeps hot
        started = time.perf_counter()
        action(work)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small data for CI (a few seconds)")
    args = parser.parse_args()
    rows, files, runs = (10_000, 20, 3) if args.quick else (100_000, 20, 5)
    with tempfile.TemporaryDirectory(prefix="memviz-bench-") as temp:
        source, work = Path(temp) / "source", Path(temp) / "work"
        source.mkdir()
        generate(source, rows, files)
        size = sum(p.stat().st_size for p in source.iterdir())
        figures = {
            "floor (bytes)": best_of(runs, source, work, lambda f: floor_bytes(f, fsync=False)),
            "floor (bytes+fsync)": best_of(runs, source, work, lambda f: floor_bytes(f, True)),
            "floor (json)": best_of(runs, source, work, floor_json),
            "remap (merge)": best_of(runs, source, work, merge),
        }
    remap = figures["remap (merge)"]
    print(f"{rows:,} rows in {files} files, {size / 1e6:.1f} MB, best of {runs}")
    for name, seconds in figures.items():
        print(f"  {name:<22} {seconds * 1000:8.1f} ms")
    for name in ("floor (bytes)", "floor (bytes+fsync)", "floor (json)"):
        print(f"  remap / {name:<22} {remap / figures[name]:5.2f}x")


if __name__ == "__main__":
    main()
