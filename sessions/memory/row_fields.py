"""How row fields are read across the variants: node id aliases, the `offloaded` flag as text."""

from __future__ import annotations

GO_DRAWN_PREFIX = "n_"  # the Go port draws `n_001-N1` for rows that say `001-N1` (spec §2)


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
