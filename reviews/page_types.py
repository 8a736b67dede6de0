"""The typed contexts of the review pages: what `reviews/selectors.py` builds, the pages render
and `?format=json` returns, key for key (tests/reviews/test_page_shapes.py)."""

# No `from __future__ import annotations`: TypedDict keys are read at run time (tests).
from datetime import datetime
from typing import TypedDict


class NoteItem(TypedDict):
    id: int
    author: str
    created_at: datetime
    text: str
    promoted_revision: int | None  # the canvas revision that made it an annotation


class MarkItem(TypedDict):
    """Who marked a target reviewed, and when."""

    author: str
    created_at: datetime


class ThreadNote(NoteItem):
    replies: list[NoteItem]  # oldest first


class ThreadTarget(TypedDict):
    kind: str  # "node" | "row" | "session"
    scope: str
    item: str
    url: str  # the page that shows the target


class ThreadPage(TypedDict):
    """A target's thread: the JSON twin of the thread partial (``thread/?format=json``)."""

    target: ThreadTarget
    reviewed: MarkItem | None  # None: not reviewed
    notes: list[ThreadNote]  # oldest first
    promotable: bool  # a node's notes can become its canvas annotation


class Thread(ThreadPage):
    """The thread as the partial draws it, and the JSON answer of a note or mark written."""

    thread_url: str
    dom_id: str  # the partial's HTML id, which a write's htmx answer replaces


class QueueItemJson(TypedDict):
    """A queue item (`reviews.queue.QueueItem.as_json`)."""

    key: str
    fingerprint: str
    kind: str
    session: str  # "" for canvas-wide items
    line_no: int | None
    canvas: str
    node_id: str
    summary: str


class QueueEntry(QueueItemJson):
    """A queue item with its link and its title."""

    url: str
    title: str


class DecidedEntry(QueueEntry):
    state: str  # "done" | "skip"
    author: str
    decided_at: datetime


class ReviewNoteEntry(NoteItem):
    kind: str
    scope: str
    item: str
    reply: bool
    url: str
    label: str  # the target, in the viewer's language


class ReviewedEntry(TypedDict):
    kind: str
    scope: str
    item: str
    author: str
    created_at: datetime
    url: str
    label: str


class ReviewPage(TypedDict):
    """The agent's review page: the queue, what was decided, notes and marks (newest first)."""

    agent: str
    query: str  # ``?q=``: filters the notes
    queue: list[QueueEntry]
    decided: list[DecidedEntry]
    notes: list[ReviewNoteEntry]  # at most 200
    reviewed: list[ReviewedEntry]  # at most 200
