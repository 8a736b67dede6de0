"""Two agents, two sessions, refs cited by one session only, and a hostile ref."""

from __future__ import annotations

from pathlib import Path

from intake.ingest import ingest_path
from tests.debug.memory_factory import at, canvas, node, ref_text, write_agent

AGENT, OTHER = "shared", "private"
S1 = "5e1f0000-aaaa-4bbb-8ccc-00000000000a"
S2 = "5e1f0000-aaaa-4bbb-8ccc-00000000000b"
FILE = "001-ship-it.mmd"
HOSTILE_REF = "hostile.md"
# A ref header written as markup: script, an event handler, a link and an image off the machine.
HOSTILE = (
    "# Tool Result: exec <script>window.pwned = 'script'</script>\n\n"
    '<img src="https://evil.example/x.png" onerror="window.pwned = \'img\'">\n'
    '[click me](https://evil.example/steal) and <a href="http://evil.example/">there</a>\n\n'
    "**Timestamp:** 2026-06-10T09:05:00.000+08:00\n\n---\n\n**Tool:** exec\n**Call ID:** call_h\n\n"
    "**Result:**\n```\nREF-BODY-MARKER build passed </script><script>window.pwned='body'</script>\n```"
)
CANVAS = canvas(
    "ship it",
    [
        node("001-N1", "ship-it", "doing", None),
        node("001-N2", "build", "done", 0),
        node("001-N3", "test <b>bold</b>", "doing", 20),
    ],
    [("001-N1", "001-N2"), ("001-N2", "001-N3")],
)


def build(root: Path) -> Path:
    rows1 = [
        {"minutes": 0, "tool": "exec: make", "node": "001-N2", "summary": "built it"},
        {"minutes": 5, "tool": "exec: hostile", "node": "001-N2", "summary": "hostile ref"},
        {"minutes": 20, "tool": "exec: pytest", "node": "001-N3", "summary": "tests pass"},
    ]
    rows2 = [{"minutes": 30, "tool": "read: secret-only-s2", "node": "001-N3", "summary": "s2 row"}]
    folder = write_agent(root, AGENT, {S1: rows1, S2: rows2}, {FILE: CANVAS})
    # the second row of S1 cites the hostile ref
    offload = folder / f"offload-{S1}.jsonl"
    lines = offload.read_text("utf-8").splitlines()
    lines[1] = lines[1].replace(
        lines[1].split('"result_ref": "')[1].split('"')[0], f"refs/{HOSTILE_REF}"
    )
    offload.write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "refs" / HOSTILE_REF).write_text(HOSTILE, "utf-8")
    write_agent(
        root,
        OTHER,
        {"other-session": [{"minutes": 1, "tool": "exec: ls", "node": "001-N2"}]},
        {FILE: CANVAS},
    )
    (folder.parent / OTHER / "refs" / "own.md").write_text(
        ref_text("exec", "c", at(1), "x"), "utf-8"
    )
    ingest_path(root)
    return folder


def ref_names(folder: Path) -> dict[str, str]:
    """The ref cited by each session's first row (the plugin's timestamp names)."""
    import json

    out = {}
    for session in (S1, S2):
        first = json.loads((folder / f"offload-{session}.jsonl").read_text("utf-8").splitlines()[0])
        out[session] = first["result_ref"].removeprefix("refs/")
    return out
