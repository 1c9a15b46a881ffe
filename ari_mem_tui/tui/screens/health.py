"""The Health view: did the scoped memory reach the nodes that needed it (`health.py`).

Computing it replays every node's start-up search, which takes a while on a big run: it runs in
a thread worker owned by this screen, with a progress bar; Esc interrupts it (the nodes done so
far are shown, marked interrupted). Plots come first (Textual's Sparkline, by depth and over
time); `n` switches to the numbers. Enter on a node row jumps to the node, on an entry row
opens the entry. The result is kept by the app, so coming back is instant.

Below the title, a row of what-if settings (what_if.py: limit, top_k, ranker, pool, kinds of
memory left out), filled with a suggestion read off the starved nodes' windows when there is
one; `w` focuses it, Enter (or its button) replays every node's search under them in a second
worker, with its own progress (Esc interrupts it too), and shows the run's own beside them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    ContentSwitcher,
    DataTable,
    Input,
    ProgressBar,
    Select,
    Sparkline,
    Static,
)
from textual.worker import get_current_worker

from ari_mem_tui.health import compute_health
from ari_mem_tui.model import Run
from ari_mem_tui.model.health import Health, WhatIf
from ari_mem_tui.render.health import (
    DEPTH_COLUMNS,
    ENTRY_COLUMNS,
    NODE_COLUMNS,
    depth_cells,
    entry_cells,
    headline,
    node_cells,
    pct,
    starved_share,
    time_label,
    worst_nodes,
)
from ari_mem_tui.render.progress import progress_brief
from ari_mem_tui.render.text import clean
from ari_mem_tui.render.what_if import DEPTH_COLUMNS as WHAT_IF_DEPTHS
from ari_mem_tui.render.what_if import NODE_COLUMNS as WHAT_IF_NODES
from ari_mem_tui.render.what_if import depth_cells as what_if_depth_cells
from ari_mem_tui.render.what_if import node_cells as what_if_node_cells
from ari_mem_tui.render.what_if import what_if_lines
from ari_mem_tui.render.words import cut_note
from ari_mem_tui.search.dropped import REACT, TOOL_AUTO
from ari_mem_tui.search.progress import Progress
from ari_mem_tui.search.replay import DEFAULT_LIMIT
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.messages import (
    HealthDone,
    HealthProgress,
    JumpToNode,
    OpenEntry,
    WhatIfDone,
    WhatIfProgress,
)
from ari_mem_tui.tui.tables import LazyRows, VimTable, view_title
from ari_mem_tui.what_if import (
    RANKERS,
    Settings,
    SettingsError,
    parse_settings,
    ranker_for,
    suggest,
    what_if,
)

NODE_ROWS = 300  # a DataTable of 10k rows takes over a second to fill: the worst first
ENTRY_ROWS = 100


class Tick(Checkbox):
    """A checkbox whose mark says its state without colour, `[x]` or `[ ]` (Textual's draws an
    X either way, checked or not told apart by colour alone)."""

    BUTTON_LEFT, BUTTON_RIGHT = "[", "]"

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = "x" if self.value else " "
        return super()._button


class HealthScreen(Screen[None]):
    """Memory health of the open run; `result` is set once computed (or interrupted)."""

    AUTO_FOCUS = ""  # none (not the what-if row's first box: the letters would go in there)

    DEFAULT_CSS = """
    HealthScreen #health-main { height: 1fr; padding: 0 1; }
    HealthScreen #health-title { height: auto; margin-bottom: 1; }
    HealthScreen #health-progress-row { height: 1; margin-bottom: 1; }
    HealthScreen #health-progress { width: 40; }
    HealthScreen #health-progress-text { width: 1fr; }
    HealthScreen #health-views { height: 1fr; }
    HealthScreen .plot-label { margin-top: 1; }
    HealthScreen Sparkline { height: 3; margin-right: 2; }
    HealthScreen AxisLine { margin-right: 2; }
    HealthScreen VimTable { height: auto; max-height: 16; margin-bottom: 1; }
    HealthScreen .what-if-row { height: 1; }
    HealthScreen .what-if-row > Static { width: auto; margin: 0 1 0 0; }
    HealthScreen .what-if-row > Input { width: 6; margin-right: 1; }
    HealthScreen .what-if-row > Select { width: 14; margin-right: 1; }
    HealthScreen .what-if-row > Checkbox { width: auto; margin-right: 2; }
    HealthScreen .what-if-row > Button { width: auto; min-width: 9; margin-right: 2; }
    HealthScreen #wi-said { height: auto; margin-bottom: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.HEALTH)

    def __init__(
        self,
        run: Run,
        result: Health | None = None,
        on_result: Callable[[Health], None] | None = None,
    ) -> None:
        super().__init__()
        self.run_data: Run | None = run
        self.result = result
        self.on_result = on_result
        self.progress_seen: tuple[int, int] = (0, 0)
        self._titles: dict[str, Text] = {}  # a table's title before its filter and order
        self._node_progress = Progress(unit="nodes")
        self._cancel = threading.Event()
        self.own_hits: dict[str, list[str]] | None = None  # the own side's hits, for a what-if
        self.what_if_result: WhatIf | None = None
        self._rankers: dict[str, object] = {}  # what-if rankers built for this run, by name

    def compose(self) -> ComposeResult:
        with Vertical(id="health-main"):
            yield Static(Text("memory health", style="bold"), id="health-title")
            with Horizontal(id="health-progress-row"):
                yield ProgressBar(id="health-progress", show_eta=False)
                yield Static("", id="health-progress-text")
            yield from self._what_if_row()
            with ContentSwitcher(id="health-views", initial="health-plots"):
                with VerticalScroll(id="health-plots"):
                    for key, label in PLOTS:
                        yield Static(label, id=f"label-{key}", classes="plot-label")
                        yield Sparkline([], id=f"spark-{key}", summary_function=max)
                        yield AxisLine(id=f"axis-{key}", classes="plot-axis")
                    yield Static("", id="health-legend")
                with VerticalScroll(id="health-numbers"):
                    yield Static(Text("By depth", style="bold"), id="health-depths-title")
                    yield VimTable(id="health-depths")
                    yield Static(Text("Nodes", style="bold"), id="health-nodes-title")
                    yield VimTable(id="health-nodes")
                    yield Static("", id="health-entries-title")
                    yield VimTable(id="health-entries")
                with VerticalScroll(id="health-what-if"):
                    yield Static("", id="wi-summary")
                    yield Static(Text("By depth (run's own → what if)", style="bold"))
                    yield VimTable(id="wi-depths")
                    yield Static("", id="wi-nodes-title")
                    yield VimTable(id="wi-nodes")
        yield KeyBar()

    def _what_if_row(self) -> ComposeResult:
        """The what-if settings: ARI's own until a suggestion or the user changes them."""
        with Horizontal(classes="what-if-row"):
            yield Static(Text("what if", style="bold"))
            yield Static("limit")
            yield Input(str(DEFAULT_LIMIT), id="wi-limit", restrict=r"[0-9]*", compact=True)
            yield Static("top_k")
            yield Input("", placeholder="auto", id="wi-top-k", restrict=r"[0-9]*", compact=True)
            yield Static("ranker")
            options = [(name, name) for name in RANKERS]
            yield Select(options, value="own", allow_blank=False, id="wi-ranker", compact=True)
            yield Static("pool")
            pools = [("as of start", "start"), ("today's", "now")]
            yield Select(pools, value="start", allow_blank=False, id="wi-pool", compact=True)
        with Horizontal(classes="what-if-row"):
            yield Tick("leave out Tool entries", id="wi-tool", compact=True)
            yield Tick("leave out ReAct steps", id="wi-react", compact=True)
            yield Button("What if", id="wi-run", compact=True)
        yield Static("", id="wi-said")

    def on_mount(self) -> None:
        if self.result is not None:
            self.query_one("#health-progress-row").display = False
            self._show(self.result)
        else:
            self._start()

    def forget(self) -> None:
        """Let go of the run and its result (another run is open; `refill` shows it)."""
        self.run_data, self.result, self.on_result = None, None, None
        self.own_hits, self.what_if_result, self._rankers = None, None, {}

    def refill(
        self, run: Run, result: Health | None, on_result: Callable[[Health], None] | None
    ) -> None:
        """Show `run` (a reloaded one) with its `result`, or compute it: the view is kept,
        its widgets filled again, as a new one would show it (the plots first)."""
        self.run_data, self.result, self.on_result = run, result, on_result
        self.progress_seen = (0, 0)
        self.own_hits, self.what_if_result, self._rankers = None, None, {}
        self.query_one("#health-views", ContentSwitcher).current = "health-plots"
        if result is not None:
            self.query_one("#health-progress-row").display = False
            self._show(result)
        else:
            self.query_one("#health-progress", ProgressBar).update(total=None, progress=0)
            self._start()

    # ------------------------------------------------------------------ computing
    def _start(self) -> None:
        self._cancel.clear()
        self.own_hits = {}
        self._node_progress = Progress(unit="nodes")  # n of N nodes and an ETA, as every progress
        self.query_one("#health-progress-row").display = True
        self.query_one("#health-progress-text", Static).update(
            Text("replaying every node's start-up search … (Esc interrupts)", style="italic")
        )
        self._compute()

    @work(thread=True, exclusive=True, group="health", exit_on_error=False, description="health")
    def _compute(self) -> None:
        worker = get_current_worker()
        run = self.run_data
        assert run is not None  # (set before every start)

        def cancelled() -> bool:
            return self._cancel.is_set() or worker.is_cancelled

        def progress(done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.post_message(HealthProgress(done, total))

        try:
            result = compute_health(
                run.checkpoint,
                run.ranker,
                progress=progress,
                cancelled=cancelled,
                hits=self.own_hits,
            )
            if result.fidelity is not None:  # exact as far as the run's replay check says
                from ari_mem_tui.search.fidelity import with_check  # noqa: PLC0415

                with_check(result.fidelity, self._replay_check(run))
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            if not worker.is_cancelled:
                self.post_message(HealthDone(None, exc))
            return
        if not worker.is_cancelled:
            self.post_message(HealthDone(result))

    def _replay_check(self, run: Run) -> object | None:
        """The run's replay check: the status bar's, else the one kept (summary's)."""
        from ari_mem_tui.run_check import kept_check  # noqa: PLC0415

        return self.app.main.status_bar.check_of(run) or kept_check(run, run.ranker)

    @on(HealthProgress)
    def _progress(self, message: HealthProgress) -> None:
        done, total = message.done, message.total
        self.progress_seen = (done, total)
        bar = self.query_one("#health-progress", ProgressBar)
        bar.update(total=total, progress=done)
        self._node_progress.update(done, total)
        text = progress_brief(self._node_progress)
        vectors = getattr(self.run_data.ranker if self.run_data else None, "progress", None)
        if isinstance(vectors, Progress) and vectors.total and not vectors.finished:
            text += f"; MiniLM vectors {progress_brief(vectors)} (BM25 stands in meanwhile)"
        self.query_one("#health-progress-text", Static).update(
            Text(f" {text} (Esc interrupts)", style="italic")
        )

    @on(HealthDone)
    def _done(self, message: HealthDone) -> None:
        result, exc = message.result, message.error
        if result is None:
            self.query_one("#health-progress-text", Static).update(
                Text(f"health failed: {clean(f'{type(exc).__name__}: {exc}', False)}", style="red")
            )
            return
        self.result = result
        self.query_one("#health-progress-row").display = False
        if self.on_result is not None and result.complete:
            self.on_result(result)
        self._show(result)

    @property
    def computing(self) -> bool:
        return any(w.group in ("health", "what-if") and w.is_running for w in self.workers)

    # ------------------------------------------------------------------ showing
    def _show(self, h: Health) -> None:
        title = Text(f"Memory health of {clean(h.run_id or '?', False)}\n", style="bold")
        title.append_text(headline(h))
        self.query_one("#health-title", Static).update(title)
        depth_values = {
            "depth-starved": [starved_share(b) for b in h.by_depth],
            "depth-crowded": [b.mean_share_other + b.mean_share_react for b in h.by_depth],
            "time-starved": [starved_share(b) for b in h.over_time],
            "time-crowded": [b.mean_share_other + b.mean_share_react for b in h.over_time],
        }
        for key, label in PLOTS:
            values = depth_values[key]
            spark = self.query_one(f"#spark-{key}", Sparkline)
            spark.data = values or [0.0]
            self.query_one(f"#label-{key}", Static).update(
                Text.assemble((label, "bold"), ("   " + _scale(values), "dim"))
            )
            self.query_one(f"#axis-{key}", AxisLine).labels = _axis(key, h)
        self.query_one("#health-legend", Static).update(_legend(h))
        self._fill_numbers(h)
        self._offer(h)

    def _fill_numbers(self, h: Health) -> None:
        depths = self.query_one("#health-depths", VimTable)
        depths.fill(list(DEPTH_COLUMNS), [(b.label, depth_cells(b)) for b in h.by_depth])
        nodes = self.query_one("#health-nodes", VimTable)
        ranked = worst_nodes(h, len(h.nodes))  # the first NODE_ROWS shown; `/` filters them all
        rows = LazyRows(ranked, lambda _, r: (r.node_id, node_cells(r)))  # type: ignore[attr-defined]
        nodes.fill(list(NODE_COLUMNS), rows, limit=NODE_ROWS)
        worst = ranked[:NODE_ROWS]
        unsearched = len(h.nodes) - h.searched
        skipped = f" ({unsearched} did not: a root, or not started)" if unsearched else ""
        self._title(
            "health-nodes",
            Text(
                f"Nodes: {h.searched} made a start-up search{skipped}, starved first"
                f"{_cut(len(worst), h.searched)} (Enter: go to the node)",
                style="bold",
            ),
        )
        entries = self.query_one("#health-entries", VimTable)
        rows: list[tuple[str, list[Any]]] = []
        # keyed by list and entry: one entry can be in both (retrieved by none, when few are:
        # a DuplicateKey took the app down, found by the fuzzer)
        for use in h.top_entries[:ENTRY_ROWS]:
            rows.append((f"most|{use.entry_id}", ["most", *entry_cells(use, 60)]))
        for use in h.never_retrieved[:ENTRY_ROWS]:
            rows.append((f"never|{use.entry_id}", ["never", *entry_cells(use, 60)]))
        entries.fill(["", *ENTRY_COLUMNS], rows, reserve=True)
        e = h.entries
        self._title(
            "health-entries",
            Text(
                f"Entries: most retrieved, then never retrieved by a descendant "
                f"({e.never_by_descendant:,} of {e.total:,})"
                f"{_cut(min(len(h.never_retrieved), ENTRY_ROWS), e.never_by_descendant)}"
                "; Enter opens one",
                style="bold",
            ),
        )
        self._title("health-depths", Text("By depth", style="bold"))
        shown = self.query_one("#health-views", ContentSwitcher).current == "health-numbers"
        if shown and not isinstance(self.focused, VimTable):
            nodes.focus()  # `n` came while computing: the table was empty, no focus stop

    def _title(self, table_id: str, base: Text) -> None:
        """A table's title, with its filter and order when set (`/`, `S`: tui/tables.py)."""
        self._titles[table_id] = base
        table = self.query_one(f"#{table_id}", VimTable)
        self.query_one(f"#{table_id}-title", Static).update(view_title(base, [table], table))

    @on(VimTable.ViewChanged)
    def _view_changed(self, event: VimTable.ViewChanged) -> None:
        event.stop()
        table_id = event.table.id or ""
        if table_id in self._titles:
            self._title(table_id, self._titles[table_id])

    # ------------------------------------------------------------------ what if
    def _offer(self, h: Health) -> None:
        """Fill the what-if row with the suggestion the starved nodes' windows make, if any,
        and say why (nothing runs: a what-if is a second full pass, started by the user)."""
        said = self.query_one("#wi-said", Static)
        if self.what_if_result is not None:
            return
        found = suggest(h)
        if found is None:
            said.update(Text("w: try other memory settings (Enter runs them)", style="dim"))
            return
        settings, why = found
        self._set_row(settings)
        said.update(
            Text.assemble(
                ("suggested: ", "bold"),
                f"{settings.text()}, as {clean(why, False)} (w, then Enter runs it)",
            )
        )

    def _set_row(self, settings: Settings) -> None:
        self.query_one("#wi-limit", Input).value = str(settings.limit)
        self.query_one("#wi-top-k", Input).value = str(settings.top_k or "")
        self.query_one("#wi-ranker", Select).value = settings.ranker
        self.query_one("#wi-pool", Select).value = settings.pool
        self.query_one("#wi-tool", Checkbox).value = TOOL_AUTO in settings.drop
        self.query_one("#wi-react", Checkbox).value = REACT in settings.drop

    def row_settings(self) -> Settings:
        """The row's settings, checked as `health --what-if` checks them."""
        parts = []
        limit = self.query_one("#wi-limit", Input).value.strip()
        top_k = self.query_one("#wi-top-k", Input).value.strip()
        if limit:
            parts.append(f"limit={limit}")
        if top_k:
            parts.append(f"top_k={top_k}")
        parts.append(f"ranker={self.query_one('#wi-ranker', Select).value}")
        parts.append(f"pool={self.query_one('#wi-pool', Select).value}")
        drops = [
            name
            for name, box in ((TOOL_AUTO, "#wi-tool"), (REACT, "#wi-react"))
            if self.query_one(box, Checkbox).value
        ]
        if drops:
            parts.append("drop=" + "+".join(drops))
        return parse_settings(",".join(parts))

    def action_focus_what_if(self) -> None:
        self.query_one("#wi-limit", Input).focus()

    @on(Input.Submitted, "#wi-limit, #wi-top-k")  # (a table's filter box is not the row's)
    @on(Button.Pressed, "#wi-run")
    def _run_what_if(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        if self.computing or self.run_data is None:
            self.notify("memory health is still being computed", severity="warning")
            return
        try:
            settings = self.row_settings()
        except SettingsError as exc:
            self.query_one("#wi-said", Static).update(Text(str(exc), style="red"))
            return
        self._cancel.clear()
        self.query_one("#health-progress-row").display = True
        self.query_one("#health-progress", ProgressBar).update(total=None, progress=0)
        self._node_progress = Progress(unit="steps")
        label = settings.text() or "ARI's own settings"
        self.query_one("#health-progress-text", Static).update(
            Text(f" what if {label} … (Esc interrupts)", style="italic")
        )
        self._compute_what_if(settings)

    @work(thread=True, exclusive=True, group="what-if", exit_on_error=False, description="what if")
    def _compute_what_if(self, settings: Settings) -> None:
        worker = get_current_worker()
        run = self.run_data
        assert run is not None  # (checked before the start)

        def cancelled() -> bool:
            return self._cancel.is_set() or worker.is_cancelled

        def progress(done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.post_message(WhatIfProgress(done, total))

        try:
            ranker = self._rankers.get(settings.ranker) or ranker_for(run, settings)
            self._rankers[settings.ranker] = ranker
            if not self._wait_for(ranker, run, cancelled):
                self.post_message(WhatIfDone(None))
                return
            own = self.result, self.own_hits
            result = what_if(
                run.checkpoint,
                run.ranker,
                settings,
                ranker,
                progress=progress,
                cancelled=cancelled,
                own_report=own if own[0] is not None and own[0].complete and own[1] else None,
                check=self._replay_check(run),
            )
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            if not worker.is_cancelled:
                self.post_message(WhatIfDone(None, exc))
            return
        if not worker.is_cancelled:
            self.post_message(WhatIfDone(result))

    def _wait_for(self, ranker: object, run: Run, cancelled) -> bool:
        """Until a ranker built for the what-if has its vectors (False: interrupted)."""
        wait = getattr(ranker, "wait", None)
        if ranker is run.ranker or wait is None:
            return True
        while not wait(0.2):
            if cancelled():
                return False
            vectors = getattr(ranker, "progress", None)
            if isinstance(vectors, Progress) and vectors.total:
                text = f"MiniLM vectors {progress_brief(vectors)}"
                self.post_message(WhatIfProgress(0, 0, text))
        return not cancelled()

    @on(WhatIfProgress)
    def _what_if_progress(self, message: WhatIfProgress) -> None:
        if message.text:
            text = message.text
        else:
            self.query_one("#health-progress", ProgressBar).update(
                total=message.total, progress=message.done
            )
            self._node_progress.update(message.done, message.total)
            text = "what if: " + progress_brief(self._node_progress)
        self.query_one("#health-progress-text", Static).update(
            Text(f" {text} (Esc interrupts)", style="italic")
        )

    @on(WhatIfDone)
    def _what_if_done(self, message: WhatIfDone) -> None:
        self.query_one("#health-progress-row").display = False
        said = self.query_one("#wi-said", Static)
        if message.result is None:
            if message.error is not None:
                error = clean(f"{type(message.error).__name__}: {message.error}", False)
                said.update(Text(f"what if failed: {error}", style="red"))
            else:
                said.update(Text("what if interrupted", style="yellow"))
            return
        self.what_if_result = w = message.result
        said.update(
            Text("the what-if below (n: plots, numbers, what if; w: its settings)", style="dim")
        )
        self._show_what_if(w)
        self.query_one("#health-views", ContentSwitcher).current = "health-what-if"
        self.query_one("#wi-nodes", VimTable).focus()

    def _show_what_if(self, w: WhatIf) -> None:
        self.query_one("#wi-summary", Static).update(what_if_lines(w))
        depths = self.query_one("#wi-depths", VimTable)
        depths.fill(
            list(WHAT_IF_DEPTHS), [(d.label, what_if_depth_cells(d)) for d in w.changes.by_depth]
        )
        nodes = w.changes.nodes
        shown = nodes[:NODE_ROWS]
        self.query_one("#wi-nodes", VimTable).fill(
            list(WHAT_IF_NODES), [(n.node_id, what_if_node_cells(n)) for n in shown]
        )
        title = f"Nodes whose hits changed: {len(nodes)}, no longer starved first"
        title += _cut(len(shown), len(nodes)) + " (Enter: go to the node)"
        self.query_one("#wi-nodes-title", Static).update(Text(title, style="bold"))

    def entry_under_cursor(self) -> str | None:
        """`Y` on the entries table: its row's entry (a row's key is `most|<id>` or
        `never|<id>`: an entry may be in both lists)."""
        table = self.query_one("#health-entries", VimTable)
        key = table.current_key if table.has_focus else None
        return key.partition("|")[2] if key else None

    # ------------------------------------------------------------------ keys
    def action_back(self) -> None:
        if self.computing:
            self._cancel.set()
            self.query_one("#health-progress-text", Static).update(
                Text(" interrupting …", style="yellow")
            )
            return
        self.dismiss(None)

    def action_toggle_numbers(self) -> None:
        """Plots → numbers → the what-if's (once there is one) → plots."""
        switcher = self.query_one("#health-views", ContentSwitcher)
        views = ["health-plots", "health-numbers"]
        if self.what_if_result is not None:
            views.append("health-what-if")
        at = views.index(switcher.current) if switcher.current in views else -1
        switcher.current = views[(at + 1) % len(views)]
        if switcher.current == "health-numbers":
            self.query_one("#health-nodes", VimTable).focus()
        elif switcher.current == "health-what-if":
            self.query_one("#wi-nodes", VimTable).focus()

    def action_recompute(self) -> None:
        if not self.computing:
            self.result, self.what_if_result = None, None
            self._start()

    @on(DataTable.RowSelected)
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        key = VimTable.plain_key(event.row_key.value)
        if not key:
            return
        event.stop()
        if event.data_table.id in ("health-nodes", "wi-nodes"):
            self.dismiss(None)
            self.app.post_message(JumpToNode(key))
        elif event.data_table.id == "health-entries":
            self.app.post_message(OpenEntry(key.split("|", 1)[1]))


PLOTS = (
    ("depth-starved", "Starved share by depth"),
    ("depth-crowded", "Window taken by other branches and ReAct steps, by depth"),
    ("time-starved", "Starved share over time"),
    ("time-crowded", "Window crowding over time"),
)


def _scale(values: list[float]) -> str:
    """What a bar's height means: Sparkline draws the least value at the foot, the most at the
    top."""
    if not values:
        return "no nodes"
    low, high = min(values), max(values)
    if low == high:
        return f"every bar {pct(high)}"
    return f"bar height: {pct(low)} at the foot, {pct(high)} at the top"


def _axis(key: str, h: Health) -> tuple[str, str, str]:
    """The x axis under a plot: its first bucket, what runs along it, its last bucket."""
    if key.startswith("depth"):
        buckets = h.by_depth
        return (buckets[0].label, "depth →", buckets[-1].label) if buckets else ("", "", "")
    slices = h.over_time  # each end a time as every time is shown, zone named, to the second
    return (time_label(slices[0]), "start time →", time_label(slices[-1])) if slices else ("",) * 3


class AxisLine(Widget):
    """A plot's x axis: the first label at the left end, the last at the right, what the axis
    measures in the middle."""

    DEFAULT_CSS = "AxisLine { height: 1; color: $text-muted; }"
    labels: reactive[tuple[str, str, str]] = reactive(("", "", ""))

    def render(self) -> Text:
        left, middle, right = (clean(x, False) for x in self.labels)
        width = self.size.width
        gap = max(1, width - len(left) - len(right))
        line = Text(
            left + middle.center(gap) + right if len(middle) < gap else left + " " * gap + right
        )
        line.truncate(width)
        return line


def _cut(shown: int, total: int) -> str:
    """Say that a table holds only part of the run, and where the rest is."""
    if shown >= total:
        return ""
    return ": " + cut_note(shown, total, "", "`ari-mem-tui health CKPT --json --all-entries`")


def _legend(h: Health) -> Text:
    text = Text("\n")
    text.append("n: the numbers behind the plots (Enter on a row goes to its node or entry)\n")
    for note in h.notes:
        text.append(f"note: {clean(note, False)}\n", style="dim")
    return text


def show_health(app: Any) -> None:
    """`H`: the run's memory health, computed once per loaded run (kept in the app's
    `health_result`); the view is built once and shown again (composing it cost a key's time),
    refilled for another run (after a reload) or when it holds no complete result."""
    run = app.run_data
    if run is None:
        app.notify("the run's memory is still loading", severity="warning")
        return
    if isinstance(app.screen, HealthScreen):
        return
    kept = app.health_result
    cached = kept[1] if kept is not None and kept[0] is run else None

    def keep(result: Health) -> None:
        app.health_result = (run, result)

    shown = app.get_screen("health") if app.is_screen_installed("health") else None
    if not isinstance(shown, HealthScreen):
        app.install_screen(HealthScreen(run, cached, keep), "health")
    elif cached is None or shown.result is not cached or shown.run_data is not run:
        shown.refill(run, cached, keep)  # (another run, or no complete result: the same view)
    app.push_screen("health")
