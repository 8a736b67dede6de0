"""Reading the answers the tests get, typed for what the tests expect of them.

bs4 types a CSS match as maybe missing and an attribute as maybe a list (``class`` and its
like), ``re.search`` and a header look-up answer maybe None, and django-stubs types the test
client's answer as a plain HttpResponse. A test that needs the element, an attribute's one
string, a match or a streamed body asks through these: they fail the test naming what the
answer lacked, where an untyped look-up would fail later on None.
"""

from __future__ import annotations

import re

from bs4 import Tag
from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase


def one(node: Tag, selector: str) -> Tag:
    """The first element under ``node`` matching the CSS ``selector``; fails if none does."""
    found = node.select_one(selector)
    assert found is not None, f"no element matches {selector!r}"
    return found


def attr(tag: Tag, name: str) -> str:
    """The value of ``tag``'s attribute ``name``, one string; fails if it is missing or a list."""
    value = tag.get(name)
    assert isinstance(value, str), f"<{tag.name}> has no single {name}= attribute: {value!r}"
    return value


def streamed(response: HttpResponseBase) -> bytes:
    """The whole body of a streamed answer (a file, a big page); fails if it was not streamed."""
    assert isinstance(response, StreamingHttpResponse), f"not streamed: {type(response).__name__}"
    return response.getvalue()


def found(pattern: str, text: str | None) -> re.Match[str]:
    """``re.search(pattern, text)``; fails if ``text`` (a header, say) is None or has no match."""
    assert text is not None, f"nothing to search for {pattern!r}"
    match = re.search(pattern, text)
    assert match is not None, f"{pattern!r} is not in {text[:300]!r}"
    return match
