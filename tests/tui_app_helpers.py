"""Shared set-up for the TUI tests: an app on a checkpoint with the BM25 ranker (deterministic,
no model), and helpers that wait until the app has finished what a key started."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.css.query import NoMatches
from textual.pilot import Pilot
from textual.widgets import Tabs
from textual.widgets._tabs import Underline  # the strip's underline: no public name

from ari_mem_tui.run import Run, RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp


def opener_for(path: Path, label: str | None = None):
    """The same path `cmd_open` takes (sources.open_run), pinned to BM25 and the files."""

    def opener(_progress) -> Run:
        args = RunOptions(checkpoint=path, embedder="bm25")
        run = open_run(args)
        if label is not None:
            run.source_label = label  # a fixed label: snapshots must not show tmp paths
        return run

    return opener


def blocking_opener(path: Path, release, blocked, fail: bool = False):
    """`cmd_open`'s path (open_run with the app's load steps) that stops inside the load, at
    its "memory" part, until `release` is set — as a 10,000-node run keeps it busy for 15 s."""

    def opener(progress):
        def step(n: int, m: int, part: str) -> None:
            progress.step(n, m, part)
            if part == "memory":
                blocked.set()
                assert release.wait(30), "the test never released the load"
                if fail:
                    raise OSError("backup unreadable")

        return open_run(RunOptions(checkpoint=path, embedder="bm25"), step, on_tree=progress.tree)

    return opener


def app_with(opener, **kwargs) -> AriMemApp:
    """The app on `opener` as the tests run it: the theme pinned and not remembered, no blink."""
    kwargs.setdefault("theme", "textual-dark")
    kwargs.setdefault("remember_theme", False)
    kwargs.setdefault("blink", False)
    return AriMemApp(opener, **kwargs)


def make_app(path: Path, label: str | None = None, **kwargs) -> AriMemApp:
    return app_with(opener_for(path, label), **kwargs)


async def settle(pilot: Pilot, loads: int = 1) -> None:
    """Wait for the load(s), then for every worker, then for the screen to refresh."""
    app = pilot.app
    for _ in range(400):
        if app.loaded_count >= loads:
            break
        await pilot.pause(0.02)
    assert app.loaded_count >= loads, "the checkpoint did not load"
    await idle(pilot)
    await idle(pilot)


async def idle(pilot: Pilot) -> None:
    """Until no worker runs (cancelled ones included, unlike `wait_for_complete`)."""
    for _ in range(1000):
        if not any(w.is_running or w.state.name == "PENDING" for w in pilot.app.workers):
            break
        await pilot.pause(0.01)
    await pilot.pause()


async def wait_for(pilot: Pilot, condition: Callable[[], bool], what: str = "") -> None:
    """Until `condition()` holds (10 s at most): a wait on what a step needs, never a guess at
    how long it takes on a loaded machine."""
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting{': ' + what if what else ''}")


async def press(pilot: Pilot, *keys: str) -> None:
    """Press `keys` one at a time, as a person does: after each, the pause that tells single
    command keys from typed text (tui/widgets/panes.py) has passed."""
    for key in keys:
        await pilot.press(key)
        await pilot.pause()
        await settle_keys(pilot)
    await idle(pilot)


async def settle_keys(pilot: Pilot) -> None:
    """As if the user paused after the last key, longer than `PHRASE_GAP`: the next letter is a
    command again, not the next letter of a phrase (tui/typing_guard.py)."""
    pilot.app.typing_guard.typeahead.forget()
    await pilot.pause()


async def cursor_to_write(pilot: Pilot, text: str) -> None:
    """Focus the Writes table and go down it until the write under its cursor is `text`."""
    from ari_mem_tui.tui.widgets.detail import WritesPane

    pilot.app.query_one("#writes-table").focus()
    writes = pilot.app.query_one(WritesPane)
    for _ in range(len(writes.rows)):
        if writes.current_text() == text:
            return
        await press(pilot, "j")
    assert writes.current_text() == text, f"no write {text!r} in the table"


def underlines_in_place(app) -> bool:
    """Every shown tab strip's underline spans its active tab. Tabs move it on a timer after a
    refresh, then animate it: a screenshot taken before then catches it half-way (seen under
    load, with the suite on two workers)."""
    for tabs in app.screen.query(Tabs):
        if not tabs.region.width:
            continue  # not on screen
        try:
            active = tabs.query_one("#tabs-list > Tab.-active")
        except NoMatches:
            continue
        span = active.virtual_region.shrink(active.styles.gutter).column_span
        underline = tabs.query_one(Underline)
        if (underline.highlight_start, underline.highlight_end) != span:
            return False
    return True


async def tabs_drawn(pilot: Pilot) -> None:
    """Until every tab strip's underline is under its active tab (before a snapshot)."""
    await wait_for(pilot, lambda: underlines_in_place(pilot.app), "tab underlines in place")
