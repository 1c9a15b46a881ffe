"""The Textual app: it holds the open run and the state every view shares (reactives the
widgets watch), and the keys that work over any view (quit, help, why, health, runs, reload,
follow, wide). The panes and their keys are the main screen's (tui/main_screen.py), the first
screen on the stack, which shows the run's life and routes a chosen node to the panes; the views
over it are in tui/screens/, each opened by its own module's function. No search or audit logic
here: the workers call the same functions as the CLI (tui/workers.py).
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App
from textual.binding import BindingType
from textual.reactive import var

from ari_mem_tui.checkpoint import Checkpoint, cachefile
from ari_mem_tui.model.secrets import mask
from ari_mem_tui.render.text import preview
from ari_mem_tui.run import EmbedOptions, Run
from ari_mem_tui.tui import config, keys, messages, run_model_ask, workers
from ari_mem_tui.tui.clipboard import copy_text
from ari_mem_tui.tui.commands import ActionCommands, NodeCommands
from ari_mem_tui.tui.follow import Follower
from ari_mem_tui.tui.history import History
from ari_mem_tui.tui.main_screen import MainScreen
from ari_mem_tui.tui.screens.entry import EntryScreen, entry_view
from ari_mem_tui.tui.screens.help import pane_of, show_help
from ari_mem_tui.tui.tables import ExportTable, VimTable
from ari_mem_tui.tui.typing_guard import PHRASE_GAP, TypingGuard
from ari_mem_tui.tui.widgets.hits import NARROW_BELOW
from ari_mem_tui.tui.workers import Opener, RunFactory

DEFAULT_THEME = "textual-dark"
CACHE_NOTES_EVERY_S = 1.0  # how often the cache notes of worker threads are looked for


class AriMemApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ari-mem-tui"
    COMMANDS = App.COMMANDS | {ActionCommands, NodeCommands}
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [
        (0, "-narrow"),
        (NARROW_BELOW, "-wide"),
    ]
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.APP)
    # the state the views share, watched by the widgets that show it (none is told by hand):
    run_data: var[Run | None] = var(None, always_update=True)  # the run (None while it loads)
    current_id: var[str | None] = var(None)  # the chosen node: the tree and the tabs
    findings: var[dict[str, list]] = var(dict, always_update=True)  # the audit's, per node
    wide_columns = var(False)  # `z`: the tables wide (every column) or narrow (they fit)
    following = var(False)  # `F`: the checkpoint's files watched, the run reloaded on a change

    def __init__(
        self,
        opener: Opener | None,
        *,
        title: str = "",
        export_to: Path | None = None,
        theme: str | None = None,
        remember_theme: bool = True,
        follow_interval: float = 1.0,
        blink: bool = True,
        initial_node: str | None = None,
        open_useful: bool = False,
        workspace: Path | None = None,
        run_factory: RunFactory | None = None,
        phrase_gap: float = PHRASE_GAP,
        embed: EmbedOptions | None = None,
    ) -> None:
        super().__init__()
        self.embed = embed or EmbedOptions()  # where `R` sends texts (--embed-url, --embed-model)
        # a workspace: the run picker first (opener None), W goes back to it; run_factory
        # (a run's folder → its opener) opens the run picked (tui/screens/runs.py)
        self.workspace = workspace
        self.run_factory = run_factory
        # a phrase typed into the app goes to the find box, not to the commands (typing_guard.py)
        self.typing_guard = TypingGuard(self, phrase_gap, self._typed)
        self.opener = opener
        self.tree_ckpt: Checkpoint | None = None  # the tree alone, until run_data arrives
        self.export_to = export_to
        self.follow_interval = follow_interval
        self.blink = blink
        self.initial_node = initial_node
        # without a node asked for: a useful node (what `ari-mem-tui CKPT` does), or the root
        self.open_useful = open_useful
        self.remember_theme = False  # not while the initial theme is being applied
        settings = config.load_settings()
        self._wanted_theme = theme or settings.theme or DEFAULT_THEME
        self.keymap = config.keymap(settings)  # the user's remaps: {key id: keys}, tui/keys.py
        # `q` asks first (lazygit's confirmOnQuit): for people who type into the wrong window
        self.confirm_quit = settings.confirm_quit
        self._remember_after_start = remember_theme
        if title:
            self.sub_title = title
        self.last_copied: str | None = None
        self.loaded_count = 0  # how many loads finished (tests and benchmarks wait on it)
        self.health_result: tuple[Run, Any] | None = None  # (run, Health) of the Health view
        self.history = History()  # the views jumps left (`b` back, `B` forward: main_screen.py)
        self.last_csv: Path | None = None  # the last table written as CSV (`x`)
        self.main = MainScreen()  # the panes: the first screen, never popped

    @property
    def ckpt(self) -> Checkpoint | None:
        """The run's checkpoint; while its memory loads, the tree alone (`LoadProgress.tree`)."""
        return self.run_data.checkpoint if self.run_data else self.tree_ckpt

    def notify(self, message: str, *, markup: bool = False, **kwargs: Any) -> None:
        """Every toast is literal: most carry run data (ids, entry text, server errors), and
        markup in them would crash the app (`[/x]`) or run an action (`[@click=app.quit]`).
        Widgets' own `notify` passes `markup=True` by default, so it is ignored here."""
        del markup
        super().notify(mask(message), markup=False, **kwargs)  # no credential, in any form

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes meet the typing guard here, in the app's queue, in the order they
        came, before they are handed to the focused widget."""
        typed = isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded
        if typed and self.typing_guard.takes(event):
            return
        await super().on_event(event)

    def _typed(self, text: str, new: bool) -> None:
        """A phrase typed, or text pasted, outside a text box: a new find, or more of the one
        just begun (tui/typing_guard.py)."""
        self.main.tree_pane.open_find(text, new)

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_mount(self) -> None:
        # thread workers run on daemon threads: `q` must not wait for a load or a Letta call
        # that is still waiting (asyncio.run joins the default executor's threads on exit)
        asyncio.get_running_loop().set_default_executor(workers.DaemonThreads())
        try:
            self.theme = self._wanted_theme
        except Exception:  # noqa: BLE001 - an unknown theme in the config file is not fatal
            self.theme = DEFAULT_THEME
        self.remember_theme = self._remember_after_start
        self.set_keymap(self.keymap)
        if unknown := keys.unknown_ids(self.keymap):
            self.notify(f"config: no key called {', '.join(unknown)}", severity="warning")
        self.set_interval(CACHE_NOTES_EVERY_S, self._cache_notes)
        self.follower = Follower(self, self.follow_interval, lambda: self.ckpt and self.ckpt.path)

    def _cache_notes(self) -> None:
        """Caches and settings of the tool found damaged (and rebuilt, or ignored): once each."""
        for note in cachefile.take_notes():
            self.notify(preview(note, 300), title="cache", severity="warning", timeout=8)

    def watch_theme(self, theme: str) -> None:
        if self.remember_theme:
            config.save_setting("theme", theme)

    # ------------------------------------------------------------------ the run

    def open_checkpoint(self, path: Path) -> None:
        """Leave the open run (if any) and load the run at `path` (from the run picker)."""
        assert self.run_factory is not None
        for group in ("load", "audit"):
            self.workers.cancel_group(self.main, group)  # first: they fill what is emptied now
        self.opener = self.run_factory(path)
        self.tree_ckpt = self.current_id = self.initial_node = self.run_data = None
        self.history.clear()  # its views are of the run left
        self.forget_health()
        self.sub_title = str(path)
        self.main.open_run()

    def forget_health(self) -> None:
        """Another run (or ranker): its health is to be computed, and the last one let go of
        (its view is kept, to be refilled: building it again cost a key's time)."""
        self.health_result = None
        if self.is_screen_installed("health"):
            screen = self.get_screen("health")
            if screen not in self.screen_stack:
                screen.forget()  # type: ignore[attr-defined]

    def on_checkpoint_changed(self) -> None:
        self.main.load(keep=True)

    def action_reload(self) -> None:
        self.notify("reloading …")
        self.main.load(keep=True)

    def action_toggle_follow(self) -> None:
        self.following = self.follower.toggle()
        self.notify("following the checkpoint" if self.following else "follow off")

    def action_run_model(self) -> None:
        """`R`: rank with the run's own embedding model, asked first (tui/run_model_ask.py)."""
        run_model_ask.ask(self, self.run_data, self.embed)

    # ------------------------------------------------------------------ the views

    async def action_quit(self) -> None:
        self.leave()

    def leave(self) -> None:
        """`q`, Ctrl+C, Ctrl+Q: quit at once (even while a load or a Letta call waits). With
        `"confirm_quit": true` in the config file, ask first: `y` quits, any other key stays;
        Ctrl+Q (Textual's priority quit, which reaches past the question) quits while asked."""
        if not self.confirm_quit or self.screen.id == "confirm-quit":
            self.exit()
            return
        from ari_mem_tui.tui.screens.confirm import ask  # noqa: PLC0415 - on first use

        ask(self, Text("Quit ari-mem-tui?", style="bold"), self.exit, id="confirm-quit")

    def action_help(self) -> None:
        show_help(self, self.keymap, None)

    def action_pane_help(self) -> None:
        """F1: the help, the keys of the focused pane first (tui/screens/help.py)."""
        show_help(self, self.keymap, pane_of(self.screen.focused))

    def action_runs(self) -> None:
        """`W`: the workspace's run picker (tui/screens/runs.py)."""
        from ari_mem_tui.tui.screens.runs import show_runs  # noqa: PLC0415 - on first use

        show_runs(self)

    def action_health(self) -> None:
        """`H`: the run's memory health (tui/screens/health.py)."""
        from ari_mem_tui.tui.screens.health import show_health  # noqa: PLC0415 - on first use

        show_health(self)

    def action_why(self) -> None:
        """`Y`: why the node did (not) see the entry under the cursor (tui/screens/why.py)."""
        from ari_mem_tui.tui.screens.why import ask_why  # noqa: PLC0415 - on first use

        ask_why(self, self._went_to)

    def on_open_entry(self, message: messages.OpenEntry) -> None:
        """A memory entry in full (from a row of any view), over whatever is shown."""
        view = entry_view(self.ckpt, message.entry_id, message.row)
        if view is None:
            self.notify("that entry is not in the loaded memory", severity="warning")
        else:
            self.push_screen(view, self._went_to)

    def on_view_row(self, message: messages.ViewRow) -> None:
        self.push_screen(EntryScreen(message.row), self._went_to)

    def on_jump_to_node(self, message: messages.JumpToNode) -> None:
        self.main.jump_to(message.node_id)

    def _went_to(self, node_id: str | None) -> None:
        """`o` in a row's view: go to the row's node."""
        if node_id:
            self.main.jump_to(node_id)

    def on_notice(self, message: messages.Notice) -> None:
        self.notify(message.text, severity=message.severity)

    # ------------------------------------------------------------------ the tables

    def action_table(self, action: str) -> None:
        """A table key from the palette: on the focused table, else the shown tab's."""
        focused, tabs = self.focused, self.main.tabs
        table = focused if isinstance(focused, VimTable) else None
        if table is None and tabs.display and self.screen is self.main:
            pane = tabs.get_pane(tabs.active) if tabs.active else None
            table = next(iter(pane.query(VimTable)), None) if pane is not None else None
        if table is None:
            self.notify("no table here", severity="warning")
            return
        table.focus()
        getattr(table, f"action_{action}")()

    def on_export_table(self, message: ExportTable) -> None:
        """`x`: the table's rows as CSV, asked first (tui/table_export.py)."""
        from ari_mem_tui.tui.table_export import ask_and_write  # noqa: PLC0415 - on first use

        ask_and_write(self, message.table)

    def action_toggle_wide(self) -> None:
        """`z`: every table wide (all columns, long text, sideways scroll) or narrow (it fits);
        the tables and the status line watch `wide_columns` (tui/tables.py)."""
        self.wide_columns = not self.wide_columns

    def copy_text(self, text: str, what: str = "") -> None:
        """The one way text reaches the clipboard (tui/clipboard.py): safe to paste, by OSC 52,
        the toast saying how (or why it cannot arrive) and what was changed."""
        self.last_copied = copy_text(self, text, what)


def run_app(opener: Opener, **kwargs: Any) -> int:
    kwargs.setdefault("open_useful", True)
    AriMemApp(opener, **kwargs).run()
    # what the run left is freed when the process ends: a last collection over a big run's
    # millions of objects kept the shell waiting seconds after `q`
    gc.freeze()
    return 0
