"""Keyset paging of a session's timeline: pages start after or end before a ``line_no``.

A deep page costs what the first does (one range of the (session, line_no) index, or of the
node index for ``?node=``), where OFFSET read and dropped every row before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from sessions.models import Row

SESSION_PAGE_SIZE = 50
LAST = -1


@dataclass
class Page:
    rows: list[Row]
    # 1-based page number when known (the first page, an old ``?page=`` link), ``LAST`` for
    # the last page, None on a keyset page (its number would cost a count of what precedes it).
    number: int | None
    before: int | None  # the first row's line_no when rows precede it: ``?before=`` of "previous"
    after: int | None  # the last row's line_no when rows follow it: ``?after=`` of "next"


def session_page(rows: QuerySet[Row], params: dict[str, str]) -> Page:
    """The rows of one page: ``after``/``before`` a line_no, ``last``, the page holding
    ``line``, an old ``page`` number (OFFSET, kept for links made before keyset paging), or
    the first page. Cursor pages read one index range (session, line_no), whatever their depth.
    """
    size = SESSION_PAGE_SIZE
    after, before, line = (_digits(params, k) for k in ("after", "before", "line"))
    if after is not None:
        got = list(rows.filter(line_no__gt=after)[: size + 1])
        previous = rows.filter(line_no__lte=after).exists()
        return _forward(got, None, previous)
    if before is not None:
        following = rows.filter(line_no__gte=before).exists()
        return _backward(rows.filter(line_no__lt=before), None, following=following)
    if params.get("last"):
        return _backward(rows, LAST, following=False)
    if line is not None and not params.get("page"):
        # a row's link (node panel, search hit): the page starting at it, or the last page
        got = list(rows.filter(line_no__gte=line)[: size + 1])
        if len(got) < size:
            return _backward(rows, LAST, following=False)
        return _forward(got, None, rows.filter(line_no__lt=line).exists())
    number = _digits(params, "page") or 1
    got = list(rows[(number - 1) * size : number * size + 1])
    if not got and number > 1:
        return _backward(rows, LAST, following=False)
    return _forward(got, number, number > 1)


def _forward(got: list[Row], number: int | None, previous: bool) -> Page:
    shown = got[:SESSION_PAGE_SIZE]
    return Page(
        rows=shown,
        number=number,
        before=shown[0].line_no if previous and shown else None,
        after=shown[-1].line_no if len(got) > SESSION_PAGE_SIZE else None,
    )


def _backward(rows: QuerySet[Row], number: int | None, *, following: bool) -> Page:
    """The last page of ``rows`` (read backwards through the index, then put in order)."""
    got = list(rows.order_by("-line_no")[: SESSION_PAGE_SIZE + 1])
    shown = got[:SESSION_PAGE_SIZE][::-1]
    return Page(
        rows=shown,
        number=number,
        before=shown[0].line_no if len(got) > SESSION_PAGE_SIZE else None,
        after=shown[-1].line_no if following and shown else None,
    )


def _digits(params: dict[str, str], key: str) -> int | None:
    value = params.get(key, "")
    return int(value) if value.isdigit() and len(value) < 10 else None
