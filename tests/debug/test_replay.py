"""Replay: the canvas at an instant from recorded revisions, else from Timestamps and row times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from tests.debug import replay_fixture as fx

pytestmark = pytest.mark.django_db


@pytest.fixture
def replay_root(tmp_path: Path) -> Path:
    fx.build(tmp_path / "root")
    return tmp_path / "root"


def frame_at(agent: str, minutes: float) -> dict:
    url = f"/a/{agent}/s/{fx.SESSION}/replay/"
    response = Client().get(url, {"at": fx.iso_at(minutes), "format": "json", "limit": "1"})
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.mark.parametrize(("minutes", "expected"), fx.FROM_REVISIONS)
def test_canvas_at_an_instant_comes_from_the_revision_memviz_recorded(
    replay_root: Path, minutes: float, expected: set[str]
) -> None:
    frame = frame_at("watched", minutes)["frame"]
    assert set(frame["nodes"]) == expected
    assert frame["source"] == "revision"
    assert frame["active_canvas"] == fx.FILE


@pytest.mark.parametrize(("minutes", "expected"), fx.FROM_TIMESTAMPS)
def test_without_revisions_the_canvas_is_rebuilt_from_timestamps(
    replay_root: Path, minutes: float, expected: set[str]
) -> None:
    frame = frame_at("after", minutes)["frame"]
    assert set(frame["nodes"]) == expected
    assert frame["source"] == "reconstructed"


def test_before_memviz_saw_the_canvas_the_replay_reconstructs_and_says_so(
    replay_root: Path,
) -> None:
    frame = frame_at("watched", 0.5)["frame"]  # r1 was recorded at minute 1
    assert frame["source"] == "reconstructed"
    assert set(frame["nodes"]) == {"001-N1", "001-N2"}


def test_json_twin_has_one_frame_per_row_paged(replay_root: Path) -> None:
    url = f"/a/watched/s/{fx.SESSION}/replay/"
    first = json.loads(Client().get(url, {"format": "json", "limit": "4"}).content)
    assert first["frames_total"] == len(fx.ROWS)
    assert [f["row"]["line_no"] for f in first["frames"]] == [1, 2, 3, 4]
    rest = json.loads(Client().get(url, {"format": "json", "offset": first["next_offset"]}).content)
    frames = first["frames"] + rest["frames"]
    assert rest["next_offset"] is None
    assert [f["time"][:16] for f in frames] == [fx.iso_at(r["minutes"])[:16] for r in fx.ROWS]
    assert all(
        {"time", "row", "hash", "nodes", "active_canvas", "revision"} <= f.keys() for f in frames
    )
    # rows at minutes 0..50; r1, r2, r3 recorded at minutes 1, 21, 41; the first row predates r1
    assert [f["revision"] for f in frames] == [1, 1, 1, 2, 2, 3]
    assert [f["source"] for f in frames] == ["reconstructed"] + ["revision"] * 5


def test_a_bad_instant_is_refused_clearly(replay_root: Path) -> None:
    response = Client().get(f"/a/watched/s/{fx.SESSION}/replay/", {"at": "yesterday"})
    assert response.status_code == 400
    assert "ISO 8601" in response.content.decode()
