"""A person curates while the agent runs: the agent's writers (test doubles written from the
spec, `agent_doubles.py`) interleaved with human edits through the ops API at each point of the
map-builder window (before the claim, after the claim, between the reply's snapshot and its
patch, after the backfill)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from canvases import history, liveness
from canvases.page_types import LivePanel, RevertedDrop
from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Canvas
from tests.canvases.agent_doubles import Block, FakeAgent, now_stamp
from tests.debug.memory_factory import canvas, node, write_agent
from tests.pages import attr, one
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db
FILE = "001-fix-login.mmd"
OTHER = "002-rate-limit.mmd"
URL = f"/a/main/c/{FILE}/"


@pytest.fixture
def loop(tmp_path: Path):
    """An agent folder last written a day ago, indexed; a signed-in person; the agent."""
    lines = [
        node("001-N1", "探查: read config", "done", 1),
        node("001-N2", "修复: raise timeout", "doing", 2),
        node("001-N3", "验证: run tests", "todo", 3),
    ]
    text = canvas("fix the login timeout", lines, [("001-N1", "001-N2"), ("001-N2", "001-N3")])
    other = canvas("rate limit", [node("002-N1", "plan", "todo", 4)])
    rows = [
        {"minutes": 1, "tool": "read:config", "node": "001-N1"},
        {"minutes": 2, "tool": "edit:timeout", "node": "001-N2"},
        {"minutes": 2.5, "tool": "exec:pytest", "node": "001-N2"},
        {"minutes": 3, "tool": "exec:pytest -k login", "node": "001-N3"},
    ]
    folder = write_agent(tmp_path / "root", "main", {"s1": rows}, {FILE: text, OTHER: other})
    long_ago = time.time() - 86_400
    for path in folder.rglob("*"):
        os.utime(path, (long_ago, long_ago))
    ingest_path(tmp_path / "root")
    client = Client()
    client.force_login(User.objects.create_user("dora", password="pw"))
    return client, folder, FakeAgent(folder, "s1")


def _canvas(name: str = FILE) -> Canvas:
    return Canvas.objects.get(filename=name)


def ops(client: Client, name: str = FILE, **body: Any):
    body.setdefault("base", _canvas(name).content_hash)
    return client.post(
        f"/a/main/c/{name}/ops/", json.dumps(body), content_type="application/json"
    )


def ok(response):
    assert response.status_code == 200, response.content
    return response.json()


def watcher(folder: Path) -> None:
    ingest_agent_dir(folder)


# ---------------------------------------------------------------------------------------------
# 1. liveness is the agent's


def test_memviz_own_writes_never_make_the_agent_look_live(loop) -> None:
    client, folder, _agent = loop
    ok(ops(client, op="merge", nodes=["001-N2", "001-N3"], into="001-N2"))  # canvas + rows
    ok(ops(client, op="annotate", node="001-N1", text="checked by hand"))
    assert not liveness.agent_live(_canvas().agent).live
    response = client.post(f"/a/main/c/{OTHER}/resume/", {}, content_type="application/json")
    assert response.status_code in (200, 302), response.content
    assert liveness.state_active(_canvas().agent) == OTHER
    assert not liveness.agent_live(_canvas().agent).live  # memviz's state.json write is its own


def test_an_agent_write_next_to_a_human_edit_keeps_it_live(loop) -> None:
    """The agent appends a row; within the same second memviz's merge rewrites every offload
    file (the append's mtime is replaced by memviz's): the agent is still live, and resume,
    drop from context and re-apply are refused with the reason until confirmed."""
    client, folder, agent = loop
    agent.append_rows(1)
    ok(ops(client, op="merge", nodes=["001-N2", "001-N3"], into="001-N2"))
    status = liveness.agent_live(_canvas().agent)
    assert status.live and "its folder was written" in status.reasons[0]
    page = BeautifulSoup(client.get(URL).content, "html.parser")
    assert page.select_one("#live .badge.live") is not None
    assert page.select_one("#live .badge.idle") is None

    resume = client.post(f"/a/main/c/{OTHER}/resume/", {}, content_type="application/json")
    assert resume.status_code == 409 and b"looks live" in resume.content
    assert liveness.state_active(_canvas().agent) == FILE
    drop = ops(client, op="prune", node="001-N1", drop_from_context=True)
    assert drop.status_code == 409 and "deleted" in drop.json()["error"]
    # the agent writes once more after memviz's edits: still refused, every time
    agent.save_state(lastL2TriggerTime="now")
    again = client.post(f"/a/main/c/{OTHER}/resume/", {}, content_type="application/json")
    assert again.status_code == 409
    confirmed = client.post(
        f"/a/main/c/{OTHER}/resume/", {"confirm_live": True}, content_type="application/json"
    )
    assert confirmed.status_code in (200, 302)
    assert liveness.state_active(_canvas().agent) == OTHER


def test_a_confirmed_resume_the_gateway_overwrites_is_reported(loop) -> None:
    """The gateway saves its own in-memory state (read when its session started) after a task
    judgment: a resume confirmed while it runs is overwritten, the pages say so, and the agent
    still looks live (that write is the agent's, not memviz's)."""
    client, folder, agent = loop
    agent.append_rows(1)
    confirmed = client.post(
        f"/a/main/c/{OTHER}/resume/", {"confirm_live": True}, content_type="application/json"
    )
    assert confirmed.status_code in (200, 302)
    agent.save_state(lastL2TriggerTime=now_stamp())  # activeMmdFile: still its own FILE
    watcher(folder)
    assert liveness.state_active(_canvas().agent) == FILE
    assert liveness.agent_live(_canvas().agent).live
    page = BeautifulSoup(client.get(f"/a/main/c/{OTHER}/").content, "html.parser")
    note = one(page, ".resume-moved").get_text(" ", strip=True)
    assert f"dora asked the agent to resume from {OTHER}" in note and FILE in note


# ---------------------------------------------------------------------------------------------
# 2. dropped edits: per field, newest wins


def test_progress_raised_by_the_agent_does_not_flag_a_goal_edit(loop) -> None:
    client, folder, agent = loop
    ok(ops(client, op="set_meta", task_goal="fix the login timeout for SSO users"))
    for progress in ("60", "80"):  # two map-builder passes: progress up, the goal kept
        text = agent.snapshot(FILE)
        meta = json.loads("{" + text.split("\n")[0][3:-3] + "}")
        meta["progress"] = progress
        line = "%%{ " + json.dumps(meta, ensure_ascii=False)[1:-1] + " }%%"
        agent.write_mode(FILE, "\n".join([line, *text.split("\n")[1:]]))
        watcher(folder)
    assert history.dropped_edits(_canvas()) == []


def test_newest_human_value_wins_and_reapply_never_writes_an_older_one(loop) -> None:
    client, folder, agent = loop
    stale = agent.snapshot(FILE)  # the map-builder's copy, taken before both edits
    first = ok(ops(client, op="set_meta", task_goal="goal A"))["revision"]
    second = ok(ops(client, op="set_meta", task_goal="goal B"))["revision"]
    agent.write_mode(FILE, stale)  # the reply lands: both goal edits overwritten
    watcher(folder)
    dropped = history.dropped_edits(_canvas())
    assert [d["revision"] for d in dropped] == [second]
    assert dropped[0]["lost"] == [
        {"field": "task goal", "was": "“goal B”", "now": "“fix the login timeout”"}
    ]
    older = ops(client, op="reapply", revision=first, confirm_live=True)
    assert older.status_code == 400 and f"r{second}" in older.json()["error"]
    ok(ops(client, op="reapply", revision=second, confirm_live=True))
    assert '"taskGoal": "goal B"' in (folder / "mmds" / FILE).read_text("utf-8")
    assert history.dropped_edits(_canvas()) == []


def test_each_field_and_edge_is_reported_with_what_was_lost(loop) -> None:
    client, folder, agent = loop
    stale = agent.snapshot(FILE)
    ok(ops(client, op="set_status", node="001-N3", status="blocked"))
    ok(ops(client, op="annotate", node="001-N1", text="config lives in /etc"))
    ok(ops(client, op="add_edge", source="001-N1", target="001-N3"))
    ok(ops(client, op="set_status", node="001-N3", status="doing"))  # supersedes "blocked"
    agent.write_mode(FILE, stale)
    watcher(folder)
    lost = {f["field"]: (f["was"], f["now"]) for d in history.dropped_edits(_canvas()) for f in d["lost"]}
    assert lost == {
        "status of 001-N3": ("“doing”", "“todo”"),
        "note of 001-N1": ("“config lives in /etc”", "(none)"),
        "edge 001-N1 → 001-N3": ("present", "absent"),
    }
    page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    text = one(page, ".dropped").get_text(" ", strip=True)
    assert "status of 001-N3: you wrote “doing” → now “todo”" in text
    assert len(page.select(".dropped form.reapply")) == 3
    panel = client.get(URL + "live/?format=json").json()
    assert len(panel["editor"]["dropped"]) == 3 and shape_problems(panel, LivePanel) == []


# ---------------------------------------------------------------------------------------------
# 3. a drop the agent reverts is reported, with "drop again"


def _row(folder: Path, call_id: str) -> dict[str, Any]:
    rows = [json.loads(x) for x in (folder / "offload-s1.jsonl").read_text("utf-8").splitlines()]
    return next(r for r in rows if r["tool_call_id"] == call_id)


def test_rows_the_agent_re_marks_after_a_drop_are_reported_and_dropped_again(loop) -> None:
    client, folder, agent = loop
    agent.append_rows(1)  # the gateway is running
    refused = ops(client, op="prune", node="001-N1", drop_from_context=True)
    assert refused.status_code == 409
    assert "tells you" not in refused.json()["error"]  # no promise memviz does not keep
    assert "listed on this canvas's page and its agent's page" in refused.json()["error"]
    ok(ops(client, op="prune", node="001-N1", drop_from_context=True, confirm_live=True))
    assert _row(folder, "call_0001")["offloaded"] == "deleted"
    watcher(folder)
    page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    assert page.select_one(".reverted") is None

    agent.mark_offload_status({"call_0001": True})  # L3 mild compression of the same call
    watcher(folder)
    page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    box = one(page, ".reverted")
    text = box.get_text(" ", strip=True)
    assert "call_0001" in text and "offloaded: true" in text
    assert "dora dropped in r" in text and "back in the agent's context since" in text
    assert "§4.8.5" in one(box, ".revert-why").get_text()
    agent_page = BeautifulSoup(client.get("/a/main/").content, "html.parser")
    assert "call_0001" in one(agent_page, ".reverted").get_text()
    listed = client.get("/a/main/?format=json").json()["reverted"]
    assert [r["rows"][0]["tool_call_id"] for r in listed] == ["call_0001"]
    assert shape_problems(listed, list[RevertedDrop]) == []
    panel = client.get(URL + "live/?format=json").json()
    assert panel["editor"]["reverted"] and shape_problems(panel, LivePanel) == []

    form = one(box, "form.drop-again")
    fields = {attr(i, "name"): attr(i, "value") for i in form.select("input[type=hidden]")}
    assert fields["confirm_live"] == "1"  # the button says the agent is live: it confirms
    body: dict[str, Any] = {"op": "drop_again", "revision": int(fields["revision"])}
    assert ops(client, **body).status_code == 409  # the API refuses without the confirmation
    ok(ops(client, **body, confirm_live=True))
    assert _row(folder, "call_0001")["offloaded"] == "deleted"
    watcher(folder)
    page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    assert page.select_one(".reverted") is None


# ---------------------------------------------------------------------------------------------
# 4. no human edit breaks the agent's in-flight patch


def _definitions(text: str) -> list[str]:
    return [line.split("[")[0].strip() for line in text.split("\n") if '["' in line]


@pytest.mark.parametrize("point", ["after_claim", "after_patch"])
def test_a_merge_inside_the_map_builder_window_keeps_the_reply_on_its_lines(loop, point) -> None:
    """The issue's run: the map-builder claims rows and snapshots the canvas; a person merges
    001-N3 into 001-N2 (removing two lines); the reply marks 001-N3 done on line 5 and appends
    a new node after line 7, spliced by line number into the file as it is then."""
    client, folder, agent = loop
    new_rows = agent.append_rows(4)
    agent.claim(new_rows)  # wait marking: every offload file rewritten, window open
    watcher(folder)
    assert liveness.map_builder_in_flight(_canvas().agent)
    snapshot = agent.snapshot(FILE).split("\n")
    assert snapshot[4].strip().startswith("001-N3[") and snapshot[6].strip() == "001-N2 --> 001-N3"
    done = snapshot[4].replace("status: todo", "status: done")
    reply = [
        Block(5, 5, done),
        Block(8, 7, '    001-N4["验证: rerun login<br/>status: doing"]\n    001-N3 --> 001-N4'),
    ]
    if point == "after_claim":
        ok(ops(client, op="merge", nodes=["001-N2", "001-N3"], into="001-N2"))
        assert agent.replace_mode(FILE, reply)  # every block in range
    else:
        assert agent.replace_mode(FILE, reply)
        watcher(folder)
        ok(ops(client, op="merge", nodes=["001-N2", "001-N3"], into="001-N2"))
    agent.backfill(dict.fromkeys(new_rows, "001-N4"))
    watcher(folder)
    text = (folder / "mmds" / FILE).read_text("utf-8")
    definitions = _definitions(text)
    assert len(definitions) == len(set(definitions)), text  # no node defined twice
    assert "001-N1 --> 001-N2" in text  # no edge replaced by a definition
    assert "001-N4" in definitions  # the reply's new node landed: its rows are on the canvas
    assert not liveness.map_builder_in_flight(_canvas().agent)
    if point == "after_claim":
        # the reply brought 001-N3 back: the merge is listed as dropped, with what was lost
        lost = [f["field"] for d in history.dropped_edits(_canvas()) for f in d["lost"]]
        assert "node 001-N3" in lost
    # the window closed: the next edit compacts the placeholder lines away
    ok(ops(client, op="set_status", node="001-N1", status="doing"))
    assert "memviz: line kept" not in (folder / "mmds" / FILE).read_text("utf-8")


def test_an_edit_that_must_insert_above_the_reply_lines_is_refused_naming_the_map_builder(loop) -> None:
    client, folder, agent = loop
    agent.write_mode(FILE, agent.snapshot(FILE) + "\n    classDef done fill:#dfd")
    watcher(folder)
    ok(ops(client, op="add_edge", source="001-N1", target="001-N3"))  # window closed: fine
    agent.claim(agent.append_rows(2))
    watcher(folder)
    before = (folder / "mmds" / FILE).read_bytes()
    refused = ops(client, op="add_edge", source="001-N3", target="001-N1")  # above classDef
    assert refused.status_code == 409
    assert "map-builder is mid-flight (2 rows claimed as wait)" in refused.json()["error"]
    undo = ops(client, op="undo")  # would take the earlier edge's line out: lines move
    assert undo.status_code == 409 and "mid-flight" in undo.json()["error"]
    assert (folder / "mmds" / FILE).read_bytes() == before
    undo_like = ops(client, op="annotate", node="001-N1", text="still fine: same line")
    assert undo_like.status_code == 200  # a label edit moves no line


def test_claims_the_watcher_has_not_indexed_yet_already_protect_the_reply_lines(loop) -> None:
    """Between the agent's claim and the watcher's ingest (~200 ms + the ingest) the index holds
    no wait row yet: the offload file's fresh tail is read instead."""
    client, folder, agent = loop
    agent.write_mode(FILE, agent.snapshot(FILE) + "\n    classDef done fill:#dfd")
    watcher(folder)
    agent.claim(agent.append_rows(2))  # no watcher pass: the index knows nothing of it
    before = (folder / "mmds" / FILE).read_bytes()
    refused = ops(client, op="add_edge", source="001-N3", target="001-N1")
    assert refused.status_code == 409
    assert "just claimed rows (wait) that memviz is still indexing" in refused.json()["error"]
    assert (folder / "mmds" / FILE).read_bytes() == before


