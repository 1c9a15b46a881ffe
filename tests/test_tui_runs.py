"""Pilot tests of the run picker: a workspace opens on its runs, newest first; `/` filters,
Enter opens a run, W returns to the list, Esc goes back; recent runs are remembered."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from workspace_helpers import RUNS, make_workspace

from ari_mem_tui import workspace
from ari_mem_tui.cli import main
from ari_mem_tui.cli.commands import run_openers
from ari_mem_tui.tui.app import AriMemApp
from ari_mem_tui.tui.screens.runs import RunPickerScreen
from tests.tui_app_helpers import idle, press, settle


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


def workspace_app(root: Path) -> AriMemApp:
    args = argparse.Namespace(checkpoint=root, embedder="bm25")
    return AriMemApp(
        None,
        workspace=root,
        run_factory=run_openers(args),
        theme="textual-dark",
        remember_theme=False,
        blink=False,
    )


def keys_of(table) -> list[str]:
    return [Path(table.plain_key(k.value)).name for k in table.rows]


async def test_the_picker_lists_newest_first_filters_and_opens_a_run(ws):
    app = workspace_app(ws)
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, RunPickerScreen)
        table = screen.query_one("#runs-table")
        assert keys_of(table) == list(reversed(RUNS))
        assert screen.counted and [r.nodes for r in screen.runs] == [4, 1, 5]
        await press(pilot, "slash", *"sec")
        assert keys_of(table) == [RUNS[1]]
        await press(pilot, "enter", "enter")  # close the filter, open the run under the cursor
        await settle(pilot)
        assert not isinstance(app.screen, RunPickerScreen)
        assert app.ckpt.run_id == RUNS[1] and app.sub_title.endswith(RUNS[1])
        assert [r["path"] for r in workspace.recent_runs()] == [str(ws / "checkpoints" / RUNS[1])]


async def test_w_returns_to_the_list_and_another_run_replaces_the_first(ws):
    app = workspace_app(ws)
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        await press(pilot, "enter")  # the newest
        await settle(pilot)
        assert app.ckpt.run_id == RUNS[2] and len(app.ckpt.nodes) == 4
        await press(pilot, "W")
        assert isinstance(app.screen, RunPickerScreen)
        await press(pilot, "escape")  # back to the open run, unchanged
        assert app.ckpt.run_id == RUNS[2]
        await press(pilot, "W", "G", "enter")  # the oldest
        await settle(pilot, loads=2)
        assert app.ckpt.run_id == RUNS[0] and len(app.ckpt.nodes) == 5
        assert app.current_id in app.ckpt.nodes
        recent = [Path(r["path"]).name for r in workspace.recent_runs()]
        assert recent == [RUNS[0], RUNS[2]]


async def test_esc_on_the_first_list_quits(ws):
    app = workspace_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await idle(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert app.return_code is not None or not app.is_running


def test_opening_a_folder_that_is_neither_says_so_in_one_line(capsys, tmp_path):
    (tmp_path / "plain").mkdir()
    assert main([str(tmp_path / "plain")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither an ARI run" in err
