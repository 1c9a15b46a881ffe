"""A DataTable with vim keys, and a helper to fill it with safe cells."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.widgets import DataTable

from ari_mem_tui.render.text import preview
from ari_mem_tui.tui import keys


class VimTable(DataTable):
    """Row-cursor table: j/k/g/G move, like the tree."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.TABLE)

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._generation = 0  # row keys are fresh on every fill: DataTable caches by key
        self._last_fill: tuple[list[str], list, bool] | None = None
        self._filled_width = 0

    def fill(
        self, columns: list[str], rows: Iterable[tuple[str, list[object]]], reserve: bool = False
    ) -> None:
        """Replace everything; `rows` are (key, cells); str cells are made safe one-liners.

        With `reserve` true, the last column is cut to what the other columns leave of the
        pane's width, so the table fits its pane instead of scrolling sideways."""
        rows = list(rows)
        self._last_fill = (columns, rows, reserve)
        self.clear(columns=True)
        self._generation += 1
        pane = self._pane_width()
        self._filled_width = pane
        prepared: list[tuple[str, list[Text]]] = [
            (key, [cell_text(c) for c in cells[:-1]]) for key, cells in rows
        ]
        if reserve and pane:
            # the last column gets what the others leave (2 cells of padding each, a scrollbar)
            used = sum(
                max([len(c)] + [t[i].cell_len for _, t in prepared if i < len(t)])
                for i, c in enumerate(columns[:-1])
            )
            last_width = max(16, pane - used - 2 * len(columns) - 2)
        else:
            last_width = 70
        for (_, texts), (_, cells) in zip(prepared, rows, strict=True):
            if cells:
                texts.append(cell_text(cells[-1], last_width))
        # explicit widths: DataTable's auto-width can paint rows before it measured them
        for index, column in enumerate(columns):
            width = max([len(column)] + [t[index].cell_len for _, t in prepared if index < len(t)])
            self.add_column(column, key=column, width=width)
        for key, texts in prepared:
            self.add_row(*texts, key=f"{self._generation}|{key}")

    def _pane_width(self) -> int:
        parent = self.parent
        if parent is None:
            return 0
        return parent.scrollable_content_region.width  # type: ignore[union-attr]

    def on_resize(self) -> None:
        """Refit the text column when the pane's width changes (e.g. a hidden tab is shown)."""
        last = getattr(self, "_last_fill", None)
        if last is not None and last[2] and self._pane_width() != self._filled_width:
            row = self.cursor_row
            self.fill(*last)
            if 0 <= row < self.row_count:
                self.move_cursor(row=row)

    def action_view_row(self) -> None:
        """`v`: the row in full, as Enter (the pane that owns the table opens it)."""
        if self.row_count:
            self.action_select_cursor()

    @property
    def current_key(self) -> str | None:
        if self.row_count == 0 or self.cursor_row < 0:
            return None
        try:
            row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # noqa: BLE001 - an empty or changing table has no current row
            return None
        return self.plain_key(row_key.value)

    @staticmethod
    def plain_key(value: str | None) -> str | None:
        """The key given to `fill`, without the generation prefix."""
        return value.split("|", 1)[1] if value and "|" in value else value


def cell_text(value: object, width: int = 70) -> Text:
    if isinstance(value, Text):
        return value
    if value is None:
        return Text("–", style="bright_black")
    return Text(preview(value, width))
