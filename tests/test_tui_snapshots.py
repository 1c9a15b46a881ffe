"""Snapshot tests of every tab at 80×24 and 120×40 on the small fixed checkpoint.

Deterministic by construction: BM25 ranking (no model), the theme pinned, cursor blink off, a
fixed source label instead of the tmp path, times shown in UTC, every worker awaited.
Update with `pytest tests/test_tui_snapshots.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui_app_helpers import make_app, press, settle, tabs_drawn
from tests.tui_helpers import write_tiny_checkpoint

TABS = ("hits", "saw", "core", "writes", "node", "audit")
SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
# which node each tab is shown on (keys from the opened tree: root, A, B)
KEYS_TO = {
    "B1": ("j", "j", "l", "l"),  # has a recorded start-up search and a scope violation
    "A2": ("j", "l", "l", "j"),  # failed, with a rejected CoW write
    "A1z": ("j", "l", "l", "l", "l", "j", "j", "j"),  # deepest, through the folded chain
}
NODE_FOR_TAB = {
    "hits": "B1",
    "saw": "B1",
    "core": "B1",
    "writes": "A2",
    "node": "A1z",
    "audit": "B1",
}


@pytest.fixture(scope="module")
def tiny_fixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("snap") / "tiny")


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("tab", TABS)
def test_tab(snap_compare, tiny_fixed: Path, tab: str, size: str) -> None:
    """GIVEN the tiny run, WHEN a node is chosen and a tab opened, THEN it looks as recorded."""
    app = make_app(tiny_fixed, label="files: tiny")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await settle(pilot)
        await press(pilot, *KEYS_TO[NODE_FOR_TAB[tab]], str(TABS.index(tab) + 1))
        await tabs_drawn(pilot)

    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_hits_focused_at_80x24(snap_compare, tiny_fixed: Path, wide: bool) -> None:
    """GIVEN 80×24, WHEN the hits table has focus, THEN the tree folds away, the header is one
    line and the text column gets the rest; with `z`, every column and the whole header."""
    app = make_app(tiny_fixed, label="files: tiny")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await settle(pilot)
        await press(pilot, *KEYS_TO["B1"], "right_square_bracket", *(["z"] if wide else []))
        await tabs_drawn(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_compare_screen(snap_compare, tiny_fixed: Path) -> None:
    app = make_app(tiny_fixed, label="files: tiny")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await settle(pilot)
        await press(pilot, *KEYS_TO["A2"], "m", "g", "j", "j", "j", "j", "l", "l", "c")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.2)
        pilot.app.clear_notifications()  # the "marked …" toast would time out at random
        await pilot.pause()
        await tabs_drawn(pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_help_screen(snap_compare, tiny_fixed: Path) -> None:
    app = make_app(tiny_fixed, label="files: tiny")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await settle(pilot)
        await press(pilot, "question_mark")
        await tabs_drawn(pilot)

    assert snap_compare(app, terminal_size=(100, 32), run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
def test_a_questioned_table(snap_compare, tiny_fixed: Path, size: str) -> None:
    """GIVEN the whole run's writes WHEN filtered (`/ note`) and sorted (`S S`: by time, newest
    first) THEN the pane's title counts the rows and names the filter and the order."""
    app = make_app(tiny_fixed, label="files: tiny")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await settle(pilot)
        keys = ("4", "w", "right_square_bracket", "slash", *"note", "space", "enter", "S", "S")
        await press(pilot, *keys)
        await tabs_drawn(pilot)

    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)
