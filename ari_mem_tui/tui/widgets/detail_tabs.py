"""The six tabs of the chosen node (Hits, Saw, Core, Writes, Node, Audit).

They own the node's search: a thread worker replays it (tui/workers.py) and posts `ReplayDone`
here; replays are cached by `ReplayKey`, and one is shown only while its key is still the
current one, so moving fast never shows stale hits. Only the visible tab is redrawn when the
selection moves; the others when shown: mounting breadcrumbs and filling tables nobody looks
at cost most of a keypress.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.binding import BindingType
from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane, Tabs

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.text import short_id
from ari_mem_tui.run import Run
from ari_mem_tui.search.startup import start_time
from ari_mem_tui.tui import config, keys, workers
from ari_mem_tui.tui.messages import (
    CompareReady,
    ReplayDone,
    ReplayFailed,
    ReplayKey,
    ReplayShown,
    RerunSearch,
    SearchParams,
)
from ari_mem_tui.tui.screens.compare import CompareScreen
from ari_mem_tui.tui.tables import next_stop
from ari_mem_tui.tui.widgets.detail import CorePane, NodePane, SawPane, WritesPane
from ari_mem_tui.tui.widgets.hits import HitsPane


class KeyedTab(TabPane):
    """A tab whose keys (tui/keys.py scopes) work, and show in the footer, while focus is in it."""

    # the widget that takes focus when the tab is shown with `]` or 1–6 (a CSS selector)
    MAIN = ""
    # its keys' scopes (tui/keys.py): F1 lists their keys first
    HELP_SCOPES: ClassVar[tuple[str, ...]] = ()

    @property
    def help_name(self) -> str:
        return f"the {(self.id or '').title()} tab"

    def main_widget(self) -> Widget | None:
        found = self.query(self.MAIN) if self.MAIN else None
        return found.first() if found else None


class HitsTab(KeyedTab):
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.HITS)
    MAIN = "#hits-table"
    HELP_SCOPES = (keys.HITS, keys.TABLE)


class WritesTab(KeyedTab):
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.WRITES)
    MAIN = "#writes-table"
    HELP_SCOPES = (keys.WRITES, keys.TABLE)


class TextTab(KeyedTab):
    """Saw, Core, Node: text to read; j / k scroll it."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.TEXT)
    MAIN = "VerticalScroll"
    HELP_SCOPES = (keys.TEXT,)

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query("VerticalScroll").results(), direction)  # type: ignore[arg-type]


class AuditTab(KeyedTab):
    MAIN = "#audit-table"
    HELP_SCOPES = (keys.TABLE,)


TAB_CLASSES = {
    "hits": HitsTab,
    "saw": TextTab,
    "core": TextTab,
    "writes": WritesTab,
    "node": TextTab,
    "audit": AuditTab,
}


