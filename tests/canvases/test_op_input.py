"""Every write reads its input once, by its fields' kinds (canvases/op_input.py): a JSON body and
a form give the op the same values, and a value of the wrong type is refused with its field's
name before anything is read from disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.http import QueryDict
from django.test import Client

from canvases import op_input
from canvases.edit_ops import OPERATIONS, fields_of, read_input, sent_input
from canvases.refused import EditRefused
from intake.ingest import ingest_path

CANVAS = "/a/main/c/001-fix-login-timeout.mmd/"


def form(**values: str | list[str]) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, value in values.items():
        data.setlist(name, value if isinstance(value, list) else [value])
    return data


def test_every_op_declares_each_field_once_with_a_known_kind() -> None:
    kinds = {"text", "optional", "flag", "ids", "number", "value", "steps"}
    for name in [*OPERATIONS, *op_input.OTHER_INPUTS]:
        names = [f.name for f in fields_of(name)]
        assert len(names) == len(set(names)), name
        assert all(f.kind in kinds for f in fields_of(name)), name


@pytest.mark.parametrize(
    ("op", "sent_json", "sent_form", "typed"),
    [
        (
            "merge",
            {"nodes": ["A", "B"], "into": "B", "label": ""},
            form(nodes=["A,B"], into="B", label=""),
            {"nodes": ["A", "B"], "into": "B", "confirm_live": False},
        ),
        (
            "prune",
            {"node": "A", "bridge": False, "drop_from_context": True},
            form(node="A", drop_from_context="on"),
            {"node": "A", "bridge": False, "drop_from_context": True, "confirm_live": False},
        ),
        (
            "dedupe",
            {"node": "A", "keep": 6},
            form(node="A", keep="6"),
            {"node": "A", "keep": 6, "confirm_live": False},
        ),
        (
            "batch",
            {"steps": [{"op": "fold", "node": "A"}]},
            form(steps=['{"op": "fold", "node": "A"}']),
            {"steps": [{"op": "fold", "node": "A"}], "confirm_live": False},
        ),
        (
            "restore",
            {"revision": 3, "confirm_live": "on"},
            form(revision="3", confirm_live="on"),
            {"revision": 3, "confirm_live": True},
        ),
    ],
)
def test_a_form_and_a_json_body_give_the_op_the_same_values(op, sent_json, sent_form, typed) -> None:
    assert read_input(op, sent_json) == typed
    assert sent_input(op, sent_form) == (op, typed)
    assert read_input(op, typed) == typed  # a revision's stored input reads back the same


def test_a_flag_left_out_is_no_from_a_form_and_the_default_from_json() -> None:
    assert read_input("prune", {"node": "A"})["bridge"] is True
    assert sent_input("prune", form(node="A"))[1]["bridge"] is False  # an unticked box


def test_the_status_tool_on_several_nodes_is_a_bulk_set_status() -> None:
    op, params = sent_input("set_status", form(nodes=["A", "B"], node="A", status="done"))
    assert op == "bulk"
    assert params == {"action": "set_status", "nodes": ["A", "B"], "status": "done", "confirm_live": False}
    assert sent_input("set_status", {"nodes": ["A"], "node": "A", "status": "done"})[0] == "set_status"


@pytest.mark.parametrize(
    ("op", "sent", "code", "field"),
    [
        ("annotate", {"node": 5, "text": "x"}, "field_text", "node"),
        ("annotate", {"node": "A", "text": "  "}, "field_required", "text"),
        ("merge", {"nodes": "A,B"}, "field_ids", "nodes"),
        ("merge", {"nodes": ["A", 2]}, "field_ids", "nodes"),
        ("restore", {"revision": "three"}, "field_number", "revision"),
        ("restore", {"revision": True}, "field_number", "revision"),
        ("set_meta", {"progress": [50]}, "field_value", "progress"),
        ("set_meta", {"progress": True}, "field_value", "progress"),
    ],
)
def test_a_wrong_type_is_refused_with_the_fields_name(op, sent, code, field) -> None:
    with pytest.raises(EditRefused) as refused:
        read_input(op, sent)
    assert refused.value.code == code
    assert repr(field) in str(refused.value)


def test_a_step_that_is_not_json_is_refused() -> None:
    with pytest.raises(EditRefused) as refused:
        sent_input("batch", form(steps=["{not json"]))
    assert refused.value.code == "step_not_json"


@pytest.mark.django_db
def test_a_wrongly_typed_edit_over_http_writes_nothing_and_says_which_field(
    fixtures_root: Path, django_user_model
) -> None:
    root = fixtures_root / "fixture-a-upstream"
    ingest_path(root)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    client = Client()
    client.force_login(django_user_model.objects.create_user("ana"))
    base = client.get(f"{CANVAS}?format=json").json()["content_hash"]
    body = {"op": "merge", "nodes": {"A": 1}, "base": base}
    answer = client.post(f"{CANVAS}ops/", json.dumps(body), content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["code"] == "field_ids" and "'nodes'" in answer.json()["error"]
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    history = client.get(f"{CANVAS}history/?format=json").json()["revisions"]
    assert all(r["author"] != "ana" for r in history)
