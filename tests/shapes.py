"""Checks a page's JSON answer against the TypedDict of its context, key for key."""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict


def shape_problems(value: Any, typed: Any, where: str = "$") -> list[str]:
    """Where ``value`` (a JSON answer) differs from ``typed`` in keys: a key the TypedDict does
    not declare, or one it requires that is missing; nested TypedDicts, lists of them, optional
    ones (``X | None``) and unions of them (the value must fit one) are checked too. Scalars are
    not (JSON turns dates to text)."""
    if value is None:
        return []
    if is_typeddict(typed):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        required, optional = typed.__required_keys__, typed.__optional_keys__
        problems = [f"{where}.{k}: not declared" for k in sorted(set(value) - required - optional)]
        problems += [f"{where}.{k}: missing" for k in sorted(required - set(value))]
        hints = get_type_hints(typed)
        for key in sorted(set(value) & set(hints)):
            problems += shape_problems(value[key], hints[key], f"{where}.{key}")
        return problems
    origin, args = get_origin(typed), get_args(typed)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [
            problem
            for i, item in enumerate(value)
            for problem in shape_problems(item, args[0], f"{where}[{i}]")
        ]
    if origin in (Union, types.UnionType):
        # one of the kinds fits (a union of TypedDicts: the one whose keys the value has)
        fits = [shape_problems(value, kind, where) for kind in args if kind is not type(None)]
        return min(fits, key=len) if fits and all(fits) else []
    return []
