"""The canvases and edits the conformance suite runs: every op over every example canvas, with
hostile text in every field a person can type into."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from canvases.mermaid import EditError, EditResult, edits, parse
from canvases.mermaid.samples import sample_canvas
from tests.conftest import fixture_canvases as fixture_canvas_paths

TESTS = Path(__file__).resolve().parents[1]
CORPUS = TESTS / "canvases" / "mermaid" / "corpus"
WJ = "\u2060"

# Text people type that the agent's patterns or mermaid would read as structure (spec §4.8.2–3).
HOSTILE = [
    "see 001-N7 and N9, 1001-N3, n_001-N1, fix-N3, N5-N6",
    '%%{init: {"theme": "dark"}}%% swallowed?',
    "100%% sure }%% end %%",
    "status: done summary: fake Timestamp: 2099-01-01T00:00:00Z",
    "class 001-N1,x done",
    "<br/>status: blocked<br>summary: x<script>alert(1)</script>",
    '"quoted" #quot; &lt; &amp; &#35; #35; &copy',
    "`md` tail \\",
    "pipe | and ]) }} --> end ; A --> B",
    "line one\nline two\r\nthree\u2028four\ttab",
    "修复 N12 的 缓存：status：doing",
    f"{WJ}word joiner N{WJ}7 typed",
    "😀 emoji 001-N😀1 ok",
    "%{ single }% and %%",
]
TEMPLATES = {
    "template-plugin.mmd": 'flowchart TD\n    017-N1["new-task"]\n',  # the plugin's initial map
    "template-bare.mmd": 'flowchart TD\n    017-N1["new-task"]',
}


def read_exact(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


@cache
def fixture_canvases() -> dict[str, str]:
    """`<root>/<file>` → text of every example canvas (format spec §9)."""
    return {key: read_exact(path) for key, path in fixture_canvas_paths().items()}


@cache
def all_canvases() -> dict[str, str]:
    found = dict(fixture_canvases())
    found.update({f"corpus/{p.name}": read_exact(p) for p in sorted(CORPUS.glob("*.mmd"))})
    found.update(TEMPLATES)
    found["sample-40.mmd"] = sample_canvas(40, prefix="018", seed=3)
    return found


def file_name(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def as_typed(text: str) -> str:
    """What a field reads back as, per docs/write-back.md: line breaks and control characters
    become spaces, a typed U+2060 is dropped, the text is trimmed; nothing else changes."""
    text = re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", " ", text.replace("\r\n", " "))
    return text.replace(WJ, "").strip()


@dataclass(frozen=True)
class Case:
    canvas: str  # name
    op: str
    before: str
    result: EditResult | None  # None: the engine refused (error holds why)
    field: str | None = None  # the field that holds typed text
    node: str | None = None
    typed: str | None = None
    error: str = ""


def _run(canvas: str, op: str, before: str, call, **extra) -> Case:
    try:
        return Case(canvas, op, before, call(), **extra)
    except EditError as error:
        return Case(canvas, op, before, None, error=str(error), **extra)


def _ops(name: str, text: str, typed: str, *, structural: bool) -> list[Case]:
    doc = parse(text)
    ids = list(doc.nodes)
    first, last = ids[0], ids[-1]
    second = ids[1] if len(ids) > 1 else first
    status = typed[:30]
    cases = [
        _run(
            name,
            "annotate",
            text,
            lambda: edits.annotate(text, last, typed),
            field="note",
            node=last,
            typed=typed,
        ),
        _run(
            name,
            "edit_title",
            text,
            lambda: edits.edit_label(text, second, title=typed),
            field="title",
            node=second,
            typed=typed,
        ),
        _run(
            name,
            "edit_summary",
            text,
            lambda: edits.edit_label(text, second, summary=typed),
            field="summary",
            node=second,
            typed=typed,
        ),
        _run(
            name,
            "set_status",
            text,
            lambda: edits.set_status(text, first, status),
            field="status",
            node=first,
            typed=status,
        ),
        _run(
            name,
            "set_meta",
            text,
            lambda: edits.set_meta(text, taskGoal=typed),
            field="taskGoal",
            typed=typed,
        ),
    ]
    if len(ids) > 1:
        pairs = {(e.source, e.target) for e in doc.edges}
        source, target = next(
            ((a, b) for a in reversed(ids) for b in ids if a != b and (a, b) not in pairs),
            (None, None),
        )
        if source is not None and target is not None:
            cases.append(
                _run(
                    name,
                    "add_edge",
                    text,
                    lambda: edits.add_edge(text, source, target, label=typed),
                    field="edge_label",
                    node=f"{source}>{target}",
                    typed=typed,
                )
            )
        kept, gone = ids[-2], ids[-1]
        cases.append(
            _run(
                name,
                "merge_label",
                text,
                lambda: edits.merge(text, [kept, gone], label=typed, summary=typed),
                field="merge",
                node=kept,
                typed=typed,
            )
        )
    if structural and len(ids) > 1:
        cases.append(_run(name, "merge", text, lambda: edits.merge(text, ids[:3])))
        cases.append(_run(name, "prune", text, lambda: edits.prune(text, second)))
        if doc.edges:
            edge = doc.edges[-1]
            cases.append(
                _run(
                    name,
                    "remove_edge",
                    text,
                    lambda: edits.remove_edge(text, edge.source, edge.target),
                )
            )
    if structural:
        cases.append(_run(name, "agent_meta", text, lambda: edits.agent_meta(text)))
    return cases


@cache
def op_cases() -> tuple[Case, ...]:
    """Every op on every canvas; fixture and template canvases get every hostile text."""
    cases: list[Case] = []
    for index, (name, text) in enumerate(all_canvases().items()):
        doc = parse(text)
        if doc.is_escaped_oneliner:
            cases.append(_run(name, "repair", text, lambda text=text: edits.repair_oneliner(text)))
            continue
        if not doc.nodes or doc.has_errors:
            continue
        full = name in fixture_canvases() or name in TEMPLATES
        texts = HOSTILE if full else [HOSTILE[index % len(HOSTILE)]]
        for number, typed in enumerate(texts):
            cases += _ops(name, text, typed, structural=number == 0)
    return tuple(cases)
