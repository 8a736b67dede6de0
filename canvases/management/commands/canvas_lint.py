"""canvas_lint: nodes, edges, problems and the agent's view of .mmd canvases; exit 1 on errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentfs.paths import read_regular
from canvases.mermaid import Canvas, parse
from canvases.mermaid.agent_view import (
    agent_warnings,
    fallback_node,
    is_empty_shell,
    map_prefix,
    node_index_shown,
    read_meta,
)


def canvas_files(paths: list[str]) -> Iterator[Path]:
    """The files named, and every `*.mmd` under the folders named (temp and dot files skipped)."""
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for found in sorted(path.rglob("*.mmd")):
                if found.is_file() and not found.name.startswith("."):
                    yield found
        elif path.is_file():
            yield path
        else:
            raise CommandError(f"no such file or folder: {name}")


def lint_report(path: Path, raw: bytes, doc: Canvas) -> dict[str, object]:
    """The lint of one canvas: the engine's problems, then what the agent will make of it."""
    problems = [*doc.problems, *agent_warnings(doc.text)]
    agent_meta = read_meta(doc.text)
    return {
        "file": str(path),
        "nodes": [
            {
                "id": node.id,
                "status": node.fields.status,
                "label": node.fields.title,
                "shape": node.shape,
                "line": node.line,
                "subgraph": node.subgraph,
            }
            for node in doc.nodes.values()
        ],
        "edges": [
            {
                "source": e.source,
                "target": e.target,
                "label": e.label,
                "kind": e.kind,
                "line": e.line,
            }
            for e in doc.edges
        ],
        "problems": [
            {"line": p.line, "col": p.col, "severity": p.severity, "message": p.message}
            for p in problems
        ],
        "meta": {
            "form": doc.meta.form,
            "taskGoal": doc.meta.task_goal,
            "progress": doc.meta.progress,
        },
        "agent": {
            "meta_readable": agent_meta.readable,
            "strict_line_one": agent_meta.on_line_one,
            "task_goal": agent_meta.task_goal,
            "node_index": node_index_shown(doc.text),
            "empty_shell": is_empty_shell(doc.text),
            "fallback_node": fallback_node(doc.text, map_prefix(path.name)),
        },
        "roundtrip_ok": doc.serialize().encode("utf-8") == raw,
        "escaped_oneliner": doc.is_escaped_oneliner,
    }


class Command(BaseCommand):
    help = "Lint canvases (.mmd files or folders of them): nodes, edges, problems."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", help="canvas files or folders")
        parser.add_argument(
            "--json", action="store_true", help="one JSON object per file, one per line"
        )

    def handle(self, *args: object, paths: list[str], **options: object) -> None:
        failing: list[str] = []
        for path in canvas_files(paths):
            raw = read_regular(path)  # no FIFO or device; bounded like every canvas read
            doc = parse(raw.decode("utf-8", errors="replace"))
            report = lint_report(path, raw, doc)
            if doc.has_errors:
                failing.append(str(path))
            if options["json"]:
                self.stdout.write(json.dumps(report, ensure_ascii=False))
            else:
                self._write_text(report)
        if failing:
            raise CommandError(f"{len(failing)} canvas(es) with errors: {', '.join(failing)}")

    def _write_text(self, report: dict) -> None:
        problems = report["problems"]
        errors = sum(p["severity"] == "error" for p in problems)
        self.stdout.write(
            f"{report['file']}: {len(report['nodes'])} nodes, {len(report['edges'])} edges, "
            f"{errors} errors, {len(problems) - errors} warnings"
            + ("" if report["roundtrip_ok"] else " (not valid UTF-8: round-trip differs)")
        )
        for node in report["nodes"]:
            self.stdout.write(f"  node {node['id']} [{node['status'] or '-'}] {node['label']}")
        for edge in report["edges"]:
            label = f" |{edge['label']}|" if edge["label"] else ""
            self.stdout.write(f"  edge {edge['source']} -> {edge['target']}{label}")
        for problem in problems:
            self.stdout.write(
                f"  {problem['severity']} {problem['line']}:{problem['col']} {problem['message']}"
            )
