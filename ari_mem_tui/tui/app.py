"""The Textual app: tree on the left, what the chosen node saw on the right.

The app composes the panes and routes between them; it holds no search or audit logic. Its
thread workers (tui/workers.py) call `open_run`, `search.replay.replay` and `audit.audit` (the
same functions the CLI uses) and post their results as messages (tui/messages.py); every result
is checked against the current selection before it is shown, so moving fast never shows stale
hits. The panes own their chores (find and filter: the tree pane; the search settings: the Hits
pane) and talk to the app with messages too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.text import preview, short_id
from ari_mem_tui.run import Run
from ari_mem_tui.search.startup import QUERY_SOURCE_WORDS, start_time
from ari_mem_tui.tui import config, keys, workers
from ari_mem_tui.tui.commands import ActionCommands, NodeCommands
from ari_mem_tui.tui.follow import Follower
from ari_mem_tui.tui.messages import (
    AuditDone,
    CheckpointChanged,
    CompareReady,
    JumpToNode,
    LoadFailed,
    LoadStep,
    Notice,
    OpenEntry,
    ReplayDone,
    ReplayFailed,
    ReplayKey,
    RerunSearch,
    RunLoaded,
    SearchParams,
    TreeRead,
    VectorProgress,
)
from ari_mem_tui.tui.screens.compare import CompareScreen
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
from ari_mem_tui.tui.widgets.hits import HitsPane
from ari_mem_tui.tui.widgets.run_tree import RunTree
from ari_mem_tui.tui.widgets.status_bar import StatusBar
from ari_mem_tui.tui.widgets.tree_pane import TreePane
from ari_mem_tui.tui.workers import Opener, TreeOpener

RunFactory = Callable[[Path], tuple[Opener, TreeOpener]]  # a workspace's run → its openers

DEFAULT_THEME = "textual-dark"
DEFAULT_SEARCH = SearchParams()


class AriMemApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ari-mem-tui"
    COMMANDS = App.COMMANDS | {ActionCommands, NodeCommands}
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.APP)

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
        settings = config.load_settings()
        self._wanted_theme = theme or settings.get("theme") or DEFAULT_THEME
        self.keymap = config.keymap(settings)  # the user's remaps: {key id: keys}, tui/keys.py
        self._remember_after_start = remember_theme
        if title:
            self.sub_title = title
        self.current_id: str | None = None
        self._stale: set[str] = set()
        self.marked_id: str | None = None
        self.search_params = DEFAULT_SEARCH
        self._retried: set[ReplayKey] = set()  # fallback results re-run once vectors were ready
        self.replays: dict[ReplayKey, Replay] = {}
        self.ui_problems: list[AuditRow] = []
        self.audit_rows: list[AuditRow] = []
        self.node_findings: dict[str, list] = {}  # node id -> its audit findings
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
            yield TreePane(id="tree-pane")
            with TabbedContent(id="tabs", initial="hits"):
                for index, (name, pane) in enumerate(zip(keys.TABS, PANES, strict=True)):
                    with TabPane(f"{index + 1} {name.title()}", id=name):
                        yield pane(id=f"{name}-pane")
            yield Static(Text("loading memory …", style="italic"), id="memory-loading")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
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
    def ckpt(self) -> Checkpoint | None:
        """The run's checkpoint; while its memory loads, the tree alone (see `tree_opener`)."""
        return self.run_data.checkpoint if self.run_data else self.tree_ckpt

    @property
    def following(self) -> bool:
        return self.follower.on

    # ------------------------------------------------------------------ loading

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="load")
    def _load(self, keep: bool) -> None:
        if self.opener is None:
            return  # a workspace whose run is not picked yet
        tree_first = self.tree_opener if self.ckpt is None else None
        workers.load_run(self, self.opener, tree_first, keep)

    @on(LoadStep)
    def _show_step(self, message: LoadStep) -> None:
        if self.run_data is not None:
            return  # a reload: the loaded run stays on screen until the new one replaces it
        text = Text("loading memory … ", style="bold")
        text.append(f"({message.n} of {message.m}: {message.part})", style="cyan")
        if self.tree_ckpt is not None:
            text.append(
                "\n\nThe tree is ready: move around it. The chosen node's hits, reads, core, "
                "writes and details appear here when the memory has loaded.",
                style="italic",
            )
        self.query_one("#memory-loading", Static).update(text)

    def _show_memory_pane(self, ready: bool) -> None:
        """The tabs once the run is loaded (or failed to); before that, the loading note."""
        self.query_one(TabbedContent).display = ready
        self.query_one("#memory-loading").display = not ready

    @on(VectorProgress)
    def _show_progress(self, message: VectorProgress) -> None:
        self.status_bar.set_progress(message.done, message.total)

    @on(TreeRead)
    def _tree_loaded(self, message: TreeRead) -> None:
        self.call_after_refresh(message.drawn.set)
        if self.ckpt is not None:
            return  # the full run (or another tree) is already shown
        ckpt = self.tree_ckpt = message.ckpt
        self.status_bar.set_source("tree shown · loading memory …")
        self._show_tree(ckpt, expand_roots=True)
        self._choose_first(ckpt, self.initial_node)

    def _show_tree(self, ckpt: Checkpoint, expand_roots: bool, expanded: list[str] = ()) -> None:
        """Draw `ckpt`'s tree, the lines in `expanded` open; its roots revealed (and opened)."""
        tree = self.tree_widget
        tree.show_root = False
        self.tree_pane.show(ckpt)
        for node_id in expanded:
            node = tree.reveal(node_id)
            if node is not None:
                node.expand()
        for root_id in ckpt.roots:
            node = tree.reveal(root_id)
            if node is not None and expand_roots:
                node.expand()

    def _choose_first(self, ckpt: Checkpoint, wanted: str | None) -> None:
        target = wanted if wanted in ckpt.nodes else (ckpt.roots[0] if ckpt.roots else None)
        if target:
            self.tree_widget.select_id(target)
            self.choose(target)

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
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

    @on(RunLoaded)
    def _loaded(self, message: RunLoaded) -> None:
        run = message.run
        # the tree shown while memory loaded: keep where the user has gone in it
        keep = message.keep or self.tree_ckpt is not None
        expanded = self.tree_widget.expanded_ids() if keep else []
        selected = self.current_id if keep else self.initial_node
        self.run_data, self.tree_ckpt = run, None
        self._show_memory_pane(True)
        self.replays.clear()
        self._retried.clear()
        self.follower.rebase()
        if not keep:
            self.tree_widget.focus()
        self.status_bar.set_source(run.source_label)
        self.status_bar.set_embedder(getattr(run.ranker, "name", "?"))
        self._watch_vectors(run)
        self._show_tree(run.checkpoint, expand_roots=not keep, expanded=expanded)
        self.current_id = None
        self._choose_first(run.checkpoint, selected)
        self._run_audit()
        self.loaded_count += 1

    def _watch_vectors(self, run: Run) -> None:
        """Show the ranker's vector progress (MiniLM computes vectors in the background); when
        they are ready every replay BM25 made in their place is stale: drop them all (whether
        or not any is cached: the visible one may still be in flight), re-run the visible one."""
        ranker = run.ranker
        if getattr(ranker, "ready", True):
            self.status_bar.set_progress(0, 0)
            return

        def poll() -> None:
            if run is not self.run_data:
                timer.stop()
                return
            done, total = getattr(ranker, "done", 0), getattr(ranker, "total", 0)
            if not getattr(ranker, "ready", True):
                self.status_bar.set_progress(done, total)
                return
            timer.stop()
            self.status_bar.set_progress(total, total)
            for key in [key for key, replay in self.replays.items() if replay.fallback]:
                del self.replays[key]
            if self.current_id and self._key() not in self.replays:
                self._start_replay()

        timer = self.set_interval(0.25, poll)
        poll()

    @on(CheckpointChanged)
    def _checkpoint_changed(self) -> None:
        self._load(keep=True)

    # ------------------------------------------------------------------ audit

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False, description="audit")
    def _run_audit(self) -> None:
        if self.ckpt is not None:
            workers.audit_run(self, self.ckpt)

    @on(AuditDone)
    def _show_audit(self, message: AuditDone) -> None:
        if message.ckpt is not self.ckpt:
            return
        self.audit_rows = message.rows
        self.node_findings = message.by_node
        self.tree_widget.set_findings(self.node_findings)
        self._show_findings()
        self._refresh_audit(message.summary)

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
        return ReplayKey.of(self.current_id or "", self.search_params)

    def _start_replay(self) -> None:
        key = self._key()
        cached = self.replays.get(key)
        if cached is not None:
            self._show_replay(key, cached)
            return
        if self.run_data is None:
            return  # memory still loading: `_loaded` chooses the node again
        self.query_one(HitsPane).show_loading(key.node_id)
        self._replay_worker(self.run_data, key)

    # a fixed description: by default Textual repr()s the arguments, i.e. the whole run
    @work(thread=True, exclusive=True, group="replay", exit_on_error=False, description="replay")
    def _replay_worker(self, run: Run, key: ReplayKey) -> None:
        workers.replay_node(self, run, key)

    @on(ReplayDone)
    def _replay_done(self, message: ReplayDone) -> None:
        self._show_replay(message.key, message.replay)

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
            return start_time(ckpt, ckpt.nodes[node_id])[0]
        except Exception:  # noqa: BLE001 - only used to say "not seeded yet"
            return None

    @on(ReplayFailed)
    def _replay_failed(self, message: ReplayFailed) -> None:
        key, exc = message.key, message.error
        text = f"search for {key.node_id} failed: {type(exc).__name__}: {exc}"
        if key == self._key():
            self.query_one(HitsPane).show_error(text)
        self.notify(preview(text, 300), title="search failed", severity="error")
        self._add_ui_problem(AuditRow("error", "search", key.node_id, text))

    @on(RerunSearch)
    def _rerun(self, message: RerunSearch) -> None:
        self.search_params = SearchParams(
            message.query, message.limit, message.as_of, message.query_from
        )
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
        self.tree_pane.select(node_id)
        self.choose(node_id)

    @on(OpenEntry)
    def _open_entry(self, message: OpenEntry) -> None:
        ckpt = self.ckpt
        entry = ckpt.entries_by_id.get(message.entry_id) if ckpt else None
        if entry is None:
            self.notify("that entry is not in the loaded memory", severity="warning")
            return
        self.push_screen(EntryScreen(entry))

    @on(Notice)
    def _notice(self, message: Notice) -> None:
        self.notify(message.text, severity=message.severity)

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
        self.search_params = self.search_params._replace(query=None)  # the same settings
        self.query_one(HitsPane).forget_query()
        self.ui_problems, self.audit_rows = [], []
        self.health_result = None
        self.sub_title = str(path)
        self.tree_pane.reset()
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
        self.tree_pane.close_find()

    def action_toggle_tree(self) -> None:
        pane = self.tree_pane
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
        on = self.query_one(HitsPane).toggle_as_of()  # the checkbox's Changed message re-runs it
        self.notify("pool: as of the node's start" if on else "pool: today's (later writes too)")

    def action_cycle_query(self) -> None:
        """`s`: the query is the eval_summary at start, the eval_summary now, or your own."""
        self.action_tab("hits")
        which = self.query_one(HitsPane).cycle_query()
        self.notify(f"query: {QUERY_SOURCE_WORDS[which]}")

    def action_toggle_writes_scope(self) -> None:
        ckpt = self.run_data.checkpoint if self.run_data else None
        self.query_one(WritesPane).toggle_scope(ckpt, self.current_id)
        self.action_tab("writes")

    def action_find(self) -> None:
        self.tree_pane.open_find()

    def action_find_next(self) -> None:
        self.tree_pane.find_step(1)

    def action_find_prev(self) -> None:
        self.tree_pane.find_step(-1)

    def action_filter(self) -> None:
        self.tree_pane.open_filter()

    def action_clear_filter(self) -> None:
        self.tree_pane.clear_filter()

    def action_mark(self) -> None:
        if self.current_id:
            self.marked_id = self.current_id
            self.notify(f"marked {short_id(self.current_id)}: choose another node and press c")

    def action_compare(self) -> None:
        if not self.marked_id or not self.current_id or self.run_data is None:
            self.notify("mark a node with m first, then choose another", severity="warning")
            return
        ids = [self.marked_id, self.current_id]
        cached = [self.replays.get(ReplayKey.of(i, DEFAULT_SEARCH)) for i in ids]
        self._compare_worker(self.run_data, cached, ids)

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False, description="compare")
    def _compare_worker(self, run: Run, cached: list[Replay | None], ids: list[str]) -> None:
        workers.compare_nodes(self, run, cached, ids)

    @on(CompareReady)
    def _show_compare(self, message: CompareReady) -> None:
        for replay in (message.a, message.b):
            self.replays.setdefault(ReplayKey.of(replay.node_id, DEFAULT_SEARCH), replay)
        self.push_screen(CompareScreen(message.run.checkpoint, message.a, message.b))

    def action_copy(self) -> None:
        text = self._copy_target()
        if not text:
            return
        self.copy_to_clipboard(text)
        self.last_copied = text
        self.notify(f"copied {preview(text, 40)}")

    def _copy_target(self) -> str | None:
        """The entry under the cursor of a focused hits or writes table, else the node id."""
        ckpt = self.ckpt
        if ckpt is not None and self.focused is not None:
            entry = ckpt.entries_by_id.get(self.query_one(HitsPane).focused_entry_id() or "")
            if entry is not None:
                return entry.text
            writes = self.query_one(WritesPane)
            if writes.table_focused:
                return writes.current_text()
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
        following = self.follower.toggle()
        self.status_bar.set_follow(following)
        self.notify("following the checkpoint" if following else "follow off")


PANES = (HitsPane, SawPane, CorePane, WritesPane, NodePane, AuditPane)  # as keys.TABS


# ---------------------------------------------------------------------- entry points


def run_app(opener: Opener, **kwargs: Any) -> int:
    AriMemApp(opener, **kwargs).run()
    return 0
