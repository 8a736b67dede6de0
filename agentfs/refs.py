"""Ref files (`refs/*.md`): confined resolution, header parsing, paging, stringified results."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentfs import json_text
from agentfs.layout import REFS_DIR
from agentfs.paths import check_relative, confine, open_regular

__all__ = [
    "HEAD_READ_BYTES",
    "RefInfo",
    "RefPage",
    "read_ref_header",
    "read_ref_info",
    "read_ref_page",
    "resolve_ref",
    "split_ref",
    "unwrap_tool_result",
]

HEAD_READ_BYTES = 8192

RefVariant = Literal["upstream", "go", "server", "unknown"]

_SERVER_KEY = re.compile(rf"^offload/[^/]+/({REFS_DIR}/.+)$")
# The plugin's own form of a result_ref, `refs/<name>`: `ref_relative` gives it back unchanged (no
# outer space, no `..`, NUL or backslash), so a hot path may take it as the ref's name without
# parsing it as a path (tests/agentfs/test_ref_names.py holds the two to each other).
PLAIN_REF = re.compile(rf"{REFS_DIR}/(?!\.\.?\Z)([^/\\\x00]*[^/\\\x00\s])\Z")

# Upstream and E: "**Tool:** x"; S: "**tool_call_id:** x"; T: "- tool_name: x".
_BOLD_FIELD = re.compile(r"^\*\*([A-Za-z_ ]+):\*\*[ \t]*(.*?)[ \t]*\r?$", re.M)
_LIST_FIELD = re.compile(r"^- ([a-z_]+):[ \t]*(.*?)[ \t]*\r?$", re.M)
_TITLE = re.compile(r"^# Tool Result(?::[ \t]*(.*?))?[ \t]*\r?$", re.M)
_UPSTREAM_RESULT = re.compile(r"^\*\*Result:\*\*[ \t]*\r?\n", re.M)
_GO_RESULT = re.compile(r"^## Result[ \t]*\r?\n", re.M)
_FENCE_OPEN = re.compile(r"(?:[ \t]*\r?\n)*```[^\n`]*\r?\n")
_FENCE_CLOSE = re.compile(r"\r?\n```[ \t]*\r?\n?$")


def resolve_ref(agent_dir: Path, result_ref: str) -> Path:
    """Map a row's `result_ref` to a path inside `agent_dir` (which is not read).

    Accepts `refs/x.md`, a bare `x.md` and the server variant's storage key
    `offload/<sid>/refs/<id>.md` (mapped to the local `refs/`). Raises UnsafePath otherwise.
    """
    return confine(agent_dir, ref_relative(result_ref))


def ref_relative(result_ref: str) -> str:
    """`resolve_ref`'s mapping of a `result_ref` to a path relative to the agent folder."""
    relative = result_ref.strip() if isinstance(result_ref, str) else result_ref
    check_relative(relative)  # refuse '..' and friends before any mapping hides them
    server = _SERVER_KEY.match(relative)
    if server:
        return server.group(1)
    return relative if "/" in relative else f"{REFS_DIR}/{relative}"


def ref_url_name(name: str) -> str:
    """The name the ref page's URL takes for the ref ``name`` of the index (without `refs/`)."""
    return name.removeprefix(f"{REFS_DIR}/")


def ref_names(url_name: str) -> list[str]:
    """The names of the index a ref page's URL name stands for: `refs/<it>`, or itself (a ref
    outside `refs/`, which a row may cite by a path)."""
    return [f"{REFS_DIR}/{url_name}", url_name]


@dataclass(frozen=True, slots=True)
class RefInfo:
    path: Path
    name: str
    size: int
    tool: str | None
    call_id: str | None
    timestamp: str | None
    variant: RefVariant
    result_offset: int | None


