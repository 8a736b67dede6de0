"""Writes versions of a file in a loop until killed: the crash test's victim.

Usage: crash_writer_proc.py atomic <file>      write_atomic(version k) for k = 1, 2, ...
       crash_writer_proc.py remap <agent_dir>  remap_rows toggling node X<->Y in every file
Prints "wrote <k>" after each complete write, so a test can choose after how many
writes it kills, whatever the machine's speed.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentfs.atomic import write_atomic  # noqa: E402
from agentfs.remap import remap_rows  # noqa: E402


def content_for(version: int) -> bytes:
    """~300 KB whose every byte depends on the version, so a torn file is always detected."""
    seed = hashlib.sha256(str(version).encode()).hexdigest()
    body = (f"{seed} 第{version}版\n" * 4000).encode()
    return f"version {version}\n".encode() + body


def main() -> None:
    mode, target = sys.argv[1], Path(sys.argv[2])
    version = 1
    while True:
        if mode == "atomic":
            write_atomic(target, content_for(version))
        else:
            source, kept = ("X", "Y") if version % 2 else ("Y", "X")
            remap_rows(target, node_map={source: kept})
        print(f"wrote {version}", flush=True)
        version += 1


if __name__ == "__main__":
    main()
