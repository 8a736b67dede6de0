"""`class`, `style` and `click` lines follow their nodes through prunes, merges and statuses."""

from __future__ import annotations

from .label_edits import unique
from .model import STATUS_VOCABULARY, Canvas, Statement
from .patch import Patch


def id_statement_text(statement: Statement, ids: list[str]) -> str:
    if statement.kind == "class":
        return f"class {','.join(ids)} {statement.name}"
    return f"{statement.kind} {ids[0]} {statement.name}".rstrip()


def drop_from_id_statement(patch: Patch, statement: Statement, node_id: str) -> None:
    rest = [i for i in statement.ids if i != node_id]
    if rest and statement.kind == "class":
        patch.replace_statement(statement, [id_statement_text(statement, rest)])
    else:
        patch.remove_statement(statement)


def rename_in_id_statement(
    patch: Patch, doc: Canvas, statement: Statement, rename: dict[str, str], keep: str
) -> None:
    ids = unique(rename.get(i, i) for i in statement.ids)
    duplicate = any(
        other is not statement
        and other.kind == statement.kind
        and keep in other.ids
        and (statement.kind != "class" or other.name == statement.name)
        and not set(other.ids) & set(rename)
        for other in doc.statements
    )
    if duplicate:
        ids = [i for i in ids if i != keep]
    if not ids:
        patch.remove_statement(statement)
    else:
        patch.replace_statement(statement, [id_statement_text(statement, ids)])


def sync_status_class(patch: Patch, doc: Canvas, node_id: str, status: str) -> None:
    """`class <id> <status>` lines follow the node's status so the file's own styling agrees."""
    for statement in doc.statements:
        if statement.kind != "class" or statement.name not in STATUS_VOCABULARY:
            continue
        if node_id not in statement.ids or statement.name == status:
            continue
        rest = [i for i in statement.ids if i != node_id]
        lines = [id_statement_text(statement, rest)] if rest else []
        if status in STATUS_VOCABULARY:
            lines.append(f"class {node_id} {status}")
        patch.replace_statement(statement, lines)


def merge_status_classes(
    patch: Patch, doc: Canvas, merged: list[str], keep: str, status: str | None
) -> None:
    """Status `class` lines of merged nodes collapse into one line for the kept node."""
    first = True
    for statement in doc.statements:
        if statement.kind != "class" or statement.name not in STATUS_VOCABULARY:
            continue
        if not set(statement.ids) & set(merged):
            continue
        rest = [i for i in statement.ids if i not in merged]
        lines = [id_statement_text(statement, rest)] if rest else []
        if first and status in STATUS_VOCABULARY:
            lines.append(f"class {keep} {status}")
        first = False
        if lines != [doc.text[statement.start : statement.stop]]:
            patch.replace_statement(statement, lines)
