"""The smaller things a user saw (issue 21 §5): paging past the Hits tables, both compare sides
moving together, Core's empty blocks and its texts, the Saw header's wording, one time format
with its zone, and the views' own footers."""

from __future__ import annotations

import re
from pathlib import Path

from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from ari_mem_tui.model import CoreBlocks
from ari_mem_tui.render.text import fmt_iso, fmt_ts
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.screens.compare import CompareScreen
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.help import HelpScreen
from ari_mem_tui.tui.widgets.detail import core_text
from tests.tui_app_helpers import make_app, press, settle
from tests.tui_helpers import IDS

TO_B1 = ("j", "j", "l", "l")
TO_A2 = ("j", "l", "l", "j")
TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")


async def test_page_keys_page_the_hits_pane_past_its_table(tiny: Path) -> None:
    """GIVEN B1's hits table focused in a short terminal (its findings and the recorded list
    below it) WHEN End, Home, PageDown THEN the Hits pane scrolls to its end, back to its top,
    and a page down: the table shows all its rows, so it has nothing of its own to page."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "right_square_bracket")
        table = app.query_one("#hits-table", DataTable)
        pane = app.query_one("#hits-pane", VerticalScroll)
        assert app.focused is table and pane.max_scroll_y > 0 and table.max_scroll_y == 0
        await press(pilot, "end")
        assert pane.scroll_y == pane.max_scroll_y
        await press(pilot, "home")
        assert pane.scroll_y == 0
        await press(pilot, "pagedown")
        assert pane.scroll_y > 0 and app.focused is table
        await press(pilot, "pageup")
        assert pane.scroll_y == 0


async def test_both_compare_sides_move_together(tiny: Path) -> None:
    """GIVEN A2 compared with B1 in a short terminal WHEN PageDown, G, g, End THEN both sides
    scroll, to the same place (neither side takes the focus, so no key moves one alone)."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 14)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_A2, "m", "g", "j", "j", "j", "j", "l", "l", "c")
        await pilot.app.workers.wait_for_complete()
        await press(pilot)
        assert isinstance(app.screen, CompareScreen)
        sides = list(app.screen.query(".compare-col").results(VerticalScroll))
        assert all(side.max_scroll_y > 0 for side in sides)

        def places() -> list[float]:
            return [side.scroll_y for side in sides]

        await press(pilot, "pagedown")
        assert all(y > 0 for y in places())
        await press(pilot, "G")
        assert places() == [side.max_scroll_y for side in sides]
        await press(pilot, "g")
        assert places() == [0, 0]
        await press(pilot, "end")
        assert places() == [side.max_scroll_y for side in sides]


def test_core_says_why_a_block_is_empty_and_shows_texts_as_text() -> None:
    """GIVEN ARI's core blocks (persona and human empty, the experiment goal a text of many
    lines) WHEN Core draws them THEN an empty block says why, and the goal's lines are lines,
    not a JSON string holding `\\n`."""
    goal = "# CSR SpMV\n\nWe propose a kernel.\n## Goal\nMaximise GFlops."
    core = CoreBlocks(
        ari_context={"experiment_goal": goal, "primary_metric": "GFlops", "hw": {"cpus": 96}},
        source="memory_backup.jsonl.gz",
    )
    text = core_text(core, None).plain
    assert text.count("ARI writes only ari_context, never persona or human") == 2
    assert "\\n" not in text
    assert "# CSR SpMV\n\nWe propose a kernel.\n## Goal\nMaximise GFlops." in text
    assert "primary_metric: GFlops" in text and '"cpus": 96' in text


async def test_the_saw_header_says_where_tier_2_came_from(tiny: Path) -> None:
    """GIVEN B1 (its start-up search recorded in the access log) and A1 (none recorded) WHEN
    Saw is shown THEN its header agrees with its own Tier 2: recorded for B1, replayed for A1."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "2")
        body = app.query_one("#saw-body", Static).render().plain
        assert body.startswith("Tier 2 from the recorded start-up search (access log)")
        assert "Tier 2 Semantic supplement" in body and "from the recorded start-up" in body
        app.main.jump_to(IDS["A1"])
        await press(pilot)
        body = app.query_one("#saw-body", Static).render().plain
        assert body.startswith("Tier 2 replayed: pool as of the node's start")
        assert "approximate: replayed with bm25" in body


async def test_every_time_is_shown_one_way_with_its_zone(tiny: Path) -> None:
    """GIVEN the tiny run WHEN the pool line, the recorded search, the Writes table, the Node
    tab and an entry's view show times THEN each reads `YYYY-MM-DD HH:MM:SS UTC`."""
    assert fmt_ts(0) == "1970-01-01 00:00:00 UTC"
    assert fmt_iso("1970-01-01T00:00:00") == fmt_iso("1970-01-01T01:00:00+01:00") == fmt_ts(0)
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        header = str(app.query_one("#hits-query").render())
        recorded = str(app.query_one("#recorded-title").render())
        assert TIME.search(header) and TIME.search(recorded)
        await press(pilot, "4", "right_square_bracket")
        table = app.query_one("#writes-table", DataTable)
        assert all(TIME.fullmatch(str(table.get_row_at(i)[0])) for i in range(table.row_count))
        await press(pilot, "enter")
        assert isinstance(app.screen, EntryScreen)
        assert TIME.search(str(app.screen.query_one("#entry-text", Static).render()))
        await press(pilot, "escape", "5")
        node = str(app.query_one("#node-body", Static).render())
        assert len(TIME.findall(node)) == 2  # created, completed


def footer(app) -> str:
    """What the shown screen's own footer says."""
    return app.screen.query_one(KeyBar).render().plain


async def test_help_and_the_entry_view_show_their_own_footer(tiny: Path) -> None:
    """GIVEN the help, then an entry's view WHEN shown THEN each has a footer of its own
    that says Esc closes it, and not the tree's keys (find, mark, export)."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert " / Find " in footer(app)  # the tree's footer, for a start
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        said = footer(app)
        assert said.startswith(" esc Close ") and "Find" not in said and "Mark" not in said
        await press(pilot, "escape", *TO_B1, "right_square_bracket", "enter")
        assert isinstance(app.screen, EntryScreen)
        said = footer(app)
        assert said.startswith(" esc Close ") and " y Copy text " in said and "Find" not in said


async def test_a_click_on_a_footer_key_presses_it(tiny: Path) -> None:
    """GIVEN the footer drawn as one line WHEN `? Help` in it is clicked THEN the help opens."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        line = footer(app)
        await pilot.click(KeyBar, offset=(line.index("? Help") + 2, 0))
        await press(pilot)
        assert isinstance(app.screen, HelpScreen)
