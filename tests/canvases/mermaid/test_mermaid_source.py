"""The text the mermaid.js view draws: the agent's own lines, only what mermaid refuses left out."""

from __future__ import annotations

from canvases.mermaid.mermaid_source import COMMENT, mermaid_source, status_lines

HEADER = '%%{ "taskGoal": "发布 v2", "progress": "50" }%%'


def test_the_plugin_header_fences_and_clicks_become_comments_every_other_line_stays() -> None:
    text = "\n".join(
        [
            "```mermaid",
            HEADER,
            "flowchart TD",
            '    A["<b>调研</b><br/>status: done"]:::hot --> B(`**md** label`)',
            '    click A href "https://example.com"',
            "    classDef hot fill:#f77",
            "```",
        ]
    )
    lines = mermaid_source(text).split("\n")
    assert lines == [
        COMMENT,
        COMMENT,
        "flowchart TD",
        '    A["<b>调研</b><br/>status: done"]:::hot --> B(`**md** label`)',
        COMMENT,
        "    classDef hot fill:#f77",
        COMMENT,
    ]  # the same line numbers, so mermaid's "line N" is the file's line N


def test_mermaid_directives_stay_loose_headers_go_and_line_ends_are_trimmed() -> None:
    text = "%%{init: {'theme': 'forest'}}%%\r\n%{ taskGoal: x }%\r\nflowchart LR\r\n  a --> b \r\n  class a hot \r\n"
    assert (
        mermaid_source(text)
        == "%%{init: {'theme': 'forest'}}%%\n"
        + COMMENT
        + "\nflowchart LR\n  a --> b\n  class a hot\n"
    )
    assert mermaid_source("\ufeff" + HEADER + "\ngraph TD\n  a") == COMMENT + "\ngraph TD\n  a"


def test_an_escaped_one_line_file_is_unescaped_and_status_colours_are_apart() -> None:
    one_line = HEADER + '\\nflowchart TD\\n    A[\\"x<br/>status: doing\\"] --> B[\\"y\\"]\\n'
    assert "flowchart TD\n" in mermaid_source(one_line)
    status = status_lines('flowchart TD\n  A["x<br/>status: doing"] --> B["y"]')
    assert "class A mvz_doing" in status and "class B mvz_none" in status
    assert "mvz_" not in mermaid_source('flowchart TD\n  A["x<br/>status: doing"]')


def test_arrows_and_quotes_an_agent_escaped_read_as_mermaid_needs_them() -> None:
    text = 'flowchart TD\n  N1 --&gt; N2\n  N2 -.-&gt;|方案| N3 &lt;--> N4\n  N3["uses \\"Sprintf\\" &gt; 2"]\n  N4[\\"out"\\]'
    assert mermaid_source(text).split("\n")[1:] == [
        "  N1 --> N2",
        "  N2 -.->|方案| N3 <--> N4",
        '  N3["uses #quot;Sprintf#quot; &gt; 2"]',  # a label's own entity stays
        '  N4[\\"out"\\]',  # the shape [\"…"\] stays
    ]
