"""A branch of a canvas: its file name (the next free `NNN-`) and its text under that number.

A branch is a new canvas file of the agent holding another canvas's text of some moment. Its
node ids take the new file's prefix (`002-N3` → `005-N3`, format spec §4.7 rule 3): the agent
gives the map-builder the file's own prefix, its fallback prefers ids of that prefix (§4.8.2),
and history injection picks canvases by the rows' prefix (§4.5) — with the old ids, the rows
the agent maps on the branch would land on the original canvas too. Line 1 is written as the
strict JSON header the agent reads (§4.8.1, §4.8.4), every value kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentfs.layout import NUMBER_PREFIX

from .header import write_header
from .id_statements import id_statement_text
from .parser import parse
from .patch import Patch
from .wording import Note

ID_WITH_PREFIX = re.compile(r"^(n_)?(\d+)-(N\d+)$")
LABEL_MAX = 40  # the plugin asks for ≤ 30 kebab-case characters; a suffix leaves room
UNSAFE_LABEL = re.compile(r"[^\w\-]+")  # \w: letters of any script, digits, underscore


@dataclass
class BranchText:
    text: str
    id_map: dict[str, str] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)


def file_number(filename: str) -> int | None:
    """The `NNN` of `NNN-label.mmd` (the plugin's `^(\\d+)-`), else None."""
    match = NUMBER_PREFIX.match(filename)
    return int(match.group(1)) if match else None


def next_free_number(
    names_on_disk: Iterable[str], counter: int | None = None, used: Iterable[int] = ()
) -> int:
    """One above every number in use: on disk, the agent's `mmdCounter`, and `used`.

    Gaps are not filled: a gap is usually a canvas the agent deleted (an empty shell, the
    reclaimer), whose rows still carry its `NNN-N<k>` ids; a new file under that number would
    take those rows over. The agent itself picks `max(counter, highest on disk) + 1` (spec §5),
    so it never collides with a number taken this way either.
    """
    numbers = [n for n in (file_number(name) for name in names_on_disk) if n is not None]
    numbers += [n for n in used if n is not None]
    if counter is not None:
        numbers.append(counter)
    return max(numbers, default=0) + 1


def clean_label(label: str) -> str:
    """A label safe as a file name: letters (any script), digits, `-` and `_`; at most 40."""
    text = unicodedata.normalize("NFC", label).strip().lower()
    text = UNSAFE_LABEL.sub("-", text).strip("-_")
    text = re.sub(r"-{2,}", "-", text)
    return text[:LABEL_MAX].strip("-_")


def branch_file_name(number: int, label: str) -> str:
    """`NNN-label.mmd`, the number zero-padded to three digits as the plugin writes it."""
    cleaned = clean_label(label) or "branch"
    return f"{number:03d}-{cleaned}.mmd"


def default_label(source_file: str, revision: int | None) -> str:
    """`002-migrate-orders-api.mmd`, r7 → `migrate-orders-api-r7` (else `…-branch`)."""
    stem = source_file[: -len(".mmd")] if source_file.endswith(".mmd") else source_file
    stem = NUMBER_PREFIX.sub("", stem)
    suffix = f"-r{revision}" if revision is not None else "-branch"
    return clean_label(stem)[: LABEL_MAX - len(suffix)].strip("-_") + suffix


def branch_ids(node_ids: Iterable[str], source_number: int | None, number: int) -> dict[str, str]:
    """Ids of the source file's own prefix (`002-N3`, the Go port's `n_002-N3`) → the new one."""
    out: dict[str, str] = {}
    for node_id in node_ids:
        match = ID_WITH_PREFIX.match(node_id)
        if match and source_number is not None and int(match.group(2)) == source_number:
            out[node_id] = f"{match.group(1) or ''}{number:03d}-{match.group(3)}"
    return out


def branch_text(text: str, *, source_file: str, number: int) -> BranchText:
    """`text` as the branch file `number` holds it: ids renamed, strict line 1, all else kept."""
    doc = parse(text)
    rename = branch_ids(doc.nodes, file_number(source_file), number)
    clashes = sorted(set(rename.values()) & (set(doc.nodes) - set(rename)))
    if clashes:
        raise ValueError(
            f"the canvas already has nodes named {', '.join(clashes)}; their rows would merge"
        )
    patch = Patch(doc)
    for old, new in rename.items():
        for ref in doc.nodes[old].refs:
            patch.replace(ref.start, ref.id_end, new)
    for statement in doc.statements:
        if statement.kind in ("class", "style", "click") and set(statement.ids) & set(rename):
            ids = [rename.get(i, i) for i in statement.ids]
            patch.replace_statement(statement, [id_statement_text(statement, ids)])
    notes = write_header(patch, doc)
    return BranchText(text=patch.apply(), id_map=rename, notes=notes)
