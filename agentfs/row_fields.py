"""How row fields are read across the variants: node id aliases, the `offloaded` flag as text."""

from __future__ import annotations

GO_DRAWN_PREFIX = "n_"  # the Go port draws `n_001-N1` for rows that say `001-N1` (spec §2)
# The node_id the map-builder (L2) claims a row with until its reply places it (spec §4.6):
# such a row is on no canvas, and a recent one means a reply may still land.
WAIT = "wait"


def is_wait(node_id: object) -> bool:
    return node_id == WAIT


def drawn_as(node_id: str) -> list[str]:
    """The canvas node ids that place a row saying ``node_id``: itself and the Go port's form."""
    return [node_id, f"{GO_DRAWN_PREFIX}{node_id}"]


def row_spelling(canvas_node_id: str) -> str:
    """A canvas node id as the rows spell it (the Go port's prefix taken off)."""
    return canvas_node_id.removeprefix(GO_DRAWN_PREFIX)


def drawn_as_sql(column: str) -> str:
    """SQL of ``drawn_as``: the list of canvas node ids that place the row in ``column``."""
    return f"({column}, '{GO_DRAWN_PREFIX}' || {column})"


# SQL literal of WAIT (a partial index's condition must see the value, not a parameter).
WAIT_SQL = f"'{WAIT}'"


def node_aliases(node_id: str) -> list[str]:
    """Row `node_id` values that mean this canvas node."""
    if node_id.startswith(GO_DRAWN_PREFIX):
        return [node_id, node_id[len(GO_DRAWN_PREFIX) :]]
    return [node_id]


def alias_map(id_map: dict[str, str]) -> dict[str, str]:
    """A node id map (merge: removed → kept) extended to the rows' spelling of Go-port ids."""
    out = dict(id_map)
    for old, new in id_map.items():
        if old.startswith(GO_DRAWN_PREFIX) and new.startswith(GO_DRAWN_PREFIX):
            out[old[len(GO_DRAWN_PREFIX) :]] = new[len(GO_DRAWN_PREFIX) :]
    return out


def aliases_of_all(node_ids: set[str] | list[str]) -> set[str]:
    return {alias for node_id in node_ids for alias in node_aliases(node_id)}


def offloaded_text(value: object) -> str:
    """The index's text for a row's `offloaded` (absent/false → "", true → "true")."""
    if value is None or value is False:
        return ""
    if value is True:
        return "true"
    return str(value)[:20]
