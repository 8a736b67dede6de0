"""Stand-in for the agent's L1 writer: appends rows to offload files the way Node's appendFile does.

Usage: appender_proc.py <agent_dir> <stop_file> <rows_per_second> <file> [<file> ...]
Prints "ready" once running and, when <stop_file> appears, one JSON line {file: rows appended}.
Every row is one open(O_APPEND)-write-close, except every 7th, which is written in two parts:
alternately both parts through one descriptor, or each part by its own open-write-close, so
that a reader (and memviz's rewrite) regularly sees a partial last line.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

NODE_CHOICES = [f"M{k}" for k in range(10)] + ["P0", "P1", "P2", "KEEP", None]


def row_bytes(file_index: int, seq: int, rng: random.Random) -> bytes:
    row = {
        "tool_call_id": f"app-{file_index}-{seq:06d}",
        "tool_call": f"exec: pytest tests/case_{seq} -q",
        "summary": f"第 {seq} 次运行：测试通过，耗时 {rng.randint(1, 99)} 秒 (all green)",
        "timestamp": "2026-06-11T14:18:47.652+08:00",
        "score": 7,
        "node_id": rng.choice(NODE_CHOICES),
        "result_ref": f"refs/app-{file_index}-{seq}.md",
        "x_future": {"nested": [seq, "二"], "flag": True},
        "seq": seq,
    }
    return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def append(path: str, *parts: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for part in parts:
            os.write(fd, part)
    finally:
        os.close(fd)


def main() -> None:
    agent_dir, stop_file, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
    names = sys.argv[4:]
    rng = random.Random(4)
    counts = dict.fromkeys(names, 0)
    print("ready", flush=True)
    started = time.monotonic()
    total = 0
    while not os.path.exists(stop_file):
        for index, name in enumerate(names):
            data = row_bytes(index, counts[name], rng)
            path = os.path.join(agent_dir, name)
            if counts[name] % 7 == 3:
                cut = rng.randint(1, len(data) - 1)
                if counts[name] % 2:
                    append(path, data[:cut], data[cut:])
                else:
                    append(path, data[:cut])
                    append(path, data[cut:])
            else:
                append(path, data)
            counts[name] += 1
            total += 1
        ahead = total / rate - (time.monotonic() - started)
        if ahead > 0:
            time.sleep(ahead)
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
