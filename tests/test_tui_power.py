"""A power user's day in the TUI (issue 32), by real key presses: tables filtered, sorted and
written as CSV; a way back and forward; the focused pane maximised; the palette's jump by text;
the query box's history; and what was seen wrong (the focus after Enter in the query box, the
status line and the Hits text column at 80×24, a run without scores)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

from textual.widgets import Input, Static

from ari_mem_tui.render.opening import main_metric, opening_node
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.tui.screens.confirm import ConfirmScreen
from ari_mem_tui.tui.screens.health import AxisLine, HealthScreen
from ari_mem_tui.tui.tables import TableFilter, VimTable
from tests.test_tui_find_filter import title_of
from tests.tui_app_helpers import idle, make_app, press, settle, wait_for
from tests.tui_helpers import IDS

TO_B1 = ("j", "j", "l", "l")  # B, expand, B1 (the tree opens as root, A, B)
TO_A2 = ("j", "l", "l", "j")  # A, expand, A1's chain line, A2


def shown_keys(table: VimTable) -> list[str]:
    return [key for key, _ in table.shown_rows]


async def type_text(pilot, text: str) -> None:
    await press(pilot, *[{" ": "space", "!": "exclamation_mark"}.get(c, c) for c in text])


async def test_slash_filters_a_table_counts_it_in_the_title_and_esc_clears(tiny: Path) -> None:
    """GIVEN the whole run's writes WHEN `/` and a word are typed in the table THEN only the
    rows holding it stay, the title counts them, Enter keeps the filter with the table focused,
    `S` sorts it (the title says by what), Esc clears the filter, a second Esc goes to the tree;
    `/` in the tree is still the node find."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "4", "w", "right_square_bracket")
        table = app.query_one("#writes-table", VimTable)
        pane = app.query_one("#writes-pane")
        assert app.focused is table and table.row_count == 20
        await press(pilot, "slash")
        box = app.query_one(TableFilter)
        assert app.focused is box
        await type_text(pilot, "note from a1")  # A1, A1x, A1y, A1z: 4 of the 20
        assert table.row_count == 4
        assert all("note from A1" in table.get_row_at(i)[-1].plain for i in range(4))
        assert "Writes · whole run · 4 of 20 rows · filter 'note from a1'" == title_of(pane)
        await press(pilot, "enter")
        assert app.focused is table and not box.display and table.row_count == 4
        await press(pilot, "S", "S")  # by time ↑, then ↓
        assert title_of(pane).endswith("sorted by time ↓")
        times = [table.get_row_at(i)[0].plain for i in range(4)]
        assert times == sorted(times, reverse=True)
        await press(pilot, "escape")  # clears the filter, keeps the order and the focus
        assert table.row_count == 20 and app.focused is table
        assert title_of(pane) == "Writes · whole run · sorted by time ↓"
        await press(pilot, "escape")  # nothing to clear: back to the tree, as before
        assert app.focused is app.main.tree_widget
        await press(pilot, "slash")  # the tree's `/` is the node find
        assert app.focused is app.query_one("#find-input")
        await press(pilot, "escape")
        await press(pilot, "4", "right_square_bracket", "slash", *"zzz", "enter")
        # no row left: the table is no focus stop, its pane holds the focus instead
        assert table.row_count == 0 and app.focused is not box and app.focused is not None


