"""How a benchmark marks a missed target: the word scripts/run_benches.sh collects into its report."""

MISSED = "MISSED"


def missed(ok: bool) -> str:
    """A suffix for a figure's line: empty when its target is met, else the marker."""
    return "" if ok else f"  {MISSED}"
