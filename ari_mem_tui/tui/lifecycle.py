"""A run's life in the app: opening it (the tree first, then its memory), reloading it, leaving
it for another, and auditing it once its first hits are on screen.

`RunLifecycle` is mixed into the app (tui/app.py): the load's thread worker posts its messages
to the app (tui/workers.py), and Textual finds their handlers here by name (`on_<message>`).
It holds no search or audit logic: the worker calls `open_run` and `audit`, as the CLI does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.worker import Worker, WorkerState

from ari_mem_tui.audit import AuditReport
from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.text import preview
from ari_mem_tui.run import Run
from ari_mem_tui.tui import messages as msg
from ari_mem_tui.tui import workers
from ari_mem_tui.tui.rows import AuditRow
from ari_mem_tui.tui.widgets.hits import HitsPane
from ari_mem_tui.tui.widgets.status_bar import LoadingNote
from ari_mem_tui.tui.workers import Opener

RunFactory = Callable[[Path], Opener]  # a workspace's run → its opener


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


def out_of_memory(error: BaseException | None) -> bool:
    """Whether `error` says the process is out of memory (a thread's stack is memory too)."""
    if isinstance(error, MemoryError):
        return True
    return isinstance(error, RuntimeError) and "can't start new thread" in str(error)


AUDIT_WAITS_S = 5.0  # at most this long for the first replay before the audit starts anyway


class RunLifecycle:
    """The load, reload and audit of the open run. Mixed into `AriMemApp`, whose panes it
    fills (`tree_pane`, `tabs`, `status_bar`, `audit_pane`) and whose `choose` it calls."""

    opener: Opener | None
    run_factory: RunFactory | None
    run_data: Run | None
    tree_ckpt: Checkpoint | None  # the tree alone, until run_data arrives
    initial_node: str | None
    open_useful: bool  # without a node asked for: open on a useful one (render/opening.py)
    current_id: str | None
    history: Any  # the views jumps left (tui/history.py)
    loaded_count: int  # how many loads finished (tests and benchmarks wait on it)
    health_result: tuple[Run, Any] | None
    _pending: Run | None  # loaded; its audit (and index) not started yet
    _audited: Checkpoint | None  # audited by its load (RunLoaded.audit)
    _to_keep: AuditReport | None  # that audit, when made now: kept after the first hits

    @property
    def ckpt(self) -> Checkpoint | None:
        """The run's checkpoint; while its memory loads, the tree alone (`LoadProgress.tree`)."""
        return self.run_data.checkpoint if self.run_data else self.tree_ckpt

    # ---- loading ----

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="load")
    def _load(self, keep: bool) -> None:
        if self.opener is None:
            return  # a workspace whose run is not picked yet
        first = self.ckpt is None
        workers.load_run(self, self.opener, keep, first, self._audit_first if first else None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The app's own workers (the load, the audit) catch their errors and say them; one
        that fails before its work runs, for want of memory (no thread could be started, a
        MemoryError: a served session past `--max session-mib`), ends the app, as an
        allocation failing in its own thread does: a load never started would leave "loading
        …" on screen for good, its session held open."""
        error = event.worker.error
        if event.state == WorkerState.ERROR and out_of_memory(error):
            self.exit(return_code=1, message=f"out of memory: {type(error).__name__}: {error}")  # type: ignore[attr-defined]

    def _chooses_opening(self) -> bool:
        """Whether the app picks the node a run opens on (no node asked for): by the audit's
        findings, so the audit runs before the run is shown."""
        return self.open_useful and self.initial_node is None

    def _audit_first(self) -> bool:
        """Asked by the load once the run is read: audit before showing it, to open on the
        first finding, unless the user has chosen a node in the tree shown meanwhile (the run
        opens on theirs: the audit waits until its hits are shown)."""
        tree, chosen = self.tree_ckpt, self.current_id
        moved = tree is not None and chosen is not None and chosen not in tree.roots
        return self._chooses_opening() and not moved

    def on_load_step(self, message: msg.LoadStep) -> None:
        if self.run_data is None:  # on a reload the loaded run stays until the new one is in
            note = self.query_one(LoadingNote)
            note.show_step(message.n, message.m, message.part, self.tree_ckpt is not None)

    def _show_memory_pane(self, ready: bool) -> None:
        """The tabs once the run is loaded (or failed to); before that, the loading note."""
        self.tabs.display = ready
        self.query_one(LoadingNote).display = not ready

    def on_vector_progress(self, message: msg.VectorProgress) -> None:
        self.status_bar.set_progress(message.done, message.total)

    def on_tree_read(self, message: msg.TreeRead) -> None:
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

    def on_load_failed(self, message: msg.LoadFailed) -> None:
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

    def on_run_loaded(self, message: msg.RunLoaded) -> None:
        run = message.run
        earlier = self.loaded_count > 0  # a run (or a failed load) before this one
        # the tree shown while memory loaded: keep where the user has gone in it
        keep = message.keep or self.tree_ckpt is not None
        expanded = self.tree_widget.expanded_ids() if keep else []
        selected = self.current_id if keep else self.initial_node
        audited = message.audit
        if audited is not None and selected in (None, *run.checkpoint.roots):
            selected = None  # not moved off the root while loading: open where the app means
        self.run_data, self.tree_ckpt = run, None
        self._forget_health()
        self._show_memory_pane(True)
        self.tabs.set_run(run)
        self.follower.rebase()
        if not keep:
            self.tree_widget.focus()
        self.status_bar.set_source(run.source_label)
        self.status_bar.set_embedder(getattr(run.ranker, "name", "?"))
        self.status_bar.watch_vectors(run.ranker)
        plan = getattr(run.ranker, "plan", None)
        if plan is not None:  # said in the load's last step before any call; kept in sight
            self.notify(preview(f"the run's embedding model: {plan.describe()}", 300))
        self.tree_pane.show_run(run.checkpoint, expand_roots=not keep, expanded=expanded)
        self.current_id = None
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
        self.loaded_count += 1
        settle_heap(earlier)

    def on_vectors_ready(self, message: msg.VectorsReady) -> None:
        if self.run_data is not None and message.ranker is self.run_data.ranker:
            error = getattr(message.ranker, "error", None)
            if error and message.complete and str(message.ranker.name).startswith("run"):
                self.notify(preview(f"{error}; local MiniLM stands in", 300), severity="warning")
            self.tabs.vectors_ready(message.complete)

    def on_checkpoint_changed(self) -> None:
        self._load(keep=True)

    def open_checkpoint(self, path: Path) -> None:
        """Leave the open run (if any) and load the run at `path` (from the run picker)."""
        assert self.run_factory is not None
        for group in ("load", "audit"):
            self.workers.cancel_group(self, group)
        self.opener = self.run_factory(path)
        self.run_data = self.tree_ckpt = None
        self.current_id = self.initial_node = None
        self.tabs.set_run(None)
        self.history.clear()  # its views are of the run left
        self.tabs.params = self.tabs.params._replace(query=None)  # the same settings
        self.query_one(HitsPane).forget_query()
        self.status_bar.watch_vectors(None)
        self.audit_pane.forget()
        self._forget_health()
        self.sub_title = str(path)
        self.tree_pane.reset()
        self.status_bar.set_source("opening …")
        self._show_memory_pane(False)
        self.tree_widget.focus()
        self._load(keep=False)

    def _forget_health(self) -> None:
        """Another run: its health is to be computed, and the last run let go of (its view is
        kept, to be refilled: building it again cost a key's time)."""
        self.health_result = None
        if self.is_screen_installed("health"):
            screen = self.get_screen("health")
            if screen not in self.screen_stack:
                screen.forget()  # type: ignore[attr-defined]

    # ---- the audit ----

    def _start_audit(self) -> None:
        if self._pending is not None and self._pending is self.run_data:
            audited = self._audited is self._pending.checkpoint
            self._run_audit(self._pending, not audited, self._to_keep if audited else None)
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
        if message.ckpt is not self.ckpt:
            return
        self.tree_widget.set_findings(message.by_node)
        self.tabs.set_findings(message.by_node)
        if target := self.tree_pane.move_to_finding(message.ckpt, message.by_node, self.current_id):
            self.choose(target)
        # before the first hits, the findings' marks and counts, not yet the Audit table
        first_hits = self._pending is not None and self._pending is self.run_data
        shown = self.audit_pane.set_audit(message.rows, message.summary, draw=not first_hits)
        self.status_bar.set_problems(*shown)

    def _add_ui_problem(self, row: AuditRow) -> None:
        self.status_bar.set_problems(*self.audit_pane.add_problem(row))
