"""The run picker: every run of a workspace, newest first; `/` filters (the table's own filter,
tui/tables.py: the run's name, id and path, any cell), `S` sorts, Enter opens one.

The list appears at once from what a directory listing gives (names, dates, sizes); node and
entry counts, which need a read of each run's tree and backup, fill in from a worker (cached
outside the runs, so a second visit is instant). The same rows as `ari-mem-tui runs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from ari_mem_tui.model.workspace import RunInfo, Workspace
from ari_mem_tui.render.runs import (
    RUN_COLUMNS,
    WIDE_FROM,
    run_cells,
    shown_columns,
    summary_legend,
)
from ari_mem_tui.render.text import clean
from ari_mem_tui.render.words import plural
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.messages import RunsCounted
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.workspace import CountCache, newest_first, run_info, scan


class RunPickerScreen(Screen[Path | None]):
    """Dismisses with the chosen run's path, or None (Esc) when a run is already open."""

    DEFAULT_CSS = """
    RunPickerScreen #runs-main { height: 1fr; padding: 0 1; }
    RunPickerScreen #runs-title { height: auto; margin-bottom: 1; }
    RunPickerScreen #runs-table { height: 1fr; }
    RunPickerScreen #runs-legend { height: auto; color: $text-muted; }
    RunPickerScreen #runs-status { height: 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.RUNS)

    def __init__(self, workspace: Path, can_go_back: bool = False) -> None:
        super().__init__()
        self.workspace = workspace
        self.can_go_back = can_go_back
        self.runs: list[RunInfo] = []
        self.counted = False

    def compose(self) -> ComposeResult:
        with Vertical(id="runs-main"):
            yield Static("", id="runs-title")
            yield VimTable(id="runs-table")
            yield Static("", id="runs-legend")
            yield Static("", id="runs-status")
        yield KeyBar()

    def on_mount(self) -> None:
        ws = scan(self.workspace, counts=False)
        self.runs = ws.runs
        self._title(ws)
        self._fill()
        self.query_one("#runs-table").focus()
        self._count()

    def _title(self, ws: Workspace) -> None:
        text = Text(f"{plural(len(ws.runs), 'run')} in {clean(ws.path, False)}", style="bold")
        text.append("   newest first · / filter · S sort · Enter open · Esc back", style="dim")
        self.query_one("#runs-title", Static).update(text)

    def _fill(self) -> None:
        table = self.query_one("#runs-table", VimTable)
        keep = table.current_key
        width = self.app.size.width
        columns = shown_columns(width)
        rows = []
        for run in self.runs:
            cells = run_cells(
                run,
                counted=self.counted or run.nodes is not None,
                name_width=28 if width < WIDE_FROM else 44,
            )
            keep_cells = [
                cell for column, cell in zip(RUN_COLUMNS, cells, strict=True) if column in columns
            ]
            rows.append((run.path, [*keep_cells, run.path]))  # the path: filtered on, shown wide
        table.fill([*columns, "path"], rows, wide_only=("path",))
        if keep is not None:
            table.go_to_key(keep)
        # what the summary columns need said (as `runs` says it): the ranker behind "replay"
        legend = Text("\n").join(Text(clean(words, False)) for words in summary_legend(self.runs))
        self.query_one("#runs-legend", Static).update(legend)
        self._status()

    def _status(self) -> None:
        table = self.query_one("#runs-table", VimTable)
        status = f"{len(table.shown_rows)} of {len(self.runs)} shown"
        if table.view.active:
            status += f" · {table.view_words()}"
        if not self.counted:
            status += " · counting nodes and entries …"
        self.query_one("#runs-status", Static).update(Text(clean(status, False)))

    @on(VimTable.ViewChanged)
    def _view_changed(self, event: VimTable.ViewChanged) -> None:
        event.stop()
        self._status()

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False, description="runs")
    def _count(self) -> None:
        worker = get_current_worker()
        cache = CountCache.load()
        counted: list[RunInfo] = []
        for run in list(self.runs):
            if worker.is_cancelled:
                return
            info = run_info(Path(run.path), counts=True, cache=cache)
            info.recent, info.folder = run.recent, run.folder
            counted.append(info)
        cache.save()
        if not worker.is_cancelled:
            self.post_message(RunsCounted(counted))

    @on(RunsCounted)
    def _counted(self, message: RunsCounted) -> None:
        self.runs = newest_first(message.runs)
        self.counted = True
        self._fill()

    # ------------------------------------------------------------------ keys
    def action_filter(self) -> None:
        """`/` where the table has no focus: its filter all the same."""
        self.query_one("#runs-table", VimTable).action_filter_rows()

    async def action_back(self) -> None:
        """Esc (a filtered table clears its filter first, tui/tables.py): back to the open run,
        or, on the first list, quit."""
        if self.can_go_back:
            self.dismiss(None)
        else:
            await self.app.run_action("app.quit")  # the app's quit: asks first if configured

    @on(DataTable.RowSelected, "#runs-table")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = VimTable.plain_key(event.row_key.value)
        if key:
            self.dismiss(Path(key))


def show_runs(app: Any) -> None:
    """`W`: the workspace's run picker over the open run (Esc: back to it); the run picked is
    opened in the app (`open_checkpoint`). Opened on one run, there is no workspace to list."""
    if app.workspace is None or app.run_factory is None:
        app.notify("opened on one run: start on a workspace folder for the list of runs")
        return
    if isinstance(app.screen, RunPickerScreen):
        return

    def picked(path: Path | None) -> None:
        if path is not None:
            app.open_checkpoint(path)

    back = app.opener is not None
    app.push_screen(RunPickerScreen(app.workspace, can_go_back=back), picked)
