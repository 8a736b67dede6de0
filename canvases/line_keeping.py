"""Keeping every line where it was while the agent's map-builder has a reply in flight.

The map-builder splices its replace blocks into the file by line number as it is when the reply
arrives (spec §4.6, §4.8.8, §7 hazard 3). An edit that removes a line above the lines a block
targets makes the block land one line off: an edge replaced by a duplicate node definition, and a
block past the end skipped. So while a reply is in flight a human edit keeps every line number:
a line it removes becomes a placeholder comment (mermaid and the agent's readers ignore `%%`
lines; it holds no id-like token), and the placeholders are compacted away by the next edit made
when no reply is in flight. An edit that must insert a line above others (an edge in the middle
of the file, a new metadata line) cannot keep the numbers and is refused until the reply landed.
"""

from __future__ import annotations

from difflib import SequenceMatcher

PLACEHOLDER = "%% memviz: line kept in place while the map-builder was mid-flight"


def _body(text: str) -> tuple[list[str], str]:
    if text.endswith("\n"):
        return text[:-1].split("\n"), "\n"
    return text.split("\n"), ""


def keep_line_numbers(before: str, after: str) -> str | None:
    """`after` with each line of `before` at its number (removed ones as placeholders), or
    None when `after` inserts a line above a line of `before`."""
    old, _ = _body(before)
    new, end = _body(after)
    out: list[str] = []
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += new[j1:j2]
            continue
        added, removed = j2 - j1, i2 - i1
        if added > removed and i2 < len(old):
            return None  # would push the lines below it down
        out += new[j1:j2] + [PLACEHOLDER] * max(removed - added, 0)
    return "\n".join(out) + end


def compact(text: str) -> str:
    """`text` without the placeholder lines (once no reply is in flight)."""
    lines, end = _body(text)
    kept = [line for line in lines if line.strip() != PLACEHOLDER]
    return text if len(kept) == len(lines) else "\n".join(kept) + end
