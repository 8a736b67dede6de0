"""The parser over real-shaped canvases: nodes, edges, statuses, metadata, problems."""

from __future__ import annotations

import hashlib

import pytest

from canvases.mermaid import content_hash, parse


def statuses(text: str) -> dict[str, str | None]:
    return {node.id: node.fields.status for node in parse(text).nodes.values()}


def test_every_corpus_canvas_round_trips(corpus):
    for name, text in corpus.items():
        doc = parse(text)
        assert doc.serialize() == text, name
        assert doc.text is text


def test_en_canonical_every_shape(corpus):
    doc = parse(corpus["en-canonical.mmd"])
    assert (doc.header, doc.direction) == ("flowchart", "TD")
    shapes = {node.id: node.shape for node in doc.nodes.values()}
    assert shapes == {
        "005-N1": "rect",
        "005-N2": "rect",
        "005-N3": "round",
        "005-N4": "stadium",
        "005-N5": "cylinder",
        "005-N6": "circle",
        "005-N7": "asymmetric",
        "005-N8": "rhombus",
        "005-N9": "hexagon",
        "005-N10": "parallelogram",
        "005-N11": "parallelogram_alt",
        "005-N12": "trapezoid",
        "005-N13": "trapezoid_alt",
        "005-N14": "double_circle",
        "005-N15": "subroutine",
    }
    assert list(doc.nodes) == [f"005-N{k}" for k in range(1, 16)]
    assert statuses(corpus["en-canonical.mmd"])["005-N8"] == "paused"
    n4 = doc.nodes["005-N4"]
    assert (n4.fields.phase, n4.fields.action) == ("Implement", "retry worker")
    assert n4.fields.summary == "exponential backoff, 7 attempts"
    assert n4.fields.timestamp == "2026-07-01T09:40:00.000+08:00"
    assert n4.label_raw.startswith("Implement: retry worker<br/>status: doing")
    assert n4.line == 6
    assert len(doc.edges) == 11
    assert ("005-N6", "005-N14") in {(e.source, e.target) for e in doc.edges}
    assert doc.meta.form == "json"
    assert doc.meta.progress == 35
    assert doc.meta.task_goal == "Ship the billing webhook retry queue"
    assert not doc.problems


def test_crlf_and_tabs_parse_like_lf(corpus):
    lf, crlf = parse(corpus["en-canonical.mmd"]), parse(corpus["crlf-tabs.mmd"])
    assert list(lf.nodes) == list(crlf.nodes)
    assert [(e.source, e.target, e.kind) for e in lf.edges] == [
        (e.source, e.target, e.kind) for e in crlf.edges
    ]
    assert crlf.nodes["005-N4"].fields.timestamp == "2026-07-01T09:40:00.000+08:00"
    assert not crlf.problems


def test_chinese_wild_canvas(corpus):
    doc = parse(corpus["zh-wild.mmd"])
    assert (doc.header, doc.direction) == ("graph", "LR")
    assert statuses(corpus["zh-wild.mmd"]) == {
        "N1": None,
        "N2": "done",
        "N3": "进行中",
        "N4": "done",
        "N5": "blocked",
    }
    assert doc.nodes["N2"].fields.timestamp == "2026-07-02T10:20:00.000+08:00"
    assert doc.nodes["N4"].fields.extra == {"note": "由人工确认"}
    assert doc.nodes["N4"].fields.summary == "行数一致 2,031,554"
    assert [(e.source, e.target, e.arrow) for e in doc.edges] == [
        ("N1", "N2", "--&gt;"),
        ("N2", "N3", "--&gt;"),
        ("N3", "N4", "-.-&gt;"),
        ("N4", "N5", "-->"),
    ]
    assert doc.edges[1].label == "方案"
    assert doc.meta.form == "loose"
    assert doc.meta.progress == 80
    assert doc.meta.values["progress（0-100）"] == "80"
    assert doc.meta.created == "2026-07-02T10:00:00.000+08:00"
    assert not doc.has_errors
    assert sum("HTML-escaped" in p.message for p in doc.problems) == 3


def test_every_edge_kind(corpus):
    doc = parse(corpus["edges-all.mmd"])
    kinds = [(e.source, e.target, e.kind, e.label) for e in doc.edges]
    assert kinds[:16] == [
        ("A", "B", "arrow", None),
        ("B", "C", "open", None),
        ("C", "D", "dotted", None),
        ("D", "E", "thick", None),
        ("E", "F", "circle", None),
        ("F", "G", "cross", None),
        ("G", "H", "bidirectional", None),
        ("H", "I", "arrow", "pipe label"),
        ("I", "J", "arrow", "text label"),
        ("J", "K", "dotted", "dotted text"),
        ("K", "L", "thick", "thick text"),
        ("L", "M", "invisible", None),
        ("M", "N", "dotted_open", None),
        ("N", "O", "thick_open", None),
        ("O", "P", "arrow", None),
        ("P", "Q", "open", "open text"),
    ]
    pairs = [(e.source, e.target) for e in doc.edges[16:]]
    assert pairs == [
        ("Q", "S"),
        ("Q", "T"),
        ("R", "S"),
        ("R", "T"),
        ("U", "V"),
        ("V", "W"),
        ("W", "X"),
        ("X", "Y"),
        ("Y", "Z"),
    ]
    assert doc.edges[0].arrow == "-->"
    assert doc.edges[8].arrow == "-->"
    assert doc.edges[9].arrow == "-.->"
    assert doc.nodes["A"].label == "Start"
    assert doc.nodes["C"].shape == "bare"
    assert not doc.problems


