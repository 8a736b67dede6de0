"""render_body: what mermaid.js gets (header and fences gone, repairs, styling, collapsing)."""

from __future__ import annotations

from canvases.mermaid import parse, render_body


def test_metadata_fences_and_comments_are_removed(fixtures, corpus):
    body = render_body(fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"])
    assert body.startswith("flowchart TD\n")
    assert "%%{" not in body
    fenced = render_body(corpus["fenced.mmd"])
    assert "```" not in fenced and fenced.startswith("flowchart TD\n")
    # comments go too: mermaid reads a `%%{` anywhere in the text as a directive
    comment = render_body(corpus["comment-meta.mmd"])
    assert comment.startswith("flowchart LR\n") and "%%" not in comment


def test_escaped_arrows_and_quotes_are_repaired(fixtures, corpus):
    body = render_body(fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"])
    assert "&gt;" not in body
    assert "  N2 -->|rollout| 003-N3\n" in body
    quoted = render_body(corpus["meta-single-percent.mmd"])
    assert '\\"' not in quoted and "#quot;Sprintf#quot;" in quoted


def test_status_classes_are_memviz_own_and_added_once(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    body = render_body(text)
    assert body.count("classDef mvz_done ") == 1 and body.count("classDef mvz_doing ") == 1
    # the file's own classDef and class lines are kept as they are, and ours come after them,
    # so every canvas shows a status in the legend's colour whatever the agent styled
    assert body.count("classDef blocked fill:#fde2e2,stroke:#c0392b\n") == 1
    assert body.index("class 002-N4 blocked") < body.index("class 002-N4 mvz_blocked")
    assert "class 002-N2,002-N3 mvz_done" in body
    doc = parse(body)
    assert not doc.has_errors
    assert list(doc.nodes) == [f"002-N{k}" for k in range(1, 6)]


def test_collapse_replaces_a_subgraph_by_one_summary_node(fixtures, corpus):
    body = render_body(fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"], collapse=["rollout"])
    doc = parse(body)
    assert "rollout" in doc.nodes
    assert "003-N3" not in doc.nodes and "003-N4" not in doc.nodes
    assert [(e.source, e.target) for e in doc.edges] == [("N1", "N2"), ("N2", "rollout")]
    assert "2 nodes" in doc.nodes["rollout"].label
    assert "class rollout mvz_blocked" in body
    nested = render_body(corpus["subgraphs-nested.mmd"], collapse=["phase1a", "phase2"])
    doc = parse(nested)
    assert {"phase1a", "phase2"} <= set(doc.nodes)
    assert ("phase1a", "phase2") in {(e.source, e.target) for e in doc.edges}
    assert not doc.has_errors
    outer = parse(render_body(corpus["subgraphs-nested.mmd"], collapse=["phase1", "phase1a"]))
    assert "phase1a" not in outer.nodes and "phase1" in outer.nodes
    assert "4 nodes" not in outer.nodes["phase1"].label and "3 nodes" in outer.nodes["phase1"].label


def test_unknown_collapse_ids_and_any_text_are_fine(corpus):
    assert render_body(corpus["template.mmd"], collapse=["nope"]).startswith("flowchart TD")
    assert render_body("") == "\n"
    repaired = render_body(corpus["oneliner.mmd"])
    assert repaired.startswith("flowchart TD\n    011-N1")


def test_crlf_becomes_lf(corpus):
    assert "\r" not in render_body(corpus["crlf-tabs.mmd"])
