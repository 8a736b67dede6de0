"""Shared canvases for the engine tests: the corpus, the spec's fixture roots, big canvases."""

from __future__ import annotations

from pathlib import Path

import pytest

from canvases.mermaid.samples import sample_canvas
from tests.conftest import fixture_canvases

CORPUS = Path(__file__).parent / "corpus"


def read_exact(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def corpus_texts() -> dict[str, str]:
    texts = {path.name: read_exact(path) for path in sorted(CORPUS.glob("*.mmd"))}
    crlf = texts["en-canonical.mmd"].replace("\n", "\r\n").replace("    ", "\t")
    texts["crlf-tabs.mmd"] = crlf  # generated: git may normalise committed CRLF
    texts["big-300.mmd"] = sample_canvas(300)
    texts["big-300-zh.mmd"] = sample_canvas(300, prefix="016", seed=11)
    return texts


def fixture_texts() -> dict[str, str]:
    return {key: read_exact(path) for key, path in fixture_canvases().items()}


@pytest.fixture(scope="session")
def corpus() -> dict[str, str]:
    return corpus_texts()


@pytest.fixture(scope="session")
def fixtures() -> dict[str, str]:
    return fixture_texts()
