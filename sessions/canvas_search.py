"""Search of what a canvas shows beside its nodes' titles and summaries: the task goal, edge
labels, group titles and the notes people wrote on nodes.

A canvas is small and there are few of them (one per task), so its stored text is matched as a
substring, and only the matching canvases are parsed to say where the query stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from canvases.mermaid import parse
from sessions.models import Canvas

LIMIT = 10


@dataclass
class CanvasHit:
    agent: str
    canvas: str
    # (what, text): what is "goal", "edge", "group" or "note"; text as the page shows it
    places: list[tuple[str, str]] = field(default_factory=list)


def canvas_hits(query: str, *, agent_id: int | None = None, limit: int = LIMIT) -> list[CanvasHit]:
    """Canvases, newest first, whose goal, edge labels, group titles or notes hold ``query``
    (case-insensitive). Node titles and summaries are the node search's, not repeated here."""
    if not query:
        return []
    needle = query.casefold()
    found = Canvas.objects.filter(text__icontains=query).select_related("agent").order_by("-pk")
    if agent_id is not None:
        found = found.filter(agent_id=agent_id)
    hits: list[CanvasHit] = []
    for canvas in found.only("pk", "filename", "text", "agent__slug").iterator(chunk_size=50):
        hit = CanvasHit(agent=canvas.agent.slug, canvas=canvas.filename)
        doc = parse(canvas.text)
        if needle in doc.meta.task_goal.casefold():
            hit.places.append(("goal", doc.meta.task_goal))
        for edge in doc.edges:
            if edge.label and needle in edge.label.casefold():
                hit.places.append(("edge", f"{edge.source} → {edge.target}: {edge.label}"))
        for group in doc.subgraphs:
            if needle in group.title.casefold():
                hit.places.append(("group", group.title))
        for node in doc.nodes.values():
            note = node.fields.extra.get("note")
            if note and needle in note.casefold():
                hit.places.append(("note", f"{node.id}: {note}"))
        if hit.places:
            hits.append(hit)
            if len(hits) >= limit:
                break
    return hits
