"""Node labels: entity decoding, memory-field extraction and safe label writing."""

from __future__ import annotations

import re

from .human_text import break_percent_pairs, human_text, human_text_display
from .vocabulary import STATUS_VOCABULARY, LabelFields

SEGMENT_SPLIT = re.compile(r"\s*(?:<br\s*/?>|\r?\n)\s*", re.IGNORECASE)
KEY_VALUE = re.compile(r"([A-Za-z_][\w -]{0,30}?)\s*[:：]\s*(.*)", re.DOTALL)
TITLE_SPLIT = re.compile(r"[:：]")

# The display text of a label as written (entities decoded, the WJ breaks removed).
decode_label = human_text_display


def split_segments(label: str) -> list[str]:
    return SEGMENT_SPLIT.split(label.strip())


def extract_fields(label_raw: str) -> LabelFields:
    """Memory fields of a label as written (`phase: action<br/>status: …<br/>summary: …`).

    Separators are read from the raw text and values decoded afterwards, so an escaped
    `&lt;br/&gt;status: x` inside a note stays text and never becomes a field.
    """
    if len(label_raw) >= 2 and label_raw[0] == "`" and label_raw[-1] == "`":
        label_raw = label_raw[1:-1]
    segments = split_segments(label_raw)
    fields = LabelFields(title=decode_label(segments[0]).strip())
    last_key = "title"
    for segment in segments[1:]:
        match = KEY_VALUE.fullmatch(segment)
        if match is None:
            _append(fields, last_key, decode_label(segment).strip())
            continue
        key = match.group(1).strip().lower()
        value = decode_label(match.group(2)).strip()
        last_key = key
        # the first occurrence wins, as it does for the agent's own `status:\s*(\w+)` match
        if key == "status":
            if fields.status is None:
                fields.status = value.lower() if value.lower() in STATUS_VOCABULARY else value
        elif key == "summary":
            if fields.summary is None:
                fields.summary = value
        elif key == "timestamp":
            if fields.timestamp is None:
                fields.timestamp = value
        else:
            fields.extra.setdefault(key, value)
    _split_title(fields)
    return fields


def _append(fields: LabelFields, key: str, text: str) -> None:
    if not text:
        return
    if key == "title":
        fields.title = f"{fields.title} {text}".strip()
    elif key == "summary":
        fields.summary = f"{fields.summary or ''} {text}".strip()
    elif key in ("status", "timestamp"):
        fields.extra.setdefault("text", "")
        fields.extra["text"] = f"{fields.extra['text']} {text}".strip()
    else:
        fields.extra[key] = f"{fields.extra.get(key, '')} {text}".strip()


def _split_title(fields: LabelFields) -> None:
    parts = TITLE_SPLIT.split(fields.title, maxsplit=1)
    if len(parts) == 2:
        fields.phase = parts[0].strip() or None
        fields.action = parts[1].strip()
    else:
        fields.phase = None
        fields.action = fields.title or None


def escape_text(text: str) -> str:
    """Free text made safe in a quoted label (see `human_text`)."""
    return human_text(text, "label")


def raw_segment_safe(raw: str) -> str:
    """An existing raw label segment made safe for a quoted label: no `"`, no `%%`, one line."""
    raw = raw.replace('\\"', "#quot;").replace('"', "#quot;").replace("\n", " ").replace("\r", "")
    return break_percent_pairs(raw)


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def raw_segments(label_raw: str) -> list[tuple[str | None, str]]:
    """Raw label split into (lower-cased key or None, raw segment) pairs; the first is the title."""
    result: list[tuple[str | None, str]] = []
    for index, segment in enumerate(split_segments(label_raw)):
        if index == 0:
            result.append((None, segment))
            continue
        match = KEY_VALUE.fullmatch(segment)
        result.append((match.group(1).strip().lower() if match else None, segment))
    return result
