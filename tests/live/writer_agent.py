"""A stand-in for the plugin, run as a separate process by the live tests.

Usage: writer_agent.py AGENT_DIR SESSION_ID N_ROWS CANVAS_FILE [GO_FILE]
Appends N rows (every third one in two writes, the second after a pause), rewrites the canvas the
way the plugin's writeMmd does (truncate then write, not atomic), then does an L2-style backfill
(read every row, set node_id, write the whole offload file back) and appends one last row.
Prints one line per step so the test can follow. With GO_FILE it waits for that file to exist
before the backfill (up to 60 s), so a test can have the appends indexed first.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def row(i: int, node_id: object = None) -> dict:
    return {
        "tool_call_id": f"call_live_{i:04d}",
        "tool_call": f"exec: step {i}",
        "summary": f"live row {i}",
        "timestamp": f"2026-06-15T10:00:{i % 60:02d}.000+08:00",
        "score": 5,
        "node_id": node_id,
    }


def main() -> None:
    agent_dir, session_id, n_rows, canvas_file = (
        Path(sys.argv[1]),
        sys.argv[2],
        int(sys.argv[3]),
        sys.argv[4],
    )
    path = agent_dir / f"offload-{session_id}.jsonl"
    for i in range(n_rows):
        line = (json.dumps(row(i), ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with open(path, "ab") as handle:
            if i % 3 == 1:
                handle.write(line[:20])
                handle.flush()
                time.sleep(0.15)
                handle.write(line[20:])
            else:
                handle.write(line)
        time.sleep(0.05)
    print("appended", flush=True)
    time.sleep(0.3)
    mmd = agent_dir / "mmds" / canvas_file
    text = mmd.read_text(encoding="utf-8")
    text += '\n    002-N9["实时: live node<br/>status: doing<br/>summary: added by the writer process"]\n    002-N3 --> 002-N9'
    with open(mmd, "w", encoding="utf-8") as handle:  # fs.writeFile: truncate, then write
        handle.write(text)
    print("canvas", flush=True)
    time.sleep(0.3)
    if len(sys.argv) > 5:
        go, deadline = Path(sys.argv[5]), time.monotonic() + 60
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    # L2 backfill: read-modify-write of the whole offload file.
    lines = path.read_bytes().decode().splitlines()
    rows = [json.loads(x) for x in lines if x.strip()]
    for r in rows:
        if r["tool_call_id"].startswith("call_live_"):
            r["node_id"] = "002-N9"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(
            "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows)
        )
    print("backfilled", flush=True)
    time.sleep(0.3)
    with open(path, "ab") as handle:
        handle.write((json.dumps(row(n_rows, "002-N9"), separators=(",", ":")) + "\n").encode())
    print("done", flush=True)


if __name__ == "__main__":
    main()