async def test_x_asks_then_writes_the_rows_shown_as_csv(tiny: Path, tmp_path: Path) -> None:
    """GIVEN B1's hits filtered WHEN `x` THEN the file is named and asked for; any key but `y`
    writes nothing; `y` writes the rows shown, every column whole (the wide ones too)."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "right_square_bracket", "slash", *"summary", "enter")
        table = app.query_one("#hits-table", VimTable)
        kept = shown_keys(table)
        assert 0 < len(kept) < len(app.query_one("#hits-pane").replay.hits)
        await press(pilot, "x")
        assert isinstance(app.screen, ConfirmScreen)
        question = app.screen.query_one(Static).render().plain
        path = Path(question.splitlines()[1])
        assert path.parent == tmp_path / "exports" and path.name.startswith("hits-b1000001-")
        await press(pilot, "n")
        assert not path.exists() and app.last_csv is None
        await press(pilot, "x", "y")
        assert app.last_csv == path
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        assert rows[0] == ["#", "glob", "score", "node", "kind", "diff", "entry", "text"]
        assert [r[6] for r in rows[1:]] == kept  # the entry ids, in the table's order
        assert all("RESULT SUMMARY" in r[7] for r in rows[1:])


async def test_enter_in_the_query_box_gives_the_focus_back_and_up_recalls(tiny: Path) -> None:
    """GIVEN a custom query typed WHEN Enter, then `s s s j` THEN they are commands (the query
    box keeps the query, not `warmupsssj`); ↑ in the box brings the query back; the Hits title
    says the custom query right after the node, also on the next node."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "i", *"warmup", "enter")
        box = app.query_one("#query-input", Input)
        hits = app.query_one("#hits-pane")
        await wait_for(pilot, lambda: hits.replay is not None and hits.replay.query == "warmup")
        assert not isinstance(app.focused, Input)
        await press(pilot, "s", "s", "s", "j")
        assert box.value == "warmup" and hits.query_from == "custom"  # start → now → custom
        await press(pilot, "i", *"branch", "enter", "i")
        assert box.value == "branch"
        await press(pilot, "up")
        assert box.value == "warmup"
        await press(pilot, "down")
        assert box.value == "branch"
        await press(pilot, "escape")  # back to the tree; the next node keeps the custom query
        await press(pilot, "k")
        await idle(pilot)
        assert title_of(hits).split(" · ")[1:3] == ["b0000001", "custom: branch"]


async def test_b_goes_back_to_the_node_tab_and_row_and_shift_b_forward(tiny: Path) -> None:
    """GIVEN B1's hits, the cursor on its second row WHEN a find jumps elsewhere and `o` from
    an audit row jumps again THEN `b` comes back through each view (node, tab, row), `B` goes
    forward; moving in the tree records nothing."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "right_square_bracket", "j")
        table = app.query_one("#hits-table", VimTable)
        row = table.current_key
        assert row is not None and table.cursor_row == 1
        await press(pilot, "left_square_bracket", "slash", *"a2000001", "enter")
        assert app.current_id == IDS["A2"]
        await press(pilot, "6", "right_square_bracket")  # the audit: a row naming B1 …
        audit = app.query_one("#audit-table", VimTable)
        while app.main.audit_pane.rows[int(audit.current_key or 0)].node_id != IDS["B1"]:
            await press(pilot, "j")
        audit_row = audit.current_key
        await press(pilot, "enter", "o")  # … its node: B1
        assert app.current_id == IDS["B1"]
        await press(pilot, "left_square_bracket", "j")  # browsing: not recorded
        browsed = app.current_id
        await press(pilot, "b")
        assert app.current_id == IDS["A2"] and app.main.tabs.active == "audit"
        assert audit.current_key == audit_row
        await press(pilot, "b")
        assert app.current_id == IDS["B1"] and app.main.tabs.active == "hits"
        await wait_for(pilot, lambda: table.current_key == row, "the row restored")
        await press(pilot, "b")  # nothing before it
        assert app.current_id == IDS["B1"]
        await press(pilot, "B")
        assert app.current_id == IDS["A2"] and app.main.tabs.active == "audit"
        await press(pilot, "B")
        assert app.current_id == browsed  # where `b` was first pressed …
        assert app.focused is app.main.tree_widget  # … in the tree: not the audit table


async def test_plus_maximises_the_focused_pane_and_plus_or_esc_restores(tiny: Path) -> None:
    """GIVEN 80×24 WHEN `+` in the tree, then in the Hits table THEN that pane takes the
    whole width (the other side and the tab strip hidden); `+` again, or Esc, puts it back."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        tree, tabs = app.query_one("#tree-pane"), app.query_one("#tabs")
        width = tree.region.width
        await press(pilot, "plus")
        assert tree.region.width == 80 and not tabs.display
        await press(pilot, "plus")
        assert tree.region.width == width and tabs.display
        await press(pilot, *TO_B1, "right_square_bracket")
        hits = app.query_one("#hits-pane")
        placed = hits.region
        await press(pilot, "plus")
        whole = hits.region
        assert whole.width == 80 and whole.height > placed.height  # no tab strip
        await press(pilot, "2")  # the tab keys still switch: the Saw tab, maximised too
        assert app.query_one("#saw-pane").region == whole
        await press(pilot, "1", "escape")
        assert hits.region == placed
        assert app.focused is app.query_one("#hits-table")  # Esc restored, nothing else
        assert tree.has_class("-drawer")  # at 80 columns the tree folds while the tabs have focus
        await press(pilot, "left_square_bracket")
        assert tree.region.width == width  # and unfolds again


