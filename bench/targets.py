"""How a benchmark marks a missed target: the word scripts/run_benches.sh collects into its report."""

MISSED = "MISSED"


def missed(ok: bool) -> str:
    """A suffix for a figure's line: empty when its target is met, else the marker."""
    return "" if ok else f"  {MISSED}"


# Growth allowed from the smallest to the largest size (10x or more rows) for a figure that must
# not depend on the data's size (bench_reingest: an explicit re-ingest of what did not change).
FLAT_GROWTH = 2.0
