"""The canvas_lint command: text and JSON reports, folders, exit status."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import fixture_canvases

CORPUS = Path(__file__).parent / "mermaid" / "corpus"


@pytest.fixture
def clean_folder(tmp_path: Path) -> Path:
    for key, mmd in fixture_canvases().items():
        shutil.copy(mmd, tmp_path / key.replace("/", "-").replace(":", "-"))
    (tmp_path / ".offload.jsonl.tmp-1-2-x.mmd").write_text("garbage")  # ignored dotfile
    return tmp_path


def run(*args: str) -> str:
    out = StringIO()
    call_command("canvas_lint", *args, stdout=out)
    return out.getvalue()


def test_text_report_of_a_folder(clean_folder):
    output = run(str(clean_folder))
    assert output.count(".mmd: ") == 6
    assert "002-migrate-orders-api.mmd: 5 nodes, 4 edges, 0 errors" in output
    assert "  node 002-N4 [blocked] 尝试: 复用 v1 AmountField" in output
    assert "  edge 002-N3 -> 002-N4 |测试失败|" in output
    assert "warning 1:1 metadata is not valid JSON (loose)" in output


def test_json_report_one_object_per_file(clean_folder):
    lines = run("--json", str(clean_folder)).splitlines()
    assert len(lines) == 6
    reports = {Path(r["file"]).name: r for r in map(json.loads, lines)}
    report = reports["fixture-b-wild-004-修复CI缓存.mmd"]
    assert [(n["id"], n["status"]) for n in report["nodes"]] == [
        ("004-N1", None),
        ("004-N2", "done"),
        ("004-N3", "doing"),
    ]
    assert report["edges"][0] == {
        "source": "004-N1",
        "target": "004-N2",
        "label": None,
        "kind": "thick",
        "line": 9,
    }
    # comment-line metadata parses for people, but the agent reads none of it (spec §4.8.1)
    assert report["problems"] == [
        {
            "line": 1,
            "col": 1,
            "severity": "warning",
            "message": "the agent will see no task goal: the metadata is written as comment "
            "lines (%% taskGoal: …)",
        }
    ]
    assert report["agent"] == {
        "meta_readable": False,
        "strict_line_one": False,
        "task_goal": None,
        "node_index": True,
        "empty_shell": False,
        "fallback_node": "004-N3",
    }
    canonical = reports["fixture-a-upstream-002-migrate-orders-api.mmd"]
    assert canonical["problems"] == []
    assert canonical["agent"]["task_goal"].startswith("把 orders API 迁移到 v2")
    assert all(r["roundtrip_ok"] for r in reports.values())


def test_lint_reports_what_mermaid_and_the_agent_do_with_a_canvas(tmp_path):
    """A directive inside a summary is an error (mermaid swallows the diagram); a two-line
    template is a warning (the agent deletes it as an empty shell on its next task switch)."""
    (tmp_path / "009-x.mmd").write_text(
        '%%{ "taskGoal": "t" }%%\nflowchart TD\n    009-N1["a<br/>summary: %%{init: {}}%% b"]\n'
    )
    (tmp_path / "010-y.mmd").write_text('flowchart TD\n    010-N1["label"]')
    out = StringIO()
    with pytest.raises(CommandError, match="1 canvas"):
        call_command("canvas_lint", "--json", str(tmp_path), stdout=out)
    reports = {Path(r["file"]).name: r for r in map(json.loads, out.getvalue().splitlines())}
    [error] = [p for p in reports["009-x.mmd"]["problems"] if p["severity"] == "error"]
    assert error["line"] == 3 and "directive" in error["message"]
    shell = reports["010-y.mmd"]
    assert shell["agent"]["empty_shell"] is True
    assert any("deletes this canvas" in p["message"] for p in shell["problems"])
    assert any("no task goal" in p["message"] for p in shell["problems"])


def test_errors_give_exit_status_1(tmp_path):
    shutil.copy(CORPUS / "broken.mmd", tmp_path / "broken.mmd")
    shutil.copy(CORPUS / "template.mmd", tmp_path / "ok.mmd")
    out = StringIO()
    with pytest.raises(CommandError, match="1 canvas"):
        call_command("canvas_lint", "--json", str(tmp_path), stdout=out)
    reports = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(reports) == 2
    broken = next(r for r in reports if r["file"].endswith("broken.mmd"))
    assert [p["line"] for p in broken["problems"] if p["severity"] == "error"] == [4, 7, 8]
    assert "010-N2" in [n["id"] for n in broken["nodes"]]


def test_single_file_missing_path_and_bad_bytes(tmp_path):
    assert "1 nodes, 0 edges, 0 errors" in run(str(CORPUS / "template.mmd"))
    with pytest.raises(CommandError, match="no such file"):
        run(str(tmp_path / "missing.mmd"))
    bad = tmp_path / "bad.mmd"
    bad.write_bytes(b'flowchart TD\n  A["\xff"]\n')
    report = json.loads(run("--json", str(bad)))
    assert report["roundtrip_ok"] is False
    assert report["nodes"][0]["id"] == "A"


def test_manage_py_exit_status(tmp_path):
    shutil.copy(CORPUS / "broken.mmd", tmp_path / "broken.mmd")
    manage = Path(__file__).resolve().parents[2] / "manage.py"
    done = subprocess.run(
        [sys.executable, str(manage), "canvas_lint", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "broken.mmd: 4 nodes, 1 edges, 3 errors" in done.stdout