async def test_the_palette_jumps_to_a_node_by_words_of_its_direction(tiny: Path) -> None:
    """GIVEN the palette WHEN words of B1's direction are typed (not its id) THEN Enter goes
    to B1, and `b` comes back: a palette jump is recorded."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        start = app.current_id
        await press(pilot, "ctrl+p")
        await type_text(pilot, "validation step b1")
        await pilot.pause(0.3)
        await press(pilot, "enter")
        assert app.current_id == IDS["B1"]
        await press(pilot, "b")
        assert app.current_id == start
        await press(pilot, "ctrl+p", *"sort table")  # a table key from the palette: the
        await pilot.pause(0.3)  # shown tab's table, though the tree has the focus
        await press(pilot, "enter")
        assert app.query_one("#hits-table", VimTable).view.sort_column == "#"
        await press(pilot, "2", "ctrl+p", *"sort table")  # the Saw tab has no table: said
        await pilot.pause(0.3)
        await press(pilot, "enter")
        assert any("no table here" in n.message for n in app._notifications)


async def test_the_status_line_at_80_columns_cuts_no_count(tiny: Path) -> None:
    """GIVEN 80×24 while vectors build (a long path, the BM25 stand-in, a progress, problems
    and findings) THEN every count is whole on screen: the progress bar and long words go
    first; the path is cut in the middle (`…`), never to a stub like `f`."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        bar = app.main.status_bar
        bar.set_source("files: /home/someone/projects/ari/workspace/checkpoints/20260528_demo")
        bar.set_embedder("bm25", "stand-in")
        bar.set_progress(179, 1129)
        bar.set_problems(0, 6)
        await pilot.pause()
        for part in ("#status-embedder", "#status-progress-text", "#status-problems"):
            widget = bar.query_one(part, Static)
            shown = widget.render().plain
            assert widget.region.width >= len(shown), (part, shown, widget.region)
        assert bar.query_one("#status-problems", Static).render().plain == "0 problems · 6 findings"
        assert "179/1,129" in bar.query_one("#status-progress-text", Static).render().plain
        source = bar.query_one("#status-source")
        text = source.render().plain
        assert "…" in text and text.startswith("files") and text.endswith("demo"), text
        assert len(text) <= source.region.width
        await pilot.resize_terminal(140, 30)
        await pilot.pause()
        assert "179 of 1,129 texts" in bar.query_one("#status-progress-text", Static).render().plain
        assert bar.query_one("#status-progress").display  # room for the bar again


