"""Pilot tests of the tables: every row opens in full (Enter, `v`), the text column gets the
width the other columns leave (80×24 and 120×40), tables cut for size say so, and the panes'
border titles carry the state (filter, find, pool, query source, ranker, writes scope)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import DataTable, Static

from ari_mem_tui.render.text import clean
from ari_mem_tui.search.fidelity import ranker_fidelity
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.tui.widgets import detail
from ari_mem_tui.tui.widgets.hits import hits_title
from tests.tui_app_helpers import idle, make_app, press, settle
from tests.tui_helpers import HOSTILE

TO_B1 = ("j", "j", "l", "l")  # B, expand, B1 (the tree opens as root, A, B)


def view_text(app) -> str:
    """The plain text of the open row view."""
    assert isinstance(app.screen, EntryScreen), f"no row view open: {app.screen!r}"
    return app.screen.query_one("#entry-text", Static).render().plain


def text_cells(table: DataTable) -> list[str]:
    """The plain text of every row's last (text) column."""
    last = len(table.columns) - 1
    return [table.get_row_at(i)[last].plain for i in range(table.row_count)]


async def open_row(pilot, table_id: str, row: int = 0, key: str = "enter") -> str:
    table = pilot.app.query_one(f"#{table_id}", VimTable)
    table.focus()
    table.move_cursor(row=row)
    await press(pilot, key)
    return view_text(pilot.app)


# ---------------------------------------------------------------- 1. every row in full


