"""The collector pause of bulk work (checkpoint/bulk.py) when such work overlaps in threads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from ari_mem_tui.checkpoint import bulk


@pytest.fixture
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()  # as conftest wants every test to leave it


def _hold(entered: threading.Event, leave: threading.Event) -> None:
    entered.set()
    leave.wait(10)


def test_overlapping_bulk_work_keeps_the_pause_until_the_last_ends(collector_on: None) -> None:
    """A reload's load can start while the earlier load's thread is still in its bulk work: the
    first to end must not turn the collector on under the other."""
    first_in, first_out = threading.Event(), threading.Event()
    first = threading.Thread(target=bulk.without_gc, args=(_hold, first_in, first_out))
    first.start()
    first_in.wait(10)
    second_in, second_out = threading.Event(), threading.Event()
    second = threading.Thread(target=bulk.without_gc, args=(_hold, second_in, second_out))
    second.start()
    second_in.wait(10)
    assert bulk.holders() == 2 and not gc.isenabled()
    first_out.set()
    first.join(10)
    assert bulk.holders() == 1 and not gc.isenabled()  # the second still holds it
    second_out.set()
    second.join(10)
    assert bulk.holders() == 0 and gc.isenabled()


def test_a_collector_found_off_stays_off(collector_on: None) -> None:
    gc.disable()
    assert bulk.without_gc(gc.isenabled) is False
    assert not gc.isenabled()


def test_a_failing_call_gives_the_pause_back(collector_on: None) -> None:
    with pytest.raises(ZeroDivisionError):
        bulk.without_gc(lambda: 1 / 0)
    assert bulk.holders() == 0 and gc.isenabled()


def test_the_result_comes_back() -> None:
    assert bulk.without_gc(lambda a, b: a + b, 2, 3) == 5
