"""Budget suggestions on the bundled demo canvases and a generated 300-node canvas: characters of
the canvas and of the injected block before/after, rows kept on a drawn node, time to suggest,
and that time as a ratio of a floor measured in the same run: parsing the same canvas once.

    python bench/bench_budget.py [--target N] [--quick]   (--quick: a 100-node canvas)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from targets import missed  # noqa: E402

from canvases import budget  # noqa: E402
from canvases.mermaid import agent_view, parse  # noqa: E402
from canvases.mermaid.samples import sample_canvas  # noqa: E402

# suggesting reads the canvas many times over (one parse per step tried): within this many parses
MAX_PARSES = 400

DEMO = Path(__file__).resolve().parents[1] / "demo" / "context-offload"


def demo_rows(agent: Path) -> list[tuple[str, float | None, bool]]:
    """(node_id, score, dropped) of every row of an agent folder."""
    rows = []
    for path in sorted(agent.glob("offload-*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("node_id"), str):
                score = row.get("score")
                score = float(score) if isinstance(score, int | float) else None
                rows.append((row["node_id"], score, row.get("offloaded") == "deleted"))
    return rows


def stats_of(rows: list[tuple[str, float | None, bool]]) -> dict[str, budget.RowStats]:
    totals: dict[str, list[int]] = {}
    for node, score, dropped in rows:
        total = totals.setdefault(node, [0, 0])
        total[0] += 1
        total[1] += dropped or (score is not None and score <= budget.DEFAULT_LOW_SCORE)
    return {n: budget.RowStats(a, b) for n, (a, b) in totals.items()}


def measure(
    name: str, text: str, rows: list[tuple[str, float | None, bool]], target: int
) -> tuple[float, float]:
    """(seconds to suggest, seconds of the floor: one parse of the canvas)."""
    stats = stats_of(rows)
    floor = min(_timed(parse, text) for _ in range(5))
    started = time.perf_counter()
    plan = budget.suggest(name, text, stats, target=target)
    seconds = time.perf_counter() - started
    after = budget.apply_steps(text, plan.steps).text if plan.steps else text
    result_map = budget.apply_steps(text, plan.steps).id_map if plan.steps else {}
    drawn_before, drawn_after = set(parse(text).nodes), set(parse(after).nodes)
    on_canvas = [n for n, _, _ in rows if n in drawn_before]
    moved = Counter(result_map.get(n, n) for n in on_canvas)
    lost = sum(c for n, c in moved.items() if n not in drawn_after)
    block = agent_view.block_preview(name, text)
    kinds = Counter(s.kind for s in plan.suggestions)
    print(
        f"| {name} | {len(parse(text).nodes)} | {plan.canvas_chars} → {plan.after_canvas_chars} "
        f"| {block.chars if block else 0} → {plan.after_block_chars} | "
        f"{kinds['merge']}/{kinds['prune']}/{kinds['shorten']} | {len(on_canvas)}, {lost} lost "
        f"| {'yes' if plan.reached else 'no'} | {seconds * 1000:.0f} ms | {seconds / floor:.0f}× |"
    )
    return seconds, floor


def _timed(fn: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", type=int, default=budget.DEFAULT_TARGET)
    parser.add_argument("--quick", action="store_true", help="a 100-node generated canvas")
    args = parser.parse_args()
    agent_view.block_preview("warm.mmd", "flowchart TD\n  A")  # load the token ranks once
    print(f"target {args.target} characters")
    print("| canvas | nodes | canvas chars | block chars | merge/prune/shorten | rows | fits | time | × parse |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for path in sorted(DEMO.glob("*/mmds/*.mmd")):
        measure(path.name, path.read_text("utf-8"), demo_rows(path.parents[1]), args.target)
    size = 100 if args.quick else 300
    text = sample_canvas(size)
    rng = random.Random(11)
    rows: list[tuple[str, float | None, bool]] = [
        (node, rng.choice([0, 2, 5, 7, 9]), False) for node in parse(text).nodes
        for _ in range(rng.randint(0, 3))
    ]
    seconds, floor = measure(f"generated-{size}.mmd", text, rows, args.target)
    print(f"generated {size} nodes: suggest = {seconds / floor:.0f}× one parse "
          f"(target <= {MAX_PARSES}×){missed(seconds / floor <= MAX_PARSES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
