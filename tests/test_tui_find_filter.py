"""Filters and finds that find (issue 21 §3): a filter shows its matches, expanded, the first
selected and counted in the title; Esc clears a find, then a filter; `s` cycles the query source
without trapping the keys; with the tree folded away, every tab's title names its node."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from ari_mem_tui.tui import keys
from ari_mem_tui.tui.screens.filter import CheckList, FilterScreen
from tests.tui_app_helpers import make_app, press, settle
from tests.tui_helpers import IDS


def title_of(widget) -> str:
    content = widget._border_title  # what the border shows (the getter gives markup)
    return content.plain if content is not None else ""


def line_text(checklist: CheckList, index: int) -> str:
    return "".join(segment.text for segment in checklist.render_line(index))


async def test_a_filter_shows_its_matches_expanded_and_counted(tiny: Path) -> None:
    """GIVEN the tiny run opened on its root (A's chain folded, B closed) WHEN `f`, then j/k to
    the label `validation` and space, Ctrl+S THEN both matches (A1y deep in A's folded chain,
    B1 under B) are in sight, the first in tree order is selected and shown, and the title
    counts them. The dialog says that none checked means all, and marks only checked options."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "f")
        assert isinstance(app.screen, FilterScreen)
        intro = str(app.screen.query_one("#filter-title").render())
        assert "none checked in a list means all" in intro
        labels = app.screen.query_one("#filter-label", CheckList)
        labels.focus()
        await press(pilot, "j", "j", "j", "k")  # draft improve debug ablation → back to debug
        assert labels.highlighted == 2
        await press(pilot, "j", "j", "space")  # validation
        assert labels.selected == ["validation"]
        checked = line_text(labels, 4)
        assert checked.lstrip("▐").startswith("✓") and "validation" in checked
        for index in range(4):  # the unchecked options: no mark at all (Textual draws an X)
            assert "X" not in line_text(labels, index) and "✓" not in line_text(labels, index)
        await press(pilot, "ctrl+s")
        tree = app.main.tree_widget
        assert title_of(app.main.tree_pane) == "Tree · 2 nodes · filter label validation"
        assert app.current_id == IDS["A1y"] and tree.current_id == IDS["A1y"]
        assert app.query_one("#hits-pane").replay.node_id == IDS["A1y"]
        shown = {line.node.data.first_id for line in tree._tree_lines if line.node.data}
        assert {IDS["A1y"], IDS["B1"]} <= shown  # both in sight, no `l` needed
        await press(pilot, "escape")  # Esc in the tree clears the filter
        assert title_of(app.main.tree_pane) == "Tree"
        assert tree.visible_ids is None and app.current_id == IDS["A1y"]
        shown = {line.node.data.first_id for line in tree._tree_lines if line.node.data}
        assert {IDS["A"], IDS["B"], IDS["A1y"]} <= shown  # not collapsed back to the root


async def test_esc_clears_the_find_then_the_filter(tiny: Path) -> None:
    """GIVEN a filter and a find WHEN Esc is pressed in the tree THEN the find goes first (its
    marks and its title), then the filter; from the tabs Esc only goes back to the tree."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "f")
        app.screen.query_one("#filter-status", CheckList).select("success")
        await press(pilot, "ctrl+s", "slash", *"b1", "enter")
        assert title_of(app.main.tree_pane) == (
            "Tree · 8 nodes · filter status success · find 'b1' 1/1"
        )
        assert app.current_id == IDS["B1"]
        await press(pilot, "right_square_bracket", "escape")  # from the tabs: back to the tree
        assert app.focused is app.main.tree_widget and app.main.tree_pane.find_text == "b1"
        await press(pilot, "escape")
        assert title_of(app.main.tree_pane) == "Tree · 8 nodes · filter status success"
        assert not app.main.tree_widget.find_hits and not app.main.tree_pane.find_matches
        await press(pilot, "escape")
        assert title_of(app.main.tree_pane) == "Tree" and app.current_id == IDS["B1"]
        await press(pilot, "slash", *"a1", "escape")  # Esc in the box: no find
        assert not app.query_one("#find-input", Input).display
        assert title_of(app.main.tree_pane) == "Tree" and app.focused is app.main.tree_widget


async def test_s_cycles_the_query_without_trapping_and_the_title_tells(tiny: Path) -> None:
    """GIVEN B1's hits WHEN `s` is pressed again and again THEN it goes at start → now → at
    start (no custom query typed yet: the focus never goes to the query box, so the next `s`
    is a command again), the title saying which each time; once a custom query is typed, `s`
    reaches it too."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "j", "l", "l")
        hits = app.query_one("#hits-pane")
        seen = []
        for _ in range(4):
            await press(pilot, "s")
            assert not isinstance(app.focused, Input)
            seen.append(title_of(hits).split(" · ")[3])
            assert hits.replay.query_source == {"query now": "now"}.get(seen[-1], "start")
        assert seen == ["query now", "query at start", "query now", "query at start"]
        await press(pilot, "i", *"warmup", "enter")
        # a custom query is said right after the node: it stays on from node to node
        assert title_of(hits).split(" · ")[2] == "custom: warmup"
        app.main.tree_widget.focus()
        seen = []
        for _ in range(3):
            await press(pilot, "s")
            parts = title_of(hits).split(" · ")
            seen.append(parts[2] if parts[2].startswith("custom") else parts[3])
        assert seen == ["query at start", "query now", "custom: warmup"]
        assert hits.replay.query == "warmup"


@pytest.mark.parametrize("tab", ["hits", "saw", "core", "node", "writes"])
async def test_with_the_tree_folded_each_tab_names_its_node(tiny: Path, tab: str) -> None:
    """GIVEN 80×24, B1 chosen WHEN the detail pane takes the focus (the tree folds away) THEN
    the shown tab's title names B1."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "j", "l", "l", str(1 + keys.TABS.index(tab)))
        await press(pilot, "right_square_bracket")
        assert app.main.tree_pane.has_class("-drawer")  # folded away
        pane = app.query_one(f"#{tab}-pane")
        assert "b1000001" in title_of(pane), title_of(pane)
