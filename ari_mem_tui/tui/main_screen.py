"""The main screen: the run's tree on the left, what the chosen node saw in the tabs on the
right, the status line and the keys below.

It owns the panes and what happens in them: a run's life on screen (the tree first, then its
memory, a reload, the audit once the first hits are in), where a chosen node goes (the tree,
the tabs, the history of views) and the keys of the panes (`keys.MAIN`). The app holds the run
and the state every view shares (tui/app.py). The load's and the audit's thread workers
(tui/workers.py) call `open_run` and `audit` (the same functions the CLI uses) and post their
results here as messages (tui/messages.py); every result is checked against what is shown
before it is drawn, so moving fast never shows stale hits. The panes own their chores (find and
filter: the tree pane; the search settings: the Hits pane) and talk to the screen with messages.
"""

from __future__ import annotations

import gc
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from ari_mem_tui.audit import AuditReport
from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.text import preview
from ari_mem_tui.render.words import unseen_words
from ari_mem_tui.run import Run
from ari_mem_tui.tui import keys, workers
from ari_mem_tui.tui import messages as msg
from ari_mem_tui.tui.history import View
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.rows import AuditRow
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.tui.widgets.detail import AuditPane, CorePane, NodePane, SawPane, WritesPane
from ari_mem_tui.tui.widgets.detail_tabs import TAB_CLASSES, DetailTabs, KeyedTab
from ari_mem_tui.tui.widgets.hits import HitsPane
from ari_mem_tui.tui.widgets.panes import Panes
from ari_mem_tui.tui.widgets.run_tree import RunTree
from ari_mem_tui.tui.widgets.status_bar import LoadingNote, StatusBar
from ari_mem_tui.tui.widgets.tree_pane import TreePane

PANES = (HitsPane, SawPane, CorePane, WritesPane, NodePane, AuditPane)  # as keys.TABS
AUDIT_WAITS_S = 5.0  # at most this long for the first replay before the audit starts anyway


def out_of_memory(error: BaseException | None) -> bool:
    """Whether `error` says the process is out of memory (a thread's stack is memory too)."""
    if isinstance(error, MemoryError):
        return True
    return isinstance(error, RuntimeError) and "can't start new thread" in str(error)


