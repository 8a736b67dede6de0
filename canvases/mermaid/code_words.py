"""A table of message codes and their English words: the one shape of every "what memviz says"
table below Django (the engine's `wording.py`, the folder reader's `agentfs/wording.py`, the
archive unpacker's refusals in `intake/archive.py`, the ingest job's `sessions/job_words.py`).

A module keeps its codes as ``CodeWords("its/path.py", {code: gettext_noop("words"), …})``:
`words()` is the English sentence (scripts, logs, the index beside the code), and the pages
translate the same entry through gettext (`memviz/said.py`). `gettext_noop` only marks the words
for `make messages` (xgettext extracts calls by that name) and returns them unchanged. Words are
always %-formatted, with or without values: a literal percent sign is written ``%%``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping


def gettext_noop(text: str) -> str:
    return text


class CodeWords(Mapping[str, str]):
    """Codes → English words, read-only; ``home`` names the module that owns them."""

    __slots__ = ("_texts", "home")

    def __init__(self, home: str, texts: Mapping[str, str]) -> None:
        self.home = home
        self._texts = dict(texts)

    def __getitem__(self, code: str) -> str:
        return self._texts[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def check(self, code: str) -> str:
        """``code`` itself; KeyError naming this table when it has no words for it."""
        if code not in self._texts:
            raise KeyError(f"no wording {code!r} in {self.home}")
        return code

    def words(
        self, code: str, values: Mapping[str, object] | None = None, /, **named: object
    ) -> str:
        """The English sentence of ``code`` with its values (a mapping, or by name)."""
        return self._texts[self.check(code)] % {**(values or {}), **named}
