"""Node labels: entity decoding, memory-field extraction and safe label writing."""

from __future__ import annotations

import html
import re

from .vocabulary import STATUS_VOCABULARY, LabelFields

SEGMENT_SPLIT = re.compile(r"\s*(?:<br\s*/?>|\r?\n)\s*", re.IGNORECASE)
KEY_VALUE = re.compile(r"([A-Za-z_][\w -]{0,30}?)\s*[:：]\s*(.*)", re.DOTALL)
MERMAID_ENTITY = re.compile(r"#(\w+);")
TITLE_SPLIT = re.compile(r"[:：]")
# Words the agent's regexes key on; in free text they are written with `#58;` for the colon.
FIELD_WORD_INJECTION = re.compile(r"\b(status|summary|timestamp)\s*[:：]", re.IGNORECASE)


def _mermaid_entity(match: re.Match[str]) -> str:
    name = match.group(1)
    if name.isdigit():
        try:
            return chr(int(name))
        except (ValueError, OverflowError):
            return match.group(0)
    decoded = html.unescape(f"&{name};")
    return match.group(0) if decoded.startswith("&") else decoded


def decode_label(raw: str) -> str:
    """Display text of a label: mermaid `#name;` entities, HTML entities and `\\"` decoded."""
    if "#" not in raw and "&" not in raw and "\\" not in raw and "`" not in raw:
        return raw
    text = raw
    if len(text) >= 2 and text[0] == "`" and text[-1] == "`":
        text = text[1:-1]
    text = text.replace('\\"', '"')
    if "#" in text:
        text = MERMAID_ENTITY.sub(_mermaid_entity, text)
    if "&" in text:
        text = html.unescape(text)
    return text


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
    """Free text made safe in a quoted label and invisible to the agent's field regexes."""
    text = "".join(ch if ch >= " " or ch == "\t" else " " for ch in text.replace("\r\n", " "))
    text = re.sub(r"[\n\r\t\u2028\u2029]", " ", text).strip()
    text = re.sub(r"&(?=#?\w+;)", "&amp;", text)
    text = re.sub(r"#(?=\w+;)", "#35;", text)
    text = text.replace('"', "#quot;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("`", "#96;").replace("}%%", "}#37;%")
    text = FIELD_WORD_INJECTION.sub(lambda m: m.group(1) + "#58;", text)
    if text.endswith("\\"):
        text = text[:-1] + "#92;"
    return text


def raw_segment_safe(raw: str) -> str:
    """An existing raw label segment made safe for a quoted label (no `"` inside)."""
    return raw.replace('\\"', "#quot;").replace('"', "#quot;").replace("\n", " ").replace("\r", "")


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