async def test_the_hits_text_beside_an_80_column_tree_ends_with_an_ellipsis(tiny: Path) -> None:
    """GIVEN 80×24 with the tree shown WHEN a node's hits are shown THEN the table fits its
    pane (nothing clipped without a mark) and each cut text ends with `…`."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        table = app.query_one("#hits-table", VimTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        texts = [table.get_row_at(i)[-1].plain for i in range(table.row_count)]
        widths = [c.width for c in table.ordered_columns]
        assert texts and all(len(t) > widths[-1] for t in texts)  # every one is cut …
        rendered = [table.render_line(y).text for y in range(1, 1 + table.row_count)]
        assert all(line.rstrip().endswith("…") for line in rendered), rendered  # … and says so


async def test_health_tables_filter_and_the_time_axis_names_seconds_and_zone(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "H")
        await wait_for(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.result)
        screen = app.screen
        left, _, right = screen.query_one("#axis-time-starved", AxisLine).labels
        stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
        assert re.fullmatch(stamp, left) and re.fullmatch(stamp, right) and left != right
        await press(pilot, "n")
        nodes = screen.query_one("#health-nodes", VimTable)
        total = nodes.row_count
        await press(pilot, "slash", *"b1000001", "enter")
        assert shown_keys(nodes) == [IDS["B1"]]
        title = screen.query_one("#health-nodes-title", Static).render().plain
        assert title.endswith(f"1 of {total} rows · filter 'b1000001'")
        await press(pilot, "escape")  # the filter first …
        assert nodes.row_count == total and isinstance(app.screen, HealthScreen)
        await press(pilot, "escape")  # … then the view
        assert not isinstance(app.screen, HealthScreen)


def unscored_copy(tiny: Path, dest: Path) -> Path:
    """The tiny run with no `_scientific_score` (an evaluator that reports only `accuracy`)."""
    shutil.copytree(tiny, dest)
    tree = json.loads((dest / "tree.json").read_text(encoding="utf-8"))
    for node in tree["nodes"]:
        (node.get("metrics") or {}).pop("_scientific_score", None)
    (dest / "tree.json").write_text(json.dumps(tree), encoding="utf-8")
    return dest


async def test_a_run_without_scores_shows_its_main_metric_in_the_tree(tiny: Path, tmp_path):
    """GIVEN a run whose nodes report `accuracy` and no `_scientific_score` THEN the tree shows
    each node's accuracy where a score was `–`, the title names the metric, and the run opens
    where the best accuracy is."""
    run = unscored_copy(tiny, tmp_path / "unscored")
    ckpt = open_run(RunOptions(checkpoint=run, embedder="bm25")).checkpoint
    metric = main_metric(ckpt)
    assert metric is not None and metric.name == "accuracy" and metric.higher_is_better
    assert opening_node(ckpt).node_id == IDS["A1z"]  # 0.58, the best
    app = make_app(run)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j")  # A: 0.51
        assert "accuracy" in title_of(app.main.tree_pane)
        lines = [app.main.tree_widget.render_line(y).text for y in range(3)]
        assert "0.5 " in lines[0] and "0.51" in lines[1] and "0.52" in lines[2], lines
        assert " – " not in "".join(lines[:3])


async def test_the_filter_looks_past_the_rows_a_cut_table_shows(demo_ckpt: Path) -> None:
    """GIVEN the demo's whole-run writes (about two thousand: the table shows the first 300)
    WHEN `/` finds the rejected writes THEN all three are found, the two past the first 300
    too."""
    writes = open_run(RunOptions(checkpoint=demo_ckpt, embedder="bm25")).checkpoint.writes
    wanted = [i for i, w in enumerate(writes) if "conclusion for the parent" in w.text.lower()]
    assert len(wanted) == 3 and sum(i >= 300 for i in wanted) == 2  # the case it stands for
    app = make_app(demo_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "4", "w", "right_square_bracket")
        table = app.query_one("#writes-table", VimTable)
        assert (table.row_count, table.total_rows) == (300, len(writes))
        await press(pilot, "slash")
        await type_text(pilot, "conclusion for the parent")
        await press(pilot, "enter")
        assert table.row_count == 3
        assert [int(key) for key in shown_keys(table)] == wanted
        assert f"3 of {len(writes):,} rows" in title_of(app.query_one("#writes-pane"))
