"""The active canvas in `state.json`: set it byte-preservingly, or create a minimal state file.

The edit keeps every other byte of `state.json`: only the JSON values of `activeMmdFile` and
`activeMmdId` (`active_mmd_file` / `active_mmd_id` in the Go variant) are replaced in the text.
When a key is missing, the file is re-serialised in its own style (indentation, key order,
trailing newline or not). `mmdCounter` is never touched, so it is never lowered. The block the
agent is shown is built by `canvases.mermaid.agent_view.injected_block` (`resume_block` here is
its alias for the callers of the old preview).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from agentfs import json_text
from agentfs.atomic import (
    PreconditionFailed,
    lock_folder,
    prepare_write,
    sha256_bytes,
    write_atomic,
)
from agentfs.layout import CANVAS_DIR, NUMBER_PREFIX, STATE_FILE
from agentfs.paths import read_regular

CANVAS_BUDGET_CHARS = 4000

_CAMEL_KEYS = ("activeMmdFile", "activeMmdId")
_SNAKE_KEYS = ("active_mmd_file", "active_mmd_id")
_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0002fa1f]"
)


def canvas_label(mmd_file: str) -> str:
    """`002-migrate-orders-api.mmd` → `migrate-orders-api` (what the plugin stores as the id)."""
    name = mmd_file[: -len(".mmd")] if mmd_file.endswith(".mmd") else mmd_file
    return NUMBER_PREFIX.sub("", name)


def set_active_canvas(state_path: Path, mmd_file: str, *, expect_hash: str | None = None) -> str:
    """Make `mmd_file` (a bare name inside the sibling `mmds/`) the active canvas; returns the hash.

    Raises ValueError for a name that is not a bare existing `.mmd` file, or for a `state.json`
    the plugin could not read (it would reset it to defaults); `PreconditionFailed` when the file
    changed since `expect_hash` was taken. Nothing is written in any of those cases.
    """
    state_path = Path(state_path)
    _check_canvas_name(state_path.parent / CANVAS_DIR, mmd_file)
    raw = read_regular(state_path, folders=1)  # no link, FIFO or device; bounded
    if expect_hash is not None and sha256_bytes(raw) != expect_hash:
        raise PreconditionFailed(state_path, expect_hash, sha256_bytes(raw))
    text = _decode_state(raw)
    state = json_text.loads(text)
    file_key, id_key = _SNAKE_KEYS if _is_snake(state) else _CAMEL_KEYS
    values = {file_key: mmd_file, id_key: canvas_label(mmd_file)}
    new_text = _replace_values(text, values)
    if new_text is None:
        new_text = _reserialise(text, state | values)
    return write_atomic(state_path, new_text.encode("utf-8"), expect_hash=sha256_bytes(raw))


def _check_canvas_name(mmds: Path, mmd_file: str) -> None:
    if (
        not isinstance(mmd_file, str)
        or not mmd_file
        or "/" in mmd_file
        or "\\" in mmd_file
        or "\x00" in mmd_file
        or mmd_file.startswith(".")
        or not mmd_file.endswith(".mmd")
    ):
        raise ValueError(f"{mmd_file!r} is not a bare .mmd file name inside mmds/")
    candidate = mmds / mmd_file
    if candidate.is_symlink() or not candidate.is_file():
        raise ValueError(f"mmds/{mmd_file} does not exist; the agent would get no canvas")


def _decode_state(raw: bytes) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError("state.json starts with a BOM; the plugin would reset it to defaults")
    try:
        text = raw.decode("utf-8")
        state = json_text.loads(text)
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"state.json is not valid JSON ({error}); nothing was written") from None
    if not isinstance(state, dict):
        raise ValueError("state.json is not a JSON object; nothing was written")
    return text


def _is_snake(state: dict) -> bool:
    if any(key in state for key in _CAMEL_KEYS):
        return False
    return any(key in state for key in (*_SNAKE_KEYS, "mmd_counter", "last_session_key"))


def _replace_values(text: str, values: Mapping[str, object]) -> str | None:
    """Swap the value text of each top-level key; None when a key is missing (or duplicated)."""
    try:
        spans = _top_level_value_spans(text)
    except (ValueError, IndexError):
        return None
    found = {key: [span for name, span in spans if name == key] for key in values}
    if any(len(places) != 1 for places in found.values()):
        return None
    edits = sorted(((found[key][0], value) for key, value in values.items()), reverse=True)
    for (start, end), value in edits:
        text = text[:start] + json_text.dumps(value, ensure_ascii=False) + text[end:]
    return text


def _top_level_value_spans(text: str) -> list[tuple[str, tuple[int, int]]]:
    decoder = json.JSONDecoder()
    spans = []
    index = _skip_space(text, 0)
    if text[index] != "{":
        raise ValueError("not an object")
    index = _skip_space(text, index + 1)
    while text[index] != "}":
        key, index = json.decoder.scanstring(text, index + 1)  # type: ignore[attr-defined]
        index = _skip_space(text, index)
        index = _skip_space(text, index + 1)  # the colon
        _, end = decoder.raw_decode(text, index)
        spans.append((key, (index, end)))
        index = _skip_space(text, end)
        if text[index] == ",":
            index = _skip_space(text, index + 1)
    return spans


def _skip_space(text: str, index: int) -> int:
    while text[index] in " \t\r\n":
        index += 1
    return index


def _reserialise(text: str, state: dict) -> str:
    """Write `state` the way this file was written: its indent, ASCII escaping and final newline."""
    indent_match = re.search(r"\n([ \t]+)\"", text)
    indent: str | int | None = indent_match.group(1) if indent_match else None
    if isinstance(indent, str) and set(indent) == {" "}:
        indent = len(indent)
    ascii_only = bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii()
    # Only when the byte-exact swap failed; a number kept as text (out of range) must not turn
    # into a string, so such a state is refused (ValueError, nothing written).
    json_text.loads(text, keep_text=False)
    body = json_text.dumps(state, ensure_ascii=ascii_only, indent=indent)
    return body + ("\n" if text.endswith("\n") else "")


def estimate_tokens(text: str) -> int:
    """A rough token count for the preview: each CJK character ≈ 1 token, other text ≈ 4 chars.

    Tokenisers differ; this matches common BPE behaviour closely enough to compare a canvas with
    the plugin's budget, which is stated in characters anyway.
    """
    cjk = len(_CJK.findall(text))
    other = len(text) - cjk
    return cjk + (other + 3) // 4


def resume_block(
    agent_name: str, mmd_file: str, mmd_text: str, task_goal: str | None = None
) -> str:
    """The `<current_task_context>` block the plugin injects for `mmd_file`, byte for byte.

    A thin alias of `canvases.mermaid.agent_view.injected_block`, the one builder of the block:
    the goal comes from the file by the agent's own rule, so `task_goal` is ignored, and
    `agent_name` is not part of the block (the plugin never names the folder). An empty file
    gets no block (""), as the plugin injects nothing for it.
    """
    from canvases.mermaid.agent_view import injected_block

    return injected_block(mmd_file, mmd_text) or ""


def create_minimal_state(agent_dir: Path, mmd_file: str) -> str:
    """Create `state.json` naming `mmd_file` as active, for an agent folder that has none.

    The plugin loads defaults and merges whatever file exists over them (format spec §4.8.7), so
    `{"activeMmdFile": …, "activeMmdId": …}` is enough; it is written as the plugin writes state
    (2-space JSON, no trailing newline). The file appears whole or not at all (a fsynced temp
    hard-linked into place), and never over an existing one: `FileExistsError` when the agent
    (or anyone) created it first. Returns the new file's hash.
    """
    agent_dir = Path(agent_dir)
    _check_canvas_name(agent_dir / CANVAS_DIR, mmd_file)
    path = agent_dir / STATE_FILE
    state = {"activeMmdFile": mmd_file, "activeMmdId": canvas_label(mmd_file)}
    data = json_text.dumps(state, ensure_ascii=False, indent=2).encode("utf-8")
    with lock_folder(agent_dir):
        prepare_write(path, data, create=True).commit()
    return sha256_bytes(data)


def state_name_active(path: Path, mmd_file: str) -> str:
    """Name `mmd_file` active in state.json; an agent folder without one gets a minimal one.

    The agent loads defaults and merges whatever state file exists over them (spec §4.8.7).
    """
    if not path.exists():
        try:
            return create_minimal_state(path.parent, mmd_file)
        except FileExistsError:
            pass  # the agent wrote one meanwhile: edit that
    return set_active_canvas(path, mmd_file)
