"""Copy the front-end libraries installed from npm into static/vendor/ (never from a CDN).

Fonts: the regular weight of Noto Sans SC (@fontsource, split by unicode range so a page loads
only the slices its text needs; it has Latin, Cyrillic and Vietnamese slices too). The canvas is drawn and measured in them, and an
export embeds the slices it uses, so CJK labels look the same on every machine.
"""

from __future__ import annotations

import re
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
FONTS = {"noto-sans-sc": "node_modules/@fontsource/noto-sans-sc"}
# The same faces installed on the machine are used without a download (Debian's fonts-noto-cjk
# has Noto Sans CJK SC, whose glyphs and metrics are those of Noto Sans SC).
LOCAL_NAMES = {
    "noto-sans-sc": "local('Noto Sans SC'), local('Noto Sans CJK SC'), local('NotoSansCJKsc-Regular'), ",
}
FONT_DIR = ROOT / "static" / "vendor" / "fonts"
WOFF_FALLBACK = re.compile(r",\s*url\([^)]*\.woff\)\s*format\('woff'\)")


def vendor_font(name: str, package: Path) -> int:
    """The package's 400.css with woff2 sources only, and the woff2 files it names."""
    css = WOFF_FALLBACK.sub("", (package / "400.css").read_text(encoding="utf-8"))
    css = css.replace("src: url(", f"src: {LOCAL_NAMES[name]}url(")
    files = re.findall(r"url\(\./files/([^)]+\.woff2)\)", css)
    (FONT_DIR / "files").mkdir(parents=True, exist_ok=True)
    for file in files:
        shutil.copy2(package / "files" / file, FONT_DIR / "files" / file)
    (FONT_DIR / f"{name}.css").write_text(css, encoding="utf-8")
    return len(files)


def main() -> int:
    for source, target in ASSETS.items():
        src, dst = ROOT / source, ROOT / target
        if not src.is_file():
            print(f"missing {source}: run `npm ci` first", file=sys.stderr)
            return 1
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    fonts = 0
    for name, package in FONTS.items():
        if not (ROOT / package / "400.css").is_file():
            print(f"missing {package}: run `npm ci` first", file=sys.stderr)
            return 1
        fonts += vendor_font(name, ROOT / package)
    print(f"vendored {len(ASSETS)} front-end files and {fonts} font files into static/vendor/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
