"""Format spec §4.8 (with the patterns of §4.2/§4.5) written from the spec alone.

Nothing here imports memviz: the conformance tests hold the app's `agent_view` against these
functions. They are written differently on purpose (hand-written scanners instead of the app's
regexes) so that one mistake cannot hide in both.
"""

from __future__ import annotations

import json

# JS `\s` / String.prototype.trim: WhiteSpace and LineTerminator code points.
JS_SPACE = set("\t\n\x0b\x0c\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)
}
LINE_TERMINATORS = set("\n\r\u2028\u2029")
ASCII_WORD = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
DIGITS = set("0123456789")

# §4.8.1, copied from the spec's template (test_reference_matches_spec checks them against it).
OPEN = "<current_task_context>"
PREAMBLE = "【当前活跃任务的mermaid流程图】这是你最近正在执行的任务的阶段性记录（此条下方的tool use未被汇总，进程可能有延迟，仅供参考）。"
GOAL = "**任务目标:** "
FILE = "**任务文件:** "
NODE_INDEX = "**节点索引:** 可通过 node_id 在 offload.{sessionid}.jsonl 中查找对应的工具调用记录。如需查看某个节点对应的原始工具调用与完整结果，请在 offload.{sessionid}.jsonl 中找到对应条目的 result_ref 并读取该文件。"
REMINDER = '标记为 "doing" 的节点是近期焦点（注：可能有延迟，下方的tool use未被统计，仅供参考），"done" 的已完成。请参考此保持方向感，避免重复已完成的工作。'
CLOSE = "</current_task_context>"


def meta_inside(text: str) -> str | None:
    """§4.2: `^%%\\{\\s*(.*?)\\s*\\}%%` on the whole file; the captured text, or None."""
    if not text.startswith("%%{"):
        return None
    start = 3
    while start < len(text) and text[start] in JS_SPACE:
        start += 1
    end = start
    while True:  # the shortest capture (no line terminator) followed by spaces and `}%%`
        after = end
        while after < len(text) and text[after] in JS_SPACE:
            after += 1
        if text.startswith("}%%", after):
            return text[start:end]
        if end >= len(text) or text[end] in LINE_TERMINATORS:
            return None
        end += 1


def meta_object(text: str) -> dict | None:
    """The object JSON.parse makes of `{` + capture + `}`, or None when it throws."""
    inside = meta_inside(text)
    if inside is None:
        return None

    def no_constants(name: str) -> object:
        raise ValueError(name)

    try:
        value = json.loads("{" + inside + "}", parse_constant=no_constants)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def goal(text: str) -> str | None:
    """§4.8.1: the goal line's text (`taskGoal || ""`, then `${taskGoal}`), or None for no line."""
    meta = meta_object(text)
    if meta is None:
        return None
    value = meta.get("taskGoal")
    if value in (None, False, "", 0):
        return None
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return str(int(value))
    if isinstance(value, list):
        return ",".join("" if v is None else str(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    raise NotImplementedError(f"the reference does not format {value!r}")


def strict_line_one(text: str) -> bool:
    """§4.7 rule 8 / §4.8.4 as memviz writes it: the agent reads the header from line 1 alone."""
    return meta_object(text.split("\n", 1)[0]) is not None


def _word(text: str, at: int) -> bool:
    return 0 <= at < len(text) and text[at] in ASCII_WORD


def _digit_run_end(text: str, at: int) -> int:
    while at < len(text) and text[at] in DIGITS:
        at += 1
    return at


def index_ids(text: str) -> list[str]:
    """§4.5 `\\b(\\d+-N\\d+|N\\d+)\\b` (JS, ASCII): an `N` + digits standing alone as a word."""
    found = []
    at = text.find("N")
    while at >= 0:
        end = _digit_run_end(text, at + 1)
        if end > at + 1 and not _word(text, at - 1) and not _word(text, end):
            start = at
            if at >= 2 and text[at - 1] == "-" and text[at - 2] in DIGITS:
                first = at - 2
                while first > 0 and text[first - 1] in DIGITS:
                    first -= 1
                if not _word(text, first - 1):
                    start = first
            found.append(text[start:end])
        at = text.find("N", at + 1)
    return found


def map_ids(text: str) -> list[str]:
    """§4.5/§4.8.2 `\\b(\\d{3}-N\\d+)\\b`: three digits standing alone, `-N`, digits."""
    found = []
    at = text.find("-N")
    while at >= 0:
        end = _digit_run_end(text, at + 2)
        first = at - 3
        if (
            end > at + 2
            and first >= 0
            and all(c in DIGITS for c in text[first:at])
            and not _word(text, first - 1)
            and not _word(text, end)
        ):
            found.append(text[first:end])
        at = text.find("-N", at + 1)
    return found


def fallback(text: str, prefix: str) -> str | None:
    """§4.8.2: the highest-numbered map id anywhere, preferring the file's own prefix."""
    ids = list(dict.fromkeys(map_ids(text)))
    own = [i for i in ids if i.startswith(prefix + "-")]
    pool = own or ids
    return max(pool, key=lambda i: (int(i.split("-N")[1]), -pool.index(i)), default=None)


def empty_shell(text: str) -> bool:
    """§4.8.4: trimmed text without `%%{` and with at most 3 non-empty lines."""
    trimmed = text.strip("".join(JS_SPACE))
    if not text or "%%{" in trimmed:
        return False
    return len([line for line in trimmed.split("\n") if line.strip("".join(JS_SPACE))]) <= 3


def fingerprint(text: str) -> tuple[int, str]:
    """§4.8.6: length and first 64 characters, counted as JS counts (UTF-16 units)."""
    units = text.encode("utf-16-le", "surrogatepass")
    return len(units) // 2, units[:128].decode("utf-16-le", "surrogatepass")


def block(active_file: str, text: str) -> str | None:
    """§4.8.1: the injected block, the optional lines left out when they do not apply."""
    if text == "":
        return None  # readMmd gives "" and the injector returns null: nothing is injected
    lines = [OPEN, PREAMBLE]
    task_goal = goal(text)
    if task_goal is not None:
        lines.append(GOAL + task_goal)
    lines.append(FILE + active_file)
    if index_ids(text):
        lines.append(NODE_INDEX)
    lines += ["```mermaid", text, "```", REMINDER, CLOSE]
    return "\n".join(lines)


def patch_mmd(text: str, blocks: list[tuple[int, int, str]]) -> str:
    """§4.6 / §4.8.8: the map-builder's replace mode, `(start, end, content)` 1-based inclusive
    (`end < start` inserts before), applied bottom-up to the file as it is when the reply arrives;
    a block whose start is out of range is skipped."""
    lines = text.split("\n")
    for start, end, content in sorted(blocks, key=lambda b: -b[0]):
        if start < 1 or start > len(lines) + 1:
            continue
        new = content.split("\n") if content else []
        if end < start:
            lines[start - 1 : start - 1] = new
        else:
            lines[start - 1 : min(end, len(lines))] = new
    return "\n".join(lines)
