"""How the agent plugin reads a canvas (format spec §4.5, §4.8): the one emulation in memviz.

Every pattern here is the plugin's, in JavaScript semantics (`\\d`, `\\w`, `\\b` ASCII; `\\s`,
`.` and `trim` as in JS; JSON.parse; String()), checked against `mmd-injector.ts`,
`mmd-meta.ts`, `l2-mermaid.ts` and `before-agent-start.ts`. Nothing here knows Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .human_text import ID_TOKEN
from .js_semantics import (
    JS_DOT,
    JS_WS_CLASS,
    js_json_parse,
    js_string,
    js_trim,
    js_truthy,
    utf16_length,
    utf16_slice,
)
from .model import Problem
from .tokens import token_count
from .wording import Words

# `content.match(/^%%\{\s*(.*?)\s*\}%%/)`: no `m` flag, so `^` is byte 0 of the file.
META = re.compile(rf"%%\{{{JS_WS_CLASS}*({JS_DOT}*?){JS_WS_CLASS}*\}}%%")
MAP_ID = re.compile(r"\b(\d{3}-N\d+)\b", re.ASCII)  # the map-builder's fallback pattern
MAP_ID_PARTS = re.compile(r"(\d{3})-N(\d+)", re.ASCII)
FILE_PREFIX = re.compile(r"(\d+)-")
# L1.5 (`mmd-meta.ts`); `i` flag without `u`: ASCII-only case folding, as re.ASCII gives.
L15_NODE = re.compile(r'(\d{3}-N\d+)\["([^"]*?)"\]', re.ASCII)
L15_SUMMARY = re.compile(rf"summary:{JS_WS_CLASS}*({JS_DOT}+?)(?:<br/>|\Z)", re.ASCII | re.I)
L15_STATUS = re.compile(rf"status:{JS_WS_CLASS}*([A-Za-z0-9_]+)", re.ASCII | re.I)
L15_COUNTS = {
    word: re.compile(rf"status:{JS_WS_CLASS}*{word}", re.ASCII | re.I)
    for word in ("done", "doing", "todo")
}
COMMENT_META = re.compile(r"[ \t]*%%[ \t]*(taskGoal|task_goal|goal)[ \t]*[:：]", re.I | re.M)

# The block's fixed lines, verbatim from `mmd-injector.ts` (format spec §4.8.1).
BLOCK_OPEN = "<current_task_context>"
BLOCK_PREAMBLE = (
    "【当前活跃任务的mermaid流程图】这是你最近正在执行的任务的阶段性记录"
    "（此条下方的tool use未被汇总，进程可能有延迟，仅供参考）。"
)
BLOCK_GOAL = "**任务目标:** "
BLOCK_FILE = "**任务文件:** "
BLOCK_NODE_INDEX = (
    "**节点索引:** 可通过 node_id 在 offload.{sessionid}.jsonl 中查找对应的工具调用记录。"
    "如需查看某个节点对应的原始工具调用与完整结果，请在 offload.{sessionid}.jsonl 中找到对应条目的 "
    "result_ref 并读取该文件。"
)
BLOCK_REMINDER = (
    '标记为 "doing" 的节点是近期焦点（注：可能有延迟，下方的tool use未被统计，仅供参考），'
    '"done" 的已完成。请参考此保持方向感，避免重复已完成的工作。'
)
BLOCK_CLOSE = "</current_task_context>"


@dataclass(frozen=True, slots=True)
class AgentMeta:
    """The metadata as the agent reads it from the file's first bytes."""

    readable: bool  # `^%%{…}%%` matched and its inside parsed as a JSON object
    on_line_one: bool  # readable, and the match lies within line 1 (the form memviz writes)
    values: dict[str, object] = field(default_factory=dict)
    task_goal: str | None = None  # the goal line's text; None: the block has no goal line
    problem: Words | None = None  # why the agent reads no metadata (None when it does)

    @property
    def strict(self) -> bool:
        return self.on_line_one


@dataclass(frozen=True, slots=True)
class BlockPreview:
    """The injected block and its size, as the plugin builds and counts it."""

    text: str
    chars: int  # code points
    js_length: int  # UTF-16 units: the plugin's `.length`
    tokens: int  # cl100k_base, the plugin's `mmdTokens`
    task_goal: str | None
    node_index: bool


@dataclass(frozen=True, slots=True)
class L15View:
    """What the task judgment (L1.5) reads of a canvas (`parseMmdMeta`)."""

    task_goal: str
    created: str | None
    updated: str | None
    counts: dict[str, int]
    last_summaries: list[tuple[str, str, str]]  # (node id, status word, summary ≤ 100)


def read_meta(text: str) -> AgentMeta:
    """Line-1 metadata by the plugin's rule: `^%%\\{\\s*(.*?)\\s*\\}%%`, `{…}`, JSON.parse."""
    match = META.match(text)
    if match is None:
        return AgentMeta(False, False, problem=_unreadable_reason(text))
    try:
        values = js_json_parse("{" + match.group(1) + "}")
    except (ValueError, RecursionError):
        values = None
    if not isinstance(values, dict):
        return AgentMeta(False, False, problem=Words("meta_not_strict"))
    goal = values.get("taskGoal")
    on_line_one = "\n" not in text[: match.end()]
    return AgentMeta(True, on_line_one, values, js_string(goal) if js_truthy(goal) else None)


