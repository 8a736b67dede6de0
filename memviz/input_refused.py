"""How a write is refused for what its request sent or asked: nothing was written, and the reason
is said. Every app answers it the same way, by its text and `status`.

Reading a request's fields (`canvases/op_input.py`: a body that is not JSON, a field of the wrong
type…) refuses with one, whichever app's view reads them: canvases' `EditRefused` is an
`InputRefused`, so a view of another app catches it here without knowing canvases' refusals.
"""

from __future__ import annotations


class InputRefused(Exception):
    """A bad request; nothing was written. Its argument is the reason, whose ``str()`` is the
    text in the reader's language (canvases' `Said`), or plain text; `status` is the answer's."""

    status = 400