def _post_form(client: Client, form) -> None:
    fields = {i["name"]: i["value"] for i in form.select("input[type=hidden]")}
    for select in form.select("select"):
        fields[select["name"]] = select.select_one("option[selected]").get_text()
    ok(ops(client, **{**fields, "base": _canvas().content_hash}))


def test_what_a_misplaced_reply_left_is_a_canvas_problem_with_one_click_repairs(loop) -> None:
    """A reply that landed one line off (whoever moved the lines): its block overwrote the edge
    on line 6 with a second definition of 001-N2, its block adding 001-N20 was skipped, and the
    backfill mapped the claimed rows to 001-N20, which is on no canvas."""
    client, folder, agent = loop
    rows = agent.append_rows(4)
    agent.claim(rows)
    lines = agent.snapshot(FILE).split("\n")
    newer = lines[3].replace("status: doing", "status: done")
    assert not agent.replace_mode(FILE, [Block(6, 6, newer), Block(40, 39, "    001-N20[x]")])
    agent.backfill(dict.fromkeys(rows, "001-N20"))
    watcher(folder)
    page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    box = one(page, ".landed")
    assert "001-N2 is defined twice (lines 4, 6)" in box.get_text(" ", strip=True)
    assert "The edge 001-N1 → 001-N2 on line 6 was overwritten" in box.get_text(" ", strip=True)
    assert "4 rows were backfilled to 001-N20 , which is on no canvas" in box.get_text(" ", strip=True)
    panel = client.get(URL + "live/?format=json").json()
    kinds = {p["kind"] for p in panel["editor"]["landed"]}
    assert kinds == {"duplicate", "edge_lost", "rows_off_canvas"}
    assert shape_problems(panel, LivePanel) == []
    for kind in ("duplicate", "edge_lost", "rows_off_canvas"):
        page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
        _post_form(client, page.select_one(f".landed-{kind} form.repair"))
    text = (folder / "mmds" / FILE).read_text("utf-8")
    assert _definitions(text).count("001-N2") == 1 and "status: done" in text  # the newer kept
    assert "001-N1 --> 001-N2" in text
    assert {_row(folder, r)["node_id"] for r in rows} == {"001-N3"}  # the fallback's choice
    watcher(folder)
    page = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    assert page.select_one(".landed") is None


