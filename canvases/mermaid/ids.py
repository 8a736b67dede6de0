"""Node ids: the file's prefix form and the next id, never reusing one that was removed."""

from __future__ import annotations

import re
from collections.abc import Iterable

N_ID = re.compile(r"(?<![\w-])((?:[\w-]*?-)?N)(\d+)\b")
THREE_DIGITS = re.compile(r"\d{3}-N")


def next_node_id(text: str, removed: Iterable[str] = ()) -> str:
    """`<prefix>N<k+1>` where k is the highest N-number anywhere in the text or in `removed`."""
    prefixes: dict[str, int] = {}
    highest = 0
    for source in (text, " ".join(removed)):
        for match in N_ID.finditer(source):
            prefix, number = match.group(1), int(match.group(2))
            prefixes[prefix] = prefixes.get(prefix, 0) + 1
            highest = max(highest, number)
    if not prefixes:
        return "N1"
    # the file's own `NNN-` prefix wins over `N`, `label-N` and `n_NNN-N` forms (rule 3, §4.7)
    prefix = max(prefixes, key=lambda p: (THREE_DIGITS.fullmatch(p) is not None, prefixes[p]))
    return f"{prefix}{highest + 1}"
