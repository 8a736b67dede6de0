"""render_body on pathological nesting: time against a floor measured in the same run.

The floor is `parse` of the same text (render_body needs the parse anyway). Before issue 10 the
collapse map walked every node's whole chain of parent subgraphs: 10,000 nested subgraphs took
~12 s per render (quadratic). Target: render <= 2x parse, and 4x the depth <= ~4x the time.

    python bench/bench_render_nesting.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from canvases.mermaid import parse, render_body  # noqa: E402

RENDER_TARGET = 2.0
SCALING_TARGET = 6.0  # linear is 4 for 4x the depth; quadratic would be 16


def nested(depth: int) -> str:
    lines = ["flowchart TD", *(f"subgraph S{i}" for i in range(depth))]
    lines += ['    A["a<br/>status: done"] --> B["b"]', *(["end"] * depth)]
    return "\n".join(lines)


def best_of(repeats: int, work: Callable[[], object]) -> float:
    work()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="a few seconds, for CI")
    args = options.parse_args()
    repeats = 3 if args.quick else 10
    depth = 2_500 if args.quick else 10_000
    missed = []
    times = {}
    for size in (depth // 4, depth):
        text = nested(size)
        doc = parse(text)
        floor = best_of(repeats, partial(parse, text))
        plain = best_of(repeats, partial(render_body, text, doc=doc))
        collapsed = best_of(repeats, partial(render_body, text, collapse=["S1"], doc=doc))
        times[size] = plain
        print(f"{size:,} nested subgraphs ({len(text):,} chars)")
        print(f"  floor: parse                {floor * 1e3:9.2f} ms")
        print(f"  render_body                 {plain * 1e3:9.2f} ms  {plain / floor:5.2f}x floor")
        print(
            f"  render_body, one collapsed  {collapsed * 1e3:9.2f} ms  {collapsed / floor:5.2f}x floor"
        )
        if plain / floor > RENDER_TARGET:
            missed.append(f"render {size} nested {plain / floor:.1f}x > {RENDER_TARGET}x")
    scaling = times[depth] / times[depth // 4]
    print(f"4x the depth: {scaling:.1f}x the render time (linear 4, quadratic 16)")
    if scaling > SCALING_TARGET:
        missed.append(f"scaling {scaling:.1f}x > {SCALING_TARGET}x")
    print("targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
