"""The row under a table's cursor, in full, beside or below the table (lazygit's main panel,
k9s's describe): a table cuts its text to fit, this shows the whole of it, wrapped and literal,
and follows the cursor.

Below the table it takes at most PREVIEW_LINES lines (fewer on a short screen, where the table
needs the rows); when the text is longer its last line says how much is left and that Enter
shows it all. Beside the table (a pane wide enough for both) it takes the pane's height.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import DataTable

from ari_mem_tui.render.text import clean, short_id
from ari_mem_tui.tui.rows import RowDetail
from ari_mem_tui.tui.screens.entry import field_value
from ari_mem_tui.tui.tables import VimTable, view_title

PREVIEW_LINES = 9  # below a table, on a screen 32 rows high or more
SHORT_LINES = 4  # below a table, on a shorter screen (80×24)
SHORT_BELOW = 32  # screen rows
FIELD_CELLS = 40  # a field longer than this is left to the row's view (Enter)
NODE_FIELDS = ("node", "by", "target")  # fields that hold a node id: shown short


def head_line(detail: RowDetail) -> Text:
    """The row's short fields in one line: `replayed hit · rank 1 · glob 0 · score 1.00 …`."""
    head = Text(clean(detail.title, False), style="bold")
    for name, value in detail.fields:
        shown = field_value(value)
        if name in NODE_FIELDS and isinstance(value, str):
            shown = short_id(value)  # as the tables show a node
        if shown == "–" or "\n" in shown or len(shown) > FIELD_CELLS:
            continue
        head.append(f" · {name} ", style="bright_black")
        head.append(shown)
    return head


BESIDE_FROM = 150  # pane columns: this wide, the preview goes beside the table, not below


class RowPreview(Widget):
    """The whole text of one table row; hidden when no row is under a cursor. The pane that
    holds it calls `fit` when it is resized: beside its table when it is wide enough."""

    DEFAULT_CSS = """
    RowPreview {
        dock: bottom;
        height: auto;
        padding: 0 1;
        background: $boost;
    }
    RowPreview.-beside {
        dock: right;
        width: 45%;
        height: 1fr;
        margin-left: 1;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.detail: RowDetail | None = None

    def show(self, detail: RowDetail | None) -> None:
        if detail == self.detail:
            return
        self.detail = detail
        self.display = detail is not None
        self.refresh(layout=True)

    def fit(self, pane_width: int) -> None:
        self.set_class(pane_width >= BESIDE_FROM, "-beside")

    @property
    def beside(self) -> bool:
        return self.has_class("-beside")

    def _max_lines(self) -> int:
        if self.beside:
            return max(1, self.size.height)
        return SHORT_LINES if self.app.size.height < SHORT_BELOW else PREVIEW_LINES

    def _lines(self, width: int) -> list[Text]:
        """The head line, then the text wrapped to `width`, cut to the lines there are room for
        (the last one then says how many more there are)."""
        if self.detail is None or width <= 0:
            return []
        head = head_line(self.detail)
        head.truncate(width, overflow="ellipsis")
        body = Text(clean(self.detail.text) if self.detail.text else "(no text recorded)")
        wrapped = list(body.wrap(Console(width=width, legacy_windows=False), width))
        room = self._max_lines() - 1
        if len(wrapped) > room:
            left = len(wrapped) - room + 1
            more = Text(
                f"… {left} more line{'s' if left != 1 else ''}: Enter shows all",
                style="italic bright_black",
            )
            more.truncate(width, overflow="ellipsis")
            wrapped = [*wrapped[: max(0, room - 1)], more]
        return [head, *wrapped]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:  # noqa: ARG002 - Textual's
        return len(self._lines(width))

    def render(self) -> Text:
        return Text("\n").join(self._lines(self.size.width))


class Previewed:
    """Mixed into a pane of tables (Hits, Writes, Audit): its `RowPreview` shows the row under
    the cursor of the table that has the focus, else of its main table (`PREVIEWED`). The pane
    gives a row's fields and text with `row_detail`, the same its Enter view shows."""

    PREVIEWED = ""  # the id of the table previewed while none of the pane's tables has focus
    base_title: Text | None = None  # the pane's title before its tables' filters and orders

    def set_title(self, base: Text) -> None:
        """The pane's border title: `base`, then what each of its tables shows of its rows
        when a filter or an order is set (`3 of 12 rows · filter 'x'`, tui/tables.py)."""
        self.base_title = base
        main = self.query_one(f"#{self.PREVIEWED}", VimTable)
        self.border_title = view_title(base, self.query(VimTable), main)  # type: ignore[attr-defined]

    def on_vim_table_view_changed(self, event: VimTable.ViewChanged) -> None:
        event.stop()
        if self.base_title is not None:
            self.set_title(self.base_title)
        if event.table.has_focus or event.table.id == self.PREVIEWED:
            self.update_preview(event.table)

    def row_detail(self, table_id: str, key: str) -> RowDetail | None:
        raise NotImplementedError

    @property
    def row_preview(self) -> RowPreview:
        return self.query_one(RowPreview)

    def update_preview(self, table: VimTable | None = None) -> None:
        """Preview `table`'s row under the cursor (default: the focused or the main table)."""
        if table is None:
            focused = self.screen.focused
            table = (
                focused
                if isinstance(focused, VimTable) and focused in self.query(VimTable)
                else None
            )
        if table is None:
            table = self.query_one(f"#{self.PREVIEWED}", VimTable)
        key = table.current_key if not table.has_class("empty") else None
        self.row_preview.show(self.row_detail(table.id or "", key) if key is not None else None)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        table = event.data_table
        focused = self.screen.focused
        if table is focused or (table.id == self.PREVIEWED and not isinstance(focused, VimTable)):
            self.update_preview(table)  # type: ignore[arg-type]

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, VimTable):
            self.update_preview(event.widget)

    def on_resize(self, event: events.Resize) -> None:
        self.row_preview.fit(event.size.width)
