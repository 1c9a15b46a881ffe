"""Pilot tests of `Y` (why the node did or did not see the entry under the cursor) and of the
Health view's what-if row: real key presses, the answers checked against search/why.py's and
what_if.py's own (tested on their own against brute-force replays in test_why.py and
test_what_if.py)."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from health_helpers import A1, A2, write_starved_run
from rich.console import Console
from textual.widgets import Checkbox, ContentSwitcher, Input, Static
from textual.worker import NoActiveWorker, get_current_worker

from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.why import NodeSearch
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.health import HealthScreen
from ari_mem_tui.tui.screens.why import WhyScreen
from tests.ari_like import generate_in_memory
from tests.tui_app_helpers import app_with, idle, make_app, press, settle, wait_for


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    return generate_in_memory(tmp_path_factory.mktemp("tui-why") / "ckpt")


def own_ranker_app(path: Path):
    """The app as `ari-mem-tui CKPT` opens it: the default ranker (the in-memory run's rule)."""
    return app_with(lambda _progress: open_run(RunOptions(checkpoint=path)))


async def why_shown(pilot) -> WhyScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, WhyScreen), "the why view")
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.answer is not None, "the answer")
    await pilot.pause()
    return screen


def shown_text(screen: WhyScreen) -> str:
    """The why view's text, each line whole (rendered wider than any line: no wrapping)."""
    console = Console(width=1000, file=io.StringIO(), record=True)
    console.print(screen.query_one("#why-text", Static).content)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


async def test_x_on_a_hit_says_why_and_on_another_node_why_not(generated):
    """GIVEN the planted echo node (its first hit, the parent's RESULT SUMMARY, is dropped
    from the context by Tier 1b) WHEN x is pressed on that hit THEN the why view says so with
    its numbers; WHEN a sibling branch's node is marked and x pressed again THEN it is asked
    about the marked node (another branch: not in its scope), and x there asks the current."""
    echo = generated.planted.echo_parent
    app = own_ranker_app(generated.path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.jump_to(echo)
        await idle(pilot)
        hits = app.query_one("#hits-pane").replay.hits
        app.query_one("#hits-table").focus()
        await press(pilot, "Y")
        screen = await why_shown(pilot)
        answer = screen.answer
        assert (answer.node_id, answer.entry_id) == (echo, hits[0].entry_id)
        assert answer.verdict == "context"
        text = shown_text(screen)
        assert "seen by ARI but dropped from the context" in text
        assert "first 120 characters are already in Tier 1b" in text
        await press(pilot, "escape")
        other = generated.planted.nodes["A1"]  # another branch (A's; the echo is under C)
        app.main.jump_to(other)
        await idle(pilot)
        await press(pilot, "m")
        app.main.jump_to(echo)
        await idle(pilot)
        app.query_one("#hits-table").focus()
        await press(pilot, "Y")
        screen = await why_shown(pilot)
        want = NodeSearch(app.run_data.checkpoint, other, app.run_data.ranker)
        entry = app.run_data.checkpoint.entries_by_id[hits[0].entry_id]
        assert screen.answer.node_id == other
        assert screen.answer.as_data() == want.why(entry).as_data()
        assert screen.answer.verdict in ("time", "scope")
        assert f"Y: ask about node {echo[-8:]} instead" in shown_text(screen)
        await press(pilot, "Y")
        await wait_for(pilot, lambda: screen.answer is not None, "the answer")
        assert screen.answer.node_id == echo and screen.answer.verdict == "context"
        await press(pilot, "o")
        assert not isinstance(app.screen, WhyScreen) and app.current_id == echo


async def test_x_in_an_entry_view_and_on_a_write_and_on_nothing(generated):
    """x works in an entry's view (Enter on a hit) and on the Writes table (the write's
    entry: the node's own, written after its search); on the tree it says what it needs."""
    echo = generated.planted.echo_parent
    app = own_ranker_app(generated.path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.jump_to(echo)
        await idle(pilot)
        await press(pilot, "Y")  # the tree has focus: no entry
        assert not isinstance(app.screen, WhyScreen)
        app.query_one("#hits-table").focus()
        hits = app.query_one("#hits-pane").replay.hits
        search = NodeSearch(app.run_data.checkpoint, echo, app.run_data.ranker)
        ckpt = app.run_data.checkpoint
        rank = next(  # the first hit ARI kept in the context (the echo's first is dropped)
            h.rank for h in hits if search.why(ckpt.entries_by_id[h.entry_id]).verdict == "seen"
        )
        await press(pilot, *["j"] * (rank - 1), "enter")
        assert isinstance(app.screen, EntryScreen)
        await press(pilot, "Y")
        screen = await why_shown(pilot)
        assert screen.answer.entry_id == hits[rank - 1].entry_id
        assert screen.answer.verdict == "seen" and rank > 1
        assert f"seen: rank {rank} of 5" in shown_text(screen)
        await press(pilot, "escape")
        await press(pilot, "escape")
        await press(pilot, "4")  # Writes
        app.query_one("#writes-table").focus()
        await pilot.pause()
        await press(pilot, "Y")
        screen = await why_shown(pilot)
        assert screen.answer.verdict == "time"
        assert screen.answer.step("time").reason == "own-after-search"
        assert "written by the node itself" in shown_text(screen)


@pytest.fixture(scope="module")
def starved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_starved_run(tmp_path_factory.mktemp("tui-what-if") / "20260101000000_starved")


async def open_health(pilot) -> HealthScreen:
    await pilot.press("H")
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, HealthScreen) and pilot.app.screen.result is not None,
        "the health result",
    )
    await idle(pilot)
    return pilot.app.screen


