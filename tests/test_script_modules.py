"""memviz's scripts are ES modules: no globals, templates load them as modules, and the hashed
copies collectstatic writes import each other by their hashed names (one instance per page)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.conf import settings

REPO = Path(__file__).resolve().parent.parent
OWN = REPO / "static" / "js"
IMPORT = re.compile(r'^(?:import|export) [^;]*? from "(?P<url>[^"]+)";$', re.M)


def test_no_script_sets_a_global() -> None:
    found = [
        f"{path.name}: {line.strip()}"
        for path in OWN.glob("*.js")
        for line in path.read_text("utf-8").splitlines()
        if re.search(r"\bwindow\.[A-Za-z_$][\w$]*\s*=(?!=)|\bglobalThis\b", line)
    ]
    assert found == []


def test_templates_load_our_scripts_as_modules_only() -> None:
    tags = [
        (path.name, tag)
        for path in (REPO / "templates").rglob("*.html")
        for tag in re.findall(r"<script[^>]*\bsrc=[^>]*>", path.read_text("utf-8"))
        if "js/" in tag and "vendor/" not in tag
    ]
    assert tags and all('type="module"' in tag and "defer" not in tag for _, tag in tags), tags


def test_every_import_names_a_module_of_ours_that_exists() -> None:
    for path in OWN.glob("*.js"):
        for match in IMPORT.finditer(path.read_text("utf-8")):
            url = match["url"]
            assert url.startswith("./") and (OWN / url.removeprefix("./")).is_file(), (path.name, url)


def test_the_hashed_copies_import_the_hashed_copies() -> None:
    manifest = json.loads((Path(settings.STATIC_ROOT) / "staticfiles.json").read_text("utf-8"))["paths"]
    hashed_names = set(manifest.values())
    checked = 0
    for source in OWN.glob("*.js"):
        copy = Path(settings.STATIC_ROOT) / manifest[f"js/{source.name}"]
        for match in IMPORT.finditer(copy.read_text("utf-8")):
            target = "js/" + match["url"].removeprefix("./")
            assert target in hashed_names and target not in manifest, (copy.name, target)
            checked += 1
    assert checked >= 15  # canvas.js alone imports six
