"""Write static/css/statuses.css and static/js/statuses.js from the statuses' one home.

Usage: .venv/bin/python scripts/export_statuses.py [--check]
(after changing canvases/mermaid/vocabulary.py; `--check` only says which file is stale and
exits 1, as tests/canvases/test_status_assets.py does).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from canvases.status_assets import stale, write  # noqa: E402


def main() -> int:
    static = REPO / "static"
    if "--check" in sys.argv:
        names = stale(static)
        for name in names:
            print(f"static/{name} differs from canvases/mermaid/vocabulary.py: run scripts/export_statuses.py")
        return 1 if names else 0
    for name in write(static):
        print(f"wrote static/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
