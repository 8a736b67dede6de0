"""One self-contained offline HTML file of a canvas or a session (what goes in; bounded).

`debugging/offline_html.py` assembles the file; this module reads the index and the refs:

- a session: its replay (debugging/replay.py) — the last `MAX_ROWS` rows, one frame each, with
  the canvas as it stood at each row;
- a canvas: its recorded versions (the newest `MAX_VERSIONS`, then the current text), one frame
  each, and the agent's rows placed on its nodes (the newest `MAX_ROWS`);
- the refs those rows cite, rendered and sanitized as the ref page does, links made text: at most
  `MAX_REFS`, each cut at `REF_BYTES`, all together at most `REFS_TOTAL_BYTES`.

Whatever is left out is said in the file's notes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nh3
from django.conf import settings
from django.utils import timezone
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _

from agentfs.paths import LinkRefused, UnsafePath, confine
from agentfs.refs import read_ref_page, split_ref, unwrap_tool_result
from agentfs.row_fields import node_aliases
from canvases.canvas_scene import canvas_scene
from canvases.mermaid import parse
from canvases.models import Revision
from debugging import debug_selectors, offline_html
from debugging.replay import REVISION, CanvasVersion, Scene, _scene
from sessions.instants import iso
from sessions.models import Agent, AgentSession, Canvas, Row
from sessions.ref_render import ALLOWED_CLASSES, ALLOWED_TAGS, code_to_html, markdown_to_html
from sessions.selectors import RefLocator

MAX_ROWS = 3000
MAX_VERSIONS = 60
MAX_REFS = 300
REF_BYTES = 64 * 1024
REFS_TOTAL_BYTES = 8 * 1024 * 1024
ROW_TEXT = 2000  # characters of a row's tool call and summary
# No link and no image survive into the file: it must not reach the network, not even on a click.
OFFLINE_TAGS = ALLOWED_TAGS - {"a", "img"}


def session_file(agent: Agent, session: AgentSession) -> str:
    replay = debug_selectors.replay_for(agent, session)
    start = max(0, len(replay) - MAX_ROWS)
    notes = []
    if start:
        notes.append(
            _("The first %(n)d rows are left out: the file holds the last %(k)d.")
            % {"n": start, "k": MAX_ROWS}
        )
    kept_scenes: dict[int, int] = {}
    scenes: list[dict[str, Any]] = []
    frame_scene: list[int | None] = []
    for index in range(start, len(replay)):
        old = replay.scene_of[index]
        if old is not None and old not in kept_scenes:
            kept_scenes[old] = len(scenes)
            scenes.append(_scene_json(replay.scenes[old], shift=start))
        frame_scene.append(kept_scenes[old] if old is not None else None)
    loaded = {r.id: r for r in debug_selectors.load_rows(agent, session)}
    rows = [
        _row(
            loaded[r.id].id,
            r.line_no,
            r.time_text,
            r.node_id,
            r.tool_call,
            r.summary,
            loaded[r.id].result_ref,
        )
        for r in replay.rows[start:]
    ]
    labels = [iso(t) or "" for t in replay.times[start:]]
    title = f"{agent.slug} · {session.session_id}"
    return _file(agent, "session", title, frame_scene, labels, scenes, rows, notes)


def canvas_file(agent: Agent, canvas: Canvas) -> str:
    notes = []
    revisions = list(
        Revision.objects.filter(canvas=canvas)
        .order_by("-number")
        .values_list("number", "created_at", "author", "after_text")[: MAX_VERSIONS + 1]
    )
    if len(revisions) > MAX_VERSIONS:
        revisions = revisions[:MAX_VERSIONS]
        notes.append(_("Only the newest %(n)d revisions are included.") % {"n": MAX_VERSIONS})
    versions = [
        CanvasVersion(canvas.filename, text, created, number, author)
        for number, created, author, text in reversed(revisions)
    ]
    if not versions or versions[-1].text != canvas.text:
        versions.append(CanvasVersion(canvas.filename, canvas.text, None))
    scenes = [_scene_json(_scene(i, v, REVISION, [], {}), shift=0) for i, v in enumerate(versions)]
    labels = [
        f"r{v.revision} · {iso(v.recorded_at)}" if v.revision is not None else _("current text")
        for v in versions
    ]
    ids = {alias for n in parse(canvas.text).nodes for alias in node_aliases(n)}
    for v in versions[:-1]:
        ids.update(alias for n in parse(v.text).nodes for alias in node_aliases(n))
    found = list(
        Row.objects.filter(agent=agent, node_id__in=ids)
        .order_by("-id")
        .values_list(
            "id",
            "line_no",
            "timestamp",
            "node_id",
            "tool_call",
            "summary",
            "result_ref",
            "session__session_id",
        )[: MAX_ROWS + 1]
    )
    if len(found) > MAX_ROWS:
        found = found[:MAX_ROWS]
        notes.append(_("Only %(n)d rows placed on this canvas are included.") % {"n": MAX_ROWS})
    rows = [_row(*values) for values in reversed(found)]
    title = f"{agent.slug} · {canvas.filename}"
    frames = list(range(len(scenes)))
    return _file(agent, "canvas", title, frames, labels, scenes, rows, notes)


def _file(
    agent: Agent,
    kind: str,
    title: str,
    frame_scene: list[int | None] | list[int],
    labels: list[str],
    scenes: list[dict[str, Any]],
    rows: list[list[Any]],
    notes: list[str],
) -> str:
    """The file: one frame per row (a session: rows shown up to the frame) or per version (a
    canvas: every row shown)."""
    refs = _refs(agent, rows, notes)
    payload = {
        "kind": kind,
        "title": title,
        "generated": iso(timezone.now()),
        "rows_by_frame": kind == "session",
        "frames": {"scene": frame_scene, "label": labels},
        "scenes": scenes,
        "rows": [r[:6] + [r[7]] for r in rows],
        "refs": refs,
        "notes": notes,
    }
    return offline_html.document(
        payload, strings=_strings(), assets=_assets(), lang=get_language() or "en"
    )


def _row(
    pk: int,
    line_no: int,
    stamp: str,
    node_id: str | None,
    tool_call: str,
    summary: str,
    result_ref: str | None,
    session: str = "",
) -> list[Any]:
    """[id, line, time, node, tool call, summary, session, result_ref → the ref's name]"""
    return [
        pk,
        line_no,
        stamp,
        node_id,
        (tool_call or "")[:ROW_TEXT],
        (summary or "")[:ROW_TEXT],
        session,
        result_ref,
    ]


def _scene_json(scene: Scene, *, shift: int) -> dict:
    return {
        "file": scene.file,
        "scene": canvas_scene(scene.text, scene.doc),
        "nodes": [
            {
                "id": n.id,
                "from": max(0, n.from_frame - shift),
                "title": n.title,
                "status": n.status,
                "summary": n.summary[:ROW_TEXT],
            }
            for n in scene.nodes
        ],
    }


def _refs(agent: Agent, rows: list[list], notes: list[str]) -> dict[str, str | None]:
    """Each cited ref's sanitized HTML by its name (None: left out); rows' last field becomes
    the ref's name."""
    locator = RefLocator(agent)
    out: dict[str, str | None] = {}
    total = 0
    skipped = 0
    for row in rows:
        found = locator.locate(row[7]) if row[7] else None
        name = found["name"] if found and found["name"] else None
        row[7] = name
        if name is None or name in out:
            continue
        if len(out) >= MAX_REFS or total >= REFS_TOTAL_BYTES:
            out[name] = None
            skipped += 1
            continue
        out[name] = html = _ref_html(agent, name)
        total += len(html or "")
    if skipped:
        notes.append(
            ngettext(
                "%(n)d cited ref is left out (size limit).",
                "%(n)d cited refs are left out (size limit).",
                skipped,
            )
            % {"n": skipped}
        )
    return out


def _ref_html(agent: Agent, name: str) -> str | None:
    try:
        confine(Path(agent.path), name)  # refuses names that leave the folder
        # opened by its own name, as the ref page does: a link on the way is refused at the open
        page = read_ref_page(Path(agent.path) / name, limit=REF_BYTES)
    except (UnsafePath, LinkRefused, OSError):
        return None
    if page.next_offset is None:
        header, result = split_ref(page.text)
        unwrapped = unwrap_tool_result(result)
        html = markdown_to_html(header) + code_to_html(
            unwrapped if unwrapped is not None else result
        )
    else:
        cut = _("(cut at %(n)d KB)") % {"n": REF_BYTES // 1024}
        html = code_to_html(page.text, "text") + f"<p><em>{cut}</em></p>"
    return offline_text(html)


def offline_text(html: str) -> str:
    """Sanitized ref HTML with links and images reduced to their text."""
    return nh3.clean(
        html,
        tags=OFFLINE_TAGS,
        attributes={"td": {"align"}, "th": {"align"}},
        allowed_classes=ALLOWED_CLASSES,
    )


def _strings() -> dict[str, str]:
    return {
        "canvas_frame": _("Revision"),
        "session_frame": _("Row"),
        "rows": _("Rows"),
        "rows_so_far": _("Rows so far"),
        "ref": _("ref"),
        "ref_missing": _("not included in this file"),
        "none": _("none"),
        "close": _("Close"),
        "notes": _("What this file holds"),
        "generated": _("Made by memviz at"),
        "offline": _(
            "Offline copy: no network access; text from the memory folder is shown as text."
        ),
        "click": _("Click a node for its rows and the refs they cite."),
        "unknown": _("time unknown"),
    }


def _assets() -> Path:
    return Path(settings.BASE_DIR) / "static"