async def test_enter_on_a_hit_shows_every_field_and_the_whole_entry(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        hit = app.query_one("#hits-pane").replay.hits[0]
        shown = await open_row(pilot, "hits-table")
        entry = app.ckpt.entries_by_id[hit.entry_id]
        assert clean(entry.text) in shown  # whole, not cut to the column
        for name in ("rank", "global rank", "score", "node", "kind", "entry"):
            assert f"\n{name}" in shown
        assert hit.entry_id in shown and hit.node_id in shown
        await press(pilot, "escape")
        assert await open_row(pilot, "hits-table", key="v") == shown  # `v` is Enter's twin


async def test_hostile_text_in_a_row_view_is_literal(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "w")
        pane = app.query_one("#writes-pane", detail.WritesPane)
        index = next(i for i, w in enumerate(pane.rows) if w.text == HOSTILE)
        shown = await open_row(pilot, "writes-table", index)
        assert clean(HOSTILE) in shown  # brackets kept, the escape made visible
        assert "\x1b" not in shown and "[red]x[/red]" in shown


async def test_enter_on_a_write_shows_every_field_and_the_whole_text(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "4")
        pane = app.query_one("#writes-pane", detail.WritesPane)
        write = pane.rows[0]
        shown = await open_row(pilot, "writes-table")
        assert clean(write.text) in shown
        for name in ("time", "result", "reason", "target", "by", "tool", "source", "entry"):
            assert f"\n{name}" in shown
        assert write.tool in shown and write.source in shown
        await press(pilot, "o")  # the row's node
        assert app.current_id == write.current_node


async def test_enter_on_a_whole_run_write_shows_the_rejection(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "w")  # the whole run's writes
        pane = app.query_one("#writes-pane", detail.WritesPane)
        assert pane.whole_run and app.query_one("#tabs").active == "writes"
        index = next(i for i, w in enumerate(pane.rows) if not w.accepted)
        write = pane.rows[index]
        shown = await open_row(pilot, "writes-table", index)
        assert "rejected" in shown and clean(write.reason, False) in shown
        assert clean(write.text) in shown and write.current_node in shown


async def test_enter_on_an_audit_row_shows_it_and_o_jumps(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "6")
        rows = app.query_one("#audit-pane").rows
        index = next(i for i, r in enumerate(rows) if r.node_id)
        row = rows[index]
        shown = await open_row(pilot, "audit-table", index)
        assert clean(row.text) in shown  # the whole `what`, not the column's cut
        for name in ("severity", "kind", "node"):
            assert f"\n{name}" in shown
        assert row.node_id in shown and "o: go to node" in shown
        await press(pilot, "o")
        assert not isinstance(app.screen, EntryScreen) and app.current_id == row.node_id


async def _node_with(pilot, want) -> None:
    """Go to the first node whose replay satisfies `want`."""
    app = pilot.app
    for node_id in app.ckpt.nodes:
        app.main.jump_to(node_id)
        await idle(pilot)
        replay = app.query_one("#hits-pane").replay
        if replay is not None and replay.node_id == node_id and want(replay):
            return
    pytest.fail("no node of the checkpoint has such a replay")


async def test_enter_on_a_missed_row_shows_it(small_ckpt: Path) -> None:
    app = make_app(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _node_with(pilot, lambda r: bool(r.missed))
        await press(pilot, "M")
        missed = app.query_one("#hits-pane").replay.missed[0]
        shown = await open_row(pilot, "missed-table")
        assert "missed" in shown and "global rank" in shown and missed.node_id in shown
        assert clean(app.ckpt.entries_by_id[missed.entry_id].text) in shown


async def test_enter_on_a_recorded_row_shows_it(small_ckpt: Path) -> None:
    app = make_app(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _node_with(pilot, lambda r: r.recorded is not None and bool(r.recorded.hits))
        hit = app.query_one("#hits-pane").replay.recorded.hits[0]
        shown = await open_row(pilot, "recorded-table")
        assert shown.startswith("recorded hit") and hit.entry_id in shown
        assert "\nscore" in shown and "\nrank" in shown
        entry = app.ckpt.entries_by_id.get(hit.entry_id)
        assert clean(entry.text if entry else hit.text) in shown


# ---------------------------------------------------------------- 2. widths


async def _tab_to(pilot, widget_id: str) -> None:
    """Press Tab until `widget_id` has focus, as a person would."""
    for _ in range(8):
        if pilot.app.focused is not None and pilot.app.focused.id == widget_id:
            return
        await press(pilot, "tab")
    pytest.fail(f"Tab never reached #{widget_id}")


def shown_chars(app, table_id: str) -> int:
    """How many characters of text the widest row shows (an ellipsis is not text)."""
    table = app.query_one(f"#{table_id}", DataTable)
    return max(len(cell.rstrip("…")) for cell in text_cells(table))


async def test_at_80_columns_the_tree_folds_and_hits_show_text(tiny: Path) -> None:
    app = make_app(tiny, label="files: tiny")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        tree = app.query_one("#tree-pane")
        assert tree.display and not tree.has_class("-drawer")  # the tree has focus: shown
        await _tab_to(pilot, "hits-table")
        await idle(pilot)
        assert tree.has_class("-drawer")  # the tabs have focus: the tree is a drawer
        assert shown_chars(app, "hits-table") >= 28
        status = app.query_one("#status-source", Static).render().plain
        assert "tiny" in status  # the run's name stays in sight
        await press(pilot, "t")  # the drawer opens, on the tree
        assert not tree.has_class("-drawer") and tree.display
        assert app.focused is app.main.tree_widget


async def test_at_120_columns_the_text_takes_the_rest(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        await _tab_to(pilot, "hits-table")
        assert not app.query_one("#tree-pane").has_class("-drawer")  # wide enough for both
        assert shown_chars(app, "hits-table") >= 28
        hits = app.query_one("#hits-table", DataTable)
        assert hits.virtual_size.width <= hits.size.width  # fits its pane
        await press(pilot, "w")  # the whole run's writes: the widest table
        writes = app.query_one("#writes-table", DataTable)
        assert shown_chars(app, "writes-table") >= 15
        await pilot.resize_terminal(160, 40)
        await idle(pilot)
        assert shown_chars(app, "writes-table") >= 30  # refit to the new width
        assert writes.virtual_size.width <= writes.size.width  # no sideways scrolling


# ---------------------------------------------------------------- 3. cut tables say so


async def test_a_cut_writes_table_says_how_much_and_where_the_rest_is(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(detail, "WRITES_SHOWN", 5)
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "w")
        total = len(app.ckpt.writes)
        assert app.query_one("#writes-table", DataTable).row_count == 5
        title = app.query_one("#writes-title", Static).render().plain
        assert f"5 of {total:,} writes shown" in title
        assert "w: one node's writes" in title and "ari-mem-tui audit CKPT --json" in title


def test_cut_notes_in_the_text_output() -> None:
    from ari_mem_tui.model import Checkpoint, Node
    from ari_mem_tui.tui.widgets.detail import ERROR_LOG_SHOWN, node_text

    node = Node(id="n1", error_log="x" * (ERROR_LOG_SHOWN + 10))
    shown = node_text(node, Checkpoint(path=Path("."), nodes={"n1": node})).plain
    assert f"{ERROR_LOG_SHOWN:,} of {ERROR_LOG_SHOWN + 10:,} characters shown" in shown


# ---------------------------------------------------------------- 4. state in pane titles


def title_of(widget) -> str:
    content = widget._border_title  # what the border shows (the getter gives markup)
    return content.plain if content is not None else ""


async def test_pane_titles_carry_filter_find_pool_query_and_scope(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        hits, tree = app.query_one("#hits-pane"), app.query_one("#tree-pane")
        assert title_of(hits) == "Hits · b1000001 · as of start · query at start · stand-in: bm25"
        assert title_of(tree) == "Tree"
        minilm = SimpleNamespace(name="minilm", error=None)  # chosen, vectors not ready
        fidelity = ranker_fidelity(minilm, "bm25")
        stand_in = hits.replay.replaced(fallback=True, fidelity=fidelity)
        assert hits_title(stand_in).plain.endswith("stand-in: bm25, minilm not ready")
        await press(pilot, "a")
        assert title_of(hits).startswith("Hits · b1000001 · today's pool · query at start")
        await press(pilot, "s")
        assert "query now" in title_of(hits)
        await press(pilot, "i", *"[b]x", "enter")  # a custom query, shown literally
        assert "custom: [b]x" in title_of(hits)
        app.main.tree_widget.focus()
        await press(pilot, "slash", *"node_b", "enter")
        assert title_of(tree) == "Tree · find 'node_b' 1/2"
        await press(pilot, "f")
        app.screen.query_one("#filter-status").focus()
        await press(pilot, "space", "ctrl+s")  # the first status, applied
        # the first status is `pending`: no node of the tiny run, and so no find match either
        assert title_of(tree) == "Tree · 0 nodes · filter status pending · find 'node_b' no match"
        await press(pilot, "4")
        writes = app.query_one("#writes-pane")
        assert title_of(writes).startswith("Writes · node ")
        await press(pilot, "w")
        assert title_of(writes) == "Writes · whole run"


# ---------------------------------------------------------------- 5. wide / narrow (`z`)


def column_names(app, table_id: str) -> list[str]:
    return [str(c.label) for c in app.query_one(f"#{table_id}", DataTable).columns.values()]


def fits(app, table_id: str) -> bool:
    table = app.query_one(f"#{table_id}", DataTable)
    return table.virtual_size.width <= table.size.width


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_whole_run_writes_give_the_text_the_width(small_ckpt: Path, size) -> None:
    """GIVEN the whole run's writes (the widest table), WHEN its table has focus, THEN the
    narrow columns leave the text 28 characters or more and nothing scrolls sideways. (30
    before the time named its zone, `… UTC`; the preview below the table shows the whole
    text.)"""
    app = make_app(small_ckpt)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "4", "w", "right_square_bracket")
        assert app.focused is app.query_one("#writes-table")
        assert column_names(app, "writes-table") == ["time", "result", "by", "text"]
        assert shown_chars(app, "writes-table") >= 28
        assert fits(app, "writes-table")
        await press(pilot, "w")  # one node's log: its writer is the node, no column for it
        assert column_names(app, "writes-table") == ["time", "result", "text"]


async def test_a_rejected_write_names_its_target_in_the_result_column(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "4", "w")
        table = app.query_one("#writes-table", DataTable)
        results = [table.get_row_at(i)[1].plain for i in range(table.row_count)]
        assert "✗ →b0000001" in results  # A2's write into B's memory
        assert set(results) == {"✓", "✗ →b0000001"}


async def test_z_makes_every_table_wide_and_back(small_ckpt: Path) -> None:
    """`z` (k9s's wide): every column and long text, scrolling sideways; `z` again: narrow."""
    app = make_app(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "right_square_bracket")
        narrow_hits = column_names(app, "hits-table")
        assert "kind" not in narrow_hits and "entry" not in narrow_hits
        await press(pilot, "z")
        assert column_names(app, "hits-table")[-3:] == ["diff", "entry", "text"]
        assert "kind" in column_names(app, "hits-table")
        status = app.query_one("#status-wide", Static).render().plain
        assert "wide" in status
        await press(pilot, "4", "w")
        assert column_names(app, "writes-table") == [
            "time",
            "result",
            "by",
            "tool",
            "reason",
            "source",
            "text",
        ]
        assert shown_chars(app, "writes-table") > 60 and not fits(app, "writes-table")
        writes = app.query_one("#writes-table", DataTable)
        assert app.focused is writes
        await press(pilot, "right", "right")  # → scrolls sideways
        assert writes.scroll_x > 0
        await press(pilot, "z")
        assert column_names(app, "writes-table") == ["time", "result", "by", "text"]
        assert column_names(app, "hits-table") == narrow_hits
        assert fits(app, "writes-table")
        assert not app.query_one("#status-wide", Static).display


async def test_at_80x24_the_hits_header_is_one_line_and_the_query_box_usable(
    small_ckpt: Path,
) -> None:
    """GIVEN 80×24, THEN the Hits header is one line (pool and ranker are in the border title),
    the query box is wide enough to type in, and the table shows several rows of real text;
    `z` brings the whole header back."""
    app = make_app(small_ckpt)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "right_square_bracket")
        pane = app.query_one("#hits-pane")
        line, header = app.query_one("#hits-line", Static), app.query_one("#hits-query", Static)
        assert line.display and line.region.height == 1 and not header.display
        assert line.render().plain.startswith("query at start: ")
        assert app.query_one("#query-input").size.width >= 30
        table = app.query_one("#hits-table", DataTable)
        visible = table.region.intersection(pane.region)
        assert visible.height >= 1 + 5  # the column header and five hits, on screen
        assert shown_chars(app, "hits-table") >= 30
        await press(pilot, "z")
        assert header.display and not line.display
        assert "pool as of the node's start" in header.render().plain


def test_a_long_source_is_cut_in_the_middle() -> None:
    from ari_mem_tui.tui.widgets.status_bar import cut_middle

    path = "files: /root/.cache/ari-mem-tui/runs/demo-n40-s7"
    assert cut_middle(path, 80) == path
    cut = cut_middle(path, 30)
    assert len(cut) == 30 and cut.startswith("files: /") and cut.endswith("/demo-n40-s7")


async def test_at_80_columns_the_status_line_keeps_the_runs_folder(tmp_path: Path) -> None:
    from tests.tui_helpers import write_tiny_checkpoint

    deep = tmp_path / ("a-long-folder-name-" * 4) / "the-run-folder"
    app = make_app(write_tiny_checkpoint(deep))  # no fixed label: the real, long path
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        shown = app.query_one("#status-source", Static).render().plain
        assert shown.startswith("files: ") and shown.endswith("the-run-folder") and "…" in shown


async def test_hits_cleared_by_a_failed_search_stay_cleared_on_z(tiny: Path) -> None:
    """GIVEN B1's hits shown WHEN its search fails (the server went away, `a` asked again) and
    `z` then refits the tables THEN the Hits table stays empty: the cleared table does not
    bring back the rows of its last fill, under the error."""

    class GoneServer:
        name = "letta:http://gone"

        def rank(self, query, top_k, before_ts=None):
            raise ConnectionError("server went away")

    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        table = app.query_one("#hits-table", VimTable)
        assert table.row_count > 0
        app.run_data.ranker = GoneServer()
        await press(pilot, "a")  # the pool of today: searched again, and it fails
        assert table.row_count == 0
        await press(pilot, "z")
        assert table.row_count == 0
