"""Where a request to show something goes: the node chosen in the tree (or asked for by a
breadcrumb, the audit list, the palette, a find), and a row or entry to show in full.

`Routing` is mixed into the app (tui/app.py): panes and workers post their requests to the app
(tui/messages.py), and Textual finds the handlers here by name (`on_<message>`). It decides only
where things are shown; the panes draw them.
"""

from __future__ import annotations

from dataclasses import replace

from ari_mem_tui.render.text import preview
from ari_mem_tui.tui import messages as msg
from ari_mem_tui.tui.history import History, View
from ari_mem_tui.tui.rows import AuditRow
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.tui.widgets.detail_tabs import KeyedTab
from ari_mem_tui.tui.widgets.run_tree import RunTree


class Routing:
    """Choosing a node and opening rows in full. Mixed into `AriMemApp` (with `RunLifecycle`,
    whose `ckpt` and `_add_ui_problem` it uses)."""

    current_id: str | None
    history: History

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

    def on_replay_shown(self, message: msg.ReplayShown) -> None:
        fidelity = message.replay.fidelity
        # the ranker's own state here (a stand-in says so); how far its replays reproduce the
        # run's recordings is the check's, beside it, once the first hits are shown
        self.status_bar.set_embedder(
            message.replay.embedder, fidelity.kind if fidelity.own is not True else ""
        )
        self._start_audit()
        if self.run_data is not None:
            self.status_bar.check_run(self.run_data)

    def on_replay_failed(self, message: msg.ReplayFailed) -> None:
        text = message.text
        self._start_audit()
        self.notify(preview(text, 300), title="search failed", severity="error")
        self._add_ui_problem(AuditRow("error", "search", message.key.node_id, text))

    def on_jump_to_node(self, message: msg.JumpToNode) -> None:
        self.jump_to(message.node_id)

    def jump_to(self, node_id: str, remember: bool = True) -> None:
        """Go to `node_id` (a find, the palette, a row's `o`, a breadcrumb, a finding); the
        view it leaves goes into the history (`b` comes back to it)."""
        ckpt = self.ckpt
        if ckpt is None:
            return
        if node_id not in ckpt.nodes:
            self.notify(f"no node {preview(node_id, 60)} in this run", severity="warning")
            return
        if remember and self.current_id is not None and node_id != self.current_id:
            self.history.push(self.view_here())
        self.tree_pane.select(node_id)
        self.choose(node_id)

    # ---- the history of views ----

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
        return View(self.current_id or "", tab, table_id, row, had_focus)

    def action_history_back(self) -> None:
        self._restore(self.history.go_back(self.view_here()), "back")

    def action_history_forward(self) -> None:
        self._restore(self.history.go_forward(self.view_here()), "forward")

    def _restore(self, view: View | None, way: str) -> None:
        """Show `view` again: its node, its tab, its row (once its table is filled)."""
        ckpt = self.ckpt
        if view is None or ckpt is None or view.node_id not in ckpt.nodes:
            self.notify(f"nothing to go {way} to" if view is None else "that node is gone")
            return
        moved = view.node_id != self.current_id
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

    def on_open_entry(self, message: msg.OpenEntry) -> None:
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

    def on_view_row(self, message: msg.ViewRow) -> None:
        self.push_screen(EntryScreen(message.row), self._went_to)

    def _went_to(self, node_id: str | None) -> None:
        """`o` in a row's view: go to the row's node."""
        if node_id:
            self.jump_to(node_id)

    def on_notice(self, message: msg.Notice) -> None:
        self.notify(message.text, severity=message.severity)
