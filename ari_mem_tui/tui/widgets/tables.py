"""A DataTable with vim keys, and a helper to fill it with safe cells."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from ari_mem_tui.tui.display import preview


class VimTable(DataTable):
    """Row-cursor table: j/k/g/G move, like the tree."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "Top", show=False),
        Binding("G", "scroll_bottom", "Bottom", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)

    def fill(
        self, columns: list[str], rows: Iterable[tuple[str, list[object]]], reserve: int = 0
    ) -> None:
        """Replace everything; `rows` are (key, cells); str cells are made safe one-liners.

        The last column gets what is left of the width after `reserve` cells, so the table
        fits its pane instead of scrolling sideways."""
        self.clear(columns=True)
        for column in columns:
            self.add_column(column, key=column)
        pane = self.parent.size.width if self.parent is not None else 0
        last_width = max(24, pane - reserve) if reserve and pane else 70
        for key, cells in rows:
            texts = [cell_text(c) for c in cells[:-1]]
            if cells:
                texts.append(cell_text(cells[-1], last_width))
            self.add_row(*texts, key=key)

    @property
    def current_key(self) -> str | None:
        if self.row_count == 0 or self.cursor_row < 0:
            return None
        try:
            row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # noqa: BLE001 - an empty or changing table has no current row
            return None
        return row_key.value


def cell_text(value: object, width: int = 70) -> Text:
    if isinstance(value, Text):
        return value
    if value is None:
        return Text("–", style="bright_black")
    return Text(preview(value, width))