# ---------------------------------------------------------------------------------------------
# 5. speed: a backfilled row reaches the node panel in time


def test_a_backfilled_row_reaches_the_node_panel_within_two_seconds(loop, settings) -> None:
    """The watcher's unit of work after the backfill's file events (`Watcher.ingest_changes`
    for one agent folder: an ingest told which files changed), then the node panel's request
    (what live.js sends on the broadcast), on a folder of 1,000 rows in 5 sessions; the budget
    leaves room for the watcher's debounce and live.js's delay."""
    client, folder, agent = loop
    for n in range(4):
        FakeAgent(folder, f"bulk{n}").append_rows(250, node_id="001-N1")
    rows = agent.append_rows(4)
    agent.claim(rows)
    watcher(folder)
    def follow() -> None:
        changed = [str(p) for p in folder.glob("offload-*.jsonl")]
        ingest_agent_dir(folder, root=folder.parent, changed=changed)

    timings = []
    for _ in range(3):
        agent.claim(rows)
        follow()
        start = time.perf_counter()
        agent.backfill(dict.fromkeys(rows, "001-N3"))
        follow()
        html = client.get(f"/a/main/c/{FILE}/n/001-N3/", HTTP_HX_REQUEST="true").content
        timings.append(time.perf_counter() - start)
        assert all(f"step {n} ran" in html.decode() for n in range(1, 5))
    budget = 2.0 - (settings.MEMVIZ_WATCH_DEBOUNCE_MS + 250) / 1000
    print(f"backfill → node panel: {', '.join(f'{t * 1000:.0f} ms' for t in timings)}")
    assert sorted(timings)[1] < budget  # the median: the machine running the tests is shared
