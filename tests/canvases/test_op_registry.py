"""One entry per curation operation (canvases/edit_ops.py OPERATIONS): the engine, the services,
the ops API, the toolbar, the keyboard help and the page's shortcuts all read it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from canvases.edit_ops import EDIT_OPS, OPERATIONS, TOOLS, applies_cleanly, op_params
from intake.ingest import ingest_path

REPO = Path(__file__).resolve().parents[2]
EDITOR = (REPO / "templates" / "canvases" / "_editor.html").read_text("utf-8")


def test_every_tool_opens_a_form_that_exists_with_a_key_of_its_own() -> None:
    forms = set(re.findall(r'data-form="([\w-]+)"', EDITOR))
    assert {tool.form for tool in TOOLS} <= forms
    keys = [tool.key for tool in TOOLS]
    assert len(keys) == len(set(keys))
    # each form posts ops the registry knows
    posted = set(re.findall(r'name="op" value="(\w+)"', EDITOR))
    assert posted <= set(EDIT_OPS) | {"undo", "redo"}


def test_the_registry_decides_fields_and_the_reapply_rule() -> None:
    assert op_params("prune", {"node": "A", "bridge": False, "text": "ignored"}) == {"node": "A", "bridge": False}
    base = 'flowchart TD\n  A["a"] --> B["b"]\n'
    moved = base + '  C["c"]\n'
    assert applies_cleanly(base, moved, "annotate", {"node": "A", "text": "x"})
    assert not applies_cleanly(base, moved, "repair", {})  # "never"
    assert all(op.fields is not None and callable(op.run) for op in OPERATIONS.values())


@pytest.mark.django_db
def test_the_toolbar_and_the_keyboard_help_list_every_tool(fixtures_root: Path, django_user_model) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(django_user_model.objects.create_user("ana"))
    page = BeautifulSoup(client.get("/a/main/c/001-fix-login-timeout.mmd/").content, "html.parser")
    buttons = {b["data-open"]: b for b in page.select(".edit-toolbar button[data-key]")}
    assert list(buttons) == [tool.form for tool in TOOLS]
    for tool in TOOLS:
        assert buttons[tool.form]["data-key"] == tool.key
        assert buttons[tool.form].get_text() == str(tool.label)
        assert (buttons[tool.form].get("data-needs") or "0") == str(tool.needs)
    help_keys = [dt.get_text() for dt in page.select("#shortcut-help dt")]
    for tool in TOOLS:
        assert str(tool.key_label or tool.key) in help_keys


@pytest.mark.django_db
def test_a_form_prune_without_the_bridge_box_does_not_bridge(fixtures_root: Path, django_user_model) -> None:
    """An unticked box sends nothing: from a form, absent means no (the JSON default is yes)."""
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(django_user_model.objects.create_user("ana"))
    url = "/a/main/c/001-fix-login-timeout.mmd/"
    data = client.get(url + "?format=json").json()
    node = next(n["id"] for n in data["nodes"] if 0 < sum(1 for e in data["edges"] if n["id"] in (e["source"], e["target"])) < 3)
    answer = client.post(url + "ops/", {"op": "prune", "node": node, "base": data["content_hash"]})
    assert answer.status_code == 302
    history = client.get(url + "history/?format=json").json()["revisions"]
    newest = max(history, key=lambda r: r["number"])
    assert newest["op"] == "prune" and newest["params"]["bridge"] is False
