"""The scene the browser draws is the canvas text read by the engine: nodes, edges, groups,
status styles, the agent's own styles made safe, and time-ordered groups for crowded canvases."""

from __future__ import annotations

from pathlib import Path

from canvases.canvas_scene import AUTO_GROUP_OVER, OVERVIEW_NODES, canvas_scene, safe_css
from canvases.mermaid import parse, render_body
from canvases.mermaid.samples import sample_canvas
from canvases.scene_labels import rich_lines
from canvases.scene_shapes import drawn_shape

HERE = Path(__file__).parent
UPSTREAM = HERE.parent / "fixtures" / "roots" / "fixture-a-upstream" / "main" / "mmds"
CORPUS = HERE / "mermaid" / "corpus"


def test_scene_has_what_render_body_gives_mermaid() -> None:
    text = (UPSTREAM / "002-migrate-orders-api.mmd").read_text(encoding="utf-8")
    scene = canvas_scene(text)
    body = parse(render_body(text))
    assert [n["id"] for n in scene["nodes"]] == list(body.nodes)
    assert [(e["s"], e["t"]) for e in scene["edges"]] == [(e.source, e.target) for e in body.edges]
    assert [g["id"] for g in scene["groups"]] == [s.id for s in body.subgraphs]
    by_id = {n["id"]: n for n in scene["nodes"]}
    # status keys match render_body's classes: every node gets one, "none" by omission
    for status in ("done", "doing", "blocked"):
        ids = [n["id"] for n in scene["nodes"] if n.get("key") == status]
        assert f"class {','.join(ids)} mvz_{status}" in render_body(text)
    assert "key" not in by_id["002-N1"] and "class 002-N1 mvz_none" in render_body(text)
    assert by_id["002-N5"]["lines"][0] == "实现: money.py (Decimal quantize)"
    assert scene["direction"] == "TD"


def test_labels_are_text_lines_with_entities_decoded() -> None:
    scene = canvas_scene('flowchart LR\n  A["a #quot;b#quot; &lt;i&gt;<br/>status: 进行中"]\n  B\n  A -->|yes| B')
    a, b = scene["nodes"]
    assert a["lines"] == ['a "b" <i>', "status: 进行中"]
    assert a["key"] == "other" and a["status"] == "进行中"
    assert b["lines"] == ["B"]
    assert scene["edges"] == [{"s": "A", "t": "B", "kind": "arrow", "label": "yes"}]
    assert scene["direction"] == "LR"


def test_agent_styles_are_kept_only_as_safe_drawing_properties() -> None:
    assert safe_css("fill:#f9f,stroke:#333,stroke-width:4px") == "fill:#f9f;stroke:#333;stroke-width:4px"
    assert safe_css("fill:url(https://evil/x);color:red;behavior:x;stroke:expression(alert(1))") == "color:red"
    text = (
        "flowchart TD\n  A[one]:::hot\n  B[two<br/>status: done]\n  A --> B\n"
        "  classDef hot fill:#f00,font-weight:bold\n  class B hot\n  style A stroke:#00f\n"
        "  linkStyle 0 stroke:#0a0,stroke-width:3px"
    )
    a, b = canvas_scene(text)["nodes"]
    # the author's colours win over memviz's status colours (issue 21: mermaid's picture); a
    # style line comes last, so it wins over the classDef
    assert a["css"] == "fill:#f00;font-weight:bold;stroke:#00f"
    assert b["css"] == "fill:#f00;font-weight:bold"
    assert canvas_scene(text)["edges"][0]["css"] == "stroke:#0a0;stroke-width:3px"
    styled = canvas_scene(
        text + "\n  classDef default fill:#eee\n  linkStyle default stroke:#999\n  B --> A"
    )
    assert [n["css"] for n in styled["nodes"]] == [
        "fill:#eee;fill:#f00;font-weight:bold;stroke:#00f",
        "fill:#eee;fill:#f00;font-weight:bold",
    ]
    assert [e["css"] for e in styled["edges"]] == ["stroke:#999;stroke:#0a0;stroke-width:3px", "stroke:#999"]


def test_crowded_blocks_become_groups_in_writing_order_and_small_ones_do_not() -> None:
    flat = "\n".join(
        line for line in sample_canvas(200).split("\n") if "subgraph" not in line and line.strip() != "end"
    )
    scene = canvas_scene(flat)
    auto = [g for g in scene["groups"] if g.get("auto")]
    assert len(auto) == 7 and all(g["parent"] is None for g in auto)
    members = [[n["id"] for n in scene["nodes"] if n.get("group") == g["id"]] for g in auto]
    assert [m for chunk in members for m in chunk] == [n["id"] for n in scene["nodes"]]
    assert max(map(len, members)) - min(map(len, members)) <= 1
    assert auto[0]["title"].startswith("015-N1 … 015-N29 · 06-11 10:")
    nested = canvas_scene(sample_canvas(300))
    assert not any(g.get("auto") for g in nested["groups"])  # subgraphs of 50 are small enough
    assert AUTO_GROUP_OVER >= 50


