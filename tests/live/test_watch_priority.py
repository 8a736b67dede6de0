"""The watcher yields the CPU to pages: its thread runs at a lower priority, the others do not."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from intake.watch import lower_thread_priority

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")


def _nice_of(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def test_only_the_calling_thread_is_lowered() -> None:
    main_before = _nice_of(threading.get_native_id())
    seen: dict[str, int | None] = {}

    def watcher_thread() -> None:
        seen["returned"] = lower_thread_priority(10)
        seen["own"] = _nice_of(threading.get_native_id())

    thread = threading.Thread(target=watcher_thread)
    thread.start()
    thread.join()

    assert seen["own"] == min(19, main_before + 10)
    assert seen["returned"] == seen["own"]
    assert _nice_of(threading.get_native_id()) == main_before  # the serving threads keep theirs


def test_zero_steps_changes_nothing() -> None:
    seen: dict[str, int | None] = {}

    def watcher_thread() -> None:
        before = _nice_of(threading.get_native_id())
        seen["returned"] = lower_thread_priority(0)
        seen["delta"] = _nice_of(threading.get_native_id()) - before

    thread = threading.Thread(target=watcher_thread)
    thread.start()
    thread.join()
    assert seen == {"returned": None, "delta": 0}


def test_the_watcher_thread_of_run_is_lowered(settings, tmp_path) -> None:
    from intake.watch import start_watch_thread

    settings.MEMVIZ_WATCH_NICE = 7
    base = _nice_of(threading.get_native_id())
    watcher, thread, stop = start_watch_thread(tmp_path)
    try:
        assert watcher.ready.wait(20), "the watcher never became ready"
        assert thread.native_id is not None  # started: it has one
        assert _nice_of(thread.native_id) == min(19, base + 7)
        assert _nice_of(threading.get_native_id()) == base
    finally:
        stop.set()
        thread.join(timeout=10)
