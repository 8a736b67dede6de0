"""How a write is refused: nothing was written, and the reason is said (canvases/messages.py)."""

from __future__ import annotations

from canvases.messages import Said
from memviz.input_refused import InputRefused


class EditRefused(InputRefused):
    """A bad request (unknown node, empty merge, vanished file…); nothing was written. Its
    argument is the reason: a `Said` (canvases/messages.py: a code, shown in the reader's
    language by ``str()``) or the engine's own text. An `InputRefused` (memviz/input_refused.py),
    so the views of other apps answer the refusals of reading a request's fields
    (canvases/op_input.py) as their own; status 400 unless a subclass says otherwise."""

    @property
    def code(self) -> str | None:
        said = self.args[0] if self.args else None
        return said.code if isinstance(said, Said) else None


class EditConflict(EditRefused):
    """The file changed on disk since the edit's base and the edit does not re-apply cleanly."""

    status = 409

    def __init__(self, message: str | Said, current_hash: str | None = None) -> None:
        super().__init__(message)
        self.current_hash = current_hash


class WriteFailed(EditRefused):
    """The disk refused a write (full, read-only, no permission); nothing was changed."""

    status = 507

    def __init__(self, message: str | Said, *, file: str, reason: str) -> None:
        super().__init__(message)
        self.file = file
        self.reason = reason
