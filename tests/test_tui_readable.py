"""Text you can read without opening each row (issue 21 §2): a preview of the row under the
cursor follows it in Hits, Writes and Audit, whole and literal; the tree never cuts a number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ari_mem_tui.model import Node
from ari_mem_tui.render.text import clean, node_label
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.tui.widgets.preview import RowPreview
from tests.tui_app_helpers import cursor_to_write, make_app, press, settle
from tests.tui_helpers import HOSTILE

TO_B1 = ("j", "j", "l", "l")


def shown(widget) -> str:
    """What the widget draws, line by line, as plain text."""
    return "\n".join(
        "".join(segment.text for segment in widget.render_line(y))
        for y in range(widget.size.height)
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_hits_preview_follows_the_cursor(tiny: Path, size) -> None:
    """GIVEN B1's hits WHEN nothing is focused in the tab, then the hits table is, and j moves
    THEN the preview shows the row under the cursor: its whole text, wrapped (not cut to the
    text column), and its fields; it moves with the cursor."""
    app = make_app(tiny)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        hits = app.query_one("#hits-pane")
        preview = app.query_one("#hits-preview", RowPreview)
        first, second = hits.replay.hits[0], hits.replay.hits[1]
        assert preview.display and preview.detail.text == first.text
        await press(pilot, "right_square_bracket", "j")
        assert app.focused is app.query_one("#hits-table")
        assert preview.detail.text == second.text
        drawn = " ".join(shown(preview).split())
        assert " ".join(second.text.split()) in drawn  # whole, wrapped at any width
        assert f"rank {second.rank}" in drawn and "replayed hit" in drawn


async def test_the_preview_is_literal_and_says_what_it_leaves_out(tiny: Path) -> None:
    """GIVEN node A's writes, one of them hostile (markup, an escape), WHEN the cursor is on it
    THEN the preview shows the brackets as text and the escape as a symbol; a text longer than
    the preview's room ends with how many lines are left and that Enter shows them."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "4")
        preview = app.query_one("#writes-preview", RowPreview)
        await cursor_to_write(pilot, HOSTILE)
        assert preview.detail.text == HOSTILE
        drawn = shown(preview)
        assert "[red]x[/red]" in drawn and "␛[2J" in drawn and "\x1b" not in drawn
        long_text = "word " * 400
        preview.show(preview.detail.__class__("a long row", text=long_text))
        await pilot.pause()
        last = shown(preview).splitlines()[-1]
        assert re.search(r"… \d+ more lines: Enter", last), last
        assert preview.size.height <= 4  # a short screen keeps the table's rows


async def test_the_audit_preview_follows_its_cursor(small_ckpt: Path) -> None:
    """GIVEN the Audit table focused WHEN j moves THEN the preview is the row's finding."""
    app = make_app(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "6", "right_square_bracket", "j")
        audit = app.main.audit_pane
        table = app.query_one("#audit-table", VimTable)
        preview = app.query_one("#audit-preview", RowPreview)
        assert table.cursor_row == 1
        assert preview.detail.text == audit.rows[1].text
        assert " ".join(clean(audit.rows[1].text).split()) in " ".join(shown(preview).split())


def _numbers(line: str) -> tuple[list[str], list[str]]:
    return re.findall(r"(?<![\w.])\d\.\d+|–", line), re.findall(r"✎(\d+)", line)


@pytest.mark.parametrize("width", [None, 40, 24, 20, 16, 14, 10, 5])
def test_a_node_label_never_cuts_a_number(width: int | None) -> None:
    """GIVEN a node with score 0.52 and 68 writes WHEN its label is fitted to ever fewer cells
    THEN it fits, and a number in it is whole or absent; an id cut to fit ends with `…`."""
    node = Node(
        id="node_95e761d1", status="success", label="improve", metrics={"_scientific_score": 0.52}
    )
    label = node_label(node, writes=68, width=width).plain
    assert width is None or len(label) <= width
    scores, writes = _numbers(label)
    assert scores in ([], ["0.52"]) and writes in ([], ["68"])
    if "95e761d1" not in label:
        assert label.endswith("…")


async def test_the_tree_at_80x24_never_cuts_a_number(small_ckpt: Path) -> None:
    """GIVEN the demo's small run at 80×24 with every node's line in sight WHEN the tree is
    drawn THEN every score and write count on screen is the node's whole value, and no line is
    cut by the tree's edge."""
    app = make_app(small_ckpt)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        tree = app.main.tree_widget
        for node_id in app.ckpt.nodes:
            tree.reveal(node_id)
        await pilot.pause()
        ckpt, checked = app.ckpt, 0
        for y, line in enumerate(tree._tree_lines):
            item = line.node.data
            if item is None or not item.node_id:
                continue
            strip = tree._render_line(y, 0, tree.size.width, tree.rich_style)
            text = "".join(segment.text for segment in strip).rstrip()
            assert len(text) < tree.size.width, text  # short of the edge: nothing cut off
            node = ckpt.nodes[item.node_id]
            scores, writes = _numbers(text)
            want_score = "–" if node.score is None else f"{node.score:.2f}"
            assert scores in ([], [want_score]), (text, want_score)
            assert writes in ([], [str(len(ckpt.entries_by_node.get(node.id, ())))]), text
            checked += 1
        assert checked == len(ckpt.nodes)


async def test_a_table_gives_its_text_the_room_left_at_once() -> None:
    """GIVEN a table in an 80-column pane WHEN it is filled with long texts THEN the text column
    gets what the other columns leave (not its header's width), with no resize needed, and a
    narrower pane afterwards only narrows that column (the rows are not filled again)."""
    from rich.text import Text as RichText
    from textual.app import App
    from textual.containers import Vertical

    class One(App):
        def compose(self):
            with Vertical(id="pane"):
                yield VimTable(id="t")

    app = One()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(VimTable)
        rows = [(str(i), ["12:00", RichText("✓"), "long text " * 30]) for i in range(3)]
        table.fill(["time", "ok", "text"], rows, reserve=True)
        width = table.ordered_columns[-1].width
        assert width == table._pane_width() - 5 - 2 - 2 * 3 - 2  # time 5, ok 2 (its header)
        generation = table._generation
        app.query_one("#pane").styles.width = 60
        await pilot.pause()
        assert table.ordered_columns[-1].width == width - 20
        assert table._generation == generation  # not filled again
