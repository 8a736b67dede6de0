"""One-line files full of literal `\\n` (an LLM reply that was not JSON): detect, repair."""

from __future__ import annotations

import json
import re

HEADER_WORD = re.compile(r"(?:flowchart|graph)(?:[ \t]+(?:TB|TD|BT|RL|LR))?", re.IGNORECASE)
START_LINE = re.compile(r"[ \t]*(?:%%\{|%\{|%%|flowchart\b|graph\b)", re.IGNORECASE)
FENCE_LINE = re.compile(r"[ \t]*```")


def looks_escaped_oneliner(text: str) -> bool:
    """One physical line (maybe two) holding a whole flowchart with literal `\\n` separators."""
    if "\\n" not in text:
        return False
    body = text.strip()
    if body.count("\n") > 1 or body.count("\\n") < 2:
        return False
    return HEADER_WORD.search(body) is not None


def repair_text(text: str) -> str | None:
    """The canvas the one-liner stands for, one statement per line; None when it is not one."""
    if not looks_escaped_oneliner(text):
        return None
    body = text.strip()
    unescaped = _json_unescape(body)
    lines = unescaped.replace("\r\n", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if START_LINE.match(line)), None)
    if first is None:
        return None
    lines = lines[first:]
    # the LLM reply may continue after the diagram: a closing fence or the rest of a JSON object
    for index, line in enumerate(lines):
        if index and FENCE_LINE.match(line):
            lines = lines[:index]
            break
    header_at = next((i for i, line in enumerate(lines) if HEADER_WORD.match(line.strip())), None)
    if header_at is None:
        return None
    return "\n".join(line.rstrip() for line in lines).strip("\n") + "\n"


def _json_unescape(body: str) -> str:
    """Undo one level of JSON string escaping; labels keep no raw `"` inside (they get `#quot;`)."""
    candidate = body
    if candidate.startswith("{") and '"' in candidate:
        inner = re.search(r':\s*"(.*)"\s*}\s*$', candidate, re.DOTALL)
        if inner:
            candidate = inner.group(1)
    elif candidate.startswith('"') and candidate.endswith('"'):
        candidate = candidate[1:-1]
    try:
        decoded = json.loads('"' + candidate + '"')
        if isinstance(decoded, str):
            return _fix_inner_quotes(decoded)
    except ValueError:
        pass
    decoded = candidate.replace("\\\\", "\x00").replace("\\n", "\n").replace("\\t", "\t")
    decoded = decoded.replace('\\"', '"')
    return _fix_inner_quotes(decoded.replace("\x00", "\\"))


def _fix_inner_quotes(text: str) -> str:
    """`\\"` left inside a label after unescaping becomes `#quot;`."""
    return text.replace('\\"', "#quot;")
