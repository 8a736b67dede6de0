"""Error texts fit to show: absolute paths of this machine are replaced by what they stand for.

An OSError's text names the file it failed on (``[Errno 2] No such file: '/home/ana/...'``); the
pages, job messages and API errors must not reveal where memviz keeps its data.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings

_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:[^\s'\"/]+/)+([^\s'\"/]*)")


def _roots() -> list[tuple[str, str]]:
    named = [
        (settings.MEMVIZ_DATA_ROOT, "<data root>"),
        (settings.MEMVIZ_UPLOAD_ROOT, "<uploads>"),
        (settings.MEMVIZ_PUSH_ROOT, "<pushed>"),
        (settings.VAR_DIR, "<var>"),
        (settings.BASE_DIR, "<memviz>"),
        (Path.home(), "~"),
    ]
    pairs = []
    for path, name in named:
        for form in {str(Path(path)), str(Path(path).resolve())}:
            if form not in ("/", ""):
                pairs.append((form, name))
    return sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)


def scrub_paths(text: str) -> str:
    """``text`` with known roots named and any other absolute path cut to its last part."""
    for form, name in _roots():
        text = text.replace(form, name)
    return _ABSOLUTE.sub(lambda m: f".../{m.group(1)}", text)


def public_data(value: Any, roots: list[tuple[str, str]] | None = None) -> Any:
    """``value`` (a page's JSON twin) with every string that is a local path named by its root.

    Only strings that start with one of memviz's own folders are rewritten: an agent's text that
    merely mentions ``/src/app.ts`` is its content and stays as it is.
    """
    roots = _roots() if roots is None else roots
    if isinstance(value, str):
        if value.startswith("/") and any(value.startswith(form) for form, _ in roots):
            return scrub_paths(value)
        return value
    if isinstance(value, dict):
        return {k: public_data(v, roots) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [public_data(v, roots) for v in value]
    return value


def public_message(exc: BaseException) -> str:
    """``Type: message`` of an exception, paths scrubbed."""
    if isinstance(exc, OSError) and exc.strerror:
        detail = exc.strerror + (f": {Path(str(exc.filename)).name}" if exc.filename else "")
    else:
        detail = str(exc)
    return scrub_paths(f"{type(exc).__name__}: {detail}")
