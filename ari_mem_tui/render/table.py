"""Any table the tool shows, questioned: rows kept by a filter, put in a column's order, written
as CSV.

The TUI's tables (Hits, Writes, Audit, Health, the run list) and the CLI (`writes --filter
--sort --csv`) both call these, so a filter or an order means the same thing on both. A cell is
whatever a table holds (a str, a number, a `rich.text.Text`, None); what is compared, sorted and
written is its plain text.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from ari_mem_tui.render.text import paste_safe, preview

Row = tuple[str, Sequence[Any]]  # (the row's key, its cells in column order)
MISSING = frozenset({"", "–", "-", "?", "…"})  # a cell that holds no value: last in any order
# a number as the tables write one: `0.97`, `1,129`, `-3`, `92%`, `5/5`, `0 (0%)`, `1e-07`
_NUMBER = re.compile(
    r"\s*(?P<n>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?)%?"
    r"(?:/(?P<d>\d+))?(?:\s+\(.*\))?\s*"
)
FORMULA_START = "=+-@\t\r"  # a cell beginning so is run as a formula by a spreadsheet


def plain(cell: Any) -> str:
    """The text a cell shows, without its style."""
    if cell is None:
        return ""
    if isinstance(cell, Text):
        return cell.plain
    return str(cell)


# ---------------------------------------------------------------- filter


def row_matches(cells: Sequence[Any], needle: str) -> bool:
    """Whether a row holds `needle` in any cell, any case (k9s's `/`); `!text`: rows that do
    not hold `text`. A blank needle keeps every row."""
    needle = needle.strip()
    inverse = needle.startswith("!")
    needle = needle.removeprefix("!").strip().casefold()
    if not needle:
        return True
    found = any(needle in plain(cell).casefold() for cell in cells)
    return found != inverse


def filter_rows(rows: Iterable[Row], needle: str) -> list[Row]:
    return [row for row in rows if row_matches(row[1], needle)]


# ---------------------------------------------------------------- sort


def number(text: str) -> float | None:
    """The number a cell shows (`1,129` → 1129, `92%` → 92, `5/5` → 5, `0 (0%)` → 0), else
    None: ids that begin with a digit (`5d9dc9f8`), times and words are text."""
    match = _NUMBER.fullmatch(text)
    if match is None:
        return None
    value = float(match["n"].replace(",", ""))
    return value if math.isfinite(value) else None


def sort_key(cell: Any) -> tuple[int, float, str]:
    """Numbers before text (numbers by value, text by its case-folded letters; the tables'
    times, `2026-05-28 21:52:06 UTC`, sort as text in time order)."""
    text = plain(cell).strip()
    value = number(text)
    if value is not None:
        return (0, value, "")
    return (1, 0.0, text.casefold())


def sort_rows(rows: Iterable[Row], column: int, descending: bool = False) -> list[Row]:
    """`rows` by the cells of `column`; a row with no value there (`–`, `?`, blank) goes last
    whichever the direction, and rows that tie keep their order."""
    rows = list(rows)

    def missing(row: Row) -> bool:
        cells = row[1]
        return column >= len(cells) or plain(cells[column]).strip() in MISSING

    valued = [row for row in rows if not missing(row)]
    valued.sort(key=lambda row: sort_key(row[1][column]), reverse=descending)
    return valued + [row for row in rows if missing(row)]


@dataclass(frozen=True)
class TableView:
    """What a reader asked of a table: the filter text and the column it is sorted by (None:
    the table's own order)."""

    needle: str = ""
    sort_column: str | None = None
    descending: bool = False

    def apply(self, columns: Sequence[str], rows: Iterable[Row]) -> list[Row]:
        kept = filter_rows(rows, self.needle) if self.needle.strip() else list(rows)
        if self.sort_column in columns:
            return sort_rows(kept, list(columns).index(self.sort_column), self.descending)
        return kept

    @property
    def active(self) -> bool:
        return bool(self.needle.strip()) or self.sort_column is not None

    def words(self, shown: int, total: int) -> str:
        """For a title: `3 of 12 rows · filter 'roof' · sorted by score ↓`; "" when neither a
        filter nor an order is set."""
        parts = []
        if self.needle.strip():
            parts += [f"{shown:,} of {total:,} rows", f"filter {preview(self.needle, 24)!r}"]
        if self.sort_column is not None:
            arrow = "↓" if self.descending else "↑"
            parts.append(f"sorted by {preview(self.sort_column, 20) or '#'} {arrow}")
        return " · ".join(parts)


def next_sort(view: TableView, columns: Sequence[str]) -> TableView:
    """The order after the sort key (`S`): the table's own order → the first column ↑ → ↓ →
    the next column ↑ → … → the table's own order again."""
    columns = list(columns)
    if view.sort_column not in columns:
        return TableView(view.needle, columns[0], False) if columns else view
    if not view.descending:
        return TableView(view.needle, view.sort_column, True)
    index = columns.index(view.sort_column) + 1
    if index < len(columns):
        return TableView(view.needle, columns[index], False)
    return TableView(view.needle, None, False)


def sorted_by(view: TableView, column: str) -> TableView:
    """A click on `column`'s header: sorted by it ↑, again ↓, a third time the table's order."""
    if view.sort_column != column:
        return TableView(view.needle, column, False)
    if not view.descending:
        return TableView(view.needle, column, True)
    return TableView(view.needle, None, False)


# ---------------------------------------------------------------- CSV


def csv_cell(cell: Any) -> str:
    """A cell as CSV data: control characters as the symbols the panes show (a memory text may
    hold escapes that a terminal `cat`ting the file would run), and a text that a spreadsheet
    would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) quoted with a leading `'`. A
    plain number (`-0.5`, `+3`) stays a number."""
    text, _ = paste_safe(plain(cell))
    first = text.lstrip(" ")[:1]  # (a formula may follow spaces)
    if first and first in FORMULA_START and number(text) is None:
        return "'" + text
    return text


def csv_text(columns: Sequence[str], rows: Iterable[Row]) -> str:
    """The table as CSV (RFC 4180: every field that needs it quoted, CRLF between records, as
    spreadsheets read it): a header of the column names, then one line per row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([csv_cell(name) for name in columns])
    for _, cells in rows:
        writer.writerow([csv_cell(cell) for cell in cells])
    return out.getvalue()


def csv_name(what: str, place: str, key: str, view: TableView) -> str:
    """`<what>-<place>-<hash>.csv` (`hits-b1000001-20260528210232-1f2e3d4c.csv`): the table,
    where it was (a node and its run), and a hash of exactly that and the filter and order, so
    two exports of other rows never overwrite each other and one export again replaces its
    own file."""
    from ari_mem_tui.render.dossier import digest, readable  # noqa: PLC0415 - with an export

    hashed = digest(what, key, view.needle, view.sort_column or "", str(view.descending))
    return f"{readable(what)}-{place}-{hashed}.csv"


def write_csv(path: Path, text: str) -> Path:
    """Write `text` to `path` whole or not at all (a temporary file beside it, renamed into
    place), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=".table-", suffix=".csv")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return path


@dataclass
class CliTable:
    """A table for a terminal or a pipe: the title on a line of its own, the header and a rule
    under it, two spaces between columns, no vertical rules, and every column but `flexible`
    (the text) as wide as its widest cell: the text column gets what they leave of the width it
    is printed in, so a narrow terminal cuts the text, never a node id, a count, a time or a
    verdict. Laid out here a line at a time, not by Rich's Table: that took two seconds over a
    thousand runs' rows (`runs`), ten times the listing's own work."""

    title: Text
    columns: list[str]
    rows: list[list[Text]]
    flexible: str = ""

    def widths(self, max_width: int) -> list[int]:
        """Each column's width: its widest cell, the flexible one cut to the room left."""
        widths = [
            max([Text(column).cell_len] + [r[i].cell_len for r in self.rows if i < len(r)])
            for i, column in enumerate(self.columns)
        ]
        fixed = sum(w for c, w in zip(self.columns, widths, strict=True) if c != self.flexible)
        room = max(MIN_FLEXIBLE, max_width - fixed - GAP * (len(widths) - 1))
        return [
            min(w, room) if c == self.flexible else w
            for c, w in zip(self.columns, widths, strict=True)
        ]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.widths(options.max_width)
        header = [Text(column, style="bold") for column in self.columns]
        lines = [_line(header, widths), Text("─" * (sum(widths) + GAP * (len(widths) - 1)))]
        lines += [_line(cells, widths) for cells in self.rows]
        body = Text("\n").join(lines)
        body.no_wrap, body.overflow = True, "ellipsis"  # (columns wider than the terminal)
        yield self.title
        yield body


MIN_FLEXIBLE = 8  # cells of text a narrow terminal still shows
GAP = 2  # spaces between two columns


def _line(cells: Sequence[Text], widths: list[int]) -> Text:
    """One line of a table: each cell cut to its column (with …) and padded to it, a number
    (justify="right") to the right; a line break in a cell kept as a space."""
    line = Text()
    for place, (cell, width) in enumerate(zip(cells, widths, strict=False)):
        if place:
            line.append(" " * GAP)
        if "\n" in cell.plain:
            cell = Text(" ").join(cell.split("\n", include_separator=False))
        else:
            cell = cell.copy()
        cell.truncate(width, overflow="ellipsis")
        pad = " " * (width - cell.cell_len)
        line.append_text(Text(pad) + cell if cell.justify == "right" else cell + Text(pad))
    return line


def cli_table(
    title: str | Text, columns: Sequence[str], rows: Iterable[Sequence[Any]], flexible: str = ""
) -> CliTable:
    cells = [[c if isinstance(c, Text) else Text(str(c)) for c in row] for row in rows]
    heading = title if isinstance(title, Text) else Text(title)
    return CliTable(heading, list(columns), cells, flexible)
