"""The budget engine on generated canvases: shares add up to the injected block, suggestions
reach the target where any choice of them can, and every row still lands on a drawn node."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from canvases import budget
from canvases.mermaid import EditError, agent_view, parse
from canvases.mermaid.samples import sample_canvas

FILE = "007-budget.mmd"
STATUSES = ["done", "done", "done", "doing", "todo", "blocked"]


def generated(nodes: int, seed: int) -> tuple[str, dict[str, str]]:
    """A canvas in the agent's shape (groups, runs of done nodes, long summaries) and its rows:
    tool_call_id -> node_id, some nodes' rows all low-score."""
    rng = random.Random(seed)
    lines = ['%%{ "taskGoal": "生成的画布 generated", "progress": "40" }%%', "flowchart TD"]
    rows: dict[str, str] = {}
    for k in range(1, nodes + 1):
        if k % 12 == 1:
            lines += ["    end"] if k > 1 else []
            lines.append(f'    subgraph g{k} ["阶段 {k // 12 + 1}"]')
        status = rng.choice(STATUSES)
        summary = "，".join(rng.choice(["读取配置", "run pytest -q", "修复 TTL", "helm diff"])
                           for _ in range(rng.randint(1, 12)))
        lines.append(f'        007-N{k}["step {k}: {rng.choice(["Read", "Run", "修复"])}'
                     f'<br/>status: {status}<br/>summary: {summary}"]')
        for r in range(rng.randint(0, 4)):
            rows[f"call_{k}_{r}"] = f"007-N{k}"
    lines.append("    end")
    lines += [f"    007-N{k - 1} --> 007-N{k}" for k in range(2, nodes + 1)]
    return "\n".join(lines) + "\n", rows


def stats_of(rows: dict[str, str], low_nodes: set[str]) -> dict[str, budget.RowStats]:
    per_node = Counter(rows.values())
    return {
        n: budget.RowStats(count, count if n in low_nodes else 0) for n, count in per_node.items()
    }


def rows_after(rows: dict[str, str], id_map: dict[str, str]) -> dict[str, str]:
    """The rows as the write path re-points them (RowPlan.forward: one lookup per row)."""
    return {call: id_map.get(node, node) for call, node in rows.items()}


def test_shares_add_up_to_the_block_the_preview_counts() -> None:
    text, _ = generated(30, seed=1)
    shares = budget.node_shares(FILE, text)
    preview = agent_view.block_preview(FILE, text)
    assert preview is not None
    assert shares.block_chars == preview.chars and shares.block_tokens == preview.tokens
    assert sum(n.chars for n in shares.nodes) + shares.overhead == preview.chars
    assert {n.id for n in shares.nodes} == set(parse(text).nodes)
    # a node's share is what its definition, its edges and its status line cost
    longest = max(parse(text).nodes.values(), key=lambda n: len(n.label_raw))
    assert shares.nodes[0].id == longest.id
    assert shares.overhead > len(agent_view.BLOCK_PREAMBLE)  # the block's fixed lines
    top = shares.nodes[0]
    assert top.percent == round(100 * top.chars / preview.chars, 1)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_suggestions_reach_the_target_and_lose_no_row(seed: int) -> None:
    text, rows = generated(60, seed)
    low = {f"007-N{k}" for k in range(5, 60, 9)}
    stats = stats_of(rows, low)
    floor = budget.suggest(FILE, text, stats, target=0)  # everything the engine would do
    assert {s.kind for s in floor.suggestions} == {"merge", "prune", "shorten"}
    target = (len(text) + floor.after_canvas_chars) // 2  # feasible: between now and the floor
    plan = budget.suggest(FILE, text, stats, target=target)

    assert plan.canvas_chars == len(text) > target
    assert plan.reached and plan.after_canvas_chars <= target
    for a, b in zip(plan.suggestions, plan.suggestions[1:], strict=False):
        assert a.after_chars == b.before_chars and a.saved > 0 and a.diff
    result = budget.apply_steps(text, plan.steps)
    assert len(result.text) == plan.after_canvas_chars
    after_block = agent_view.block_preview(FILE, result.text)
    assert after_block is not None and after_block.chars == plan.after_block_chars

    # every row sits on a node drawn after the change, and each node holds exactly the rows of
    # the nodes folded or merged into it
    drawn = set(parse(result.text).nodes)
    moved = rows_after(rows, result.id_map)
    assert len(moved) == len(rows) and set(moved.values()) <= drawn
    before_counts, after_counts = Counter(rows.values()), Counter(moved.values())
    for node in drawn:
        sources = [n for n in before_counts if result.id_map.get(n, n) == node]
        assert after_counts[node] == sum(before_counts[n] for n in sources)
    for step in plan.steps:
        if step["op"] == "fold":
            assert step["node"] in low and step["node"] not in drawn


def test_any_subset_of_the_suggestions_applies() -> None:
    text, rows = generated(40, seed=8)
    plan = budget.suggest(FILE, text, stats_of(rows, {"007-N7", "007-N20"}), target=0)
    chosen = plan.steps[1::2]
    result = budget.apply_steps(text, chosen)
    assert len(result.text) < len(text)
    assert set(rows_after(rows, result.id_map).values()) <= set(parse(result.text).nodes)


def test_a_300_node_canvas_is_suggested_for_in_bounded_time() -> None:
    text = sample_canvas(300)
    plan = budget.suggest(FILE, text, {}, target=budget.DEFAULT_TARGET)
    assert not plan.reached  # 300 nodes cannot fit 4,000 characters by merging chains alone
    assert plan.suggestions and plan.after_canvas_chars < len(text)
    assert plan.elapsed_ms < 15_000


def test_bulk_steps_choose_by_group_selection_and_find() -> None:
    text, rows = generated(24, seed=2)
    doc = parse(text)
    group = doc.subgraphs[0]
    done = [n for n in group.node_ids if doc.nodes[n].fields.status == "done"]
    steps = budget.bulk_steps(text, {"action": "merge_done", "group": group.id})
    assert steps == [{"op": "merge", "nodes": done, "into": done[0], "status": "done"}]
    merged = budget.apply_steps(text, steps)
    assert set(merged.id_map) == set(done[1:]) and set(merged.id_map.values()) == {done[0]}

    picked = ["007-N2", "007-N3", "007-N9"]
    steps = budget.bulk_steps(text, {"action": "set_status", "nodes": picked, "status": "paused"})
    after = parse(budget.apply_steps(text, steps).text)
    assert [after.nodes[n].fields.status for n in picked] == ["paused"] * 3

    hits = budget.find(doc, "Status: BLOCKED")  # every word, any case, as the page's find
    assert hits and hits == [n for n in doc.nodes if doc.nodes[n].fields.status == "blocked"]
    bulk = {"action": "prune_find", "query": "status: blocked"}
    pruned = budget.apply_steps(text, budget.bulk_steps(text, bulk))
    kept = set(parse(pruned.text).nodes)
    assert not kept & set(hits)
    assert set(rows_after(rows, pruned.id_map).values()) <= kept

    with pytest.raises(EditError):
        budget.bulk_steps(text, {"action": "prune_find", "query": "no such words"})


def test_a_node_without_neighbours_is_not_pruned_away_from_its_rows() -> None:
    text = 'flowchart TD\n    001-N1["lonely<br/>status: done"]\n    001-N2["other"]\n'
    with pytest.raises(EditError, match="no neighbour"):
        budget.apply_steps(text, [{"op": "fold", "node": "001-N1"}])
    with pytest.raises(EditError):
        budget.apply_steps(text, [{"op": "drop_everything", "node": "001-N1"}])