def _fields(pattern: re.Pattern[str], text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for match in pattern.finditer(text):
        found.setdefault(match.group(1).strip().lower(), match.group(2))
    return found


def _header_end(text: str) -> tuple[int, int] | None:
    """(end of header, start of raw result) in `text`, or None when there is no header."""
    for marker in (_UPSTREAM_RESULT, _GO_RESULT):
        match = marker.search(text)
        if match:
            start = match.end()
            fence = _FENCE_OPEN.match(text, start)
            return match.start(), fence.end() if fence else start
    # S: "**key:** value" lines, then the raw result with no fence and no Result marker.
    position = 0
    seen_field = False
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if _BOLD_FIELD.match(bare) or bare.startswith("# ") or bare in ("", "---"):
            seen_field = seen_field or bool(_BOLD_FIELD.match(bare))
            position += len(line)
            continue
        break
    if seen_field:
        return position, position
    return None


def split_ref(text: str) -> tuple[str, str]:
    """Split a ref into (header markdown, raw result text).

    Everything after the `**Result:**` (or Go `## Result`) line is raw; the one outer ``` fence
    is removed when it is present at both ends. Text with no recognisable header is all raw.
    """
    bounds = _header_end(text)
    if bounds is None:
        return "", text
    header_end, raw_start = bounds
    raw = text[raw_start:]
    if raw_start != header_end and text[header_end:raw_start].rstrip().endswith("```"):
        closing = _FENCE_CLOSE.search(raw)
        if closing:
            raw = raw[: closing.start()]
        elif raw.startswith("```"):
            raw = ""  # empty fenced result: the closing fence directly follows the opening one
    return text[:header_end].rstrip("\r\n"), raw


def _variant(text: str) -> RefVariant:
    if _UPSTREAM_RESULT.search(text) or "**Call ID:**" in text:
        return "upstream"
    if _LIST_FIELD.search(text) and ("## Result" in text or "- tool_call_id:" in text):
        return "go"
    if re.search(r"^\*\*tool_call_id:\*\*", text, re.M):
        return "server"
    return "unknown"


def read_ref_info(path: Path | str, *, head_bytes: int = HEAD_READ_BYTES) -> RefInfo:
    """Header facts of a ref from its first ``head_bytes`` (8 KB by default) only.

    ``path`` is ``<agent>/refs/<name>``: none of those three may be a link (LinkRefused).
    """
    with open_regular(path, folders=2) as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(head_bytes)
    # One byte-exact decoding serves both the boundary (offsets count the file's own bytes)
    # and the fields; only the short header is re-decoded with replacement characters.
    exact = head.decode("utf-8", errors="surrogateescape")
    bounds = _header_end(exact)
    header_exact = exact[: bounds[0]] if bounds is not None else exact
    variant = _variant(exact[: bounds[1]] if bounds is not None else exact)
    # Header fields are looked for in the header only: result text may contain look-alikes.
    header = header_exact.encode("utf-8", errors="surrogateescape").decode("utf-8", "replace")
    bold = _fields(_BOLD_FIELD, header)
    listed = _fields(_LIST_FIELD, header) if variant == "go" else {}
    title = _TITLE.search(header)
    tool = bold.get("tool") or listed.get("tool_name") or (title.group(1) if title else None)
    call_id = bold.get("call id") or bold.get("tool_call_id") or listed.get("tool_call_id")
    timestamp = bold.get("timestamp") or listed.get("timestamp")
    result_offset: int | None = None
    if (
        variant != "unknown"
        and bounds is not None
        and (bounds[1] < len(exact) or len(head) == size)
    ):
        result_offset = len(exact[: bounds[1]].encode("utf-8", errors="surrogateescape"))
    path = Path(path)
    return RefInfo(
        path=path,
        name=path.name,
        size=size,
        tool=tool or None,
        call_id=call_id or None,
        timestamp=timestamp or None,
        variant=variant,
        result_offset=result_offset,
    )


_UPSTREAM_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_ ")


def read_ref_header(
    path: Path | str, *, head_bytes: int = 2048
) -> tuple[str | None, str | None, str | None]:
    """(tool, call id, timestamp) of a ref, as `read_ref_info` gives them, for the ingest hot path.

    The plugin's own header (`# Tool Result: x`, `**Key:** value` lines, `**Result:**`) is read
    with plain string operations; any other form goes through `read_ref_info`. A ref memviz
    cannot or will not open (a link swapped in since the folder was listed) has no header.
    """
    try:
        with open_regular(path, folders=2) as handle:
            head = handle.read(head_bytes)
    except OSError:
        return None, None, None
    try:
        return _header_fields(path, head, head_bytes)
    except Exception:  # noqa: BLE001 - a ref whose header cannot be read is indexed without one
        return None, None, None


def _header_fields(
    path: Path | str, head: bytes, head_bytes: int
) -> tuple[str | None, str | None, str | None]:
    text = head.decode("utf-8", errors="replace")
    cut = text.find("\n**Result:**")
    if cut < 0 or not text.startswith("# Tool Result") or "**Call ID:**" not in text[:cut]:
        info = read_ref_info(path, head_bytes=head_bytes)
        return info.tool, info.call_id, info.timestamp
    end = text.find("\n", cut + 12)
    if text[cut + 12 : end if end >= 0 else len(text)].strip(" \t\r") or end < 0:
        info = read_ref_info(path, head_bytes=head_bytes)  # not the marker line the regex wants
        return info.tool, info.call_id, info.timestamp
    fields: dict[str, str] = {}
    title: str | None = None
    for raw in text[:cut].split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if title is None and line.startswith("# Tool Result"):
            rest = line[13:]
            if rest.startswith(":"):
                title = rest[1:].strip(" \t")
            elif not rest.strip(" \t"):
                title = ""
        elif line.startswith("**"):
            close = line.find(":**", 2)
            key = line[2:close]
            if close > 2 and set(key) <= _UPSTREAM_KEY_CHARS:
                fields.setdefault(key.strip().lower(), line[close + 3 :].strip(" \t"))
    tool = fields.get("tool") or title or None
    call_id = fields.get("call id") or fields.get("tool_call_id") or None
    return tool, call_id, fields.get("timestamp") or None


@dataclass(frozen=True, slots=True)
class RefPage:
    text: str
    offset: int
    next_offset: int | None
    total_bytes: int


def _missing_continuation(data: bytes) -> int:
    """How many bytes the UTF-8 character cut at the end of `data` still needs."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # continuation byte, keep looking for the lead
        if byte >= 0xF0:
            need = 4
        elif byte >= 0xE0:
            need = 3
        elif byte >= 0xC0:
            need = 2
        else:
            return 0
        return max(0, need - back)
    return 0


def read_ref_page(path: Path, *, offset: int = 0, limit: int = 65536) -> RefPage:
    """Read at most `limit` bytes from `offset` (plus up to 3 to finish a UTF-8 character).

    Opened like `read_ref_info`: a link anywhere in ``<agent>/refs/<name>`` is LinkRefused.
    """
    if limit <= 0:
        raise ValueError("limit must be positive")
    with open_regular(path, folders=2) as handle:
        total = os.fstat(handle.fileno()).st_size
        offset = max(0, min(offset, total))
        handle.seek(offset)
        data = handle.read(limit)
        need = _missing_continuation(data)
        if need:
            extra = handle.read(need)
            if all(byte & 0xC0 == 0x80 for byte in extra):
                data += extra
    end = offset + len(data)
    return RefPage(
        text=data.decode("utf-8", errors="replace"),
        offset=offset,
        next_offset=end if end < total else None,
        total_bytes=total,
    )


def unwrap_tool_result(result_text: str) -> str | None:
    """The text inside a JSON-stringified tool result ({"content":[{"type":"text",...}]}).

    None when the text is not such a result (including the literal `undefined`).
    """
    stripped = result_text.strip()
    if not stripped.startswith("{") or "content" not in stripped:
        return None
    try:
        parsed = json_text.loads(stripped)
    except Exception:  # noqa: BLE001 - ValueError, or RecursionError on hostile nesting
        return None
    content = parsed.get("content") if isinstance(parsed, dict) else None
    if not isinstance(content, list):
        return None
    texts = [
        item["text"]
        for item in content
        if isinstance(item, dict)
        and item.get("type") == "text"
        and isinstance(item.get("text"), str)
    ]
    if not texts:
        return None
    return "\n".join(texts)
