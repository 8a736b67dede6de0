"""The offline file's one inline script, joined from our ES modules (static/js).

A file opened from disk cannot import modules by name, so the modules the offline viewer needs
are joined into one classic script, each in its own function scope: an import becomes a look-up
in the scope of the module it names, an export a member of its own. This is not a bundler: it
knows the one style our modules are written in (``import { a, b as c } from "./x.js";`` or
``import * as x from "./x.js";`` on one line; ``export function|const|class`` declarations and
``export { a, b as c };``) and refuses anything else by name, so a module written otherwise fails
the offline file's tests instead of breaking the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# what the offline viewer runs, in import order (a module comes after the ones it imports)
MODULES = (
    "js/statuses.js",
    "js/canvas-layout.js",
    "js/canvas-shapes.js",
    "js/canvas-draw.js",
    "js/replay-frame.js",
    "js/offline.js",
)

_IMPORT = re.compile(
    r'^import (?:\{(?P<names>[^}]*)\}|\* as (?P<whole>[A-Za-z_$][\w$]*)) from "\./(?P<file>[\w.-]+\.js)";$'
)
_EXPORT_LIST = re.compile(r"^export \{(?P<names>[^}]*)\};$")
_EXPORT_DECL = re.compile(r"^export (?P<decl>(?:async )?(?:function\*?|const|class)\s+(?P<name>[A-Za-z_$][\w$]*))")
_DYNAMIC_IMPORT = re.compile(r"\bimport\s*\(|\bimport\.meta\b")


class ModuleStyleError(ValueError):
    """A module uses an import or export form this joiner does not know."""


def _pairs(names: str) -> list[tuple[str, str]]:
    """``a, b as c`` → [(a, a), (b, c)]: (name in the module, name outside)."""
    out = []
    for part in filter(None, (p.strip() for p in names.split(","))):
        inner, _, outer = part.partition(" as ")
        out.append((inner.strip(), (outer or inner).strip()))
    return out


def _scope(name: str) -> str:
    return "m_" + re.sub(r"\W", "_", name.removesuffix(".js"))


def _module(name: str, text: str, done: set[str]) -> str:
    body, exported = [], []
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}"
        if _DYNAMIC_IMPORT.search(line):
            raise ModuleStyleError(f"{where}: a dynamic import cannot be joined")
        if line.startswith("import"):
            match = _IMPORT.match(line)
            if not match:
                raise ModuleStyleError(f"{where}: an import not on one line as `import {{ a }} from \"./x.js\";`")
            source = "js/" + match["file"]
            if source not in done:
                raise ModuleStyleError(f"{where}: imports {source}, which is not joined before it")
            if match["whole"]:
                body.append(f"const {match['whole']} = {_scope(source)};")
            else:
                members = ", ".join(i if i == o else f"{i}: {o}" for i, o in _pairs(match["names"]))
                body.append(f"const {{ {members} }} = {_scope(source)};")
        elif line.startswith("export"):
            listed, declared = _EXPORT_LIST.match(line), _EXPORT_DECL.match(line)
            if listed:
                exported += _pairs(listed["names"])
            elif declared:
                exported.append((declared["name"], declared["name"]))
                body.append(line.removeprefix("export "))
            else:
                raise ModuleStyleError(f"{where}: an export this joiner does not know")
        else:
            body.append(line)
    members = ", ".join(f"{o}: {i}" for i, o in exported)
    return f"const {_scope(name)} = (() => {{\n" + "\n".join(body) + f"\nreturn {{ {members} }};\n}})();\n"


def joined(read: Callable[[str], str], modules: tuple[str, ...] = MODULES) -> str:
    """One classic script running `modules` in order; nothing of theirs reaches `window`."""
    done: set[str] = set()
    parts = []
    for name in modules:
        parts.append(_module(name, read(name), done))
        done.add(name)
    return '(() => {\n"use strict";\n' + "\n".join(parts) + "})();\n"
