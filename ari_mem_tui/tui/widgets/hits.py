"""The Hits tab: the node's ancestor-scoped search, replayed, with its diagnostics."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Checkbox, DataTable, Input, Static

from ari_mem_tui.model import Hit, Replay
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.tui.messages import OpenEntry, RerunSearch
from ari_mem_tui.tui.widgets.tables import VimTable

MARK_STYLES = {
    "replay-only": ("+replay", "yellow"),
    "recorded-only": ("-record", "magenta"),
    "moved": ("~moved", "cyan"),
}
HIT_COLUMNS = ["#", "glob", "score", "node", "kind", "diff", "text"]


def mark_text(mark: str) -> Text:
    label, style = MARK_STYLES.get(mark, (mark, ""))
    return Text(label, style=style) if mark else Text("")


def hit_row(hit: Hit) -> list[object]:
    return [
        str(hit.rank),
        str(hit.global_rank),
        f"{hit.score:.2f}",
        short_id(hit.node_id),
        "node" if hit.kind == "node_scope" else hit.kind,
        mark_text(hit.mark),
        hit.text,
    ]


def diagnostics_text(replay: Replay) -> Text:
    """One line: pool, window, eligible, missed."""
    pool = replay.pool or {}
    size = pool.get("size", "?")
    parts = [f"pool {size}"]
    if "node_scope" in pool or "react_step" in pool:
        parts[0] += f" ({pool.get('node_scope', 0)} node, {pool.get('react_step', 0)} react)"
    top_k = replay.params.get("top_k", "?")
    window = pool.get("window")
    window_part = f"window top_k={top_k}"
    if isinstance(window, dict):
        inside = ", ".join(
            f"{v} {clean(k, False).replace('_', ' ')}"
            for k, v in window.items()
            if k in ("lineage", "self", "other_branches", "react_step") and v
        )
        window_part += f" ({inside})" if inside else ""
    parts.append(window_part)
    parts.append(f"eligible {replay.eligible}")
    text = Text(" · ".join(parts) + " · ", style="")
    missed = len(replay.missed)
    text.append(f"missed {missed}", style="bold red" if missed else "green")
    if missed:
        text.append("  (M: show)", style="bright_black")
    return text


class HitsPane(VerticalScroll):
    """Hits of the selected node; Enter on a row opens the entry."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.replay: Replay | None = None
        self.show_missed = False

    def compose(self) -> ComposeResult:
        yield Static(Text("Choose a node in the tree.", style="italic"), id="hits-query")
        with Horizontal(id="hits-controls"):
            yield Input(placeholder="re-run with another query (Enter)", id="query-input")
            yield Input(value="5", type="integer", id="limit-input", tooltip="limit (ARI: 5)")
            yield Checkbox("as of start", id="as-of", tooltip="only entries written before start")
        yield Static("", id="hits-diag")
        yield VimTable(id="hits-table")
        yield Static("", id="missed-title", classes="section")
        yield VimTable(id="missed-table")
        yield Static("", id="recorded-title", classes="section")
        yield VimTable(id="recorded-table")

    def on_mount(self) -> None:
        self.query_one("#missed-table").set_class(True, "empty")
        self.query_one("#missed-title").display = False

    def show_loading(self, node_id: str) -> None:
        self.query_one("#hits-diag", Static).update(Text(f"searching for {short_id(node_id)} …"))

    def show_error(self, message: str) -> None:
        self.replay = None
        self.query_one("#hits-diag", Static).update(Text(preview(message, 400), style="bold red"))
        self.query_one("#hits-table", VimTable).clear()

    def show(self, replay: Replay) -> None:
        self.replay = replay
        header = Text.assemble(
            ("query ", "bold"),
            (f"({clean(replay.query_source, False)})", "cyan"),
            ": ",
            preview(replay.query, 300),
        )
        header.append(f"\nreplayed with {clean(replay.embedder, False)}", style="bright_black")
        header.append(" · a re-query of today's store, not a recording", style="bright_black")
        if replay.as_of is not None:
            header.append(
                f"\nas of {fmt_ts(replay.as_of)} ({clean(replay.as_of_source or '?', False)})",
                style="yellow",
            )
        for note in replay.notes:
            header.append("\nnote: " + preview(note, 300), style="yellow")
        self.query_one("#hits-query", Static).update(header)
        self.query_one("#hits-diag", Static).update(diagnostics_text(replay))
        table = self.query_one("#hits-table", VimTable)
        table.fill(HIT_COLUMNS, ((h.entry_id, hit_row(h)) for h in replay.hits), reserve=True)
        if not replay.hits:
            self.query_one("#hits-diag", Static).update(
                diagnostics_text(replay).append(
                    "\nno hits: nothing from its ancestors ranked in the window", style="italic"
                )
            )
        self._show_missed()
        self._show_recorded()

    def _show_missed(self) -> None:
        replay = self.replay
        visible = bool(self.show_missed and replay is not None)
        # a DataTable whose `display` flips is not repainted (Textual 8.2.8): collapse it instead
        self.query_one("#missed-table").set_class(not visible, "empty")
        self.query_one("#missed-title").display = visible
        if not visible or replay is None:
            return
        replay.resolve_ranks()  # a pass over the whole pool, only now that they are shown
        self.query_one("#missed-title", Static).update(
            Text(
                f"Missed: {len(replay.missed)} eligible ancestor entries outside the window",
                style="bold red",
            )
        )
        rows = (
            (
                m.entry_id,
                ["?" if m.global_rank is None else str(m.global_rank), short_id(m.node_id), m.text],
            )
            for m in replay.missed
        )
        self.query_one("#missed-table", VimTable).fill(["glob", "node", "text"], rows, reserve=True)

    def _show_recorded(self) -> None:
        replay = self.replay
        assert replay is not None
        title = self.query_one("#recorded-title", Static)
        table = self.query_one("#recorded-table", VimTable)
        rec = replay.recorded
        if rec is None:
            title.update(
                Text(
                    "Recorded: no start-up read in the access log for this node",
                    style="bright_black",
                )
            )
            table.set_class(True, "empty")
            table.clear(columns=True)
            return
        table.set_class(False, "empty")
        text = Text.assemble(
            ("Recorded ", "bold"), f"at {fmt_ts(rec.ts)}: ", preview(rec.query, 200)
        )
        differs = sum(1 for h in replay.hits if h.mark) + sum(1 for h in rec.hits if h.mark)
        text.append(
            f"  ({differs} differences marked)" if differs else "  (same as the replay)",
            style="yellow" if differs else "green",
        )
        title.update(text)
        table.fill(
            HIT_COLUMNS,
            ((f"rec:{i}:{h.entry_id}", hit_row(h)) for i, h in enumerate(rec.hits)),
            reserve=True,
        )

    def toggle_missed(self) -> None:
        self.show_missed = not self.show_missed
        if self.replay is not None:
            self._show_missed()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = VimTable.plain_key(event.row_key.value) or ""
        if key.startswith("rec:"):
            key = key.split(":", 2)[2]
        event.stop()
        self.post_message(OpenEntry(key))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._rerun()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._rerun()

    def _rerun(self) -> None:
        query = self.query_one("#query-input", Input).value.strip() or None
        try:
            limit = max(1, min(200, int(self.query_one("#limit-input", Input).value or 5)))
        except ValueError:
            limit = 5
        as_of = self.query_one("#as-of", Checkbox).value
        self.post_message(RerunSearch(query, limit, as_of))

    def current_entry_id(self) -> str | None:
        for table_id in ("#hits-table", "#missed-table", "#recorded-table"):
            table = self.query_one(table_id, VimTable)
            if table.has_focus:
                key = table.current_key
                return key.split(":", 2)[2] if key and key.startswith("rec:") else key
        return self.query_one("#hits-table", VimTable).current_key
