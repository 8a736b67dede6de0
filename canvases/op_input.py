"""What a write reads from its request, typed once: each field has a kind, and one reader turns a
JSON body or a form into the same values, refusing a wrong type with the reason.

The fields of each curation op are declared with the op (`canvases/edit_ops.py`); the history ops,
branching and resume declare theirs here. Every op also reads `confirm_live` (a person's "write
anyway" to a live agent). A form sends text only: a list comes as repeated or comma-separated
values, a number as digits, a step as a JSON object, and an unticked box sends nothing (no);
a JSON body sends the values themselves, and a flag it leaves out takes the field's default.

A body or a field that cannot be read is refused with an `EditRefused`, which is the floor's
`InputRefused` (memviz/input_refused.py): a view of another app (reviews) catches it as that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.http import HttpRequest, QueryDict

from canvases.messages import Said
from canvases.refused import EditRefused

Kind = Literal["text", "optional", "flag", "ids", "number", "value", "steps"]
YES = frozenset({"1", "true", "on", "yes"})


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a write's input.

    text: required text; optional: text or nothing; flag: yes/no (`default` when a JSON body
    leaves it out); ids: a list of node ids; number: a whole number (or its digits); value: text or a number
    (a metadata value); steps: a list of the budget's step objects (checked by the engine).
    """

    name: str
    kind: Kind = "text"
    default: bool = False


def text(name: str) -> Field:
    return Field(name)


def optional(name: str) -> Field:
    return Field(name, "optional")


def flag(name: str, default: bool = False) -> Field:
    return Field(name, "flag", default)


def ids(name: str) -> Field:
    return Field(name, "ids")


def number(name: str) -> Field:
    return Field(name, "number")


def value(name: str) -> Field:
    return Field(name, "value")


def steps(name: str) -> Field:
    return Field(name, "steps")


CONFIRM_LIVE = flag("confirm_live")
# Writes that are not curation ops, by the name their view reads them with.
OTHER_INPUTS: dict[str, tuple[Field, ...]] = {
    "undo": (),
    "redo": (),
    "restore": (number("revision"),),
    "reapply": (number("revision"),),
    "drop_again": (number("revision"),),
    "adopt": (text("from"), text("node")),
    "resume": (),
    "branch": (text("file"), number("revision"), optional("label")),  # a canvas at a revision
    "branch_replay": (text("session"), number("row"), optional("label")),  # a replay's frame
}


def request_data(request: HttpRequest) -> Mapping[str, Any]:
    """A write's fields as sent: a JSON body's object, or its form (read by `read_sent`)."""
    if request.content_type != "application/json":
        return request.POST
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, RecursionError):
        raise EditRefused(Said("body_not_json")) from None
    if not isinstance(data, dict):
        raise EditRefused(Said("body_not_object"))
    return data


def read_sent(fields: tuple[Field, ...], data: Mapping[str, Any]) -> dict[str, Any]:
    """`request_data`'s fields, each of its kind, whichever way they were sent."""
    return from_form(fields, data) if isinstance(data, QueryDict) else read(fields, data)


def read(fields: tuple[Field, ...], data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields' values from a JSON object (or a form read by `from_form`), each of its kind.

    A field left out is absent from the answer (a flag takes its default); a required text left
    out or blank, and a value of the wrong type, are refused with the field's name."""
    out: dict[str, Any] = {}
    for field in (*fields, CONFIRM_LIVE):
        raw = data.get(field.name)
        if field.kind == "flag":
            out[field.name] = _flag(raw, field.default)
        elif raw is None or raw == "" or raw == []:
            if field.kind == "text":
                raise EditRefused(Said("field_required", field=repr(field.name)))
        else:
            out[field.name] = _typed(field, raw)
    return out


def from_form(fields: tuple[Field, ...], form: QueryDict) -> dict[str, Any]:
    """A form's text as a JSON body would send it, then `read`."""
    data: dict[str, Any] = {}
    for field in (*fields, CONFIRM_LIVE):
        if field.kind == "flag":
            data[field.name] = form.get(field.name, "").lower() in YES  # unticked: absent, no
        elif field.name not in form:
            continue
        elif field.kind == "ids":
            data[field.name] = [v for item in form.getlist(field.name) for v in item.split(",") if v]
        elif field.kind == "steps":
            try:
                data[field.name] = [json.loads(step) for step in form.getlist(field.name)]
            except (ValueError, RecursionError):
                raise EditRefused(Said("step_not_json")) from None
        else:
            data[field.name] = form.get(field.name)
    return read(fields, data)


def _typed(field: Field, raw: object) -> object:
    if field.kind in ("text", "optional"):
        if not isinstance(raw, str):
            raise EditRefused(Said("field_text", field=repr(field.name)))
        if field.kind == "text" and not raw.strip():
            raise EditRefused(Said("field_required", field=repr(field.name)))
        return raw
    if field.kind == "ids":
        if not isinstance(raw, list) or not all(isinstance(i, str) for i in raw):
            raise EditRefused(Said("field_ids", field=repr(field.name)))
        return raw
    if field.kind == "number":
        if isinstance(raw, str):  # a form's digits, or a script's
            return _whole(field.name, raw)
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise EditRefused(Said("field_number", field=repr(field.name)))
        return raw
    if field.kind == "value" and (isinstance(raw, bool) or not isinstance(raw, str | int | float)):
        raise EditRefused(Said("field_value", field=repr(field.name)))
    return raw  # a value, or steps (the engine reads each step as untrusted)


def _flag(raw: object, default: bool) -> bool:
    if raw is None:
        return default
    if isinstance(raw, str):
        return raw.lower() in YES
    return bool(raw)


def _whole(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise EditRefused(Said("field_number", field=repr(name))) from None


def sent_base(data: Mapping[str, Any]) -> str:
    """The content hash an edit or restore was made on ("" when not sent); text or refused."""
    return str(read_sent((optional("base"),), data).get("base", ""))


def with_sent(data: Mapping[str, Any], name: str, value: str) -> Mapping[str, Any]:
    """`request_data` with one more field, as if it had been sent."""
    if isinstance(data, QueryDict):
        copy = data.copy()
        copy[name] = value
        return copy
    return {**data, name: value}
