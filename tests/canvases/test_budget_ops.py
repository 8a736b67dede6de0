"""Budget suggestions and bulk operations through the ops endpoint: one revision each, every row
still on a drawn node, undo puts every file back byte for byte, live-agent rules kept."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from canvases.mermaid import parse
from canvases.models import Revision
from sessions.models import Canvas
from tests.canvases.budget_folder import CANVAS, FILE, URL, write_folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_user("ann", password="pw"))
    return client


def files(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def rows_per_node(folder: Path) -> Counter[str]:
    lines = (folder / "offload-s1.jsonl").read_text("utf-8").splitlines()
    return Counter(json.loads(line)["node_id"] for line in lines if line)


def post(client: Client, body: dict):
    base = Canvas.objects.get(filename=FILE).content_hash
    return client.post(f"{URL}ops/", json.dumps({"base": base, **body}), "application/json")


def test_applying_suggestions_is_one_revision_and_undo_restores_every_byte(
    client: Client, tmp_path: Path
) -> None:
    folder = write_folder(tmp_path)
    before = files(folder)
    budget = client.get(f"{URL}budget/", {"format": "json", "target": "400"}).json()
    shares = budget["shares"]
    assert sum(n["chars"] for n in shares["nodes"]) + shares["overhead"] == shares["block_chars"]
    plan = budget["plan"]
    assert [s["kind"] for s in plan["suggestions"]] == ["merge", "prune", "shorten"]
    assert plan["suggestions"][0]["nodes"] == ["008-N1", "008-N2", "008-N3"]
    assert plan["suggestions"][1]["nodes"] == ["008-N4"]  # a low score and a dropped row
    assert plan["after_canvas_chars"] < plan["canvas_chars"] == len(CANVAS)
    revisions = Revision.objects.count()

    answer = post(client, {"op": "batch", "steps": [s["step"] for s in plan["suggestions"]]})

    assert answer.status_code == 200, answer.content
    assert Revision.objects.count() == revisions + 1
    assert answer.json()["op"] == "batch"
    text = (folder / "mmds" / FILE).read_text("utf-8")
    assert len(text) == plan["after_canvas_chars"]
    assert set(parse(text).nodes) == {"008-N1", "008-N5"}
    assert rows_per_node(folder) == Counter({"008-N1": 7, "008-N5": 1})  # no row lost

    undo = post(client, {"op": "undo"})
    assert undo.status_code == 200, undo.content
    assert files(folder) == before  # canvas and offload file, byte for byte


def test_bulk_operations_by_filter_and_the_map_builder_window(
    client: Client, tmp_path: Path
) -> None:
    folder = write_folder(tmp_path)
    revisions = Revision.objects.count()
    # the Status tool with several nodes selected (the page's form) sets all of them at once
    base = Canvas.objects.get(filename=FILE).content_hash
    form = {"op": "set_status", "base": base, "nodes": "008-N4,008-N5", "status": "paused"}
    assert client.post(f"{URL}ops/", form).status_code == 302
    doc = parse((folder / "mmds" / FILE).read_text("utf-8"))
    assert [doc.nodes[n].fields.status for n in ("008-N4", "008-N5")] == ["paused", "paused"]
    assert Revision.objects.count() == revisions + 1

    merged = post(client, {"op": "bulk", "action": "merge_done", "group": "g1"})
    assert merged.status_code == 200, merged.content
    assert merged.json()["rows_changed"] == 3
    assert rows_per_node(folder)["008-N1"] == 5

    pruned = post(client, {"op": "bulk", "action": "prune_find", "query": "noise"})
    assert pruned.status_code == 200, pruned.content
    assert "008-N4" not in parse(pruned.json()["text"]).nodes
    assert rows_per_node(folder) == Counter({"008-N1": 7, "008-N5": 1})
    assert Revision.objects.count() == revisions + 3


def test_a_bulk_prune_that_moves_lines_waits_for_the_map_builder(
    client: Client, tmp_path: Path
) -> None:
    folder = write_folder(tmp_path, wait_row=True)
    before = files(folder)
    # the bridge edge 008-N1 --> 008-N3 goes after the last edge, above the classDef line:
    # a reply spliced by line number would land one line off
    refused = post(client, {"op": "bulk", "action": "prune_find", "query": "run tests"})
    assert refused.status_code == 409
    assert "map-builder is mid-flight" in refused.json()["error"]
    assert files(folder) == before
    # a merge only takes lines out: they stay as placeholders and the edit is written
    merged = post(client, {"op": "bulk", "action": "merge_done", "group": "g1"})
    assert merged.status_code == 200, merged.content
    assert len(merged.json()["text"].split("\n")) == len(CANVAS.split("\n"))
