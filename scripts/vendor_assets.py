"""Copy the front-end libraries installed from npm into static/vendor/ (never from a CDN)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = {
    "node_modules/mermaid/dist/mermaid.min.js": "static/vendor/mermaid/mermaid.min.js",
    "node_modules/svg-pan-zoom/dist/svg-pan-zoom.min.js": "static/vendor/svg-pan-zoom/svg-pan-zoom.min.js",
    "node_modules/uplot/dist/uPlot.iife.min.js": "static/vendor/uplot/uPlot.iife.min.js",
    "node_modules/uplot/dist/uPlot.min.css": "static/vendor/uplot/uPlot.min.css",
}


def main() -> int:
    for source, target in ASSETS.items():
        src, dst = ROOT / source, ROOT / target
        if not src.is_file():
            print(f"missing {source}: run `npm ci` first", file=sys.stderr)
            return 1
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    print(f"vendored {len(ASSETS)} front-end files into static/vendor/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
