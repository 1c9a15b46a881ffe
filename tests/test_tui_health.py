"""Pilot tests of the Health view (H): plots, numbers one key away, rows that jump, a worker
that keeps the UI answering keys and stops on Esc. The run is tests/health_helpers.py's."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from health_helpers import A1, A2, write_starved_run
from textual.widgets import ContentSwitcher, Sparkline, Static
from textual.worker import NoActiveWorker, get_current_worker

from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.health import HealthScreen
from tests.tui_app_helpers import (
    app_with,
    blocking_opener,
    idle,
    make_app,
    press,
    settle,
    settle_keys,
    wait_for,
)


@pytest.fixture(scope="module")
def starved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_starved_run(tmp_path_factory.mktemp("tui-health") / "20260101000000_starved")


class GatedRanker:
    """The real BM25 ranking, whose calls from the Health view's worker wait while the test
    holds the gate: a small run that computes for as long as a test needs it to, however loaded
    the machine is. (The app's own searches, e.g. of the node it opens on, always pass.)"""

    def __init__(self) -> None:
        self.inner = None
        self.name = "bm25"
        self.open = threading.Event()
        self.open.set()  # open until a test closes it (the app's own first searches pass)
        self.waiting = threading.Event()  # a call is waiting at the closed gate

    def rank(self, query, top_k, before_ts=None):
        if not self.open.is_set() and in_health_worker():
            self.waiting.set()
            assert self.open.wait(30), "the test never opened the gate"
        return self.inner.rank(query, top_k, before_ts=before_ts)


def in_health_worker() -> bool:
    try:
        return get_current_worker().group == "health"
    except NoActiveWorker:
        return False


def gated_app(path: Path) -> tuple[AriMemApp, GatedRanker]:
    gated = GatedRanker()

    def opener(_progress):
        run = open_run(RunOptions(checkpoint=path, embedder="bm25"))
        gated.inner, gated.name = run.ranker, run.ranker.name
        run.ranker = gated
        return run

    app = app_with(opener)
    return app, gated


async def computing_health(pilot, gated: GatedRanker) -> HealthScreen:
    """`H` with the gate closed: the Health view, its worker held inside its first search."""
    gated.open.clear()
    await pilot.press("H")
    await wait_for(pilot, gated.waiting.is_set, "the health worker's first search")
    screen = pilot.app.screen
    assert isinstance(screen, HealthScreen) and screen.computing
    return screen


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
        assert "4 nodes searched, 2 starved (50%)" in text_of(screen.query_one("#health-title"))
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


async def test_after_a_reload_h_refills_the_same_view_with_the_new_run(starved):
    """GIVEN the Health view shown once WHEN the run is reloaded and H pressed again THEN the
    view built the first time is shown again (not built anew), holding the reloaded run and
    its own result, computed again, with the plots first; the old run is let go of."""
    app = make_app(starved)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        first = await open_health(pilot)
        old_run, old_result = app.run_data, first.result
        await press(pilot, "n")
        await press(pilot, "escape")
        await press(pilot, "r")  # reload
        await wait_for(pilot, lambda: app.run_data is not old_run, "the reloaded run")
        await settle(pilot)
        assert first.run_data is None and first.result is None  # let go of
        screen = await open_health(pilot)
        assert screen is first
        assert screen.run_data is app.run_data and screen.result is not old_result
        assert app.health_result == (app.run_data, screen.result)
        assert screen.result.as_data() == old_result.as_data()  # the same files
        title = text_of(screen.query_one("#health-title"))
        assert "4 nodes searched, 2 starved (50%)" in title
        assert screen.query_one("#health-views", ContentSwitcher).current == "health-plots"


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
    """GIVEN the Health view computing (its worker held inside a search, as a big run keeps it
    busy) WHEN `n` is pressed THEN the view answers at once; WHEN Esc THEN the work is
    interrupted, not finished: once the search in hand returns, it stops with the nodes done so
    far, says INTERRUPTED and is not kept; the view stays until a second Esc."""
    app, gated = gated_app(starved)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await computing_health(pilot, gated)
        switcher = screen.query_one("#health-views", ContentSwitcher)
        await pilot.press("n")
        await wait_for(pilot, lambda: switcher.current == "health-numbers", "`n` answered")
        assert screen.computing and screen.result is None  # answered while the worker runs
        await pilot.press("escape")  # interrupts, does not leave
        progress = screen.query_one("#health-progress-text", Static)
        await wait_for(pilot, lambda: "interrupting" in text_of(progress), "Esc answered")
        assert screen.computing and screen.result is None  # still inside its search
        gated.open.set()  # the search in hand returns; every later one would pass at once
        await wait_for(pilot, lambda: not screen.computing, "the worker to stop")
        await idle(pilot)
        assert app.screen is screen
        assert screen.result is not None and not screen.result.complete
        total = len(app.ckpt.nodes)
        assert len(screen.result.nodes) < total, "it ran to the end: Esc did not interrupt it"
        assert "INTERRUPTED" in text_of(screen.query_one("#health-title"))
        assert app.health_result is None  # an interrupted result is not kept
        await press(pilot, "escape")
        assert not isinstance(app.screen, HealthScreen)


async def test_health_before_the_memory_loaded_says_so(starved, monkeypatch):
    """GIVEN the run's memory still loading (held inside the load; the tree is up) WHEN H THEN
    it says so and opens nothing; once the memory is in, H opens the Health view. (It set
    run_data to None while the real load ran on, and lost the race when that finished first.)"""
    from ari_mem_tui.checkpoint import index

    monkeypatch.setenv(index.INDEX_ENV, "off")  # an index of the run would skip the held step
    release, blocked = threading.Event(), threading.Event()
    app = app_with(blocking_opener(starved, release, blocked))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        try:
            await wait_for(pilot, lambda: app.tree_ckpt is not None and blocked.is_set())
            await pilot.press("H")
            await pilot.pause()
            await settle_keys(pilot)  # H ran (the burst guard holds a single letter a moment)
            assert app.run_data is None, "the load finished before it was released"
            assert any("still loading" in n.message for n in app._notifications)
            assert not isinstance(app.screen, HealthScreen)
        finally:
            release.set()
        await settle(pilot)
        await press(pilot, "H")
        assert isinstance(app.screen, HealthScreen)


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
        total = screen.result.searched  # the nodes that made a search: the table's rows
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
    app, gated = gated_app(starved)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await computing_health(pilot, gated)
        switcher = screen.query_one("#health-views", ContentSwitcher)
        await pilot.press("n")  # not press(): that waits for the worker
        await wait_for(pilot, lambda: switcher.current == "health-numbers", "`n` answered")
        nodes = screen.query_one("#health-nodes")
        assert screen.result is None and nodes.row_count == 0 and app.focused is not nodes
        gated.open.set()
        await wait_for(pilot, lambda: screen.result is not None, "the result")
        await idle(pilot)
        assert app.focused is nodes and nodes.cursor_row == 0
        await press(pilot, "j")
        assert nodes.cursor_row == 1
