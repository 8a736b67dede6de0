"""The metadata header in all its forms: reading it and writing it back in the form it has."""

from __future__ import annotations

import json
import re

from .human_text import WJ
from .model import CanvasMeta

DOUBLE_FORM = re.compile(r"%%\{(.*)\}%%\s*$", re.DOTALL)
SINGLE_FORM = re.compile(r"%\{(.*)\}%\s*$", re.DOTALL)
COMMENT_FORM = re.compile(r"%%\s*([A-Za-z_][\w（）()\-]*)\s*[:：]\s*(.*?)\s*$")
LOOSE_KEY = re.compile(r"""\s*["']?([^"':,{}\s][^"':,{}]*?)["']?\s*[:：]\s*""")
PROGRESS_KEY = re.compile(r"progress\s*(?:[（(]\s*0\s*-\s*100\s*[)）])?", re.IGNORECASE)
DIRECTIVE_KEYS = {"init", "initialize", "config", "wrap", "theme", "themeVariables"}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_braced(line: str) -> tuple[str, dict[str, object]] | None:
    """Form and values of a `%%{ … }%%` or `%{ … }%` line; None when it is neither."""
    stripped = line.strip()
    match = DOUBLE_FORM.fullmatch(stripped)
    single = False
    if match is None:
        match = SINGLE_FORM.fullmatch(stripped)
        if match is None or stripped.startswith("%%"):
            return None
        single = True
    inner = match.group(1).strip()
    try:
        values = json.loads("{" + inner + "}")
        form = "single_percent" if single else "json"
    except ValueError:
        values = parse_loose(inner)
        form = "single_percent" if single else "loose"
    if not isinstance(values, dict):
        return None
    return form, values


def parse_loose(inner: str) -> dict[str, object]:
    """`key: value` pairs with quoted or unquoted keys and values, tolerating a missing quote."""
    values: dict[str, object] = {}
    pos = 0
    size = len(inner)
    while pos < size:
        while pos < size and inner[pos] in " ,\t\r\n":
            pos += 1
        key_match = LOOSE_KEY.match(inner, pos)
        if key_match is None:
            break
        key = key_match.group(1).strip()
        pos = key_match.end()
        if pos < size and inner[pos] == '"':
            end = pos + 1
            while end < size and (inner[end] != '"' or inner[end - 1] == "\\"):
                end += 1
            raw = inner[pos : end + 1]
            try:
                value: object = json.loads(raw)
            except ValueError:
                value = raw.strip('"')
            pos = end + 1
        else:
            end = _next_key_comma(inner, pos)
            value = _scalar(inner[pos:end].strip().strip('"'))
            pos = end
        values[key] = value
    return values


def _next_key_comma(inner: str, pos: int) -> int:
    """End of an unquoted value: the next comma that starts another `key:` member."""
    search = pos
    while True:
        comma = inner.find(",", search)
        if comma < 0:
            return len(inner)
        if LOOSE_KEY.match(inner, comma + 1):
            return comma
        search = comma + 1


def _scalar(text: str) -> object:
    if NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    return text


def is_directive(values: dict[str, object]) -> bool:
    return bool(values) and set(values) <= DIRECTIVE_KEYS


def parse_comment(line: str) -> tuple[str, str] | None:
    match = COMMENT_FORM.match(line.strip())
    if match is None or line.lstrip().startswith("%%{"):
        return None
    return match.group(1), match.group(2)


def build_meta(
    form: str, values: dict[str, object], line: int | None, line_end: int | None
) -> CanvasMeta:
    meta = CanvasMeta(form=form, values=values, line=line, line_end=line_end)
    for key, value in values.items():
        lowered = key.lower()
        if lowered in ("taskgoal", "task_goal", "goal"):
            meta.task_goal = _text(value).replace(WJ, "")  # display text: the WJ breaks go
        elif PROGRESS_KEY.fullmatch(key):
            meta.progress = parse_progress(value)
        elif lowered in ("createdtime", "created_time", "created"):
            meta.created = _text(value)
        elif lowered in ("updatedtime", "updated_time", "updated"):
            meta.updated = _text(value)
    return meta


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def parse_progress(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    else:
        match = NUMBER.search(str(value))
        if match is None:
            return None
        number = float(match.group(0))
    return int(round(number)) if 0 <= number <= 100 else None


def merge_keys(values: dict[str, object], updates: dict[str, object]) -> dict[str, object]:
    """`values` with `updates` applied onto the key as written (`progress（0-100）` stays)."""
    result = dict(values)
    for key, value in updates.items():
        target = key
        if key == "progress" or PROGRESS_KEY.fullmatch(key):
            target = next((k for k in result if PROGRESS_KEY.fullmatch(k)), key)
        elif key not in result:
            target = next((k for k in result if k.lower() == key.lower()), key)
        old = result.get(target)
        if isinstance(old, str) and isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        result[target] = value
    return result


def format_braced(values: dict[str, object]) -> str:
    """One strict JSON metadata line that the agent's `^%%\\{\\s*(.*?)\\s*\\}%%` reads whole.

    Every value is kept exactly: what would end or break the line is written as a JSON escape
    (`}%%` inside a string as `}\\u0025%`, U+2028/U+2029 and lone surrogates as `\\uXXXX`).
    """
    members = ", ".join(
        f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in values.items()
    )
    members = _UNSAFE_IN_LINE.sub(lambda m: f"\\u{ord(m.group()):04x}", members)
    members = _CLOSER_INSIDE.sub("}\\\\u0025", members)
    return f"%%{{ {members} }}%%" if members else "%%{ }%%"


_UNSAFE_IN_LINE = re.compile("[\u2028\u2029\ud800-\udfff]")
_CLOSER_INSIDE = re.compile(r"\}%(?=%)")