class DetailTabs(TabbedContent):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run: Run | None = None  # None while the run's memory loads
        self.node_id: str | None = None
        self.params = SearchParams()  # the Hits pane's settings, remembered across nodes
        self.replays: dict[ReplayKey, Replay] = {}
        self._retried: set[ReplayKey] = set()  # fallback results re-run once vectors were ready
        self._stale: set[str] = set()
        self.marked_id: str | None = None  # `m`, for `c`
        self.findings: dict[str, list] = {}  # node id -> its audit findings
        self.last_export: tuple[Path, Path] | None = None  # the last dossier written (`e`)

    def on_mount(self) -> None:
        # the tab strip is no Tab stop that swallows keys: 1–6 switch tabs, `]` focuses the pane
        for strip in self.query(Tabs):
            strip.can_focus = False
        app = self.app
        if hasattr(app, "current_id"):  # the app's state (tui/app.py): the tabs show it
            self.watch(app, "run_data", self.set_run, init=False)
            self.watch(app, "current_id", self._chosen, init=False)
            self.watch(app, "findings", self.set_findings, init=False)

    def _chosen(self, node_id: str | None) -> None:
        """The app's chosen node moved (None: none, while a run is (re)opened)."""
        ckpt = self.app.ckpt  # type: ignore[attr-defined]
        if node_id is not None and ckpt is not None and node_id in ckpt.nodes:
            self.choose(node_id)

    def focus_main(self) -> bool:
        """Focus the shown tab's main widget (its table, its text), drawn first if it is stale;
        an empty table passes it on to the tab's next stop. False when the tab has none."""
        pane = self.get_pane(self.active) if self.active else None
        target = pane.main_widget() if isinstance(pane, KeyedTab) else None
        if target is None:
            return False
        if self.active in self._stale:
            self._refresh_tab(self.active)  # now: an old node's rows would decide the stop
        if not target.focusable:
            target = next_stop(target, within=pane)
        if target is None:
            return False
        target.focus()
        return True

    @property
    def key(self) -> ReplayKey:
        return ReplayKey.of(self.node_id or "", self.params)

    def set_run(self, run: Run | None) -> None:
        """A run's memory has loaded (None: another run is opening): no replay is valid now."""
        self.workers.cancel_group(self, "replay")
        self.run, self.node_id = run, None
        if run is None:  # a run's reload keeps the mark
            self.workers.cancel_group(self, "compare")
            self.marked_id = None
        self.replays.clear()
        self._retried.clear()
        self._stale.clear()

    def choose(self, node_id: str) -> None:
        self.node_id = node_id
        self._show_findings()
        self._mark_stale("node", "writes")
        self._start_replay()

    def vectors_ready(self, complete: bool = True) -> None:
        """The embedder is ready (`complete`), or more pools are embedded: every replay BM25
        made in its place whose pool is now embedded is stale. Drop them (whether or not any is
        cached: the visible one may still be in flight) and re-run the visible one."""
        for key in [
            key
            for key, replay in self.replays.items()
            if replay.fallback and (complete or self._ranks_now(replay))
        ]:
            del self.replays[key]
        if self.node_id and self.key not in self.replays:
            self._start_replay()

    def rerank(self) -> None:
        """The run has a new ranker: no replay of the old one is kept; the visible node is
        searched again."""
        self.workers.cancel_group(self, "replay")
        self.replays.clear()
        self._retried.clear()
        if self.node_id:
            self._start_replay()

    def _ranks_now(self, replay: Replay) -> bool:
        """Whether the run's ranker would rank `replay`'s pool with itself now (no stand-in)."""
        ranker = self.run.ranker if self.run else None
        ready_for = getattr(ranker, "ready_for", None)
        if ready_for is not None:
            return bool(ready_for(replay.as_of))
        return getattr(ranker, "ready", True) and getattr(ranker, "usable", True)

    def set_findings(self, by_node: dict[str, list]) -> None:
        """The audit's findings per node (the app's `findings`)."""
        self.findings = by_node
        self._show_findings()

    def _show_findings(self) -> None:
        """The chosen node's leaks, scope violations and rejected writes, in Hits and Node."""
        findings = self.findings.get(self.node_id or "", [])
        self.query_one(HitsPane).show_findings(findings)
        self.query_one(NodePane).show_findings(findings)

    def toggle_writes_scope(self) -> None:
        """`w`: the Writes tab shows this node's writes / the whole run's."""
        ckpt = self.run.checkpoint if self.run else None
        pane = self.query_one(WritesPane)
        focused = self.app.focused
        self.active = "writes"
        pane.toggle_scope(ckpt, self.node_id)
        if focused is not None and self in focused.ancestors and pane not in focused.ancestors:
            # focus left in another tab's table would switch the tabs back to it
            self.focus_main()

    def copy_target(self, node_id: str | None) -> str | None:
        """`y`: the entry under the cursor of a focused hits or writes table, else `node_id`."""
        ckpt = self.run.checkpoint if self.run else None
        if ckpt is not None:
            entry = ckpt.entries_by_id.get(self.query_one(HitsPane).focused_entry_id() or "")
            if entry is not None:
                return entry.text
            writes = self.query_one(WritesPane)
            if writes.table_focused:
                return writes.current_text()
        return node_id

    def entry_under_cursor(self) -> str | None:
        """`x`: the entry under the cursor of a focused Hits or Writes table."""
        found = self.query_one(HitsPane).focused_entry_id()
        if found is None:
            found = self.query_one(WritesPane).current_entry_id()
        return found

    # ---- export ----

    def export(self, requested: Path | None) -> None:
        """`e`: the node's dossier, asked first and naming the files (a phrase typed into the
        wrong window must not write files); `y` writes them into the export folder
        (tui/config.py: `requested` is `--export-dir`)."""
        ckpt = self.run.checkpoint if self.run else None
        replay = self.replays.get(self.key)
        if ckpt is None or replay is None:
            self.notify("the node's search has not finished yet", severity="warning")
            return
        from ari_mem_tui.render.dossier import dossier_paths  # noqa: PLC0415 - on first use
        from ari_mem_tui.tui.screens.confirm import ConfirmScreen  # noqa: PLC0415

        out_dir = config.export_dir(ckpt.path, requested)
        md_path, json_path = dossier_paths(ckpt, replay.node_id, out_dir)
        question = Text.assemble(
            (f"Export the dossier of {short_id(replay.node_id)}?\n", "bold"),
            f"{md_path}\n{json_path}",
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._write_dossier(ckpt, replay, out_dir)
            else:
                self.notify("export cancelled")

        self.app.push_screen(ConfirmScreen(question), answered)

    def _write_dossier(self, ckpt: Checkpoint, replay: Replay, out_dir: Path) -> None:
        from ari_mem_tui.render.dossier import export_dossier  # noqa: PLC0415 - on first use

        try:
            md_path, json_path = export_dossier(ckpt, replay, out_dir)
        except (OSError, ValueError) as exc:
            self.notify(f"export failed: {exc}", severity="error")
            return
        self.last_export = (md_path, json_path)
        self.notify(f"{md_path}\n{json_path.name}", title="dossier written", timeout=8)

    # ---- mark / compare ----

    def mark(self, node_id: str | None) -> None:
        if node_id:
            self.marked_id = node_id
            self.notify(f"marked {short_id(node_id)}: choose another node and press c")

    def compare(self, node_id: str | None) -> None:
        """`c`: the marked node beside `node_id`, both with ARI's own search."""
        if not self.marked_id or not node_id or self.run is None:
            self.notify("mark a node with m first, then choose another", severity="warning")
            return
        ids = [self.marked_id, node_id]
        cached = [self.replays.get(ReplayKey.of(i, SearchParams())) for i in ids]
        self._compare_worker(self.run, cached, ids)

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False, description="compare")
    def _compare_worker(self, run: Run, cached: list[Replay | None], ids: list[str]) -> None:
        workers.compare_nodes(self, run, cached, ids)

    @on(CompareReady)
    def _show_compare(self, message: CompareReady) -> None:
        message.stop()
        for replay in (message.a, message.b):
            self.replays.setdefault(ReplayKey.of(replay.node_id, SearchParams()), replay)
        app, ckpt = self.app, message.run.checkpoint
        if app.is_screen_installed("compare"):
            screen = app.get_screen("compare")
            assert isinstance(screen, CompareScreen)
            screen.show(ckpt, message.a, message.b)
        else:
            app.install_screen(CompareScreen(ckpt, message.a, message.b), "compare")
        if app.get_screen("compare") not in app.screen_stack:
            app.push_screen("compare")

    # ---- searching ----

    @on(RerunSearch)
    def _rerun(self, message: RerunSearch) -> None:
        message.stop()
        self.params = SearchParams(message.query, message.limit, message.as_of, message.query_from)
        if self.node_id:
            self._start_replay()

    def _start_replay(self) -> None:
        key = self.key
        cached = self.replays.get(key)
        if cached is not None:
            self._show_replay(key, cached)
            return
        if self.run is None:
            return  # memory still loading: the app chooses the node again when it has
        self.query_one(HitsPane).show_loading(key)
        self._replay_worker(self.run, key)

    # a fixed description: by default Textual repr()s the arguments, i.e. the whole run
    @work(thread=True, exclusive=True, group="replay", exit_on_error=False, description="replay")
    def _replay_worker(self, run: Run, key: ReplayKey) -> None:
        workers.replay_node(self, run, key)

    @on(ReplayDone)
    def _replay_done(self, message: ReplayDone) -> None:
        message.stop()
        self._show_replay(message.key, message.replay)

    def _show_replay(self, key: ReplayKey, result: Replay) -> None:
        if result.fallback and self._ranks_now(result) and key not in self._retried:
            # made with BM25 while the vectors were finishing: never kept, searched again once
            self._retried.add(key)
            if key == self.key and self.run is not None:
                self._replay_worker(self.run, key)
            return
        self.replays[key] = result
        if key != self.key:
            return  # the user has moved on
        self._mark_stale("hits", "saw", "core")
        self.post_message(ReplayShown(result))

    @on(ReplayFailed)
    def _replay_failed(self, message: ReplayFailed) -> None:
        """Said in the Hits tab; the app (it bubbles on) adds it to the problems."""
        if message.key == self.key:
            self.query_one(HitsPane).show_error(message.text)

    # ---- drawing ----

    def _mark_stale(self, *names: str) -> None:
        self._stale.update(names)
        if self.active in self._stale:
            self._refresh_tab(self.active)

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        name = event.pane.id or ""
        if name in self._stale:
            self._refresh_tab(name)

    def _refresh_tab(self, name: str) -> None:
        node_id = self.node_id
        if self.run is None or node_id is None:
            return  # memory still loading: drawn when it has (the app chooses again)
        ckpt = self.run.checkpoint
        replay = self.replays.get(self.key)
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
            start = self._start_of(replay.node_id)
            self.query_one(CorePane).show(replay.node_id, replay.core, start)
        self._stale.discard(name)

    def _start_of(self, node_id: str) -> float | None:
        ckpt = self.run.checkpoint if self.run else None
        if ckpt is None or node_id not in ckpt.nodes:
            return None
        try:
            return start_time(ckpt, ckpt.nodes[node_id])[0]
        except Exception:  # noqa: BLE001 - only used to say "not seeded yet"
            return None