def test_a_broken_or_one_line_canvas_still_gives_what_can_be_read() -> None:
    scene = canvas_scene('flowchart TD\n  A["fine"]\n  B["never closed\n  A --> C\n  nonsense here')
    assert {n["id"] for n in scene["nodes"]} >= {"A", "B"}
    oneliner = canvas_scene((CORPUS / "oneliner.mmd").read_text(encoding="utf-8"))
    assert len(oneliner["nodes"]) > 1
    assert canvas_scene("") == {"small": True, "direction": "TD", "nodes": [], "edges": [], "groups": []}


def test_a_canvas_over_the_overview_size_is_marked_to_open_as_an_overview() -> None:
    assert canvas_scene(sample_canvas(OVERVIEW_NODES))["small"] is True
    assert canvas_scene(sample_canvas(OVERVIEW_NODES + 1))["small"] is False


def test_the_scene_reads_what_mermaid_reads_in_flowchart_syntax() -> None:
    """Issue 21: mermaid 11's syntax is read as mermaid reads it, not as text or phantom nodes."""
    scene = canvas_scene(
        "flowchart LR\n"
        "  accTitle: Build pipeline\n"
        "  accDescr {\n    runs the tests\n    then ships\n  }\n"
        '  A@{ shape: diam, label: "Ok?" } e1@--> B@{ shape: doc } & C@{ shape: bolt }\n'
        "  e1@{ animate: true }\n"
        "  B o--o C\n  C x--x A\n  A -->|retry<br/>after 5s| C\n"
        '  D["`**bold** and _it_`"] --- E["<b>Ship</b> fa:fa-car now"]\n'
        "  subgraph g[Group]\n    direction TB\n    D\n  end\n"
    )
    assert (scene["accTitle"], scene["accDescr"]) == ("Build pipeline", "runs the tests\nthen ships")
    nodes = {n["id"]: n for n in scene["nodes"]}
    assert list(nodes) == ["A", "B", "C", "D", "E"]  # e1 is an edge's id, not a node
    assert [nodes[k].get("shape", "rect") for k in "ABC"] == ["rhombus", "document", "bolt"]
    edges = [(e["s"], e["t"], e["kind"], e.get("label")) for e in scene["edges"]]
    assert edges[:5] == [
        ("A", "B", "arrow", None),
        ("A", "C", "arrow", None),
        ("B", "C", "circle_both", None),
        ("C", "A", "cross_both", None),
        ("A", "C", "arrow", "retry\nafter 5s"),
    ]
    assert nodes["D"]["lines"] == ["bold and it"]
    assert nodes["D"]["rich"] == [[["bold", "b"], [" and ", ""], ["it", "i"]]]
    assert nodes["E"]["lines"] == ["Ship now"] and nodes["E"]["rich"] == [[["Ship", "b"], [" now", ""]]]
    assert scene["groups"][0]["dir"] == "TB"
    doc = parse("flowchart LR\n  accTitle: x\n  accDescr {\n  a\n  }\n  A --> B\n")
    assert not doc.problems


def test_formatting_tags_are_text_runs_never_markup() -> None:
    lines, rich = rich_lines('<b onclick="x()">a</b><script>b</script>&lt;i&gt;c', "N")
    assert lines == ["a<script>b</script><i>c"]  # only formatting tags are read; the rest is text
    assert rich == [[["a", "b"], ["<script>b</script><i>c", ""]]]
    assert rich_lines("snake_case_id", "N") == (["snake_case_id"], None)
    assert drawn_shape("no-such-shape") == "rect" and drawn_shape("cyl") == "cylinder"
    assert drawn_shape("lightning-bolt") == "bolt" and drawn_shape("Paper-Tape") == "flag"


def test_mermaid_docs_details_icons_images_and_formatted_group_titles() -> None:
    """Read as mermaid reads them (its flowchart docs): an icon-only label shows nothing (not the
    id), `@{ icon }`/`@{ img }` nodes are icon/image boxes, a group's markdown title is bold."""
    scene = canvas_scene(
        "flowchart TD\n"
        "  B-->D(fa:fa-spinner)\n"
        '  I@{ icon: "fa:user", form: "circle", label: "User" }\n'
        '  P@{ img: "https://example.com/x.png", label: "Pic" }\n'
        '  subgraph "`**Two** _x_`"\n    B\n  end\n'
    )
    nodes = {n["id"]: n for n in scene["nodes"]}
    assert nodes["D"]["lines"] == [""] and nodes["B"]["lines"] == ["B"]
    assert (nodes["I"]["shape"], nodes["I"]["lines"]) == ("icon_circle", ["User"])
    assert (nodes["P"]["shape"], nodes["P"]["lines"]) == ("image", ["Pic"])
    (group,) = scene["groups"]
    assert group["title"] == "Two x"
    assert group["titleRich"] == [["Two", "b"], [" ", ""], ["x", "i"]]
