"""The ingest's fast header reader gives exactly what the full ref reader gives."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfs.refs import read_ref_header, read_ref_info

REPO = Path(__file__).resolve().parents[2]
ROOTS = REPO / "tests" / "fixtures" / "roots"


def both(path: Path) -> tuple[tuple, tuple]:
    info = read_ref_info(path, head_bytes=2048)
    return read_ref_header(path, head_bytes=2048), (info.tool, info.call_id, info.timestamp)


def test_same_fields_on_every_real_shaped_ref() -> None:
    refs = sorted(ROOTS.rglob("refs/*.md")) + sorted((REPO / "demo").rglob("refs/*.md"))
    assert len(refs) > 30
    for path in refs:
        fast, full = both(path)
        assert fast == full, path


line = st.text(alphabet=st.sampled_from(list("ab :*#-_\t\r`Ré工")), max_size=12)
header_line = st.one_of(
    line,
    st.builds(
        lambda k, v: f"**{k}:** {v}",
        st.sampled_from(["Tool", "Call ID", "Timestamp", "tool_call_id", "X-Y", "Call ID "]),
        line,
    ),
    st.builds(lambda v: f"# Tool Result{v}", st.sampled_from(["", ": exec", ":x", "X", " ", ":"])),
    st.sampled_from(["**Result:**", "**Result:** x", "**Result:**\r", "```", "---", ""]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(header_line, max_size=12), st.booleans())
def test_same_fields_on_arbitrary_headers(
    tmp_path_factory, lines: list[str], plugin_shaped: bool
) -> None:
    if plugin_shaped:
        lines = [
            "# Tool Result: read",
            "",
            "**Call ID:** c1",
            *lines,
            "**Result:**",
            "```",
            "x",
            "```",
        ]
    path = tmp_path_factory.mktemp("refs") / "r.md"
    path.write_bytes("\n".join(lines).encode("utf-8"))
    fast, full = both(path)
    assert fast == full
