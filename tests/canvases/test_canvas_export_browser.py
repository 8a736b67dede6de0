"""Export in Debian's chromium: the view or the whole canvas as SVG and PNG, the mermaid text."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import pytest

from canvases.mermaid.mermaid_source import mermaid_source
from intake.ingest import ingest_path
from tests.conftest import SCREENSHOTS
from tests.page_modules import expose

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

REPO = Path(__file__).resolve().parents[2]

FILE = "002-migrate-orders-api.mmd"


@pytest.fixture
def canvas_file(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main" / "mmds" / FILE


def export(page, kind: str, to: Path) -> Path:
    with page.expect_download(timeout=30000) as download:
        page.locator("#diagram .export-menu summary").click()
        page.locator(f'#diagram [data-export="{kind}"]').click()
    target = to / download.value.suggested_filename
    download.value.save_as(target)
    return target


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def covered(svg: str) -> set[int]:
    """Code points the embedded @font-face rules cover."""
    points: set[int] = set()
    for block in re.findall(r"@font-face\{[^}]*\}", svg):
        assert "data:font/woff2;base64," in block
        for part in re.findall(r"unicode-range:([^;]+);", block)[0].split(","):
            low, _, high = part.strip().removeprefix("U+").removeprefix("u+").partition("-")
            points.update(range(int(low, 16), int(high or low, 16) + 1))
    return points


def test_export_view_and_whole_canvas_as_svg_and_png_and_the_mermaid_text(live_server, page, canvas_file: Path, tmp_path: Path) -> None:
    page.goto(f"{live_server.url}/a/main/c/{FILE}/")
    page.wait_for_function("document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page)

    whole = export(page, "all-svg", tmp_path).read_text(encoding="utf-8")
    assert whole.startswith("<svg") and "<style>" in whole
    assert "url(http" not in whole and "@import" not in whole  # nothing fetched from anywhere
    labels = "".join(re.findall(r"<tspan[^>]*>([^<]*)</tspan>", whole))
    assert "调研" in labels and "money.py" in labels  # every node's label, on screen or not
    needed = {ord(ch) for ch in labels if not ch.isspace()}
    missing = needed - covered(whole)
    assert not missing, "".join(chr(c) for c in sorted(missing))  # CJK glyphs travel with the file
    assert len(re.findall(r'class="node ', whole)) == 5

    view_svg = export(page, "view-svg", tmp_path).read_text(encoding="utf-8")
    box = page.evaluate("mv.canvas.view().visibleRect()")
    found = re.search(r'viewBox="([^"]+)"', view_svg)
    assert found is not None, view_svg[:200]
    view_box = [float(v) for v in found.group(1).split()]
    assert view_box == pytest.approx([box["x"], box["y"], box["w"], box["h"]], abs=1)

    png = export(page, "all-png", tmp_path)
    width, height = png_size(png)
    model = page.evaluate("[mv.canvas.model().width, mv.canvas.model().height]")
    assert width == pytest.approx((model[0] + 32) * 2, abs=2) and height == pytest.approx((model[1] + 32) * 2, abs=2)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "canvas-export-whole.png").write_bytes(png.read_bytes())
    view_png = export(page, "view-png", tmp_path)
    assert png_size(view_png)[0] > 400

    text = export(page, "mermaid", tmp_path)
    assert text.name == "002-migrate-orders-api.render.mmd"
    assert text.read_text(encoding="utf-8") == mermaid_source(canvas_file.read_text(encoding="utf-8"))
    assert not page.errors
