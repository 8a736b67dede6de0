"""Canvas engine benchmark: parse and edit times as ratios to a floor measured in the same run.

The floor is what any reader must pay: splitting the text into lines plus one regex pass
(the agent's own node-id pattern). Targets: parse <= 10x floor; any single edit on a 300-node
canvas <= 5 ms.

    python bench/bench_canvas.py [--quick] [--strict]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from canvases.mermaid import edits, parse, render_body  # noqa: E402
from canvases.mermaid.samples import sample_canvas  # noqa: E402

NODE_IDS = re.compile(r"\b(\d+-N\d+|N\d+)\b")
PARSE_TARGET = 10.0
EDIT_TARGET_MS = 5.0


def floor(texts: list[str]) -> None:
    for text in texts:
        text.split("\n")
        NODE_IDS.findall(text)


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """Fastest of `repeats` runs after a warm-up: the least disturbed by other processes."""
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


HOSTILE_NOTE = ('see 001-N7, N9 and 1001-N3 %%{init: x}%% status: done <br/> "q" &lt; `md` ' * 7)[:500]


def edit_cases(text: str) -> dict[str, Callable[[], object]]:
    # the same canvas with its metadata as comment lines: the first edit converts the header
    commented = text.replace(text.split("\n", 1)[0], "%% taskGoal: g\n%% progress: 55", 1)
    return {
        "set_status": lambda: edits.set_status(text, "015-N150", "done"),
        "annotate": lambda: edits.annotate(text, "015-N150", 'check "this" <br/> status: x'),
        "edit_label": lambda: edits.edit_label(text, "015-N150", title="修复: x", summary="y"),
        "add_edge": lambda: edits.add_edge(text, "015-N3", "015-N290", label="skip"),
        "remove_edge": lambda: edits.remove_edge(text, "015-N149", "015-N150"),
        "prune": lambda: edits.prune(text, "015-N150"),
        "merge (3 nodes)": lambda: edits.merge(text, ["015-N150", "015-N151", "015-N200"]),
        "set_meta": lambda: edits.set_meta(text, taskGoal="new goal", progress=60),
        "annotate (500 hostile chars)": lambda: edits.annotate(text, "015-N150", HOSTILE_NOTE),
        "agent_meta (comment header)": lambda: edits.agent_meta(commented),
    }


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="a few seconds, for CI")
    options.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = options.parse_args()
    repeats = 10 if args.quick else 50
    many = 300 if args.quick else 10_000
    missed: list[str] = []

    big = sample_canvas(300)
    print(f"300-node canvas: {len(big):,} chars, {big.count(chr(10)) + 1} lines")
    floor_big = best_of(repeats, lambda: floor([big]))
    parse_big = best_of(repeats, lambda: parse(big))
    ratio = parse_big / floor_big
    print(f"  floor (split lines + one regex pass) {floor_big * 1e3:8.3f} ms")
    print(f"  parse                                {parse_big * 1e3:8.3f} ms  {ratio:5.1f}x floor")
    if ratio > PARSE_TARGET:
        missed.append(f"parse 300 nodes {ratio:.1f}x > {PARSE_TARGET}x")
    render = best_of(repeats, lambda: render_body(big))
    print(
        f"  render_body                          {render * 1e3:8.3f} ms  {render / floor_big:5.1f}x floor"
    )
    for name, work in edit_cases(big).items():
        seconds = best_of(repeats, work)
        verdict = "ok" if seconds * 1e3 <= EDIT_TARGET_MS else "OVER"
        print(
            f"  edit {name:<31} {seconds * 1e3:8.3f} ms  {seconds / floor_big:5.1f}x floor  {verdict}"
        )
        if verdict != "ok":
            missed.append(f"{name} {seconds * 1e3:.2f} ms > {EDIT_TARGET_MS} ms")

    corpus = [sample_canvas(5 + k % 40, prefix=f"{k % 1000:03d}", seed=k) for k in range(many)]
    size = sum(len(t) for t in corpus)
    print(f"{many:,} canvases (5-44 nodes): {size / 1e6:.1f} M chars")
    runs = 1 if args.quick else 3
    floor_many = best_of(runs, lambda: floor(corpus))

    def parse_each() -> None:
        for text in corpus:  # one at a time, as ingest does: results are not kept alive
            parse(text)

    parse_many = best_of(runs, parse_each)
    ratio = parse_many / floor_many
    print(f"  floor                                {floor_many:8.3f} s")
    print(f"  parse                                {parse_many:8.3f} s   {ratio:5.1f}x floor")
    if ratio > PARSE_TARGET:
        missed.append(f"parse {many} canvases {ratio:.1f}x > {PARSE_TARGET}x")

    def status_everywhere() -> None:
        for text in corpus:
            edits.set_status(text, f"{text[text.index('-N') - 3 : text.index('-N')]}-N2", "done")

    edit_many = best_of(runs, status_everywhere)
    print(
        f"  set_status on each                   {edit_many:8.3f} s   {edit_many / floor_many:5.1f}x"
        f" floor  ({edit_many / many * 1e3:.3f} ms per canvas)"
    )
    print("targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
