"""The Hits tab: the node's ancestor-scoped search, replayed, with its diagnostics."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Checkbox, DataTable, Input, Static

from ari_mem_tui.model import Hit, Replay
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.render.words import (
    MARKS_LEGEND,
    differences_words,
    fmt_global,
    fmt_score,
    mark_long,
    mark_short,
    plural,
    pool_parts,
    pool_words,
    query_words,
    ranker_short,
)
from ari_mem_tui.search.startup import QUERY_SOURCE_WORDS, QUERY_SOURCES
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.messages import OpenEntry, ReplayKey, RerunSearch
from ari_mem_tui.tui.rows import RowDetail
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.tui.widgets.findings_box import FindingsBox
from ari_mem_tui.tui.widgets.preview import Previewed, RowPreview

MARK_STYLES = {
    "replay-only": "yellow",
    "recorded-only": "magenta",
    "moved": "cyan",
    "changed": "cyan",
}
HIT_COLUMNS = ["#", "glob", "score", "node", "kind", "diff", "entry", "text"]
HIT_WIDE = ("kind", "entry")  # shown only in wide tables (`z`): the text needs the width more
RECORDED_NOTE = "recorded start-up search"
AS_OF_LABELS = {True: "pool: as of start", False: "pool: today (a)"}
NARROW_BELOW = 110  # columns: a narrower screen has the one-line Hits header (the app's breakpoint)


DIFF_WIDTH = 8  # narrow, the diff column's marks are cut here (…); wide (`z`) says them in full


def mark_text(hit: Hit, side: str, wide: bool) -> Text:
    """The diff cell: narrow, the short marks (`~glob,s…`); wide, what differs in full
    (`glob 3→2 score 0.97→0.98`, recorded→replayed)."""
    label = mark_long(hit, side) if wide else preview(mark_short(hit), DIFF_WIDTH)
    return Text(label, style=MARK_STYLES.get(hit.mark, "")) if label else Text("")


def hit_wide(replay: Replay) -> tuple[str, ...]:
    """The Hits columns shown only wide: also `glob` where the backend has no global window
    (ARI's in-memory rule scores the ancestors alone: every global rank would read "?")."""
    return (*HIT_WIDE, "glob") if replay.windowless else HIT_WIDE


def hit_row(hit: Hit, side: str = "replay", wide: bool = False) -> list[object]:
    return [
        str(hit.rank),
        fmt_global(hit),
        fmt_score(hit.score),
        short_id(hit.node_id),
        "node" if hit.kind == "node_scope" else hit.kind,
        mark_text(hit, side, wide),
        hit.entry_id,
        hit.text,
    ]


def marks_detail(replay: Replay) -> Text:
    """Under the recorded list: each differing entry in words, `recorded→replayed`."""
    out = Text()
    rec = replay.recorded
    if rec is None or not rec.differences:
        return out
    seen: set[str] = set()
    for side, hits in (("replay", replay.hits), ("recorded", rec.hits)):
        for hit in hits:
            if not hit.mark or hit.entry_id in seen:
                continue
            seen.add(hit.entry_id)
            where = f"#{hit.rank} {'replay' if side == 'replay' else 'recorded'}"
            out.append(f"\n  {where}: ", style="bright_black")
            out.append(mark_long(hit, side), style=MARK_STYLES.get(hit.mark, ""))
            out.append("  " + preview(hit.text or hit.entry_id, 60), style="bright_black")
    return out


# the window's rows by where they come from, as the diagnostics line names them
WINDOW_ROWS = {
    "lineage": ("lineage", "lineage"),
    "self": ("own", "own"),
    "other_branches": ("other branch", "other branches"),
    "react_step": ("react step", "react steps"),
}


def diagnostics_text(replay: Replay) -> Text:
    """One line: pool, window, eligible, missed."""
    pool = replay.pool or {}
    size = pool.get("size", "?")
    parts = [f"pool {size}"]
    if "node_scope" in pool or "react_step" in pool:
        parts[0] += f" ({pool_parts(pool)})"
    top_k = replay.params.get("top_k", "?")
    window = pool.get("window")
    if replay.windowless:  # ARI's in-memory rule: the reader's ancestors' entries, all scored
        parts.append("every ancestor entry scored (ARI's in-memory rule)")
        parts.append(f"eligible {replay.eligible}")
        return Text(" · ".join(parts))
    window_part = f"window top_k={top_k}"
    if isinstance(window, dict):
        inside = ", ".join(
            plural(v, *WINDOW_ROWS[k]) for k, v in window.items() if k in WINDOW_ROWS and v
        )
        window_part += f" ({inside})" if inside else ""
    parts.append(window_part)
    parts.append(f"eligible {replay.eligible}")
    text = Text(" · ".join(parts) + " · ", style="")
    missed = len(replay.missed)
    text.append(f"missed {missed}", style="bold red" if missed else "green")
    if missed:
        text.append("  (M: show / hide)", style="bright_black")
    return text


def hits_title(replay: Replay) -> Text:
    """The Hits pane's border title: whose search, which pool, which query, which ranker (and
    whether it is the run's own), in a few words (with the tree folded away, the title is where
    the node is named)."""
    ranker = clean(ranker_short(replay), False)
    as_of = replay.as_of is not None
    return _title(replay.node_id, as_of, replay.query_source, replay.query, ranker)


def missed_detail(replay: Replay, entry_id: str) -> RowDetail | None:
    """Every field of a missed row: an eligible entry ranked outside the window."""
    missed = next((m for m in replay.missed if m.entry_id == entry_id), None)
    if missed is None:
        return None
    glob = "?" if missed.global_rank is None else str(missed.global_rank)
    fields = (("global rank", glob), ("node", missed.node_id), ("entry", missed.entry_id))
    return RowDetail("missed: eligible, outside the window", fields, missed.text, missed.node_id)


def hit_detail(hit: Hit | None, title: str, side: str) -> RowDetail | None:
    """Every field of a replayed or recorded hit (`side`), how it differs from the other side
    in words."""
    if hit is None:
        return None
    fields = (
        ("rank", hit.rank),
        ("global rank", fmt_global(hit)),
        ("score", fmt_score(hit.score)),
        ("node", hit.node_id),
        ("kind", hit.kind),
        ("diff", mark_long(hit, side) if hit.mark else ""),
        ("entry", hit.entry_id),
    )
    return RowDetail(title, fields, hit.text, hit.node_id)


def searching_title(key: ReplayKey) -> Text:
    """The title while `key`'s search runs: the settings asked for, not the last result's."""
    return _title(key.node_id, key.as_of, key.query_from, key.query or "", "searching …")


def _title(node_id: str, as_of: bool, source: str, query: str, ranker: str) -> Text:
    pool = "as of start" if as_of else "today's pool"
    words = {"start": "query at start", "now": "query now"}.get(source)
    if words is None:  # a custom query stays on from node to node: said right after the node
        custom = f"custom: {preview(query, 24)}"
        return Text(f"Hits · {short_id(node_id)} · {custom} · {pool} · {ranker}")
    # Text: never parsed as markup
    return Text(f"Hits · {short_id(node_id)} · {pool} · {words} · {ranker}")


def no_hits_words(replay: Replay) -> str:
    """Why a replay has no hits, in the words of the rule that ranked it."""
    if not replay.eligible:
        return "no hits: its ancestors had written nothing it could find before it started"
    if replay.windowless:
        return (
            "no hits: no ancestor entry shares a whitespace-separated word with the query (ARI's"
            " in-memory rule; a Japanese query without spaces is one word)"
        )
    return "no hits: nothing from its ancestors ranked in the window"


def header_line(replay: Replay) -> Text:
    """The Hits header on a narrow screen: the query in one line, and any note in one more."""
    words = {"start": "query at start", "now": "query now"}
    source = words.get(replay.query_source, "custom query")
    line = Text.assemble((source, "bold"), ": ", preview(replay.query, 300))  # cut: app.tcss
    for note in replay.notes:
        if not note.startswith(RECORDED_NOTE):
            line.append("\nnote: " + preview(note, 300), style="yellow")
    return line


QUERIES_KEPT = 50  # custom queries the query box remembers (↑ / ↓)


class QueryInput(Input):
    """The custom query box: ↑ / ↓ bring back the queries run before (a shell's history)."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.QUERY)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.queries: list[str] = []  # run before, oldest first
        self._at = 0  # where ↑ / ↓ are in `queries` (len: what is being typed)
        self._typed = ""  # what was being typed before ↑

    def remember(self, query: str) -> None:
        if query:
            if query in self.queries:
                self.queries.remove(query)
            self.queries.append(query)
            del self.queries[:-QUERIES_KEPT]
        self._at = len(self.queries)

    def action_history(self, step: int) -> None:
        """↑ (-1): the query before; ↓ (1): the one after, then what was being typed. A query
        the box holds already is passed over (the box keeps the custom query that is on)."""
        if not self.queries:
            return
        if self._at == len(self.queries):
            self._typed = self.value
        at, shown = self._at, self.value
        while True:
            at = max(0, min(len(self.queries), at + step))
            value = self.queries[at] if at < len(self.queries) else self._typed
            if value != shown or at in (0, len(self.queries)):
                break
        self._at, self.value = at, value
        self.cursor_position = len(self.value)


class HitsPane(Previewed, VerticalScroll):
    """Hits of the selected node; Enter on a row opens the entry.

    The pane owns the search settings, remembered across nodes: the query source (`s` cycles
    eval_summary at start / eval_summary now / custom), the limit, and the pool (`a`: as of the
    node's start, the default, or today's).
    """

    BORDER_TITLE = "Hits"
    PREVIEWED = "hits-table"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.replay: Replay | None = None
        self.show_missed = False
        self.query_from = "start"
        self.custom = ""

    def compose(self) -> ComposeResult:
        yield Static(Text("Choose a node in the tree.", style="italic"), id="hits-query")
        # the header in one line, for narrow screens (app.tcss): the pool and the ranker are in
        # the border title, the keys in the footer, the whole header one `z` away
        yield Static("", id="hits-line")
        with Horizontal(id="hits-controls"):
            yield QueryInput(placeholder="custom query (Enter; ↑ ↓ earlier)", id="query-input")
            yield Input(value="5", type="integer", id="limit-input", tooltip="limit (ARI: 5)")
            yield Checkbox(
                AS_OF_LABELS[True],
                value=True,
                id="as-of",
                tooltip="on: only entries written before the node started (what it saw); "
                "off: today's whole pool",
            )
        yield Static("", id="hits-diag")
        yield VimTable(id="hits-table")
        # below the hits, not above: a long finding (a leak's passages) would push the table
        # out of an 80×24 terminal
        yield FindingsBox("", id="hits-findings")
        yield Static("", id="missed-title", classes="section")
        yield VimTable(label="missed", id="missed-table")
        yield Static("", id="recorded-title", classes="section")
        yield VimTable(label="recorded", id="recorded-table")
        yield RowPreview(id="hits-preview")

    def on_mount(self) -> None:
        self.query_one("#missed-table", VimTable).collapse(True)
        self.query_one("#missed-title").display = False
        self.fit_header()
        if hasattr(self.app, "wide_columns"):  # wide (`z`): the whole header on any screen
            self.watch(self.app, "wide_columns", self._wide, init=False)

    def _wide(self) -> None:
        """`z`: the whole header, and the diff column in words, or narrow again."""
        self.fit_header()
        if self.replay is not None:
            self.show(self.replay)

    def fit_header(self) -> None:
        """Below NARROW_BELOW columns the header is one line (pool and ranker are in the border
        title) and the query box takes the as-of box's place (`a` switches the pool); wide
        tables (`z`) bring the whole header back. Set here, widget by widget: a class on the
        pane would have Textual restyle all of its widgets."""
        narrow = self.app.size.width < NARROW_BELOW
        whole = not narrow or bool(getattr(self.app, "wide_columns", False))
        self.query_one("#hits-query").display = whole
        self.query_one("#hits-line").display = not whole
        self.query_one("#as-of").display = not narrow

    def on_resize(self) -> None:
        self.fit_header()

    def show_findings(self, findings: list) -> None:
        self.query_one("#hits-findings", FindingsBox).show(findings)

    def show_loading(self, key: ReplayKey) -> None:
        self.set_title(searching_title(key))
        if self.replay is None:  # not "Choose a node" while the chosen node's search runs
            self.query_one("#hits-query", Static).update(Text(""))
        self.query_one("#hits-diag", Static).update(
            Text(f"searching for {short_id(key.node_id)} …")
        )

    def show_error(self, message: str) -> None:
        self.replay = None
        self.query_one("#hits-diag", Static).update(Text(preview(message, 400), style="bold red"))
        self.query_one("#hits-table", VimTable).clear()
        self.row_preview.show(None)

    def show(self, replay: Replay) -> None:
        self.replay = replay
        header = Text.assemble(
            ("query ", "bold"),
            (f"({query_words(replay)})", "cyan"),
            ": ",
            preview(replay.query, 300),
        )
        header.append("\n" + pool_words(replay), style="bold" if replay.as_of else "bold yellow")
        ranker = f" · {clean(replay.fidelity.label or replay.embedder, False)}"
        if replay.fallback:
            header.append(ranker + "; searched again when it is ready", style="yellow")
        else:
            header.append(ranker, style="bright_black" if replay.fidelity.exact else "yellow")
        other_pool = "today's pool" if replay.as_of else "as of start"
        header.append(f"\ns: query at start / now / custom · a: {other_pool}", style="bright_black")
        for note in replay.notes:
            if not note.startswith(RECORDED_NOTE):  # said in the Recorded section
                header.append("\nnote: " + preview(note, 300), style="yellow")
        self.query_one("#hits-query", Static).update(header)
        self.query_one("#hits-line", Static).update(header_line(replay))
        self.query_one("#hits-diag", Static).update(diagnostics_text(replay))
        table = self.query_one("#hits-table", VimTable)
        wide = bool(getattr(self.app, "wide_columns", False))
        rows = ((h.entry_id, hit_row(h, "replay", wide)) for h in replay.hits)
        table.fill(HIT_COLUMNS, rows, reserve=True, wide_only=hit_wide(replay))
        if not replay.hits:
            self.query_one("#hits-diag", Static).update(
                diagnostics_text(replay).append("\n" + no_hits_words(replay), style="italic")
            )
        self._show_missed()
        self._show_recorded()
        self.set_title(hits_title(replay))  # after the fills: it counts their rows
        if self.has_focus and table.allow_focus():  # the pane held it for the hits (Enter)
            table.focus()
        self.update_preview()

    def _show_missed(self) -> None:
        replay = self.replay
        visible = bool(self.show_missed and replay is not None)
        self.query_one("#missed-table", VimTable).collapse(not visible)
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
            table.collapse(True)
            table.clear(columns=True)
            return
        table.collapse(False)
        text = Text.assemble(
            ("Recorded ", "bold"), f"at {fmt_ts(rec.ts)}: ", preview(rec.query, 200)
        )
        found = next((n for n in replay.notes if n.startswith(RECORDED_NOTE)), "")
        how = found.removeprefix(RECORDED_NOTE).strip(": ")
        if replay.fidelity.note:  # it names both rankers
            text.append("\n" + preview(replay.fidelity.note, 300), style="yellow")
        else:
            text.append(f"\nranked by {clean(rec.ranker, False)}", style="bright_black")
        if how:
            text.append(f"\nfound: {clean(how, False)}", style="bright_black")
        verdict = differences_words(replay)
        if rec.differences:
            verdict += f"; {MARKS_LEGEND}"
        text.append("\n" + verdict, style="yellow" if rec.differences else "green")
        text.append_text(marks_detail(replay))
        title.update(text)
        table.fill(
            HIT_COLUMNS,
            (
                (
                    f"rec:{i}:{h.entry_id}",
                    hit_row(h, "recorded", bool(getattr(self.app, "wide_columns", False))),
                )
                for i, h in enumerate(rec.hits)
            ),
            reserve=True,
            wide_only=hit_wide(replay),
        )

    def toggle_missed(self) -> None:
        self.show_missed = not self.show_missed
        if self.replay is not None:
            self._show_missed()

    def toggle_as_of(self) -> None:
        """`a`: the pool as of the node's start / today's."""
        box = self.query_one("#as-of", Checkbox)
        box.value = not box.value  # its Changed message re-runs the search
        self.notify(
            "pool: as of the node's start" if box.value else "pool: today's (later writes too)"
        )

    def forget_query(self) -> None:
        """Another run is opening: its custom query text means nothing there."""
        self.custom = ""
        self.query_one("#query-input", Input).value = ""

    def cycle_query(self) -> None:
        """`s`: at start → now → custom → at start. Custom is in the cycle once a query has been
        typed (`i`, then Enter); before that `s` goes from now back to at start and says how
        to type one: it never puts the focus in the box, where the next `s` would be typed."""
        order = [q for q in QUERY_SOURCES if q != "custom" or self.custom]
        current = self.query_from if self.query_from in order else order[0]
        self.query_from = order[(order.index(current) + 1) % len(order)]
        self.query_one("#query-input", Input).value = (
            self.custom if self.query_from == "custom" else ""
        )
        hint = "" if self.custom else " (i: type a custom query, Enter runs it)"
        self.notify(f"query: {QUERY_SOURCE_WORDS[self.query_from]}{hint}")
        self._rerun()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = VimTable.plain_key(event.row_key.value) or ""
        event.stop()
        row = self.row_detail(event.data_table.id or "", key)
        if key.startswith("rec:"):
            key = key.split(":", 2)[2]
        self.post_message(OpenEntry(key, row))

    def row_detail(self, table_id: str, key: str) -> RowDetail | None:
        """Every field of a hits, recorded or missed row (the entry itself is added by the app)."""
        replay = self.replay
        if replay is None:
            return None
        if table_id == "missed-table":
            return missed_detail(replay, key)
        if table_id == "recorded-table" and replay.recorded is not None:
            hits = replay.recorded.hits
            # the recorded rows are keyed `rec:<position>:<entry>`: the position picks the row
            index = int(key.split(":", 2)[1]) if key.startswith("rec:") else -1
            hit = hits[index] if 0 <= index < len(hits) else None
            return hit_detail(hit, "recorded hit (access log)", "recorded")
        hit = next((h for h in replay.hits if h.entry_id == key), None)
        return hit_detail(hit, "replayed hit", "replay")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter runs the search and gives the focus back to the hits (letters typed next
        are commands again: `s s j` after Enter must not become `roofliness sj`)."""
        event.stop()
        if isinstance(event.input, QueryInput):
            self.custom = event.value.strip()
            self.query_from = "custom" if self.custom else "start"
            event.input.remember(self.custom)
        self._rerun()
        table = self.query_one("#hits-table", VimTable)
        (table if table.allow_focus() else self).focus()  # the pane: until the hits come

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        event.checkbox.label = AS_OF_LABELS[event.value]
        self._rerun()

    def _rerun(self) -> None:
        query = self.custom if self.query_from == "custom" and self.custom else None
        try:
            limit = max(1, min(200, int(self.query_one("#limit-input", Input).value or 5)))
        except ValueError:
            limit = 5
        as_of = self.query_one("#as-of", Checkbox).value
        self.post_message(RerunSearch(query, limit, as_of, self.query_from))

    def focused_entry_id(self) -> str | None:
        """The entry under the cursor of whichever of its tables has focus; None when none has."""
        for table in self.query(VimTable):
            if table.has_focus:
                key = table.current_key
                return key.split(":", 2)[2] if key and key.startswith("rec:") else key
        return None
