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
from ari_mem_tui.tui.rows import AuditRow
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.widgets.run_tree import RunTree


class Routing:
    """Choosing a node and opening rows in full. Mixed into `AriMemApp` (with `RunLifecycle`,
    whose `ckpt` and `_add_ui_problem` it uses)."""

    current_id: str | None

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

    def jump_to(self, node_id: str) -> None:
        ckpt = self.ckpt
        if ckpt is None:
            return
        if node_id not in ckpt.nodes:
            self.notify(f"no node {preview(node_id, 60)} in this run", severity="warning")
            return
        self.tree_pane.select(node_id)
        self.choose(node_id)

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