async def test_the_what_if_row_suggests_a_wider_window_and_enter_runs_it(starved):
    """GIVEN the starved run (its starved nodes' windows are other branches'), WHEN the Health
    view opens, THEN its what-if row holds the suggestion (top_k twice as wide) and says why,
    and nothing has run; WHEN w then Enter, THEN the what-if computes and shows both starved
    nodes no longer starved, the run's own beside it."""
    app = make_app(starved)
    async with app.run_test(size=(100, 36)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        said = screen.query_one("#wi-said", Static).content.plain
        assert "suggested: top_k=400" in said and "other branches fill 99%" in said
        assert screen.query_one("#wi-top-k", Input).value == "400"
        assert screen.what_if_result is None and app.focused is None
        await press(pilot, "w")
        assert app.focused is screen.query_one("#wi-limit", Input)
        await press(pilot, "enter")
        await wait_for(pilot, lambda: screen.what_if_result is not None, "the what-if")
        await idle(pilot)
        changes = screen.what_if_result.changes
        assert set(changes.no_longer_starved) == {A1, A2} and changes.newly_starved == []
        assert screen.query_one("#health-views", ContentSwitcher).current == "health-what-if"
        summary = screen.query_one("#wi-summary", Static).content.plain
        assert "starved: 2 → 0 (2 nodes no longer starved, 0 newly starved)" in summary
        nodes = screen.query_one("#wi-nodes")
        assert nodes.has_focus and nodes.current_key in (A1, A2)
        await press(pilot, "enter")  # the row's node
        assert not isinstance(app.screen, HealthScreen)


async def test_a_setting_typed_wrong_is_said_and_leaving_out_react_steps_runs(starved):
    app = make_app(starved)
    async with app.run_test(size=(100, 36)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        await press(pilot, "w")
        limit = screen.query_one("#wi-limit", Input)
        limit.value = "0"
        await press(pilot, "enter")
        said = screen.query_one("#wi-said", Static).content.plain
        assert said == "limit='0': a whole number from 1 to 200"
        assert screen.what_if_result is None
        limit.value = "5"
        screen.query_one("#wi-top-k", Input).value = ""
        screen.query_one("#wi-react", Checkbox).value = True
        screen.query_one("#wi-run").press()
        await wait_for(pilot, lambda: screen.what_if_result is not None, "the what-if")
        result = screen.what_if_result
        assert result.what_if.drop == ["react"] and result.changes.starved_what_if == 2
        assert "[x] leave out ReAct steps" in str(screen.query_one("#wi-react").render())


class GatedRanker:
    """The real BM25 ranking, whose calls from the what-if worker wait while the test holds
    the gate: a small run that computes as long as the test needs, however loaded the host."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name
        self.open, self.waiting = threading.Event(), threading.Event()
        self.open.set()

    def rank(self, query, top_k, before_ts=None):
        if not self.open.is_set() and _worker_group() == "what-if":
            self.waiting.set()
            assert self.open.wait(30), "the test never opened the gate"
        return self.inner.rank(query, top_k, before_ts=before_ts)


def _worker_group() -> str:
    try:
        return get_current_worker().group
    except NoActiveWorker:
        return ""


async def test_esc_interrupts_the_what_if_and_x_works_on_health_s_entries(starved):
    """GIVEN the what-if computing (held at its first search), WHEN Esc, THEN it stops, the
    view stays and says so; THEN x on a row of the entries table asks why the current node
    did (not) see that entry."""
    gated: list[GatedRanker] = []

    def opener(_progress):
        run = open_run(RunOptions(checkpoint=starved, embedder="bm25"))
        gated.append(GatedRanker(run.ranker))
        run.ranker = gated[0]
        return run

    app = app_with(opener)
    async with app.run_test(size=(100, 36)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        gated[0].open.clear()
        await press(pilot, "w")
        await pilot.press("enter")
        await wait_for(pilot, gated[0].waiting.is_set, "the what-if's first search")
        assert screen.computing
        await pilot.press("escape")  # interrupts, does not leave
        progress = screen.query_one("#health-progress-text", Static)
        await wait_for(pilot, lambda: "interrupting" in str(progress.render()), "Esc answered")
        gated[0].open.set()  # the search in hand returns; the next check stops the pass
        await wait_for(pilot, lambda: not screen.computing, "the interrupted what-if")
        await idle(pilot)
        assert isinstance(app.screen, HealthScreen)
        said = screen.query_one("#wi-said", Static).content.plain
        result = screen.what_if_result
        assert said == "what if interrupted" or (result is not None and not result.what_if.complete)
        await press(pilot, "n")  # the numbers
        entries = screen.query_one("#health-entries")
        entries.focus()
        await pilot.pause()
        entry_id = entries.current_key.partition("|")[2]  # (`most|<id>`, `never|<id>`)
        await press(pilot, "Y")
        why = await why_shown(pilot)
        assert (why.answer.entry_id, why.answer.node_id) == (entry_id, app.current_id)
