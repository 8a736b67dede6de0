"""The text of the search indexes and of the queries against them (plain Python, no database).

Two tokenisations, one per database:
* SQLite indexes every character trigram of a document (FTS5's trigram tokenizer), so any
  substring of 3 or more characters is found; CJK bigrams go into a second, small index,
  because Chinese text has no spaces and a 2-character word is common.
* PostgreSQL indexes ``words``: runs of letters and digits, lower-cased, plus every bigram of a
  CJK run, as a tsvector built here. A query matches words from their start and CJK anywhere.

Both re-check every candidate with a case-insensitive substring test, so a hit always contains
the query as typed.
"""

from __future__ import annotations

import re

__all__ = [
    "MIN_QUERY_CHARS",
    "cjk_grams",
    "fts_and",
    "grams_text",
    "like_pattern",
    "node_body",
    "row_body",
    "query_lexemes",
    "trigram_cover",
    "tsquery",
    "tsvector_literal",
    "words",
]

MIN_QUERY_CHARS = 2
# Han (with extensions and compatibility forms), kana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_ANY = re.compile(f"[{_CJK}]")
_CJK_BIGRAM = re.compile(f"(?=([{_CJK}]{{2}}))")  # overlapping: a lookahead match per position
_CJK_LONE = re.compile(f"(?<![{_CJK}])[{_CJK}](?![{_CJK}])")
_WORD = re.compile(f"[^\\W_{_CJK}]+")
# A PostgreSQL lexeme may not exceed 2 KB; longer "words" (base64, hashes) are cut.
_MAX_LEXEME_CHARS = 500


def row_body(tool_call: str, summary: str) -> str:
    """What a row is searched by. The trailing newline puts every 2-character tail inside a
    trigram, which the SQLite index needs to answer 2-character queries."""
    return f"{tool_call}\n{summary}\n"


def node_body(node_id: str, title: str, summary: str) -> str:
    return f"{node_id}\n{title}\n{summary}\n"


def cjk_grams(text: str) -> list[str]:
    """Every bigram of every CJK run (a lone CJK character stands for itself), sorted, once each."""
    if not _CJK_ANY.search(text):
        return []
    return sorted({*_CJK_BIGRAM.findall(text), *_CJK_LONE.findall(text)})


def grams_text(text: str) -> str:
    """The document of the SQLite CJK index: its bigrams separated by spaces (deterministic, so
    a contentless FTS5 delete can be given exactly what was inserted)."""
    return " ".join(cjk_grams(text))


def words(text: str) -> list[str]:
    """PostgreSQL lexemes of a document: lower-cased words and CJK bigrams, sorted, once each."""
    found = {w[:_MAX_LEXEME_CHARS] for w in _WORD.findall(text.lower())}
    found.update(cjk_grams(text))
    return sorted(found)


def _quote_lexeme(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(text: str) -> str:
    """``text`` as a tsvector input string (lexemes quoted verbatim, no positions)."""
    found = words(text)
    if "'" in text or "\\" in text:
        return " ".join(_quote_lexeme(w) for w in found)
    return "'" + "' '".join(found) + "'" if found else ""


def query_lexemes(query: str) -> list[tuple[str, bool]]:
    """(lexeme, is_prefix) for a PostgreSQL query: its words, the last one as a prefix (the
    user may still be typing it), and its CJK bigrams."""
    found = [w[:_MAX_LEXEME_CHARS] for w in _WORD.findall(query.lower())]
    lexemes = [(w, i == len(found) - 1) for i, w in enumerate(found)]
    lexemes += [(g, False) for g in cjk_grams(query) if len(g) == 2]
    return list(dict.fromkeys(lexemes))


def tsquery(lexemes: list[tuple[str, bool]]) -> str | None:
    """The tsquery text of lexemes from ``query_lexemes`` (None for none)."""
    parts = [_quote_lexeme(w) + (":*" if prefix else "") for w, prefix in lexemes]
    return " & ".join(parts) or None


def trigram_cover(query: str) -> list[str]:
    """Trigrams covering every character of the query: every third one, and the last.

    The trigram index keeps no positions (detail=none, a third of the size), so its answer is
    a pre-filter that the substring re-check completes, and overlapping trigrams would only add
    posting lists to step through. Empty for queries shorter than 3 characters.
    """
    if len(query) < 3:
        return []
    starts = [*range(0, len(query) - 2, 3), len(query) - 3]
    return list(dict.fromkeys(query[i : i + 3] for i in starts))


def fts_and(terms: list[str]) -> str:
    """An FTS5 MATCH expression requiring every term (each quoted as a string)."""
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fts_grams_query(query: str) -> str | None:
    """An FTS5 MATCH expression for the CJK bigram index, when the query is all CJK."""
    if not _CJK_RUN.fullmatch(query):
        return None
    grams = cjk_grams(query)
    return " AND ".join(f'"{g}"' for g in grams) or None


def like_pattern(query: str) -> str:
    """``%query%`` for LIKE/ILIKE with ``\\`` as the escape character."""
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
