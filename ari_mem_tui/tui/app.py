"""The Textual app: tree on the left, what the chosen node saw on the right.

The app composes the panes and routes between them; it holds no search or audit logic. Its
thread workers (tui/workers.py) call `open_run`, `search.replay.replay` and `audit.audit` (the
same functions the CLI uses) and post their results as messages (tui/messages.py); every result
is checked against the current selection before it is shown, so moving fast never shows stale
hits. The panes own their chores (find and filter: the tree pane; the search settings: the Hits
pane) and talk to the app with messages too.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.reactive import var
from textual.widgets import Footer, Input

from ari_mem_tui.checkpoint import Checkpoint, cachefile
from ari_mem_tui.model import Replay
from ari_mem_tui.model.secrets import mask
from ari_mem_tui.render.text import paste_safe, preview
from ari_mem_tui.run import Run
from ari_mem_tui.tui import config, keys, workers
from ari_mem_tui.tui import messages as msg
from ari_mem_tui.tui.commands import ActionCommands, NodeCommands
from ari_mem_tui.tui.follow import Follower
from ari_mem_tui.tui.messages import ReplayKey
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.help import HelpScreen
from ari_mem_tui.tui.widgets.detail import (
    AuditPane,
    AuditRow,
    CorePane,
    NodePane,
    SawPane,
    WritesPane,
)
from ari_mem_tui.tui.widgets.detail_tabs import TAB_CLASSES, DetailTabs
from ari_mem_tui.tui.widgets.hits import HitsPane
from ari_mem_tui.tui.widgets.panes import BURST_GAP, Panes
from ari_mem_tui.tui.widgets.run_tree import RunTree
from ari_mem_tui.tui.widgets.status_bar import LoadingNote, StatusBar
from ari_mem_tui.tui.widgets.tree_pane import TreePane
from ari_mem_tui.tui.workers import Opener

RunFactory = Callable[[Path], Opener]  # a workspace's run → its opener

DEFAULT_THEME = "textual-dark"
CACHE_NOTES_EVERY_S = 1.0  # how often the cache notes of worker threads are looked for
AUDIT_WAITS_S = 5.0  # at most this long for the first replay before the audit starts anyway


class AriMemApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ari-mem-tui"
    COMMANDS = App.COMMANDS | {ActionCommands, NodeCommands}
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
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
        burst_gap: float = BURST_GAP,
    ) -> None:
        super().__init__()
        # a workspace: the run picker first (opener None), W goes back to it; run_factory
        # gives the opener of the run picked (tui/screens/runs.py)
        self.workspace = workspace
        self.burst_gap = burst_gap  # printable keys closer than this are text (widgets/panes.py)
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
        self._wanted_theme = theme or settings.get("theme") or DEFAULT_THEME
        self.keymap = config.keymap(settings)  # the user's remaps: {key id: keys}, tui/keys.py
        # `q` asks first (lazygit's confirmOnQuit): for people who type into the wrong window
        self.confirm_quit = config.flag(settings, "confirm_quit")
        self._remember_after_start = remember_theme
        if title:
            self.sub_title = title
        self.current_id: str | None = None
        self.last_copied: str | None = None
        self.loaded_count = 0  # how many loads finished (tests and benchmarks wait on it)
        self._pending: Run | None = None  # loaded; its audit (and index) not started yet
        self._audited: Checkpoint | None = None  # audited by its load (RunLoaded.audit)
        self.health_result: tuple[Run, Any] | None = None  # (run, Health) of the Health view

    def notify(self, message: str, *, markup: bool = False, **kwargs: Any) -> None:
        """Every toast is literal: most carry run data (ids, entry text, server errors), and
        markup in them would crash the app (`[/x]`) or run an action (`[@click=app.quit]`).
        Widgets' own `notify` passes `markup=True` by default, so it is ignored here."""
        del markup
        super().notify(mask(message), markup=False, **kwargs)  # no credential, in any form

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Panes(id="main", gap=self.burst_gap, on_text=self._typed):
            yield TreePane(id="tree-pane")
            with DetailTabs(id="tabs", initial="hits"):
                for index, (name, pane) in enumerate(zip(keys.TABS, PANES, strict=True)):
                    with TAB_CLASSES[name](f"{index + 1} {name.title()}", id=name):
                        yield pane(id=f"{name}-pane")
            yield LoadingNote(Text("loading memory …", style="italic"), id="memory-loading")
        yield StatusBar(id="status")
        yield Footer()

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
    def ckpt(self) -> Checkpoint | None:
        """The run's checkpoint; while its memory loads, the tree alone (`LoadProgress.tree`)."""
        return self.run_data.checkpoint if self.run_data else self.tree_ckpt

    @property
    def following(self) -> bool:
        return self.follower.on

    # ------------------------------------------------------------------ loading

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="load")
    def _load(self, keep: bool) -> None:
        if self.opener is None:
            return  # a workspace whose run is not picked yet
        first = self.ckpt is None
        workers.load_run(self, self.opener, keep, first, first and self._chooses_opening())

    def _chooses_opening(self) -> bool:
        """Whether the app picks the node a run opens on (no node asked for): by the audit's
        findings, so the audit runs before the run is shown."""
        return self.open_useful and self.initial_node is None

    @on(msg.LoadStep)
    def _show_step(self, message: msg.LoadStep) -> None:
        if self.run_data is None:  # on a reload the loaded run stays until the new one is in
            note = self.query_one(LoadingNote)
            note.show_step(message.n, message.m, message.part, self.tree_ckpt is not None)

    def _show_memory_pane(self, ready: bool) -> None:
        """The tabs once the run is loaded (or failed to); before that, the loading note."""
        self.tabs.display = ready
        self.query_one(LoadingNote).display = not ready

    @on(msg.VectorProgress)
    def _show_progress(self, message: msg.VectorProgress) -> None:
        self.status_bar.set_progress(message.done, message.total)

    @on(msg.TreeRead)
    def _tree_loaded(self, message: msg.TreeRead) -> None:
        self.call_after_refresh(message.drawn.set)
        if self.ckpt is not None:
            return  # the full run (or another tree) is already shown
        ckpt = self.tree_ckpt = message.ckpt
        self.status_bar.set_source("tree shown · loading memory …")
        self.tree_pane.show_run(ckpt, expand_roots=True)
        if not self._chooses_opening():  # else the node waits for the audit's findings
            self._choose_first(ckpt, self.initial_node)

    def _choose_first(
        self, ckpt: Checkpoint, wanted: str | None, findings: dict | None = None
    ) -> None:
        """The node asked for, else a useful one (widgets/tree_pane.py)."""
        asked = self.initial_node is not None
        if target := self.tree_pane.open_first(ckpt, wanted, self.open_useful, asked, findings):
            self.choose(target)

    @on(msg.LoadFailed)
    def _load_failed(self, message: msg.LoadFailed) -> None:
        exc = message.error
        if self.ckpt is None:
            self.tree_widget.root.set_label(Text("could not open the run", style="bold red"))
        text = f"{type(exc).__name__}: {exc}"
        self.notify(preview(text, 300), title="could not open the run", severity="error")
        self._add_ui_problem(AuditRow("error", "load", None, text))
        if self.run_data is None:
            self._show_memory_pane(True)  # the Audit tab says what went wrong
            self.query_one(HitsPane).show_error(f"could not load the run's memory: {text}")
            self.status_bar.set_source("tree only" if self.tree_ckpt else "nothing loaded")
        self.loaded_count += 1

    @on(msg.RunLoaded)
    def _loaded(self, message: msg.RunLoaded) -> None:
        run = message.run
        # the tree shown while memory loaded: keep where the user has gone in it
        keep = message.keep or self.tree_ckpt is not None
        expanded = self.tree_widget.expanded_ids() if keep else []
        selected = self.current_id if keep else self.initial_node
        audited = message.audit
        if audited is not None and selected in (None, *run.checkpoint.roots):
            selected = None  # not moved off the root while loading: open where the app means
        self.run_data, self.tree_ckpt = run, None
        self._show_memory_pane(True)
        self.tabs.set_run(run)
        self.follower.rebase()
        if not keep:
            self.tree_widget.focus()
        self.status_bar.set_source(run.source_label)
        self.status_bar.set_embedder(getattr(run.ranker, "name", "?"))
        self.status_bar.watch_vectors(run.ranker)
        self.tree_pane.show_run(run.checkpoint, expand_roots=not keep, expanded=expanded)
        self.current_id = None
        self._choose_first(run.checkpoint, selected, audited.by_node if audited else None)
        self._audited = audited.ckpt if audited is not None else None
        if audited is not None:
            self._show_audit(audited)
        # the audit and the index write wait for the first replay: all want the one CPU that
        # the GIL gives, and the hits of the node on screen come first (on a big run each of
        # them takes seconds)
        self._pending = run
        self.set_timer(AUDIT_WAITS_S, self._start_audit)
        self.loaded_count += 1

    @on(msg.VectorsReady)
    def _vectors_ready(self, message: msg.VectorsReady) -> None:
        if self.run_data is not None and message.ranker is self.run_data.ranker:
            self.tabs.vectors_ready(message.complete)

    @on(msg.CheckpointChanged)
    def _checkpoint_changed(self) -> None:
        self._load(keep=True)

    # ------------------------------------------------------------------ audit

    def _start_audit(self) -> None:
        if self._pending is not None and self._pending is self.run_data:
            self._run_audit(self._pending, self._audited is not self._pending.checkpoint)
            self._pending = None

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, description="audit")
    def _run_audit(self, run: Run, audit: bool = True) -> None:
        if audit:  # not when the load audited the run already
            workers.audit_run(self, run.checkpoint)
        if run.save_index is not None:  # the next open of these files reads the index
            run.save_index()

    @on(msg.AuditDone)
    def _show_audit(self, message: msg.AuditDone) -> None:
        if message.ckpt is not self.ckpt:
            return
        self.tree_widget.set_findings(message.by_node)
        self.tabs.set_findings(message.by_node)
        if target := self.tree_pane.move_to_finding(message.ckpt, message.by_node, self.current_id):
            self.choose(target)
        self.status_bar.set_problems(*self.audit_pane.set_audit(message.rows, message.summary))

    def _add_ui_problem(self, row: AuditRow) -> None:
        self.status_bar.set_problems(*self.audit_pane.add_problem(row))

    # ------------------------------------------------------------------ choosing a node

    def on_tree_node_highlighted(self, event: RunTree.NodeHighlighted) -> None:
        if event.node.data is not None and event.node.data.first_id:
            self.choose(event.node.data.first_id)

    def choose(self, node_id: str) -> None:
        """Show `node_id` everywhere; its search runs in a worker."""
        ckpt = self.ckpt
        if ckpt is None or node_id not in ckpt.nodes:
            return
        if node_id == self.current_id:
            return
        # the query source (at start / now / custom), limit and pool are remembered across nodes
        self.current_id = node_id
        self.tree_widget.set_selection(node_id)
        self.tabs.choose(node_id)

    @on(msg.ReplayShown)
    def _replay_shown(self, message: msg.ReplayShown) -> None:
        self.status_bar.set_embedder(message.replay.embedder)
        self._start_audit()

    @on(msg.ReplayFailed)
    def _replay_failed(self, message: msg.ReplayFailed) -> None:
        text = message.text
        self._start_audit()
        self.notify(preview(text, 300), title="search failed", severity="error")
        self._add_ui_problem(AuditRow("error", "search", message.key.node_id, text))

    @on(msg.JumpToNode)
    def _jump_message(self, message: msg.JumpToNode) -> None:
        self.jump_to(message.node_id)

    def jump_to(self, node_id: str) -> None:
        ckpt = self.ckpt
        if ckpt is None:
            return
        if node_id not in ckpt.nodes:
            self.notify(f"no node {preview(node_id, 60)} in this run", severity="warning")
            return
        self.tree_pane.select(node_id)
        self.choose(node_id)

    @on(msg.OpenEntry)
    def _open_entry(self, message: msg.OpenEntry) -> None:
        ckpt = self.ckpt
        entry = ckpt.entries_by_id.get(message.entry_id) if ckpt else None
        row = message.row
        if entry is None and row is None:
            self.notify("that entry is not in the loaded memory", severity="warning")
            return
        if row is None:
            self.push_screen(EntryScreen(entry), self._went_to)
            return
        if entry is None:
            row = replace(row, title=row.title + " (entry not in the loaded memory)")
        self.push_screen(EntryScreen(replace(row, entry=entry)), self._went_to)

    @on(msg.ViewRow)
    def _view_row(self, message: msg.ViewRow) -> None:
        self.push_screen(EntryScreen(message.row), self._went_to)

    def _went_to(self, node_id: str | None) -> None:
        """`o` in a row's view: go to the row's node."""
        if node_id:
            self.jump_to(node_id)

    @on(msg.Notice)
    def _notice(self, message: msg.Notice) -> None:
        self.notify(message.text, severity=message.severity)

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
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_pane_help(self) -> None:
        """F1: the help, the keys of the focused pane first (the first widget from focus up
        that names its key scopes: the tree pane, a tab; tui/keys.py)."""
        if isinstance(self.screen, HelpScreen):
            return
        focused = self.screen.focused
        for node in focused.ancestors_with_self if focused is not None else ():
            scopes = getattr(node, "HELP_SCOPES", ())
            if scopes:
                self.push_screen(HelpScreen((getattr(node, "help_name", "this pane"), scopes)))
                return
        self.push_screen(HelpScreen())

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

    def open_checkpoint(self, path: Path) -> None:
        """Leave the open run (if any) and load the run at `path` (from the run picker)."""
        assert self.run_factory is not None
        for group in ("load", "audit"):
            self.workers.cancel_group(self, group)
        self.opener = self.run_factory(path)
        self.run_data = self.tree_ckpt = None
        self.current_id = self.initial_node = None
        self.tabs.set_run(None)
        self.tabs.params = self.tabs.params._replace(query=None)  # the same settings
        self.query_one(HitsPane).forget_query()
        self.status_bar.watch_vectors(None)
        self.audit_pane.forget()
        self.health_result = None
        self.sub_title = str(path)
        self.tree_pane.reset()
        self.status_bar.set_source("opening …")
        self.set_interval(CACHE_NOTES_EVERY_S, self._cache_notes)
        self._show_memory_pane(False)
        self.tree_widget.focus()
        self._load(keep=False)

    def action_health(self) -> None:
        """The run's memory health (tui/screens/health.py), computed once per loaded run."""
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

        self.push_screen(HealthScreen(run, cached, keep))

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
        self.tree_pane.close_find()

    def action_toggle_tree(self) -> None:
        self.query_one(Panes).toggle_tree()

    def action_toggle_wide(self) -> None:
        """`z`: every table wide (all columns, long text, sideways scroll) or narrow (it fits);
        the tables watch `wide_columns` (widgets/tables.py)."""
        self.wide_columns = not self.wide_columns
        self.status_bar.set_wide(self.wide_columns)

    def action_toggle_dim(self) -> None:
        tree = self.tree_widget
        tree.set_dim_unseen(not tree.dim_unseen)
        self.notify("dimming nodes outside the search scope" if tree.dim_unseen else "dimming off")

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

    def _typed(self, text: str) -> None:
        """Keys typed in a burst, or pasted, outside a text box: they are text, for the find box."""
        self.tree_pane.open_find(append=text)

    def action_find_next(self) -> None:
        self.tree_pane.find_step(1)

    def action_find_prev(self) -> None:
        self.tree_pane.find_step(-1)

    def action_filter(self) -> None:
        self.tree_pane.open_filter()

    def action_clear_filter(self) -> None:
        self.tree_pane.clear_filter()

    def action_mark(self) -> None:
        self.tabs.mark(self.current_id)

    def action_compare(self) -> None:
        self.tabs.compare(self.current_id)

    def action_copy(self) -> None:
        text = self.tabs.copy_target(self.current_id)
        if text:
            self.copy_text(text)

    def copy_text(self, text: str, what: str = "") -> None:
        """The one way text reaches the clipboard: made safe to paste first (`paste_safe`:
        no escape, C1 or bidi control, no lone surrogate), and the toast says what changed."""
        safe, changed = paste_safe(text)
        self.copy_to_clipboard(safe)
        self.last_copied = safe
        note = f"copied {what or preview(safe, 40)}"
        if changed:
            note += f" ({changed} control character(s) shown as symbols: not safe to paste)"
        self.notify(note)

    def action_export(self) -> None:
        self.tabs.export(self.export_to)

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
