"""What the TUI's thread workers run. Each reads or computes, then posts a message to the widget
or screen that started it (tui/messages.py); none touches a widget, and a cancelled worker (a
newer load or search has started) posts nothing."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from textual.message_pump import MessagePump
from textual.worker import get_current_worker

from ari_mem_tui.audit import AuditReport, AuditStore, findings_by_node, kept_or_audit
from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.checkpoint.bulk import without_gc
from ari_mem_tui.model import Replay
from ari_mem_tui.run import Run
from ari_mem_tui.search.replay import replay
from ari_mem_tui.tui.audit_rows import audit_rows
from ari_mem_tui.tui.messages import (
    AuditDone,
    CompareReady,
    LoadFailed,
    LoadStep,
    Notice,
    ReplayDone,
    ReplayFailed,
    ReplayKey,
    RunLoaded,
    TreeRead,
    VectorProgress,
)
from ari_mem_tui.tui.rows import AuditRow

ProgressFn = Callable[[int, int], None]  # (done, total) while vectors are computed
Opener = Callable[[ProgressFn], Run]  # given a `LoadProgress`, usable as a plain ProgressFn
RunFactory = Callable[[Path], Opener]  # a workspace's run → its opener


class LoadProgress:
    """What the app hands its opener: call it (done, total) for vector progress; its `step`
    (n, m, part) says which of the load's m parts has started, and `tree` shows the tree alone
    while the rest loads (`open_run`'s on_step, on_progress and on_tree)."""

    def __init__(self, app: MessagePump, show_tree: bool = True) -> None:
        self.app = app
        self.show_tree = show_tree  # a reload keeps the run on screen until the new one is in

    def tree(self, ckpt: Checkpoint) -> None:
        if self.show_tree and _live():
            drawn = threading.Event()
            self.app.post_message(TreeRead(ckpt, drawn))
            drawn.wait(1.0)  # let the tree reach the screen before the load takes the GIL again

    def __call__(self, done: int, total: int) -> None:
        self.app.post_message(VectorProgress(done, total))

    def step(self, n: int, m: int, part: str) -> None:
        self.app.post_message(LoadStep(n, m, part))


def _live() -> bool:
    return not get_current_worker().is_cancelled


def load_run(
    app: MessagePump,
    opener: Opener,
    keep: bool,
    show_tree: bool,
    audit_first: Callable[[], bool] | None = None,
) -> None:
    """The whole run; with `show_tree`, its tree alone as soon as it is read; when
    `audit_first()` says so once the run is read, audited before it is handed over (the audit
    kept for these files, else a new one), so that the app opens directly on the node it means
    to show (the first with a finding) instead of moving there later."""
    try:
        # the run's objects live as long as it is open: made with the collector paused, then
        # frozen out of its passes (after a 10k-node reopen, its first young, middle and full
        # passes over them took 0.3 s before the first hits); the app collects an earlier
        # run's cycles once this one is shown (main_screen.settle_heap)
        run = without_gc(opener, LoadProgress(app, show_tree))
    except Exception as exc:  # noqa: BLE001 - show it; keep what is on screen
        if _live():
            app.post_message(LoadFailed(exc))
        return
    gc.freeze()
    run.checkpoint.entries_by_node.group()
    audited = None
    if audit_first is not None and _live() and audit_first():
        audited = audit_report(run.checkpoint, run.audit_store)
    if _live():  # a newer load (follow, reload) has started: it wins
        app.post_message(RunLoaded(run, keep, audited))


def replay_node(app: MessagePump, run: Run, key: ReplayKey) -> None:
    try:
        # missed entries' global ranks wait until the missed list is shown (M)
        result = replay(
            run.checkpoint,
            key.node_id,
            run.ranker,
            query=key.query,
            limit=key.limit,
            as_of=key.as_of,
            query_from=key.query_from,
            exact_ranks=False,
        )
    except Exception as exc:  # noqa: BLE001 - e.g. the Letta server went away
        if _live():
            app.post_message(ReplayFailed(key, exc))
        return
    if _live():
        app.post_message(ReplayDone(key, result))


def audit_report(ckpt: Checkpoint, store: AuditStore | None = None) -> AuditDone:
    """The run's audit as the message that shows it (a failure is one of its rows): the one
    `store` kept for these files when there is one, else audited now (`AuditDone.fresh`, for
    `keep_audit` to keep once the first hits are on screen)."""
    by_node: dict = {}
    fresh = None
    try:
        report, new = kept_or_audit(ckpt, store)
        fresh = report if new else None
        rows, summary = audit_rows(ckpt, report)
        by_node = findings_by_node(report)
    except Exception as exc:  # noqa: BLE001
        rows = [AuditRow("error", "audit failed", None, f"{type(exc).__name__}: {exc}")]
        summary = ""
    return AuditDone(ckpt, rows, summary, by_node, fresh)


def audit_run(app: MessagePump, ckpt: Checkpoint, store: AuditStore | None) -> AuditReport | None:
    """Post the run's audit; the report to keep, when it was audited now."""
    done = audit_report(ckpt, store)
    app.post_message(done)
    return done.fresh


def keep_audit(run: Run, report: AuditReport | None) -> None:
    """Keep a fresh audit of the run's files for their next open (audit.AuditStore)."""
    if report is not None and run.audit_store is not None:
        run.audit_store.save(run.checkpoint, report)


def compare_nodes(app: MessagePump, run: Run, cached: list[Replay | None], ids: list[str]) -> None:
    """Both nodes' default searches (`cached` where the app has them already)."""
    try:
        a, b = (
            c or replay(run.checkpoint, i, run.ranker) for c, i in zip(cached, ids, strict=True)
        )
    except Exception as exc:  # noqa: BLE001
        app.post_message(Notice(f"compare failed: {exc}", "error"))
        return
    app.post_message(CompareReady(run, a, b))


class DaemonThreads(ThreadPoolExecutor):
    """The event loop's executor for the app's thread workers: one daemon thread per task, and
    a shutdown that waits for none of them. A worker still blocked when the app quits (a
    Letta server that never answers, a slow load) dies with the process instead of holding
    it; Textual has cancelled it, so it shows nothing when it returns."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)  # no pool thread is ever started

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: Future = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits the future
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="ari-mem-tui worker", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass  # daemon threads: nothing to join
