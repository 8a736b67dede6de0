"""The offline file's script is joined from our ES modules: it runs, leaks nothing, refuses forms it does not know."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from debugging.offline_script import MODULES, ModuleStyleError, joined

STATIC = Path(__file__).resolve().parents[2] / "static"


def run_in_node(script: str) -> str:
    """What the script prints, run in a fresh realm; then the names it left on that realm."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run `make setup`")
    runner = (
        "const vm = require('vm'); const out = [];"
        "const realm = { print: (x) => out.push(String(x)) };"
        "vm.runInNewContext(require('fs').readFileSync(0, 'utf8'), realm);"
        "console.log(out.join('\\n') + '\\nleft: ' + Object.keys(realm).join(','));"
    )
    done = subprocess.run([node, "-e", runner], input=script, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def modules(**texts: str):
    return lambda name: texts[name.removeprefix("js/").removesuffix(".js").replace("-", "_")]


def test_the_offline_modules_join_into_one_script_without_imports_or_exports() -> None:
    script = joined(lambda name: (STATIC / name).read_text("utf-8"))
    lines = script.splitlines()
    assert not [line for line in lines if line.startswith(("import ", "export "))]
    # every module the offline viewer needs, in import order; the drawing before the viewer
    assert [line.split(" = ")[0] for line in lines if line.startswith("const m_js_")] == [
        "const m_js_" + name.removeprefix("js/").removesuffix(".js").replace("-", "_") for name in MODULES
    ]
    assert run_in_node("print(1);\n" + script.replace('"use strict";', '"use strict"; print(2); return;', 1)) == "1\n2\nleft: print"


def test_imports_and_renamed_exports_reach_the_importer_and_nothing_reaches_the_page() -> None:
    script = joined(
        modules(
            a="export function f() { return 2; }\nconst hidden = 40;\nexport const answer = hidden + 2;\nexport { f as g };\n",
            b='import { g as h, answer } from "./a.js";\nimport * as whole from "./a.js";\nprint(h() + answer + whole.f());\n',
        ),
        ("js/a.js", "js/b.js"),
    )
    assert run_in_node(script) == "46\nleft: print"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('import f from "./a.js";\n', "js/b.js:1: an import not on one line"),
        ('import {\n  f,\n} from "./a.js";\n', "js/b.js:1: an import not on one line"),
        ('import { f } from "./c.js";\n', "imports js/c.js, which is not joined before it"),
        ("export let counter = 0;\n", "js/b.js:1: an export this joiner does not know"),
        ("export default function () {}\n", "an export this joiner does not know"),
        ('const m = await import("./a.js");\n', "js/b.js:1: a dynamic import cannot be joined"),
    ],
)
def test_a_form_it_does_not_know_is_refused_by_file_and_line(text: str, says: str) -> None:
    with pytest.raises(ModuleStyleError, match=says.replace("(", r"\(").replace(".", r"\.")):
        joined(modules(a="export function f() {}\n", b=text), ("js/a.js", "js/b.js"))