def test_nested_subgraphs(corpus):
    doc = parse(corpus["subgraphs-nested.mmd"])
    subs = {s.id: (s.title, s.parent, s.node_ids, s.line_start, s.line_end) for s in doc.subgraphs}
    assert subs == {
        "phase1": ("阶段一 · Inventory", None, ["007-N2"], 4, 12),
        "phase1a": ("Network", "phase1", ["007-N3", "007-N4"], 7, 11),
        "phase2": ("Move", None, ["007-N5"], 13, 15),
        "Loose title with spaces": ("Loose title with spaces", None, ["007-N6"], 16, 18),
    }
    assert doc.nodes["007-N4"].subgraph == "phase1a"
    assert "phase1" not in doc.nodes  # an edge to a subgraph is not a node
    assert ("phase1", "phase2") in {(e.source, e.target) for e in doc.edges}
    assert doc.direction == "TB"
    assert not doc.problems


def test_id_families(corpus):
    doc = parse(corpus["ids-variants.mmd"])
    assert list(doc.nodes) == [
        "1234-N1",
        "transformer-analysis-N2",
        "n_001-N3",
        "AC1",
        "001-P1",
        "task-orphan",
        "N7",
    ]
    assert len(doc.edges) == 4


def test_metadata_forms(corpus):
    loose = parse(corpus["meta-loose.mmd"]).meta
    assert (loose.form, loose.task_goal, loose.progress) == ("loose", "build api", 40)
    assert loose.created == "2026-07-03T09:00:00+08:00"
    single = parse(corpus["meta-single-percent.mmd"]).meta
    assert (single.form, single.task_goal, single.progress) == (
        "single_percent",
        "go fallback writer",
        20,
    )
    comment = parse(corpus["comment-meta.mmd"]).meta
    assert (comment.form, comment.task_goal, comment.progress, comment.line) == (
        "comment",
        "修复 CI 缓存 (comment form)",
        60,
        1,
    )
    none = parse(corpus["template.mmd"]).meta
    assert (none.form, none.task_goal, none.progress, none.line) == ("none", "", None, None)


def test_t_writer_escaped_quotes_and_ref_key(corpus):
    doc = parse(corpus["meta-single-percent.mmd"])
    node = doc.nodes["n_001-N2"]
    assert node.fields.summary == 'uses "Sprintf" for the header'
    assert node.fields.extra == {"ref": "refs/ref_20260703_ab12.md"}
    assert any('\\"' in p.message for p in doc.problems)
    assert not doc.has_errors


def test_fenced_and_front_matter(corpus):
    fenced = parse(corpus["fenced.mmd"])
    assert list(fenced.nodes) == ["008-N1", "008-N2"]
    assert not fenced.has_errors
    assert fenced.problems[0].severity == "warning"
    modern = parse(corpus["modern-syntax.mmd"])
    assert modern.nodes["013-N1"].label == "**Bold** start"
    assert modern.nodes["013-N2"].label == "Expanded shape"
    assert modern.nodes["013-N3"].fields.status == "done"
    assert len(modern.edges) == 3
    assert not modern.problems


def test_multiline_label(corpus):
    doc = parse(corpus["multiline-label.mmd"])
    node = doc.nodes["009-N2"]
    assert (node.fields.status, node.fields.summary) == ("done", "added lockfile hash")
    assert node.line == 4
    assert doc.edges[0].line == 8
    assert not doc.problems


def test_broken_canvas_still_shows_its_nodes(corpus):
    doc = parse(corpus["broken.mmd"])
    assert list(doc.nodes) == ["010-N1", "010-N2", "010-N3", "010-N4"]
    assert doc.nodes["010-N2"].label == "unclosed label"
    assert doc.has_errors
    problems = [(p.line, p.severity) for p in doc.problems]
    assert problems == [(4, "error"), (7, "error"), (8, "error")]
    assert all(p.col >= 1 for p in doc.problems)


def test_oneliner_is_detected_and_still_shows_nodes(corpus):
    doc = parse(corpus["oneliner.mmd"])
    assert doc.is_escaped_oneliner
    assert doc.has_errors
    assert list(doc.nodes) == ["011-N1", "011-N2"]
    assert doc.nodes["011-N2"].fields.status == "done"
    assert doc.serialize() == corpus["oneliner.mmd"]


def test_empty_and_non_flowchart():
    assert parse("").has_errors
    assert parse("").nodes == {}
    doc = parse("sequenceDiagram\n  A->>B: hi\n")
    assert doc.header is None
    assert "not a flowchart" in doc.problems[0].message


