"""The Textual app: tree on the left, what the chosen node saw on the right.

The app composes the panes and binds the keys; it holds no search or audit logic. A run's load,
reload and audit live in `RunLifecycle` (tui/lifecycle.py), where a chosen node or a row goes in
`Routing` (tui/routing.py), both mixed in here. Thread workers (tui/workers.py) call `open_run`,
`search.replay.replay` and `audit.audit` (the same functions the CLI uses) and post their results
as messages (tui/messages.py); every result is checked against the current selection before it
is shown, so moving fast never shows stale hits. The panes own their chores (find and filter:
the tree pane; the search settings: the Hits pane) and talk to the app with messages too.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.reactive import var
from textual.widgets import Input

from ari_mem_tui.checkpoint import Checkpoint, cachefile
from ari_mem_tui.model import Replay
from ari_mem_tui.model.secrets import mask
from ari_mem_tui.render.text import preview
from ari_mem_tui.render.words import unseen_words
from ari_mem_tui.run import EmbedOptions, Run
from ari_mem_tui.search.run_model import KEY_ENV
from ari_mem_tui.tui import config, keys, workers
from ari_mem_tui.tui.clipboard import copy_text
from ari_mem_tui.tui.commands import ActionCommands, NodeCommands
from ari_mem_tui.tui.follow import Follower
from ari_mem_tui.tui.history import History
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.lifecycle import RunFactory, RunLifecycle
from ari_mem_tui.tui.messages import ReplayKey
from ari_mem_tui.tui.routing import Routing
from ari_mem_tui.tui.screens.help import HelpScreen
from ari_mem_tui.tui.tables import ExportTable, VimTable
from ari_mem_tui.tui.typing_guard import PHRASE_GAP, TypingGuard
from ari_mem_tui.tui.widgets.detail import (
    AuditPane,
    CorePane,
    NodePane,
    SawPane,
    WritesPane,
)
from ari_mem_tui.tui.widgets.detail_tabs import TAB_CLASSES, DetailTabs
from ari_mem_tui.tui.widgets.hits import NARROW_BELOW, HitsPane
from ari_mem_tui.tui.widgets.panes import Panes
from ari_mem_tui.tui.widgets.run_tree import RunTree
from ari_mem_tui.tui.widgets.status_bar import LoadingNote, StatusBar
from ari_mem_tui.tui.widgets.tree_pane import TreePane
from ari_mem_tui.tui.workers import Opener

DEFAULT_THEME = "textual-dark"
CACHE_NOTES_EVERY_S = 1.0  # how often the cache notes of worker threads are looked for


class AriMemApp(RunLifecycle, Routing, App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ari-mem-tui"
    COMMANDS = App.COMMANDS | {ActionCommands, NodeCommands}
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [
        (0, "-narrow"),
        (NARROW_BELOW, "-wide"),
    ]
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.APP)
    wide_columns = var(False)  # `z`: the tables wide (every column) or narrow (they fit)

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
        # gives the opener of the run picked (tui/screens/runs.py)
        self.workspace = workspace
        # a phrase typed into the app goes to the find box, not to the commands (tui/typing_guard.py)
        self.typing_guard = TypingGuard(self, phrase_gap, self._typed)
        self.run_factory = run_factory
        self.opener = opener
        self.run_data: Run | None = None
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
        self.current_id: str | None = None
        self.last_copied: str | None = None
        self.loaded_count = 0  # how many loads finished (tests and benchmarks wait on it)
        self._pending: Run | None = None  # loaded; its audit (and index) not started yet
        self._audited: Checkpoint | None = None  # audited by its load (RunLoaded.audit)
        self._to_keep = None  # that audit, when made now: kept after the first hits
        self.health_result: tuple[Run, Any] | None = None  # (run, Health) of the Health view
        self.history = History()  # the views jumps left (`b` back, `B` forward: routing.py)
        self.last_csv: Path | None = None  # the last table written as CSV (`x`)

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

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Panes(id="main"):
            yield TreePane(id="tree-pane")
            with DetailTabs(id="tabs", initial="hits"):
                for index, (name, pane) in enumerate(zip(keys.TABS, PANES, strict=True)):
                    with TAB_CLASSES[name](f"{index + 1} {name.title()}", id=name):
                        yield pane(id=f"{name}-pane")
            yield LoadingNote(Text("loading memory …", style="italic"), id="memory-loading")
        yield StatusBar(id="status")
        yield KeyBar()

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
        if not self.blink:
            for widget in self.query(Input):
                widget.cursor_blink = False
        self.status_bar.set_source("opening …")
        self.set_interval(CACHE_NOTES_EVERY_S, self._cache_notes)
        self.status_bar.set_problems(0)
        self.follower = Follower(self, self.follow_interval, lambda: self.ckpt and self.ckpt.path)
        self.tree_widget.show_loading()
        self.tree_widget.focus()
        self._show_memory_pane(False)
        # after the first frame: reading the tree while the app draws its first frame made both
        # slower (on 10,000 nodes the tree read took 1.5 s instead of 0.95 s)
        if self.opener is None:  # a workspace: the picker opens the run
            self.call_after_refresh(self.action_runs)
            return
        self.call_after_refresh(self._load, keep=False)

    def _cache_notes(self) -> None:
        """Caches and settings of the tool found damaged (and rebuilt, or ignored): once each."""
        for note in cachefile.take_notes():
            self.notify(preview(note, 300), title="cache", severity="warning", timeout=8)

    def watch_theme(self, theme: str) -> None:
        if self.remember_theme:
            config.save_setting("theme", theme)
        for panes in self.query(Panes):  # the borders' colours are the theme's
            panes.light()

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def tree_pane(self) -> TreePane:
        return self.query_one(TreePane)

    @property
    def tree_widget(self) -> RunTree:
        return self.query_one(RunTree)

    @property
    def tabs(self) -> DetailTabs:
        return self.query_one(DetailTabs)

    @property
    def audit_pane(self) -> AuditPane:
        return self.query_one(AuditPane)

    @property
    def replays(self) -> dict[ReplayKey, Replay]:
        return self.tabs.replays

    @property
    def following(self) -> bool:
        return self.follower.on

    # ------------------------------------------------------------------ actions

    async def action_quit(self) -> None:
        self.leave()

    def leave(self) -> None:
        """`q`, Ctrl+C, Ctrl+Q: quit at once (even while a load or a Letta call waits). With
        `"confirm_quit": true` in the config file, ask first: `y` quits, any other key stays;
        Ctrl+Q (Textual's priority quit, which reaches past the question) quits while asked."""
        if not self.confirm_quit or self.screen.id == "confirm-quit":
            self.exit()
            return
        from ari_mem_tui.tui.screens.confirm import ConfirmScreen  # noqa: PLC0415 - on first use

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        question = Text("Quit ari-mem-tui?", style="bold")
        self.push_screen(ConfirmScreen(question, id="confirm-quit"), answered)

    def action_help(self) -> None:
        self._show_help(None)

    def action_pane_help(self) -> None:
        """F1: the help, the keys of the focused pane first (the first widget from focus up
        that names its key scopes: the tree pane, a tab; tui/keys.py)."""
        focused = self.screen.focused
        for node in focused.ancestors_with_self if focused is not None else ():
            scopes = getattr(node, "HELP_SCOPES", ())
            if scopes:
                self._show_help((getattr(node, "help_name", "this pane"), scopes))
                return
        self._show_help(None)

    def _show_help(self, pane: tuple[str, tuple[str, ...]] | None) -> None:
        """The help (on `pane`'s keys first), built once and shown again after."""
        if isinstance(self.screen, HelpScreen):
            return
        name = "help" if pane is None else f"help-{pane[0]}"
        if not self.is_screen_installed(name):
            self.install_screen(HelpScreen(self.keymap, pane), name)
        self.push_screen(name)

    def action_runs(self) -> None:
        """The workspace's run picker; Enter there opens the run in this app."""
        if self.workspace is None or self.run_factory is None:
            self.notify("opened on one run: start on a workspace folder for the list of runs")
            return
        from ari_mem_tui.tui.screens.runs import RunPickerScreen  # noqa: PLC0415 - on first use

        if isinstance(self.screen, RunPickerScreen):
            return

        def picked(path: Path | None) -> None:
            if path is not None:
                self.open_checkpoint(path)

        back = self.opener is not None
        self.push_screen(RunPickerScreen(self.workspace, can_go_back=back), picked)

    def action_health(self) -> None:
        """The run's memory health (tui/screens/health.py), computed once per loaded run; its
        view is built once and shown again (composing it cost a key's time), refilled for
        another run (after a reload) or when it holds no complete result."""
        run = self.run_data
        if run is None:
            self.notify("the run's memory is still loading", severity="warning")
            return
        from ari_mem_tui.tui.screens.health import HealthScreen  # noqa: PLC0415 - on first use

        if isinstance(self.screen, HealthScreen):
            return
        kept = self.health_result
        cached = kept[1] if kept is not None and kept[0] is run else None

        def keep(result: Any) -> None:
            self.health_result = (run, result)

        shown = self.get_screen("health") if self.is_screen_installed("health") else None
        if not isinstance(shown, HealthScreen):
            self.install_screen(HealthScreen(run, cached, keep), "health")
        elif cached is None or shown.result is not cached or shown.run_data is not run:
            shown.refill(run, cached, keep)  # (another run, or no complete result: the same view)
        self.push_screen("health")

    def action_tab(self, name: str) -> None:
        """Show tab `name`; when the detail pane had focus, its new main widget takes it."""
        tabs = self.tabs
        had_focus = self.focused is not None and tabs in self.focused.ancestors_with_self
        tabs.active = name
        if had_focus:
            # now, not after a refresh: the old tab's widget, hidden, would pass its focus on
            # to a widget of its own tab, switching the tabs back (seen at 80×24 in tmux)
            tabs.focus_main()

    def action_focus_tree(self) -> None:
        self.tree_pane.display = True
        self.tree_widget.focus()

    def action_focus_detail(self) -> None:
        if self.tabs.display and not self.tabs.focus_main():
            self.tabs.focus()

    def action_focus_query(self) -> None:
        """`i`: the Hits tab's query box, from anywhere."""
        if not self.tabs.display:
            return
        self.tabs.active = "hits"
        self.query_one("#query-input", Input).focus()  # at once, as action_tab does

    def action_escape(self) -> None:
        """Esc: a maximised pane back in its place; from the tabs, back to the tree; in the
        tree, clear the find, else the filter."""
        panes = self.query_one(Panes)
        if panes.maximised:
            panes.maximised = ""
            return
        focused = self.focused
        if focused is not None and self.tabs in focused.ancestors_with_self:
            self.action_focus_tree()
            return
        cleared, target = self.tree_pane.escape()
        if target:
            self.choose(target)
        if cleared:
            self.notify(f"{cleared} cleared")

    def action_toggle_tree(self) -> None:
        self.query_one(Panes).toggle_tree()

    def action_maximise(self) -> None:
        """`+`: the focused pane (the tree, or the shown tab) fills the screen; `+` again, or
        Esc: back (widgets/panes.py)."""
        if not self.query_one(Panes).maximise(self.focused):
            self.notify("focus a pane first ([ or ])")

    def action_table(self, action: str) -> None:
        """A table key from the palette: on the focused table, else the shown tab's."""
        focused = self.focused
        table = focused if isinstance(focused, VimTable) else None
        if table is None and self.tabs.display:
            pane = self.tabs.get_pane(self.tabs.active) if self.tabs.active else None
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
        the tables watch `wide_columns` (tui/tables.py)."""
        self.wide_columns = not self.wide_columns
        self.status_bar.set_wide(self.wide_columns)

    def action_toggle_dim(self) -> None:
        tree = self.tree_widget
        tree.set_dim_unseen(not tree.dim_unseen)
        node, ckpt = tree.selected_id, tree.ckpt
        if not tree.dim_unseen or ckpt is None or node not in ckpt.nodes:
            self.notify(
                "dimming nodes outside the search scope" if tree.dim_unseen else "dimming off"
            )
            return
        self.notify(unseen_words(ckpt, node))

    def action_toggle_missed(self) -> None:
        self.action_tab("hits")
        self.query_one(HitsPane).toggle_missed()

    def action_toggle_as_of(self) -> None:
        self.query_one(HitsPane).toggle_as_of()

    def action_cycle_query(self) -> None:
        self.action_tab("hits")
        self.query_one(HitsPane).cycle_query()

    def action_toggle_writes_scope(self) -> None:
        self.tabs.toggle_writes_scope()

    def action_find(self) -> None:
        self.tree_pane.open_find()

    def _typed(self, text: str, new: bool) -> None:
        """A phrase typed, or text pasted, outside a text box: a new find, or more of the one
        just begun (tui/typing_guard.py)."""
        self.tree_pane.open_find(text, new)

    def action_find_next(self) -> None:
        self.tree_pane.find_step(1)

    def action_find_prev(self) -> None:
        self.tree_pane.find_step(-1)

    def action_filter(self) -> None:
        self.tree_pane.open_filter()

    def action_clear_filter(self) -> None:
        if target := self.tree_pane.clear_filter():
            self.choose(target)

    def action_mark(self) -> None:
        self.tabs.mark(self.current_id)

    def action_compare(self) -> None:
        self.tabs.compare(self.current_id)

    def action_copy(self) -> None:
        """`y`: the entry under the cursor, else the node id."""
        if text := self.tabs.copy_target(self.current_id):
            self.copy_text(text)

    def action_why(self) -> None:
        """`Y`: why the node (the marked one, else the current) did or did not see the entry
        under the cursor (tui/screens/why.py)."""
        from ari_mem_tui.tui.screens.why import WhyScreen  # noqa: PLC0415 - on first use

        run, entry_id = self.run_data, self._entry_under_cursor()
        if run is None or entry_id is None or entry_id not in run.checkpoint.entries_by_id:
            self.notify("no memory entry under the cursor: a row of Hits or Writes, or an entry")
            return
        current, marked = self.current_id, self.tabs.marked_id
        if not current and not marked:
            self.notify("choose a node first", severity="warning")
            return
        asked, other = (marked, current) if marked and marked != current else (current, marked)
        self.push_screen(
            WhyScreen(run, entry_id, asked or "", other if other != asked else None), self._went_to
        )

    def _entry_under_cursor(self) -> str | None:
        """The entry of the row under the cursor: an entry view's, the Health view's entries
        table's, else the focused Hits or Writes table's."""
        from ari_mem_tui.tui.screens.entry import EntryScreen  # noqa: PLC0415
        from ari_mem_tui.tui.screens.health import HealthScreen  # noqa: PLC0415

        screen = self.screen
        if isinstance(screen, EntryScreen):
            return screen.entry.id if screen.entry is not None else None
        if isinstance(screen, HealthScreen):
            return screen.entry_under_cursor()
        return self.tabs.entry_under_cursor()

    def copy_text(self, text: str, what: str = "") -> None:
        """The one way text reaches the clipboard (tui/clipboard.py): safe to paste, by OSC 52,
        the toast saying how (or why it cannot arrive) and what was changed."""
        self.last_copied = copy_text(self, text, what)

    def action_export(self) -> None:
        self.tabs.export(self.export_to)

    def action_run_model(self) -> None:
        """`R`: rank with the run's own embedding model. Nothing is sent before the question,
        which names what goes where, has its `y`."""
        run = self.run_data
        if run is None:
            self.notify("the run's memory is still loading", severity="warning")
            return
        name = str(getattr(run.ranker, "name", ""))
        if name.startswith(("run", "letta:")):
            self.notify(f"already ranking as the run did ({name})")
            return
        from ari_mem_tui.search.backends import run_backend  # noqa: PLC0415

        if run_backend(run.checkpoint).in_memory:  # no embedding model ranked it: nothing to send
            self.notify(
                "ARI's in-memory backend recorded this run: no embedding model ranked it, so"
                " nothing is sent; its own rule (--embedder in-memory, the default) is exact"
            )
            return
        from ari_mem_tui.search.run_model import EmbedSetupError, plan_endpoint  # noqa: PLC0415
        from ari_mem_tui.search.vector_cache import cache_root  # noqa: PLC0415
        from ari_mem_tui.tui.screens.confirm import ConfirmScreen  # noqa: PLC0415

        ckpt = run.checkpoint
        try:
            plan = plan_endpoint(self.embed, ckpt.letta_embedding_config)
        except EmbedSetupError as exc:
            self.notify(preview(str(exc), 300), severity="warning")
            return
        question = Text.assemble(
            ("Rank with the run's embedding model?\n", "bold"),
            f"This sends all {len(ckpt.entries):,} memory texts of the run, each with ARI's"
            " footer (node id, metadata, time), and the search queries, to\n",
            (f"{plan.shown_url}", "bold"),
            f"\nmodel {plan.model} ({plan.how}; "
            + ("key from $" + KEY_ENV if plan.key_set else f"no key: ${KEY_ENV} is not set")
            + f").\nVectors are cached in {cache_root()} by model and text.",
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._use_run_model(run)
            else:
                self.notify("nothing sent")

        self.push_screen(ConfirmScreen(question), answered)

    def _use_run_model(self, run: Run) -> None:
        from ari_mem_tui.run import run_model_ranker  # noqa: PLC0415 - on first use

        old = run.ranker
        run.ranker = run_model_ranker(run.checkpoint, self.embed)
        stop = getattr(old, "stop", None)
        if stop is not None:
            stop(0)
        self._forget_health()  # computed with the old ranker
        self.status_bar.set_embedder(run.ranker.name)
        self.status_bar.watch_vectors(run.ranker)
        self.tabs.rerank()

    def action_reload(self) -> None:
        self.notify("reloading …")
        self._load(keep=True)

    def action_toggle_follow(self) -> None:
        following = self.follower.toggle()
        self.status_bar.set_follow(following)
        self.notify("following the checkpoint" if following else "follow off")


PANES = (HitsPane, SawPane, CorePane, WritesPane, NodePane, AuditPane)  # as keys.TABS


# ---------------------------------------------------------------------- entry points


def run_app(opener: Opener, **kwargs: Any) -> int:
    kwargs.setdefault("open_useful", True)
    AriMemApp(opener, **kwargs).run()
    # what the run left is freed when the process ends: a last collection over a big run's
    # millions of objects kept the shell waiting seconds after `q`
    gc.freeze()
    return 0
