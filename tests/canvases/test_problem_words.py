"""What the parser finds wrong in a canvas is a code with its values (canvases/mermaid/wording.py):
English without Django, the reader's language on every page that lists it (the broken-canvas
view, its marked lines, the lint panel, the resume preview), and the code in the JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

from canvases.mermaid import agent_view, parse
from canvases.messages import Said, problem_text
from intake.ingest import ingest_path

# One text per kind of problem the parser reports, with the code it must carry.
BROKEN = {
    "subgraph_open": 'flowchart TD\n  subgraph g1 ["g"]\n  A["a"]\n',
    "end_alone": 'flowchart TD\n  A["a"]\n  end\n',
    "direction_word": 'flowchart TD\n  subgraph g\n  direction XX\n  end\n',
    "statement_no_id": "flowchart TD\n  click\n",
    "unexpected_text": 'flowchart TD\n  A["a"] B C ???\n',
    "reserved_id": 'flowchart TD\n  end["x"] --> A["a"]\n',
    "unclosed_label": "flowchart TD\n  A[open --> B\n",
    "not_flowchart": "sequenceDiagram\n  A->>B: hi\n",
    "fenced": '```mermaid\nflowchart TD\n  A["a"]\n```\n',
    "percent_in_label": 'flowchart TD\n  A["50%% done"]\n',
    "unclosed_directive": '%%{ "taskGoal": "g"\nflowchart TD\n  A["a"]\n',
}


def test_each_problem_carries_its_code_and_reads_as_english_without_django() -> None:
    for code, text in BROKEN.items():
        problems = parse(text).problems
        assert code in [p.code for p in problems], (code, [p.message for p in problems])
        found = next(p for p in problems if p.code == code)
        assert "%(" not in found.message and found.message.strip(), code
    # a literal percent sign reads as one in the English sentence (the words escape it as %%)
    found = parse(BROKEN["unclosed_directive"]).problems[0]
    assert found.message == "'%%{' without '}%%': mermaid reads it as an unclosed directive"


def test_a_problems_values_are_what_its_words_name() -> None:
    found = next(p for p in parse(BROKEN["subgraph_open"]).problems if p.code == "subgraph_open")
    assert found.values == {"id": "g1"}
    assert found.message == "subgraph 'g1' has no 'end'"


def test_a_cause_inside_a_warning_is_translated_with_it() -> None:
    warning = agent_view.agent_warnings('\ufeff%%{"taskGoal": "g"}%%\nflowchart TD\n  A["a"]\n')[0]
    assert warning.message == (
        "the agent will see no task goal: a byte-order mark comes before the metadata"
    )
    with translation.override("zh-hans"):
        chinese = str(Said.engine(warning.words))
        # the drawing lists the same warning as a problem found now: one translation, cause too
        live = {"line": 1, "code": warning.words.code, "values": warning.words.values}
        assert problem_text({**live, "message": warning.message}) == chinese
    assert chinese.startswith("智能体将看不到任务目标") and "字节顺序标记" in chinese


def test_a_problem_indexed_before_codes_keeps_its_message() -> None:
    old = {"line": 3, "col": 1, "message": "subgraph 'g1' has no 'end'", "severity": "error"}
    with translation.override("zh-hans"):
        assert problem_text(old) == "subgraph 'g1' has no 'end'"
        assert problem_text({**old, "code": "subgraph_open", "values": {"id": "g1"}}) == (
            "子图 'g1' 没有 'end'"
        )


@pytest.fixture
def broken_agent(tmp_path: Path) -> Path:
    agent = tmp_path / "root" / "main"
    (agent / "mmds").mkdir(parents=True)
    (agent / "mmds" / "001-broken.mmd").write_text(
        'flowchart TD\n  A["a"] --> B["b"]\n  subgraph g1 ["g"]\n  C["c"]\n', "utf-8"
    )
    (agent / "mmds" / "002-no-meta.mmd").write_text('flowchart TD\n  A["a"]\n', "utf-8")
    (agent / "state.json").write_text('{"activeMmdFile": "001-broken.mmd", "mmdCounter": 2}')
    ingest_path(tmp_path / "root")
    return agent


@pytest.mark.django_db
def test_the_broken_canvas_view_lists_problems_in_the_readers_language(
    client: Client, broken_agent: Path
) -> None:
    url = "/a/main/c/001-broken.mmd/"
    english = client.get(url + "?format=json").json()
    problem = next(p for p in english["problems"] if p["code"] == "subgraph_open")
    assert problem["message"] == "subgraph 'g1' has no 'end'"
    chinese = client.get(url + "?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    problem = next(p for p in chinese["problems"] if p["code"] == "subgraph_open")
    assert problem["message"] == "子图 'g1' 没有 'end'"
    marked = [m for line in chinese["marked_lines"] for m in line["problems"]]
    assert marked == ["第 1 列：子图 'g1' 没有 'end'（错误）"]
    html = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "子图 &#x27;g1&#x27; 没有 &#x27;end&#x27;" in html
    assert "has no &#x27;end&#x27;" not in html


@pytest.mark.django_db
def test_the_lint_panel_and_the_preview_say_why_the_agent_sees_no_goal_in_chinese(
    client: Client, broken_agent: Path
) -> None:
    base = "/a/main/c/002-no-meta.mmd/"
    lint = client.get(base + "lint/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert "智能体将看不到任务目标：画布没有元数据行" in [w["message"] for w in lint["agent_warnings"]]
    preview = client.get(base + "preview/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert preview["meta_problem"] == "画布没有元数据行"
    english = client.get(base + "preview/?format=json").json()
    assert english["meta_problem"] == "the canvas has no metadata line"


def test_a_refused_repair_names_the_problem_in_the_readers_language() -> None:
    from canvases.mermaid import EditError, edits

    oneliner = 'flowchart TD\\n  A[open --> B\\n  B["b"]\\n  C["c"]\\n'
    with pytest.raises(EditError) as refused:
        edits.repair_oneliner(oneliner)
    assert refused.value.code == "repair_fails"
    assert "line 2: unclosed '[' label" in str(refused.value)
    with translation.override("zh-hans"):
        chinese = str(Said.engine(refused.value))
    assert "第 2 行：'[' 标签没有闭合" in chinese, chinese