def test_big_canvases(corpus):
    for name in ("big-300.mmd", "big-300-zh.mmd"):
        doc = parse(corpus[name])
        assert len(doc.nodes) == 300
        assert len(doc.edges) == 299
        assert not doc.problems
        assert len(doc.subgraphs) == 6
        assert all(node.fields.status for node in list(doc.nodes.values())[1:])


def test_content_hash():
    assert content_hash("é") == hashlib.sha256(b"\xc3\xa9").hexdigest()
    assert len(content_hash("")) == 64


# --- the spec's fixture roots (§9), with the expected results stated there -----------------


def test_fixture_a_upstream(fixtures):
    first = parse(fixtures["fixture-a-upstream/001-fix-login-timeout.mmd"])
    assert first.meta.form == "json"
    assert first.meta.task_goal.startswith("修复登录会话 30 分钟强制登出")
    assert list(first.nodes) == ["001-N1", "001-N2", "001-N3"]
    assert sum(n.fields.status == "done" for n in first.nodes.values()) == 2
    second = parse(fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"])
    assert list(second.nodes) == [f"002-N{k}" for k in range(1, 6)]
    assert statuses(fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]) == {
        "002-N1": None,
        "002-N2": "done",
        "002-N3": "done",
        "002-N4": "blocked",
        "002-N5": "doing",
    }
    assert second.nodes["002-N3"].shape == "hexagon"
    assert second.nodes["002-N5"].subgraph == "impl"
    assert second.subgraphs[0].title == "阶段二 · Implementation"
    labels = {(e.source, e.target): e.label for e in second.edges}
    assert labels[("002-N3", "002-N4")] == "测试失败"
    assert labels[("002-N4", "002-N5")] == "放弃, 改走"
    assert second.meta.progress == 55
    assert not first.problems and not second.problems


def test_fixture_b_wild(fixtures):
    canary = parse(fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"])
    assert canary.meta.form == "loose"  # the L2 prompt's JSON typo
    assert canary.meta.task_goal == "k8s 灰度发布 api 服务 (canary 10% → 100%)"
    assert canary.meta.progress == 70
    assert list(canary.nodes) == ["N1", "N2", "003-N3", "003-N4"]
    assert canary.nodes["003-N3"].fields.status == "blocked"
    assert canary.nodes["003-N4"].fields.status == "paused"
    assert [e.arrow for e in canary.edges] == ["--&gt;", "--&gt;", "-.-&gt;"]
    assert canary.subgraphs[0].id == "rollout"
    assert not canary.has_errors
    ci = parse(fixtures["fixture-b-wild/004-修复CI缓存.mmd"])
    assert ci.meta.form == "comment"
    assert ci.meta.task_goal == "修复 CI 依赖缓存失效 (stale pnpm cache)"
    assert ci.meta.progress == 40
    assert ci.meta.updated == "2026-06-13T11:24:48.906+08:00"
    assert (ci.header, ci.direction) == ("flowchart", "LR")
    assert ci.nodes["004-N1"].shape == "stadium"
    assert ci.nodes["004-N3"].shape == "asymmetric"
    assert [n.fields.status for n in ci.nodes.values()] == [None, "done", "doing"]
    assert ci.edges[0].kind == "thick"
    assert not ci.problems


def test_fixture_c_enhanced(fixtures):
    first = parse(fixtures["fixture-c-enhanced/001-etl-memory-error.mmd"])
    assert first.nodes["001-N3"].fields.status == "blocked"
    assert first.meta.progress == 100
    second = parse(fixtures["fixture-c-enhanced/002-etl-chunked-rewrite.mmd"])
    assert "001-N3" in second.nodes  # the cross-map reference
    assert second.nodes["001-N3"].shape == "bare"
    assert second.subgraphs[0].node_ids == ["002-N2", "002-N3"]
    assert second.edges[-1].kind == "dotted"
    assert not first.problems and not second.problems


@pytest.mark.parametrize("key", ["progress", "progress（0-100）", "progress(0-100)"])
@pytest.mark.parametrize("value", ['"55"', "55", '"55%"'])
def test_progress_spellings(key, value):
    doc = parse(f'%%{{ "taskGoal": "x", "{key}": {value} }}%%\nflowchart TD\n  A\n')
    assert doc.meta.progress == 55


@pytest.mark.parametrize(
    ("text", "severity"),
    [
        ("flowchart LR\n  C -. D ==> E\n", "error"),  # a text link's halves must match
        ('flowchart TD\n  A(say "hi")\n', "error"),  # quotes need a quoted label
        ("flowchart TD\n  direction\n", "error"),
        ("flowchart TD\n  A\n  class A done==>\n", "error"),
        ("---\n---\nflowchart TD\n  A\n", "error"),
        ('%%{ "taskGoal": "no close\nflowchart TD\n  A\n', "warning"),  # render_body drops it
    ],
)
def test_what_mermaid_rejects_is_reported(text, severity):
    """Found by rendering generated canvases in chromium: each is now a problem, not silence."""
    doc = parse(text)
    assert severity in {p.severity for p in doc.problems}
    assert doc.serialize() == text