def _unreadable_reason(text: str) -> Words:
    if text.startswith("\ufeff"):
        return Words("meta_bom_first")
    if text.startswith("%%{"):
        return Words("meta_unclosed")
    if text.startswith("%{"):
        return Words("meta_single_percent")
    if COMMENT_META.search(text):
        return Words("meta_comment_lines")
    if "%%{" in text:
        return Words("meta_not_at_start")
    return Words("meta_none")


def task_goal(text: str) -> str | None:
    return read_meta(text).task_goal


def node_index_shown(text: str) -> bool:
    """The node-index line appears when `\\b(\\d+-N\\d+|N\\d+)\\b` matches anywhere in the file."""
    return ID_TOKEN.search(text) is not None


def injected_block(active_file: str, text: str) -> str | None:
    """The `<current_task_context>` message, byte for byte; None for an empty file (no block)."""
    if not text:
        return None
    goal = read_meta(text).task_goal
    lines = [BLOCK_OPEN, BLOCK_PREAMBLE]
    if goal is not None:
        lines.append(BLOCK_GOAL + goal)
    lines.append(BLOCK_FILE + active_file)
    if node_index_shown(text):
        lines.append(BLOCK_NODE_INDEX)
    lines += ["```mermaid", text, "```", BLOCK_REMINDER, BLOCK_CLOSE]
    return "\n".join(lines)


def block_preview(active_file: str, text: str) -> BlockPreview | None:
    block = injected_block(active_file, text)
    if block is None:
        return None
    return BlockPreview(
        text=block,
        chars=len(block),
        js_length=utf16_length(block),
        tokens=token_count(block),
        task_goal=read_meta(text).task_goal,
        node_index=node_index_shown(text),
    )


def map_prefix(mmd_file: str) -> str:
    """The prefix the map-builder is given for a file: its leading digits, else "000"."""
    match = FILE_PREFIX.match(mmd_file)
    return match.group(1) if match else "000"


def fallback_node(text: str, prefix: str = "000") -> str | None:
    """The node the map-builder gives unmapped rows in its fallback (§4.8.2).

    The highest-numbered `\\b\\d{3}-N\\d+\\b` token anywhere in the file, among those with the
    file's own prefix when there are any (and the prefix is three digits); ties: the first seen.
    """
    ids = list(dict.fromkeys(MAP_ID.findall(text)))
    if not ids:
        return None
    own = [i for i in ids if i.startswith(prefix + "-")] if re.fullmatch(r"\d{3}", prefix) else []
    best, best_n = None, -1.0
    for node_id in own or ids:
        parts = MAP_ID_PARTS.fullmatch(node_id)
        if parts is None:
            continue
        number = float(parts.group(2))  # JS Number(): a double; Infinity is skipped
        if number != float("inf") and number > best_n:
            best, best_n = node_id, number
    return best


def is_empty_shell(text: str) -> bool:
    """The agent deletes the previous active file on a task switch when this holds (§4.8.4)."""
    if not text:
        return False
    trimmed = js_trim(text)
    if "%%{" in trimmed:
        return False
    return sum(1 for line in trimmed.split("\n") if js_trim(line)) <= 3


def fingerprint(text: str) -> str:
    """The change detector between tool calls: length and the first 64 characters (§4.8.6)."""
    return f"{utf16_length(text)}:{utf16_slice(text, 64)}"


def visible_at_next_tool_call(before: str, after: str) -> bool:
    """Whether a running agent re-injects the canvas after its next tool call (else: next prompt)."""
    return fingerprint(before) != fingerprint(after)


def l15_view(text: str) -> L15View:
    meta = read_meta(text).values
    goal = meta.get("taskGoal")
    created, updated = meta.get("createdTime"), meta.get("updatedTime")
    summaries = []
    for node_id, label in L15_NODE.findall(text):
        summary = L15_SUMMARY.search(label)
        if summary is None:
            continue
        status = L15_STATUS.search(label)
        text_100 = utf16_slice(js_trim(summary.group(1)), 100)
        summaries.append((node_id, status.group(1) if status else "unknown", text_100))
    return L15View(
        task_goal=js_string(goal) if js_truthy(goal) else "",
        created=js_string(created) if js_truthy(created) else None,
        updated=js_string(updated) if js_truthy(updated) else None,
        counts={word: len(regex.findall(text)) for word, regex in L15_COUNTS.items()},
        last_summaries=summaries[-2:],
    )


def agent_warnings(text: str) -> list[Problem]:
    """What a person should know about how the agent will treat this canvas (lint warnings)."""
    problems = []
    meta = read_meta(text)
    if not meta.readable or meta.task_goal is None:
        reason = meta.problem or Words("goal_empty")
        problems.append(Problem(1, 1, "no_goal", "warning", {"reason": reason}))
    elif not meta.on_line_one:
        problems.append(Problem(1, 1, "meta_spans_lines", "warning"))
    if is_empty_shell(text):
        problems.append(Problem(1, 1, "empty_shell", "warning"))
    return problems
