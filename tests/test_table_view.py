"""Questioning a table (render/table.py): the filter, the order and the CSV the TUI's `/`, `S`
and `x` use, and `writes --filter --sort --csv` too."""

from __future__ import annotations

import csv
import io

import pytest
from rich.console import Console
from rich.text import Text

from ari_mem_tui.render.table import (
    TableView,
    cli_table,
    csv_cell,
    csv_text,
    next_sort,
    number,
    row_matches,
    sort_rows,
    sorted_by,
)

COLUMNS = ["#", "score", "node", "text"]
ROWS = [
    ("a", ["1", "0.97", "5d9dc9f8", Text("Roofline bound")]),
    ("b", ["2", "–", "root", "STREAM triad"]),
    ("c", ["10", "0.99", "a1000001", "roofline again"]),
    ("d", ["3", "0.50", "root", None]),
]


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("1,129", 1129.0),
        ("92%", 92.0),
        ("5/5", 5.0),
        ("0 (0%)", 0.0),
        ("-3", -3.0),
        ("1e-07", 1e-07),
        ("5d9dc9f8", None),  # an id that starts with a digit is text
        ("2026-05-28 21:52:06 UTC", None),
        ("✓", None),
    ],
)
def test_a_cell_is_a_number_only_when_it_reads_as_one(cell: str, value: float | None) -> None:
    assert number(cell) == value


def test_numbers_sort_by_value_and_cells_without_a_value_go_last_both_ways() -> None:
    by_rank = sort_rows(ROWS, 0)
    assert [key for key, _ in by_rank] == ["a", "b", "d", "c"]  # 10 after 3, not after 1
    assert [key for key, _ in sort_rows(ROWS, 1)] == ["d", "a", "c", "b"]
    assert [key for key, _ in sort_rows(ROWS, 1, descending=True)] == ["c", "a", "d", "b"]
    # text in any case ("roofline again" before "Roofline bound"); a blank cell last
    assert [key for key, _ in sort_rows(ROWS, 3)] == ["c", "a", "b", "d"]


def test_the_filter_matches_any_cell_in_any_case_and_bang_keeps_the_others() -> None:
    assert row_matches(ROWS[0][1], "ROOFLINE") and row_matches(ROWS[0][1], " 5d9d ")
    assert not row_matches(ROWS[1][1], "roofline")
    assert row_matches(ROWS[1][1], "!roofline") and not row_matches(ROWS[0][1], "!roof")
    view = TableView("roof")
    assert [k for k, _ in view.apply(COLUMNS, ROWS)] == ["a", "c"]
    assert view.words(2, 4) == "2 of 4 rows · filter 'roof'"
    assert TableView().words(4, 4) == "" and not TableView().active


def test_the_sort_key_walks_every_column_both_ways_then_the_tables_own_order() -> None:
    view, seen = TableView("x"), []
    for _ in range(2 * len(COLUMNS) + 1):
        view = next_sort(view, COLUMNS)
        seen.append((view.sort_column, view.descending))
    assert seen == [
        ("#", False),
        ("#", True),
        ("score", False),
        ("score", True),
        ("node", False),
        ("node", True),
        ("text", False),
        ("text", True),
        (None, False),
    ]
    assert view.needle == "x"  # the filter stays
    view = TableView(sort_column="score", descending=True)
    assert view.words(4, 4) == "sorted by score ↓"
    assert [k for k, _ in view.apply(COLUMNS, ROWS)] == ["c", "a", "d", "b"]
    once = sorted_by(TableView(), "node")
    twice = sorted_by(once, "node")
    thrice = sorted_by(twice, "node")
    assert (once.sort_column, once.descending) == ("node", False)
    assert (twice.sort_column, twice.descending) == ("node", True)
    assert (thrice.sort_column, thrice.descending) == (None, False)  # the table's own order
    assert sorted_by(twice, "score") == TableView(sort_column="score")


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-1+1", "'-1+1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("  =1+1", "'  =1+1"),  # after spaces too
        ("\t=1", "'\t=1"),
        ("-0.5", "-0.5"),  # a number stays a number
        ("+3", "+3"),
        ("a = b", "a = b"),
        ("\x1b[2Jcleared", "␛[2Jcleared"),  # no escape reaches a terminal that cats the file
        ("two\nlines", "two\nlines"),
        (None, ""),
        (Text("✓ log of ✗", style="red"), "✓ log of ✗"),
    ],
)
def test_a_csv_cell_is_data_never_a_formula_or_an_escape(cell: object, written: str) -> None:
    assert csv_cell(cell) == written


def test_the_csv_is_rfc4180_a_header_then_the_rows_in_the_order_given() -> None:
    rows = TableView("root", "#", True).apply(COLUMNS, ROWS)
    text = csv_text(COLUMNS, rows)
    assert text.startswith("#,score,node,text\r\n")
    assert list(csv.reader(io.StringIO(text))) == [
        COLUMNS,
        ["3", "0.50", "root", ""],
        ["2", "–", "root", "STREAM triad"],
    ]
    quoted = csv_text(["a"], [("k", ['say "hi", then\nleave'])])
    assert quoted == 'a\r\n"say ""hi"", then\nleave"\r\n'


def test_a_text_table_cuts_only_its_text_column_and_pads_no_title() -> None:
    console = Console(width=72, record=True, color_system=None)
    rows = [["node_5d9dc9f8", "2026-05-28 21:52:06 UTC", "1,129", "starved", "x " * 80]]
    console.print(cli_table("Nodes (1 of 1)", ["id", "time", "n", "verdict", "text"], rows, "text"))
    lines = console.export_text().splitlines()
    assert lines[0] == "Nodes (1 of 1)"
    row = lines[-1]
    for whole in rows[0][:4]:
        assert whole in row, row
    assert row.rstrip().endswith("…") and len(row) <= 72
