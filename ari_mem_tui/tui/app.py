"""The Textual app: tree on the left, what the chosen node saw on the right.

The app holds no search or audit logic: it calls `sources.open_run`, `search.replay.replay` and
`audit.audit` (the same functions the CLI uses) in thread workers and shows their results.
Workers talk to the UI only through `call_from_thread`, and every result is checked against the
current selection before it is shown, so moving fast never shows stale hits.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.text import preview, short_id
from ari_mem_tui.run import Run
from ari_mem_tui.tui import config
from ari_mem_tui.tui.commands import ActionCommands, NodeCommands
from ari_mem_tui.tui.messages import JumpToNode, OpenEntry, RerunSearch
from ari_mem_tui.tui.screens.compare import CompareScreen
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.filter import FilterScreen, TreeFilter
from ari_mem_tui.tui.screens.help import HelpScreen
from ari_mem_tui.tui.widgets.detail import (
    AuditPane,
    AuditRow,
    CorePane,
    NodePane,
    SawPane,
    WritesPane,
)
from ari_mem_tui.tui.widgets.hits import HitsPane
from ari_mem_tui.tui.widgets.run_tree import RunTree
from ari_mem_tui.tui.widgets.status_bar import StatusBar

ProgressFn = Callable[[int, int], None]  # (done, total) while vectors are computed
Opener = Callable[[ProgressFn], Run]  # given a `LoadProgress`, usable as a plain ProgressFn
TreeOpener = Callable[[], Checkpoint]  # the tree alone (fast), shown while the opener runs
RunFactory = Callable[[Path], tuple[Opener, TreeOpener]]  # a workspace's run → its openers

DEFAULT_THEME = "textual-dark"
TABS = ("hits", "saw", "core", "writes", "node", "audit")
WATCHED = (
    "tree.json",
    "nodes_tree.json",
    "memory_backup.jsonl.gz",
    "memory_access*.jsonl",
    "idea.json",
    "experiment.md",
)
# (node, custom query or None, limit, as of start?, query source "start" | "now" | "custom")
ReplayKey = tuple[str, str | None, int, bool, str]
DEFAULT_SEARCH: tuple[str | None, int, bool, str] = (None, 5, True, "start")


class LoadProgress:
    """What the app hands its opener: call it (done, total) for vector progress; its `step`
    (n, m, part) says which of the load's m parts has started (`open_run`'s `args.load_step`)."""

    def __init__(self, app: AriMemApp) -> None:
        self.app = app

    def __call__(self, done: int, total: int) -> None:
        self.app.from_any_thread(self.app._show_progress, done, total)

    def step(self, n: int, m: int, part: str) -> None:
        self.app.from_any_thread(self.app._show_step, n, m, part)


class AriMemApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ari-mem-tui"
    COMMANDS = App.COMMANDS | {ActionCommands, NodeCommands}
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False),  # at once, even while a load waits
        Binding("question_mark,f1", "help", "Help"),
        Binding("slash", "find", "Find"),
        Binding("n", "find_next", "Next", show=False),
        Binding("N", "find_prev", "Previous", show=False),
        Binding("f", "filter", "Filter", show=False),
        Binding("m", "mark", "Mark"),
        Binding("c", "compare", "Compare"),
        Binding("e", "export", "Export"),
        Binding("F", "toggle_follow", "Follow"),
        Binding("y", "copy", "Copy", show=False),
        Binding("r", "reload", "Reload", show=False),
        Binding("d", "toggle_dim", "Dim unseen", show=False),
        Binding("M", "toggle_missed", "Missed", show=False),
        Binding("a", "toggle_as_of", "As of", show=False),
        Binding("s", "cycle_query", "Query source", show=False),
        Binding("w", "toggle_writes_scope", "Writes scope", show=False),
        Binding("t,ctrl+b", "toggle_tree", "Tree", show=False),
        Binding("escape", "escape", "Back", show=False),
        Binding("H", "health", "Health"),
        Binding("W", "runs", "Runs", show=False),
        *(
            Binding(str(i + 1), f"tab('{name}')", name.title(), show=False)
            for i, name in enumerate(TABS)
        ),
    ]

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
        tree_opener: TreeOpener | None = None,
        workspace: Path | None = None,
        run_factory: RunFactory | None = None,
    ) -> None:
        super().__init__()
        # a workspace: the run picker first (opener None), W goes back to it; run_factory
        # gives the (opener, tree_opener) of the run picked (tui/screens/runs.py)
        self.workspace = workspace
        self.run_factory = run_factory
        self.opener = opener
        self.tree_opener = tree_opener
        self.run_data: Run | None = None
        self.tree_ckpt: Checkpoint | None = None  # the tree alone, until run_data arrives
        self.export_to = export_to
        self.follow_interval = follow_interval
        self.blink = blink
        self.initial_node = initial_node
        self.remember_theme = False  # not while the initial theme is being applied
        self._wanted_theme = theme or config.load_settings().get("theme") or DEFAULT_THEME
        self._remember_after_start = remember_theme
        if title:
            self.sub_title = title
        self.current_id: str | None = None
        self._stale: set[str] = set()
        self.marked_id: str | None = None
        self.search_params: tuple[str | None, int, bool, str] = DEFAULT_SEARCH
        self._retried: set[ReplayKey] = set()  # fallback results re-run once vectors were ready
        self.replays: dict[ReplayKey, Replay] = {}
        self.tree_filter = TreeFilter()
        self.find_matches: list[str] = []
        self.find_index = -1
        self.ui_problems: list[AuditRow] = []
        self.audit_rows: list[AuditRow] = []
        self.node_findings: dict[str, list] = {}  # node id -> its audit findings
        self.following = False
        self._follow_sig: tuple = ()
        self.last_export: tuple[Path, Path] | None = None
        self.last_copied: str | None = None
        self.loaded_count = 0  # how many loads finished (tests and benchmarks wait on it)
        self.health_result: tuple[Run, Any] | None = None  # (run, Health) of the Health view

    def notify(self, message: str, *, markup: bool = False, **kwargs: Any) -> None:
        """Every toast is literal: most carry run data (ids, entry text, server errors), and
        markup in them would crash the app (`[/x]`) or run an action (`[@click=app.quit]`).
        Widgets' own `notify` passes `markup=True` by default, so it is ignored here."""
        del markup
        super().notify(message, markup=False, **kwargs)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="tree-pane"):
                yield RunTree(id="tree")
                yield Input(placeholder="find id or text (Enter, Esc)", id="find-input")
            with TabbedContent(id="tabs", initial="hits"):
                with TabPane("1 Hits", id="hits"):
                    yield HitsPane(id="hits-pane")
                with TabPane("2 Saw", id="saw"):
                    yield SawPane(id="saw-pane")
                with TabPane("3 Core", id="core"):
                    yield CorePane(id="core-pane")
                with TabPane("4 Writes", id="writes"):
                    yield WritesPane(id="writes-pane")
                with TabPane("5 Node", id="node"):
                    yield NodePane(id="node-pane")
                with TabPane("6 Audit", id="audit"):
                    yield AuditPane(id="audit-pane")
            yield Static(Text("loading memory …", style="italic"), id="memory-loading")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        # thread workers run on daemon threads: `q` must not wait for a load or a Letta call
        # that is still waiting (asyncio.run joins the default executor's threads on exit)
        asyncio.get_running_loop().set_default_executor(DaemonThreads())
        try:
            self.theme = self._wanted_theme
        except Exception:  # noqa: BLE001 - an unknown theme in the config file is not fatal
            self.theme = DEFAULT_THEME
        self.remember_theme = self._remember_after_start
        self.query_one("#find-input").display = False
        if not self.blink:
            for widget in self.query(Input):
                widget.cursor_blink = False
        self.status_bar.set_source("opening …")
        self.status_bar.set_problems(0)
        self._follow_timer = self.set_interval(self.follow_interval, self._follow_tick, pause=True)
        self.tree_widget.root.set_label(Text("loading …", style="italic"))
        self.tree_widget.show_root = True
        self.tree_widget.focus()
        self._show_memory_pane(False)
        # after the first frame: reading the tree while the app draws its first frame made both
        # slower (on 10,000 nodes the tree read took 1.5 s instead of 0.95 s)
        if self.opener is None:  # a workspace: the picker opens the run
            self.call_after_refresh(self.action_runs)
            return
        self.call_after_refresh(self._load, keep=False)

    def watch_theme(self, theme: str) -> None:
        if self.remember_theme:
            config.save_setting("theme", theme)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def tree_widget(self) -> RunTree:
        return self.query_one(RunTree)

    @property
    def ckpt(self) -> Checkpoint | None:
        """The run's checkpoint; while its memory loads, the tree alone (see `tree_opener`)."""
        return self.run_data.checkpoint if self.run_data else self.tree_ckpt

    # ------------------------------------------------------------------ loading

    def from_any_thread(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            self.call_from_thread(fn, *args)
        except RuntimeError:  # already on the app's thread
            fn(*args)

    def _show_step(self, n: int, m: int, part: str) -> None:
        if self.run_data is not None:
            return  # a reload: the loaded run stays on screen until the new one replaces it
        text = Text("loading memory … ", style="bold")
        text.append(f"({n} of {m}: {part})", style="cyan")
        if self.tree_ckpt is not None:
            text.append(
                "\n\nThe tree is ready: move around it. The chosen node's hits, reads, core, "
                "writes and details appear here when the memory has loaded.",
                style="italic",
            )
        self.query_one("#memory-loading", Static).update(text)

    def _show_memory_pane(self, ready: bool) -> None:
        """The tabs once the run is loaded (or failed to); before that, the loading note."""
        self.query_one("#tabs").display = ready
        self.query_one("#memory-loading").display = not ready

    def _show_progress(self, done: int, total: int) -> None:
        self.status_bar.set_progress(done, total)

    def _vectors_ready(self) -> None:
        """The embedder is ready: every replay BM25 made in its place is stale. Drop them all
        (whether or not any is cached: the visible one may still be in flight) and re-run the
        visible one."""
        stale = [key for key, replay in self.replays.items() if replay.fallback]
        for key in stale:
            del self.replays[key]
        if self.current_id and self._key() not in self.replays:
            self._start_replay()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="load")
    def _load(self, keep: bool) -> None:
        worker = get_current_worker()
        if self.opener is None:
            return  # a workspace whose run is not picked yet
        if self.tree_opener is not None and self.ckpt is None:
            self._load_tree_first(self.tree_opener)
        try:
            run = self.opener(LoadProgress(self))
        except Exception as exc:  # noqa: BLE001 - show it; keep what is on screen
            if not worker.is_cancelled:
                self.call_from_thread(self._load_failed, exc)
            return
        if not worker.is_cancelled:  # a newer load (follow, reload) has started: it wins
            self.call_from_thread(self._loaded, run, keep)

    def _load_tree_first(self, tree_opener: TreeOpener) -> None:
        """On the load's thread: read the tree alone and show it before the slow full load."""
        try:
            ckpt = tree_opener()
        except Exception:  # noqa: BLE001 - the full load meets the same error and reports it
            return
        if ckpt.nodes and not get_current_worker().is_cancelled:
            drawn = threading.Event()
            self.call_from_thread(self._tree_loaded, ckpt, drawn)
            drawn.wait(1.0)  # let the tree reach the screen before the full load takes the GIL

    def _tree_loaded(self, ckpt: Checkpoint, drawn: threading.Event) -> None:
        self.call_after_refresh(drawn.set)
        if self.ckpt is not None:
            return  # the full run (or another tree) is already shown
        self.tree_ckpt = ckpt
        self.status_bar.set_source("tree shown · loading memory …")
        tree = self.tree_widget
        tree.show_root = False
        self._apply_filter_to_tree()
        for root_id in ckpt.roots:
            node = tree.reveal(root_id)
            if node is not None:
                node.expand()
        wanted = self.initial_node
        target = wanted if wanted in ckpt.nodes else (ckpt.roots[0] if ckpt.roots else None)
        if target:
            tree.select_id(target)
            self.choose(target)

    def _load_failed(self, exc: Exception) -> None:
        if self.ckpt is None:
            self.tree_widget.root.set_label(Text("could not open the run", style="bold red"))
        message = f"{type(exc).__name__}: {exc}"
        self.notify(preview(message, 300), title="could not open the run", severity="error")
        self._add_ui_problem(AuditRow("error", "load", None, message))
        if self.run_data is None:
            self._show_memory_pane(True)  # the Audit tab says what went wrong
            self.query_one(HitsPane).show_error(f"could not load the run's memory: {message}")
            self.status_bar.set_source("tree only" if self.tree_ckpt else "nothing loaded")
        self.loaded_count += 1

    def _loaded(self, run: Run, keep: bool) -> None:
        tree = self.tree_widget
        # the tree shown while memory loaded: keep where the user has gone in it
        keep = keep or self.tree_ckpt is not None
        expanded = tree.expanded_ids() if keep else []
        selected = self.current_id if keep else self.initial_node
        self.run_data, self.tree_ckpt = run, None
        self._show_memory_pane(True)
        self.replays.clear()
        self._retried.clear()
        self._follow_sig = self._signature()
        tree.show_root = False
        if not keep:
            tree.focus()
        self.status_bar.set_source(run.source_label)
        self.status_bar.set_embedder(getattr(run.ranker, "name", "?"))
        self._watch_vectors(run)
        self._apply_filter_to_tree()
        for node_id in expanded:
            node = tree.reveal(node_id)
            if node is not None:
                node.expand()
        ckpt = run.checkpoint
        target = selected if selected in ckpt.nodes else (ckpt.roots[0] if ckpt.roots else None)
        self.current_id = None
        for root_id in ckpt.roots:
            node = tree.reveal(root_id)
            if node is not None and not keep:
                node.expand()
        if target:
            tree.select_id(target)
            self.choose(target)
        self._run_audit()
        self.loaded_count += 1

    def _watch_vectors(self, run: Run) -> None:
        """Show the ranker's vector progress (MiniLM computes vectors in the background)."""
        ranker = run.ranker
        if getattr(ranker, "ready", True):
            self.status_bar.set_progress(0, 0)
            return

        def poll() -> None:
            if run is not self.run_data:
                timer.stop()
                return
            done, total = getattr(ranker, "done", 0), getattr(ranker, "total", 0)
            if getattr(ranker, "ready", True):
                timer.stop()
                self._show_progress(total, total)
                self._vectors_ready()
            else:
                self.status_bar.set_progress(done, total)

        timer = self.set_interval(0.25, poll)
        poll()

    def _signature(self) -> tuple:
        ckpt = self.ckpt
        if ckpt is None:
            return ()
        sig = []
        for pattern in WATCHED:
            for path in sorted(Path(ckpt.path).glob(pattern)):
                try:
                    st = path.stat()
                except OSError:
                    continue
                sig.append((path.name, st.st_mtime_ns, st.st_size))
        return tuple(sig)

    def _follow_tick(self) -> None:
        sig = self._signature()
        if sig != self._follow_sig:
            self._follow_sig = sig
            self._load(keep=True)

    # ------------------------------------------------------------------ audit

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, description="audit")
    def _run_audit(self) -> None:
        ckpt = self.ckpt
        if ckpt is None:
            return
        from ari_mem_tui.audit import audit, findings_by_node
        from ari_mem_tui.tui.audit_rows import audit_rows

        by_node: dict = {}
        try:
            report = audit(ckpt)
            rows, summary = audit_rows(ckpt, report)
            by_node = findings_by_node(report)
        except Exception as exc:  # noqa: BLE001
            rows = [AuditRow("error", "audit failed", None, f"{type(exc).__name__}: {exc}")]
            summary = ""
        self.call_from_thread(self._show_audit, ckpt, rows, summary, by_node)

    def _show_audit(
        self, ckpt: Checkpoint, rows: list[AuditRow], summary: str, by_node: dict | None = None
    ) -> None:
        if ckpt is not self.ckpt:
            return
        self.audit_rows = rows
        self.node_findings = by_node or {}
        self.tree_widget.set_findings(self.node_findings)
        self._show_findings()
        self._refresh_audit(summary)

    def _show_findings(self) -> None:
        """The chosen node's leaks, scope violations and rejected writes, in Hits and Node."""
        findings = self.node_findings.get(self.current_id or "", [])
        self.query_one(HitsPane).show_findings(findings)
        self.query_one(NodePane).show_findings(findings)

    def _refresh_audit(self, summary: str = "") -> None:
        rows = self.ui_problems + self.audit_rows
        self.query_one(AuditPane).show(rows, summary)
        problems = sum(1 for r in rows if r.kind in ("problem", "load", "search"))
        self.status_bar.set_problems(problems, len(rows) - problems)

    def _add_ui_problem(self, row: AuditRow) -> None:
        if all(r.text != row.text for r in self.ui_problems):
            self.ui_problems.append(row)
        self._refresh_audit()

    # ------------------------------------------------------------------ choosing a node

    def on_tree_node_highlighted(self, event: RunTree.NodeHighlighted) -> None:
        item = event.node.data
        if item is None:
            return
        node_id = item.node_id or (item.chain[0] if item.chain else None)
        if node_id:
            self.choose(node_id)

    def on_tree_node_selected(self, event: RunTree.NodeSelected) -> None:
        if event.node.allow_expand:
            self.tree_widget.ensure_loaded(event.node)
            event.node.toggle()

    def choose(self, node_id: str, force: bool = False) -> None:
        """Show `node_id` everywhere; its search runs in a worker."""
        ckpt = self.ckpt
        if ckpt is None or node_id not in ckpt.nodes:
            return
        if node_id == self.current_id and not force:
            return
        # the query source (at start / now / custom), limit and pool are remembered across nodes
        self.current_id = node_id
        self.tree_widget.set_selection(node_id)
        self._show_findings()
        self._mark_stale("node", "writes")
        self._start_replay()

    # Only the visible tab is redrawn when the selection moves; the others are redrawn when
    # shown. Mounting breadcrumbs and filling tables nobody looks at cost most of a keypress.

    def _mark_stale(self, *names: str) -> None:
        self._stale.update(names)
        active = self.query_one(TabbedContent).active
        if active in self._stale:
            self._refresh_tab(active)

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        name = event.pane.id or ""
        if name in self._stale:
            self._refresh_tab(name)

    def _refresh_tab(self, name: str) -> None:
        ckpt, node_id = self.ckpt, self.current_id
        if self.run_data is None or ckpt is None or node_id is None:
            return  # memory still loading: drawn when it has (`_loaded` chooses again)
        replay = self.replays.get(self._key())
        if name == "node":
            self.query_one(NodePane).show(ckpt.nodes[node_id], ckpt)
        elif name == "writes":
            self.query_one(WritesPane).show(ckpt, node_id)
        elif replay is None or name not in ("hits", "saw", "core"):
            return  # the search has not finished: its tabs are drawn when it has
        elif name == "hits":
            self.query_one(HitsPane).show(replay)
        elif name == "saw":
            self.query_one(SawPane).show(replay)
        else:
            self.query_one(CorePane).show(replay.core, self._start_of(replay.node_id))
        self._stale.discard(name)

    def _key(self) -> ReplayKey:
        query, limit, as_of, query_from = self.search_params
        return (self.current_id or "", query, limit, as_of, query_from)

    def _start_replay(self) -> None:
        key = self._key()
        cached = self.replays.get(key)
        if cached is not None:
            self._show_replay(key, cached)
            return
        if self.run_data is None:
            return  # memory still loading: `_loaded` chooses the node again
        self.query_one(HitsPane).show_loading(key[0])
        self._replay_worker(self.run_data, key)

    # a fixed description: by default Textual repr()s the arguments, i.e. the whole run
    @work(thread=True, exclusive=True, group="replay", exit_on_error=False, description="replay")
    def _replay_worker(self, run: Run, key: ReplayKey) -> None:
        worker = get_current_worker()
        node_id, query, limit, as_of, query_from = key
        try:
            from ari_mem_tui.search.replay import replay

            # missed entries' global ranks wait until the missed list is shown (M)
            result = replay(
                run.checkpoint,
                node_id,
                run.ranker,
                query=query,
                limit=limit,
                as_of=as_of,
                query_from=query_from,
                exact_ranks=False,
            )
        except Exception as exc:  # noqa: BLE001 - e.g. the Letta server went away
            if not worker.is_cancelled:
                self.call_from_thread(self._replay_failed, key, exc)
            return
        if not worker.is_cancelled:
            self.call_from_thread(self._show_replay, key, result)

    def _show_replay(self, key: ReplayKey, result: Replay) -> None:
        ranker = self.run_data.ranker if self.run_data else None
        ready = getattr(ranker, "ready", True)
        usable = ready and getattr(ranker, "usable", ready)
        if result.fallback and usable and key not in self._retried:
            # made with BM25 while the vectors were finishing: never kept, searched again once
            self._retried.add(key)
            if key == self._key() and self.run_data is not None:
                self._replay_worker(self.run_data, key)
            return
        self.replays[key] = result
        if key != self._key():
            return  # the user has moved on
        self._mark_stale("hits", "saw", "core")
        self.status_bar.set_embedder(result.embedder)

    def _start_of(self, node_id: str) -> float | None:
        ckpt = self.ckpt
        if ckpt is None or node_id not in ckpt.nodes:
            return None
        try:
            from ari_mem_tui.search.startup import start_time

            return start_time(ckpt, ckpt.nodes[node_id])[0]
        except Exception:  # noqa: BLE001 - only used to say "not seeded yet"
            return None

    def _replay_failed(self, key: ReplayKey, exc: Exception) -> None:
        message = f"search for {key[0]} failed: {type(exc).__name__}: {exc}"
        if key == self._key():
            self.query_one(HitsPane).show_error(message)
        self.notify(preview(message, 300), title="search failed", severity="error")
        self._add_ui_problem(AuditRow("error", "search", key[0], message))

    @on(RerunSearch)
    def _rerun(self, message: RerunSearch) -> None:
        self.search_params = (message.query, message.limit, message.as_of, message.query_from)
        if self.current_id:
            self._start_replay()

    @on(JumpToNode)
    def _jump_message(self, message: JumpToNode) -> None:
        self.jump_to(message.node_id)

    def jump_to(self, node_id: str) -> None:
        ckpt = self.ckpt
        if ckpt is None:
            return
        if node_id not in ckpt.nodes:
            self.notify(f"no node {preview(node_id, 60)} in this run", severity="warning")
            return
        if not self.tree_widget.select_id(node_id):
            self.notify("that node is hidden by the filter; clearing it", severity="warning")
            self.tree_filter = TreeFilter()
            self._apply_filter_to_tree()
            self.tree_widget.select_id(node_id)
        self.choose(node_id)

    @on(OpenEntry)
    def _open_entry(self, message: OpenEntry) -> None:
        ckpt = self.ckpt
        entry = ckpt.entries_by_id.get(message.entry_id) if ckpt else None
        if entry is None:
            self.notify("that entry is not in the loaded memory", severity="warning")
            return
        self.push_screen(EntryScreen(entry))

    # ------------------------------------------------------------------ actions

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_runs(self) -> None:
        """The workspace's run picker; Enter there opens the run in this app."""
        if self.workspace is None or self.run_factory is None:
            self.notify("opened on one run: start on a workspace folder for the list of runs")
            return
        from ari_mem_tui.tui.screens.runs import RunPickerScreen

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
        for group in ("load", "replay", "audit", "compare"):
            self.workers.cancel_group(self, group)
        self.opener, self.tree_opener = self.run_factory(path)
        self.run_data = self.tree_ckpt = None
        self.current_id = self.marked_id = self.initial_node = None
        self.replays.clear()
        self._stale.clear()
        self.search_params = (None, *self.search_params[1:])  # the same settings, no query
        self.tree_filter = TreeFilter()
        self.find_matches, self.find_index = [], -1
        self.ui_problems, self.audit_rows = [], []
        self.health_result = None
        self.sub_title = str(path)
        self.tree_widget.clear()
        self.tree_widget.root.set_label(Text("loading …", style="italic"))
        self.tree_widget.show_root = True
        self.status_bar.set_source("opening …")
        self._show_memory_pane(False)
        self.tree_widget.focus()
        self._load(keep=False)

    def action_health(self) -> None:
        """The run's memory health (tui/screens/health.py), computed once per loaded run."""
        run = self.run_data
        if run is None:
            self.notify("the run's memory is still loading", severity="warning")
            return
        from ari_mem_tui.tui.screens.health import HealthScreen

        if isinstance(self.screen, HealthScreen):
            return
        kept = self.health_result
        cached = kept[1] if kept is not None and kept[0] is run else None

        def keep(result: Any) -> None:
            self.health_result = (run, result)

        self.push_screen(HealthScreen(run, cached, keep))

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    def action_escape(self) -> None:
        find = self.query_one("#find-input", Input)
        if find.display:
            find.display = False
        self.tree_widget.focus()

    def action_toggle_tree(self) -> None:
        pane = self.query_one("#tree-pane")
        pane.display = not pane.display
        if not pane.display:
            self.query_one(TabbedContent).focus()

    def action_toggle_dim(self) -> None:
        tree = self.tree_widget
        tree.set_dim_unseen(not tree.dim_unseen)
        self.notify("dimming nodes outside the search scope" if tree.dim_unseen else "dimming off")

    def action_toggle_missed(self) -> None:
        self.action_tab("hits")
        self.query_one(HitsPane).toggle_missed()

    def action_toggle_as_of(self) -> None:
        from textual.widgets import Checkbox

        self.query_one(HitsPane).toggle_as_of()  # the checkbox's Changed message re-runs it
        on = self.query_one("#as-of", Checkbox).value
        self.notify("pool: as of the node's start" if on else "pool: today's (later writes too)")

    def action_cycle_query(self) -> None:
        """`s`: the query is the eval_summary at start, the eval_summary now, or your own."""
        from ari_mem_tui.search.startup import QUERY_SOURCE_WORDS

        self.action_tab("hits")
        which = self.query_one(HitsPane).cycle_query()
        self.notify(f"query: {QUERY_SOURCE_WORDS[which]}")

    def action_toggle_writes_scope(self) -> None:
        pane = self.query_one(WritesPane)
        pane.whole_run = not pane.whole_run
        if self.run_data:
            pane.show(self.run_data.checkpoint, self.current_id)
        self.action_tab("writes")

    # find -------------------------------------------------------------

    def action_find(self) -> None:
        find = self.query_one("#find-input", Input)
        if not self.query_one("#tree-pane").display:
            self.action_toggle_tree()
        find.display = True
        find.focus()

    @on(Input.Submitted, "#find-input")
    def _find_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.find_matches = self.find_nodes(event.value)
        self.find_index = -1
        self.tree_widget.set_find_hits(set(self.find_matches))
        event.input.display = False
        self.tree_widget.focus()
        if not self.find_matches:
            self.notify(f"no node matches {preview(event.value, 40)!r}", severity="warning")
            return
        self.notify(f"{len(self.find_matches)} matches (n / N)")
        self.action_find_next()

    def find_nodes(self, text: str) -> list[str]:
        """Nodes whose id contains `text`, then nodes whose name/direction/summary does."""
        ckpt = self.ckpt
        needle = text.strip().lower()
        if ckpt is None or not needle:
            return []
        visible = self.tree_widget.visible_ids
        by_id, by_text = [], []
        for node in ckpt.nodes.values():
            if visible is not None and node.id not in visible:
                continue
            if needle in node.id.lower():
                by_id.append(node.id)
                continue
            haystack = " ".join(
                s for s in (node.name, node.original_direction, node.eval_summary, node.label) if s
            ).lower()
            if needle in haystack:
                by_text.append(node.id)
        return by_id + by_text

    def _find_step(self, step: int) -> None:
        if not self.find_matches:
            self.notify("nothing to find: press / first", severity="warning")
            return
        self.find_index = (self.find_index + step) % len(self.find_matches)
        self.jump_to(self.find_matches[self.find_index])

    def action_find_next(self) -> None:
        self._find_step(1)

    def action_find_prev(self) -> None:
        self._find_step(-1)

    # filter -----------------------------------------------------------

    def action_filter(self) -> None:
        def done(result: TreeFilter | None) -> None:
            if result is not None:
                self.tree_filter = result
                self._apply_filter_to_tree()
                if self.current_id:
                    self.tree_widget.select_id(self.current_id)
                self.notify(f"filter: {result.describe()}")

        self.push_screen(FilterScreen(self.tree_filter), done)

    def action_clear_filter(self) -> None:
        self.tree_filter = TreeFilter()
        self._apply_filter_to_tree()

    def _apply_filter_to_tree(self) -> None:
        ckpt = self.ckpt
        if ckpt is None:
            return
        tree = self.tree_widget
        flt = self.tree_filter
        if not flt.active:
            tree.matched_ids = set()
            tree.load(ckpt, None)
            return
        matched = {
            n.id
            for n in ckpt.nodes.values()
            if (not flt.statuses or (n.status or "") in flt.statuses)
            and (not flt.labels or (n.label or "") in flt.labels)
        }
        visible = set(matched)
        for node_id in matched:
            visible.update(ckpt.nodes[node_id].ancestor_ids)
        tree.matched_ids = matched
        tree.load(ckpt, visible)

    # mark / compare ---------------------------------------------------

    def action_mark(self) -> None:
        if self.current_id:
            self.marked_id = self.current_id
            self.notify(f"marked {short_id(self.current_id)}: choose another node and press c")

    def action_compare(self) -> None:
        if not self.marked_id or not self.current_id or self.run_data is None:
            self.notify("mark a node with m first, then choose another", severity="warning")
            return
        self._compare_worker(self.run_data, self.marked_id, self.current_id)

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False, description="compare")
    def _compare_worker(self, run: Run, a: str, b: str) -> None:
        try:
            from ari_mem_tui.search.replay import replay

            results = []
            for node_id in (a, b):
                key: ReplayKey = (node_id, *DEFAULT_SEARCH)
                cached = self.replays.get(key)
                results.append(cached or replay(run.checkpoint, node_id, run.ranker))
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self.notify, f"compare failed: {exc}", severity="error")
            return
        self.call_from_thread(self._show_compare, run, results[0], results[1])

    def _show_compare(self, run: Run, a: Replay, b: Replay) -> None:
        for replay in (a, b):
            self.replays.setdefault((replay.node_id, *DEFAULT_SEARCH), replay)
        self.push_screen(CompareScreen(run.checkpoint, a, b))

    # copy / export / reload / follow ---------------------------------

    def action_copy(self) -> None:
        text = self._copy_target()
        if not text:
            return
        self.copy_to_clipboard(text)
        self.last_copied = text
        self.notify(f"copied {preview(text, 40)}")

    def _copy_target(self) -> str | None:
        ckpt = self.ckpt
        focused = self.focused
        if ckpt is not None and focused is not None:
            if focused.id in ("hits-table", "missed-table", "recorded-table"):
                entry_id = self.query_one(HitsPane).current_entry_id()
                entry = ckpt.entries_by_id.get(entry_id or "")
                if entry is not None:
                    return entry.text
            if focused.id == "writes-table":
                return self.query_one(WritesPane).current_text()
        return self.current_id

    def action_export(self) -> None:
        ckpt = self.ckpt
        replay = self.replays.get(self._key())
        if ckpt is None or replay is None:
            self.notify("the node's search has not finished yet", severity="warning")
            return
        from ari_mem_tui.render.dossier import export_dossier

        out_dir = config.export_dir(ckpt.path, self.export_to)
        try:
            md_path, json_path = export_dossier(ckpt, replay, out_dir)
        except (OSError, ValueError) as exc:
            self.notify(f"export failed: {exc}", severity="error")
            return
        self.last_export = (md_path, json_path)
        self.notify(f"{md_path}\n{json_path.name}", title="dossier written", timeout=8)

    def action_reload(self) -> None:
        self.notify("reloading …")
        self._load(keep=True)

    def action_toggle_follow(self) -> None:
        self.following = not self.following
        if self.following:
            self._follow_sig = self._signature()
            self._follow_timer.resume()
        else:
            self._follow_timer.pause()
        self.status_bar.set_follow(self.following)
        self.notify("following the checkpoint" if self.following else "follow off")


# ---------------------------------------------------------------------- entry points


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


def run_app(opener: Opener, **kwargs: Any) -> int:
    AriMemApp(opener, **kwargs).run()
    return 0