def settle_heap(earlier: bool) -> None:
    """Keep the collector's full passes off the loaded run. Every object alive once a run is in
    (the run's records, the tree, the app) goes to the collector's permanent generation, so a
    full pass scans only what came after: on the demo such passes took 100–230 ms of a key
    each, growing with the session. (The load froze the run's records already, as soon as it
    had them: workers.load_run.) After an `earlier` run, the last run's objects are first let
    be collected (one full pass, while the user waits for the load anyway), then the new ones
    frozen."""
    if earlier:  # an earlier run's objects: collectable again, and collected
        gc.unfreeze()
        gc.collect()
    gc.freeze()


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.MAIN)
    # bound to the status line's and the loading note's own (`data_bind`): set here, shown there
    problems: var[tuple[int, ...]] = var((0,))  # (problems, findings): the Audit pane's counts
    load_step: var[tuple[int, int, str, bool] | None] = var(None)  # (n, m, part, tree shown)

    def __init__(self) -> None:
        super().__init__()
        self._pending: Run | None = None  # loaded; its audit (and index) not started yet
        self._audited: Checkpoint | None = None  # audited by its load (RunLoaded.audit)
        self._to_keep: AuditReport | None = None  # that audit, when made now: kept later

    def compose(self) -> ComposeResult:
        with Panes(id="main"):
            yield TreePane(id="tree-pane")
            with DetailTabs(id="tabs", initial="hits"):
                for index, (name, pane) in enumerate(zip(keys.TABS, PANES, strict=True)):
                    with TAB_CLASSES[name](f"{index + 1} {name.title()}", id=name):
                        yield pane(id=f"{name}-pane")
            note = LoadingNote(Text("loading memory …", style="italic"), id="memory-loading")
            yield note.data_bind(step=MainScreen.load_step)
        yield StatusBar(id="status").data_bind(MainScreen.problems)
        yield KeyBar()

    def on_mount(self) -> None:
        if not self.app.blink:  # (tests: a blinking cursor makes every frame differ)
            for box in self.query(Input):
                box.cursor_blink = False
        self.status_bar.set_source("opening …")
        self.tree_widget.show_loading()
        self.tree_widget.focus()
        self._show_memory_pane(False)
        # after the first frame: reading the tree while the app draws its first frame made both
        # slower (on 10,000 nodes the tree read took 1.5 s instead of 0.95 s)
        if self.app.opener is None:  # a workspace: the picker opens the run
            self.call_after_refresh(self.app.action_runs)
            return
        self.call_after_refresh(self.load, keep=False)

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

    # ------------------------------------------------------------------ the run's life

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="load")
    def load(self, keep: bool) -> None:
        app = self.app
        if app.opener is None:
            return  # a workspace whose run is not picked yet
        first = app.ckpt is None
        workers.load_run(self, app.opener, keep, first, self._audit_first if first else None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The screen's own workers (the load, the audit) catch their errors and say them; one
        that fails before its work runs, for want of memory (no thread could be started, a
        MemoryError: a served session past `--max session-mib`), ends the app, as an
        allocation failing in its own thread does: a load never started would leave "loading
        …" on screen for good, its session held open."""
        error = event.worker.error
        if event.state == WorkerState.ERROR and out_of_memory(error):
            self.app.exit(return_code=1, message=f"out of memory: {type(error).__name__}: {error}")

    def _chooses_opening(self) -> bool:
        """Whether the app picks the node a run opens on (no node asked for): by the audit's
        findings, so the audit runs before the run is shown."""
        return self.app.open_useful and self.app.initial_node is None

    def _audit_first(self) -> bool:
        """Asked by the load once the run is read: audit before showing it, to open on the
        first finding, unless the user has chosen a node in the tree shown meanwhile (the run
        opens on theirs: the audit waits until its hits are shown)."""
        tree, chosen = self.app.tree_ckpt, self.app.current_id
        moved = tree is not None and chosen is not None and chosen not in tree.roots
        return self._chooses_opening() and not moved

    def on_load_step(self, message: msg.LoadStep) -> None:
        if self.app.run_data is None:  # on a reload the loaded run stays until the new one is in
            tree_shown = self.app.tree_ckpt is not None
            self.load_step = (message.n, message.m, message.part, tree_shown)

    def _show_memory_pane(self, ready: bool) -> None:
        """The tabs once the run is loaded (or failed to); before that, the loading note."""
        self.tabs.display = ready
        self.query_one(LoadingNote).display = not ready

    def on_vector_progress(self, message: msg.VectorProgress) -> None:
        self.status_bar.set_progress(message.done, message.total)

    def on_tree_read(self, message: msg.TreeRead) -> None:
        self.call_after_refresh(message.drawn.set)
        app = self.app
        if app.ckpt is not None:
            return  # the full run (or another tree) is already shown
        ckpt = app.tree_ckpt = message.ckpt
        self.status_bar.set_source("tree shown · loading memory …")
        self.tree_pane.show_run(ckpt, expand_roots=True)
        if not self._chooses_opening():  # else the node waits for the audit's findings
            self._choose_first(ckpt, app.initial_node)

    def _choose_first(
        self, ckpt: Checkpoint, wanted: str | None, findings: dict | None = None
    ) -> None:
        """The node asked for, else a useful one (widgets/tree_pane.py)."""
        app = self.app
        asked = app.initial_node is not None
        if target := self.tree_pane.open_first(ckpt, wanted, app.open_useful, asked, findings):
            self.choose(target)

    def on_load_failed(self, message: msg.LoadFailed) -> None:
        exc, app = message.error, self.app
        if app.ckpt is None:
            self.tree_widget.root.set_label(Text("could not open the run", style="bold red"))
        text = f"{type(exc).__name__}: {exc}"
        self.notify(preview(text, 300), title="could not open the run", severity="error")
        self._add_ui_problem(AuditRow("error", "load", None, text))
        if app.run_data is None:
            self._show_memory_pane(True)  # the Audit tab says what went wrong
            self.query_one(HitsPane).show_error(f"could not load the run's memory: {text}")
            self.status_bar.set_source("tree only" if app.tree_ckpt else "nothing loaded")
        app.loaded_count += 1

    def on_run_loaded(self, message: msg.RunLoaded) -> None:
        run, app = message.run, self.app
        earlier = app.loaded_count > 0  # a run (or a failed load) before this one
        # the tree shown while memory loaded: keep where the user has gone in it
        keep = message.keep or app.tree_ckpt is not None
        expanded = self.tree_widget.expanded_ids() if keep else []
        selected = app.current_id if keep else app.initial_node
        audited = message.audit
        if audited is not None and selected in (None, *run.checkpoint.roots):
            selected = None  # not moved off the root while loading: open where the app means
        app.run_data, app.tree_ckpt = run, None  # the tabs and the status line watch it
        app.forget_health()
        self._show_memory_pane(True)
        app.follower.rebase()
        if not keep:
            self.tree_widget.focus()
        plan = getattr(run.ranker, "plan", None)
        if plan is not None:  # said in the load's last step before any call; kept in sight
            self.notify(preview(f"the run's embedding model: {plan.describe()}", 300))
        self.tree_pane.show_run(run.checkpoint, expand_roots=not keep, expanded=expanded)
        app.current_id = None
        self._choose_first(run.checkpoint, selected, audited.by_node if audited else None)
        self._audited = audited.ckpt if audited is not None else None
        self._to_keep = audited.fresh if audited is not None else None
        # the audit and the index write wait for the first replay: all want the one CPU that
        # the GIL gives, and the hits of the node on screen come first (on a big run each of
        # them takes seconds); so does the Audit pane's table (on_audit_done)
        self._pending = run
        if audited is not None:
            self.on_audit_done(audited)
        self.set_timer(AUDIT_WAITS_S, self._start_audit)
        app.loaded_count += 1
        settle_heap(earlier)

    def on_vectors_ready(self, message: msg.VectorsReady) -> None:
        run = self.app.run_data
        if run is not None and message.ranker is run.ranker:
            error = getattr(message.ranker, "error", None)
            if error and message.complete and str(message.ranker.name).startswith("run"):
                self.notify(preview(f"{error}; local MiniLM stands in", 300), severity="warning")
            self.tabs.vectors_ready(message.complete)

    def open_run(self) -> None:
        """Another run (the app's `open_checkpoint`, its state emptied): the panes emptied,
        its load started."""
        self.tabs.params = self.tabs.params._replace(query=None)  # the same settings
        self.query_one(HitsPane).forget_query()
        self.audit_pane.forget()
        self.tree_pane.reset()
        self.status_bar.set_source("opening …")
        self._show_memory_pane(False)
        self.tree_widget.focus()
        self.load(keep=False)

    def _start_audit(self) -> None:
        pending = self._pending
        if pending is not None and pending is self.app.run_data:
            audited = self._audited is pending.checkpoint
            self._run_audit(pending, not audited, self._to_keep if audited else None)
            self._pending = self._to_keep = None
            self.call_after_refresh(self.audit_pane.draw_audit)  # after the hits' frame

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, description="audit")
    def _run_audit(self, run: Run, audit: bool = True, keep: AuditReport | None = None) -> None:
        if audit:  # not when the load audited the run already
            keep = workers.audit_run(self, run.checkpoint, run.audit_store)
        if run.save_index is not None:  # the next open of these files reads the index
            run.save_index()
        workers.keep_audit(run, keep)  # and knows its findings without auditing
        if run.save_summary is not None:  # and `runs` and the picker show it at a glance
            run.save_summary(keep)

    def on_audit_done(self, message: msg.AuditDone) -> None:
        if message.ckpt is not self.app.ckpt:
            return
        self.app.findings = message.by_node  # the tree and the tabs watch them
        target = self.tree_pane.move_to_finding(message.ckpt, message.by_node, self.app.current_id)
        if target:
            self.choose(target)
        # before the first hits, the findings' marks and counts, not yet the Audit table
        first_hits = self._pending is not None and self._pending is self.app.run_data
        self.problems = self.audit_pane.set_audit(message.rows, message.summary, not first_hits)

    def _add_ui_problem(self, row: AuditRow) -> None:
        self.problems = self.audit_pane.add_problem(row)

    # ------------------------------------------------------------------ where a node goes

    def on_tree_node_highlighted(self, event: RunTree.NodeHighlighted) -> None:
        if event.node.data is not None and event.node.data.first_id:
            self.choose(event.node.data.first_id)

    def choose(self, node_id: str) -> None:
        """Show `node_id` everywhere; its search runs in a worker."""
        ckpt = self.app.ckpt
        if ckpt is not None and node_id in ckpt.nodes:
            # the tree and the tabs watch it; the query source (at start / now / custom), limit
            # and pool are remembered across nodes
            self.app.current_id = node_id

    def on_replay_shown(self, message: msg.ReplayShown) -> None:
        fidelity = message.replay.fidelity
        # the ranker's own state here (a stand-in says so); how far its replays reproduce the
        # run's recordings is the check's, beside it, once the first hits are shown
        self.status_bar.set_embedder(
            message.replay.embedder, fidelity.kind if fidelity.own is not True else ""
        )
        self._start_audit()
        if self.app.run_data is not None:
            self.status_bar.check_run(self.app.run_data)

    def on_replay_failed(self, message: msg.ReplayFailed) -> None:
        text = message.text
        self._start_audit()
        self.notify(preview(text, 300), title="search failed", severity="error")
        self._add_ui_problem(AuditRow("error", "search", message.key.node_id, text))

    def jump_to(self, node_id: str, remember: bool = True) -> None:
        """Go to `node_id` (a find, the palette, a row's `o`, a breadcrumb, a finding); the
        view it leaves goes into the history (`b` comes back to it)."""
        app = self.app
        if app.ckpt is None:
            return
        if node_id not in app.ckpt.nodes:
            self.notify(f"no node {preview(node_id, 60)} in this run", severity="warning")
            return
        if remember and app.current_id is not None and node_id != app.current_id:
            app.history.push(self.view_here())
        self.tree_pane.select(node_id)
        self.choose(node_id)

    def view_here(self) -> View:
        """The view on screen: node, tab, and the row under the cursor of the focused table
        of the tabs (else of the shown tab's main table)."""
        tabs = self.tabs
        tab = tabs.active or "hits"
        focused = self.focused
        table = focused if isinstance(focused, VimTable) and tabs in focused.ancestors else None
        had_focus = table is not None
        if table is None:
            pane = tabs.get_pane(tab) if tab else None
            main = pane.main_widget() if isinstance(pane, KeyedTab) else None
            table = main if isinstance(main, VimTable) else None
        row = table.current_key if table is not None else None
        table_id = table.id if table is not None else None
        in_tree = focused is not None and self.tree_pane in focused.ancestors_with_self
        return View(self.app.current_id or "", tab, table_id, row, had_focus, in_tree)

    def action_history_back(self) -> None:
        self._restore(self.app.history.go_back(self.view_here()), "back")

    def action_history_forward(self) -> None:
        self._restore(self.app.history.go_forward(self.view_here()), "forward")

    def _restore(self, view: View | None, way: str) -> None:
        """Show `view` again: its node, its tab, its row (once its table is filled)."""
        ckpt = self.app.ckpt
        if view is None or ckpt is None or view.node_id not in ckpt.nodes:
            self.notify(f"nothing to go {way} to" if view is None else "that node is gone")
            return
        moved = view.node_id != self.app.current_id
        table = self.query_one(f"#{view.table_id}", VimTable) if view.table_id else None
        # another node's rows come when its search is shown: the table takes the row then
        if (
            table is not None
            and view.row_key is not None
            and (moved or not table.go_to_key(view.row_key))
        ):
            table.wanted_key = view.row_key
        self.jump_to(view.node_id, remember=False)
        self.action_tab(view.tab)
        if view.focused and table is not None and table.allow_focus():
            table.focus()
        elif view.in_tree:  # where the jump was made from: not the pane `b` was pressed in
            self.action_focus_tree()

    # ------------------------------------------------------------------ the panes' keys

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
        self.tabs.mark(self.app.current_id)

    def action_compare(self) -> None:
        self.tabs.compare(self.app.current_id)

    def action_copy(self) -> None:
        """`y`: the entry under the cursor, else the node id."""
        if text := self.tabs.copy_target(self.app.current_id):
            self.app.copy_text(text)

    def action_export(self) -> None:
        self.tabs.export(self.app.export_to)

    def entry_under_cursor(self) -> str | None:
        """`Y`'s entry here: the focused Hits or Writes table's row (tui/app.py)."""
        return self.tabs.entry_under_cursor()

    def show_ranker(self, ranker: Any) -> None:
        """The run ranks with `ranker` now (`R`): said in the status line, hits searched again."""
        self.status_bar.set_embedder(ranker.name)
        self.status_bar.watch_vectors(ranker)
        self.tabs.rerank()
