"""Pilot tests of the Health view (H): plots, numbers one key away, rows that jump, a worker
that keeps the UI answering keys and stops on Esc. The run is tests/health_helpers.py's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from health_helpers import A1, A2, write_starved_run
from textual.widgets import ContentSwitcher, Sparkline, Static

from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.health import HealthScreen
from tests.tui_app_helpers import idle, make_app, press, settle


@pytest.fixture(scope="module")
def starved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_starved_run(tmp_path_factory.mktemp("tui-health") / "20260101000000_starved")


class SlowRanker:
    """The real BM25 ranking, each call delayed: a small run that computes like a big one."""

    def __init__(self, inner, delay: float) -> None:
        self.inner, self.delay, self.name = inner, delay, inner.name

    def rank(self, query, top_k, before_ts=None):
        time.sleep(self.delay)
        return self.inner.rank(query, top_k, before_ts=before_ts)


def slow_app(path: Path, delay: float) -> AriMemApp:
    def opener(_progress):
        run = open_run(RunOptions(checkpoint=path, embedder="bm25"))
        run.ranker = SlowRanker(run.ranker, delay)
        return run

    return AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)


def text_of(widget: Static) -> str:
    return str(widget.render())


async def open_health(pilot) -> HealthScreen:
    await pilot.press("H")
    for _ in range(500):
        screen = pilot.app.screen
        if isinstance(screen, HealthScreen) and screen.result is not None:
            break
        await pilot.pause(0.02)
    await idle(pilot)
    assert isinstance(pilot.app.screen, HealthScreen)
    return pilot.app.screen


async def test_h_shows_the_plots_then_the_numbers_and_a_row_jumps_to_its_node(starved):
    app = make_app(starved)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        assert "4 node(s) searched, 2 starved (50%)" in text_of(screen.query_one("#health-title"))
        assert screen.query_one("#spark-depth-starved", Sparkline).data == [1 / 3, 1.0]
        crowded = screen.query_one("#spark-depth-crowded", Sparkline).data
        assert crowded == pytest.approx([(0.0 + 1.0 + 0.985) / 3, 0.985], abs=1e-3)
        switcher = screen.query_one("#health-views", ContentSwitcher)
        assert switcher.current == "health-plots"
        await press(pilot, "n")
        assert switcher.current == "health-numbers"
        nodes = screen.query_one("#health-nodes")
        assert nodes.current_key == A2  # the largest shortfall first
        await press(pilot, "j")
        assert nodes.current_key == A1
        await press(pilot, "enter")
        assert not isinstance(app.screen, HealthScreen)
        assert app.current_id == A1
        # back again: the result was kept, nothing recomputed
        kept = app.health_result[1]
        screen = await open_health(pilot)
        assert screen.result is kept


async def test_an_entry_row_opens_the_entry(starved):
    app = make_app(starved)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        await press(pilot, "n")
        screen.query_one("#health-entries").focus()
        await press(pilot, "G", "enter")  # the last row: the one never retrieved
        assert isinstance(app.screen, EntryScreen)
        assert app.screen.entry.text == "beta finding late"


async def test_the_worker_keeps_keys_answered_and_esc_interrupts_it(starved):
    app = slow_app(starved, delay=0.4)  # 4 searches: 1.6 s of computing at least
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("H")
        await pilot.pause(0.2)
        screen = app.screen
        assert isinstance(screen, HealthScreen) and screen.computing
        switcher = screen.query_one("#health-views", ContentSwitcher)
        await pilot.press("n")
        await pilot.pause()
        assert switcher.current == "health-numbers"  # answered while the worker runs
        assert screen.computing and screen.result is None
        await pilot.press("escape")  # interrupts, does not leave
        await idle(pilot)
        assert app.screen is screen and not screen.computing
        assert screen.result is not None and not screen.result.complete
        assert len(screen.result.nodes) < 5
        assert "INTERRUPTED" in text_of(screen.query_one("#health-title"))
        assert app.health_result is None  # an interrupted result is not kept
        await press(pilot, "escape")
        assert not isinstance(app.screen, HealthScreen)


async def test_health_before_the_memory_loaded_says_so(starved):
    app = slow_app(starved, delay=0.0)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.run_data = None
        await pilot.press("H")
        await pilot.pause()
        assert not isinstance(app.screen, HealthScreen)


async def test_tables_cut_for_size_say_so_and_where_the_rest_is(starved, monkeypatch):
    from ari_mem_tui.tui.screens import health as health_screen

    monkeypatch.setattr(health_screen, "NODE_ROWS", 1)
    monkeypatch.setattr(health_screen, "ENTRY_ROWS", 0)
    app = make_app(starved)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        await press(pilot, "n")
        title = text_of(screen.query_one("#health-nodes-title"))
        total = len(screen.result.nodes)
        assert total > 1
        assert f"1 of {total:,} shown" in title and "--all-entries" in title
        assert screen.query_one("#health-nodes").row_count == 1
        entries = text_of(screen.query_one("#health-entries-title"))
        never = screen.result.entries.never_by_descendant
        assert never >= 1 and f"0 of {never:,} shown" in entries


async def test_numbers_asked_for_while_computing_get_the_focus_when_they_come(starved):
    """GIVEN the Health view computing WHEN `n` shows the numbers while their tables are still
    empty (no focus stop) THEN the nodes table takes the focus once it has rows: `j` moves in
    it."""
    app = slow_app(starved, delay=0.2)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("H")
        screen = app.screen
        assert isinstance(screen, HealthScreen) and screen.computing
        await pilot.press("n")  # not press(): that waits for the worker
        await pilot.pause()
        nodes = screen.query_one("#health-nodes")
        assert screen.result is None and nodes.row_count == 0 and app.focused is not nodes
        for _ in range(500):
            if screen.result is not None:
                break
            await pilot.pause(0.02)
        await idle(pilot)
        assert app.focused is nodes and nodes.cursor_row == 0
        await press(pilot, "j")
        assert nodes.cursor_row == 1
