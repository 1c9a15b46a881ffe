"""A DataTable with vim keys, and a helper to fill it with safe cells.

Every table can be questioned as in k9s: `/` filters its rows (a box above it; the count and
the filter go into its pane's title; Esc clears it), `S` (or a click on a header) sorts it by a
column, `x` writes the rows it shows as CSV. The filter, the order and the CSV are
render/table.py's (the CLI's `writes --filter --sort --csv` call the same); a table keeps what
it was filled with and shows it through its `view`, so a new fill (another node) keeps them.

An empty table is no focus stop (Tab, `]`, 1–6 pass it by; one emptied under the focus passes
it on to the next stop of its pane), and a pane that holds one table stands in for it while it
is empty, so its tab still takes the focus, its keys and its lit border.

Narrow or wide, as k9s does (`z`, the app's `wide_columns`): narrow (the default) keeps the
columns a reader needs and gives the text column what they leave of the pane, so a table never
scrolls sideways; wide shows every column (those a pane names `wide_only` too) and WIDE_TEXT
characters of text, scrolling sideways. A row's whole text is one key away in both (Enter).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from typing import ClassVar, Self

from rich.text import Text
from textual.actions import SkipAction
from textual.binding import BindingType
from textual.containers import ScrollableContainer, Vertical
from textual.css.scalar import Unit
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import DataTable, Input

from ari_mem_tui.render.table import TableView, next_sort, sorted_by
from ari_mem_tui.render.text import preview
from ari_mem_tui.tui import keys

MIN_TEXT = 4  # narrow: the text column is never cut below this (the table scrolls instead):
# a few letters and its `…` beside an 80-column tree; wider, the pane clipped it with no `…`
WIDE_TEXT = 200  # wide: characters of text shown; the whole text: Enter
Rows = Sequence[tuple[str, list[object]]]
# what `fill` was last given: columns, rows, reserve, wide_only, limit (to fill again)
Fill = tuple[list[str], Rows, bool, Collection[str], int | None]


class LazyRows(Sequence[tuple[str, list[object]]]):
    """A table's rows made as they are read, `make(index, item)` each: a table cut to its
    first rows (the whole run's 2,000 writes, a 10,000-node run's health) makes only those,
    unless its reader filters or sorts it; then every row is made, so the filter finds a row
    past the cut too."""

    def __init__(self, items: Sequence[object], make: Callable[[int, object], tuple[str, list]]):
        self.items, self.make = items, make

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self.make(i, self.items[i]) for i in range(*index.indices(len(self.items)))]
        return self.make(index, self.items[index])


class VimTable(DataTable):
    """Row-cursor table: j/k/g/G move, like the tree; `/` filters, `S` sorts, `x` exports."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.TABLE)
    # what the reader asked of the rows: a filter, a column's order (render/table.py)
    view: var[TableView] = var(TableView, init=False)

    class ViewChanged(Message):
        """The rows shown changed by the table's filter or order (its pane retitles)."""

        def __init__(self, table: VimTable) -> None:
            super().__init__()
            self.table = table

    def __init__(self, label: str = "", **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.label = label  # what a title calls the table beside its pane's main one ("missed")
        self._generation = 0  # row keys are fresh on every fill: DataTable caches by key
        self._last_fill: Fill | None = None
        self._filled_as: tuple[int, bool] = (0, False)  # (pane width, wide) of the last fill
        self._longest_text = 0  # cells of the last column's longest cell (or its header)
        self.shown_rows: list[tuple[str, list[object]]] = []  # through the view, in its order
        self.matched = 0  # rows the view keeps (more than are shown when a limit cuts them)
        self.wanted_key: str | None = None  # the row the cursor goes to when a fill has it

    def on_mount(self) -> None:
        if hasattr(self.app, "wide_columns"):
            self.watch(self.app, "wide_columns", self._refit, init=False)

    @property
    def wide(self) -> bool:
        return bool(getattr(self.app, "wide_columns", False))

    def fill(
        self,
        columns: list[str],
        rows: Iterable[tuple[str, list[object]]],
        reserve: bool = False,
        wide_only: Collection[str] = (),
        limit: int | None = None,
    ) -> None:
        """Replace everything; `rows` are (key, cells); str cells are made safe one-liners.

        With `reserve` true the last column is the text: narrow, as wide as the other columns
        leave of the pane's width, so the table fits its pane instead of scrolling sideways;
        wide, WIDE_TEXT characters. Its cells hold WIDE_TEXT characters either way and are cut
        (`…`) to the column as they are drawn, so a new width (a pane shown or hidden, the tree
        folding away) changes one column's width instead of filling the table again. Columns
        named in `wide_only` are shown only when wide. With `limit`, the first `limit` rows
        that the reader's filter keeps, in its order, are shown (`rows` a LazyRows: only those
        are made, when no filter or order is set)."""
        if not isinstance(rows, Sequence):
            rows = list(rows)
        super().clear(columns=True)  # not self.clear: that forgets what this fill is given
        self._last_fill = (columns, rows, reserve, wide_only, limit)
        self._generation += 1
        pane, wide = self._pane_width(), self.wide
        self._filled_as = (pane, wide)
        rows = self.shown_rows = self._through_view(columns, rows, limit)
        shown = [i for i, c in enumerate(columns) if wide or c not in wide_only]
        columns = [columns[i] for i in shown]
        prepared = prepared_rows(rows, shown, reserve)
        # explicit widths: DataTable's auto-width can paint rows before it measured them
        for index, column in enumerate(columns):
            width = max([len(column)] + [t[index].cell_len for _, t in prepared if index < len(t)])
            self.add_column(column, key=column, width=width)
            self._longest_text = width  # the last column's, in the end
        if columns:
            self._fit_text_column()
        for key, texts in prepared:
            self.add_row(*texts, key=f"{self._generation}|{key}")
        self._go_to_wanted()
        self._settle_focus()

    # ---- the reader's view: filter, order ----

    def _through_view(self, columns: list[str], rows: Rows, limit: int | None) -> list:
        """The rows to show: through the reader's filter and order (every row is made: they
        look past the cut), then the first `limit`; `matched` counts what the filter kept."""
        if self.view.active:
            kept = self.view.apply(columns, list(rows))
            self.matched = len(kept)
        else:
            kept = list(rows[:limit] if limit is not None else rows)
            self.matched = len(rows)
        return kept[:limit] if limit is not None else kept

    @property
    def columns_filled(self) -> list[str]:
        """Every column of the last fill (the wide-only ones too), for the sort and the CSV."""
        return list(self._last_fill[0]) if self._last_fill else []

    @property
    def total_rows(self) -> int:
        return len(self._last_fill[1]) if self._last_fill else 0

    def view_words(self) -> str:
        """`3 of 12 rows · filter 'roof' · sorted by score ↓`, "" when nothing is asked."""
        return self.view.words(self.matched, self.total_rows)

    def watch_view(self) -> None:
        """Show the rows through the new view, the cursor kept on its row when it is shown."""
        if self._last_fill is not None:
            keep = self.current_key
            self.fill(*self._last_fill)
            if keep is not None:
                self.go_to_key(keep)
        self.post_message(self.ViewChanged(self))

    def set_filter(self, needle: str) -> None:
        self.view = replace(self.view, needle=needle)

    def action_filter_rows(self) -> None:
        """`/`: the filter box above the table, holding the filter (typing filters at once)."""
        box = self._filter_box()
        box.value = self.view.needle
        box.display = True
        box.focus()

    def _filter_box(self) -> TableFilter:
        parent = self.parent
        assert isinstance(parent, Widget)
        for box in parent.query_children(TableFilter):
            if box.table is self:
                return box
        box = TableFilter(self)
        parent.mount(box, before=self)
        return box

    def action_clear_table_filter(self) -> None:
        """Esc on a filtered table clears the filter; on one without, Esc does what it does
        elsewhere (back to the tree, or closes the view)."""
        if not self.view.needle.strip():
            raise SkipAction
        self.set_filter("")
        self.notify("filter cleared")

    def action_cycle_sort(self) -> None:
        """`S`: the next order (render/table.py `next_sort`)."""
        self.view = next_sort(self.view, self._sortable())

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it (again: the other way; a third time: the
        table's own order)."""
        event.stop()
        column = str(event.column_key.value or "")
        if column in self.columns_filled:
            self.view = sorted_by(self.view, column)

    def _sortable(self) -> list[str]:
        """The columns the sort key goes through: the ones shown, in their order."""
        return [str(column.key.value) for column in self.ordered_columns]

    def action_export_csv(self) -> None:
        """`x`: the rows shown, as CSV (the app asks first, naming the file)."""
        if not self.shown_rows:
            self.notify("no rows to write", severity="warning")
            return
        self.post_message(ExportTable(self))

    def go_to_key(self, key: str) -> bool:
        """The cursor to the row filled with `key`, if it is shown."""
        for index, (row_key, _) in enumerate(self.shown_rows):
            if row_key == key:
                self.move_cursor(row=index)
                return True
        return False

    def _go_to_wanted(self) -> None:
        """A row asked for before its rows came (going back in the history): the first fill
        after the ask has it, if it is shown there."""
        if self.wanted_key is not None:
            self.go_to_key(self.wanted_key)
            self.wanted_key = None

    def _fit_text_column(self) -> None:
        """Give the last column its width: narrow, what the others leave of the pane (2 cells
        of padding each, a scrollbar), never below MIN_TEXT; wide, WIDE_TEXT; and never more
        than its longest cell."""
        last = self._last_fill
        order = self.ordered_columns
        if last is None or not order:
            return
        text, longest = order[-1], self._longest_text
        if not last[2]:
            width = min(longest, 70)
        elif self.wide:
            width = min(longest, WIDE_TEXT)
        else:
            used = sum(c.width for c in order[:-1])
            room = self._pane_width() - used - 2 * len(order) - self._scrollbar_room()
            width = min(longest, max(MIN_TEXT, room))
        text.width = width
        total = sum(c.get_render_width(self) for c in order)
        self.virtual_size = Size(total, self.virtual_size.height)
        self.notify_style_update()  # cells are cut to their column as drawn: draw them again

    def _scrollbar_room(self) -> int:
        """Cells kept for the vertical scrollbar: none when every row fits (the rows and the
        header within the table's max height, else its height), as a short table never shows
        one; else its size (kept whether shown or not while the height is unknown)."""
        rows = len(self.shown_rows) + 1
        limit = self.styles.max_height
        if limit is not None and limit.unit == Unit.CELLS:
            fits = rows <= limit.value
        else:
            fits = 0 < rows <= self.scrollable_content_region.height
        return 0 if fits else self.styles.scrollbar_size_vertical

    def clear(self, columns: bool = False) -> Self:
        """Empty: also forget the last fill, which a resize or `z` would otherwise bring back."""
        self._last_fill = None
        self.shown_rows, self.matched = [], 0
        super().clear(columns)
        self._settle_focus()
        return self

    def collapse(self, collapsed: bool) -> None:
        """Fold the table to nothing (the `empty` class, app.tcss) or open it again: a DataTable
        whose `display` flips is not repainted (Textual 8.2.8)."""
        self.set_class(collapsed, "empty")
        self._settle_focus()

    def allow_focus(self) -> bool:
        """No rows, or collapsed: no focus stop."""
        return self.row_count > 0 and not self.has_class("empty") and super().allow_focus()

    def _settle_focus(self) -> None:
        """After the rows changed: focus left on the table, now empty, goes to the next stop of
        its pane; focus on a pane that stood in for it while it was empty comes back to it."""
        if not self.is_attached:
            return
        screen = self.screen
        focused = screen.focused
        if focused is self and not self.allow_focus():
            screen.set_focus(next_stop(self))
        elif focused in self.ancestors and not focused.allow_focus() and self.allow_focus():
            screen.set_focus(self)

    def _pane_width(self) -> int:
        parent = self.parent
        if parent is None:
            return 0
        return parent.scrollable_content_region.width  # type: ignore[union-attr]

    def on_resize(self) -> None:
        """Refit the text column when the pane's width changes (e.g. a hidden tab is shown)."""
        self._refit()

    def _refit(self) -> None:
        """Fit again when the pane's width or the wide mode has changed: a new width resizes
        the text column; wide or narrow again, the same rows are filled again (other columns),
        the cursor kept on its row."""
        last = self._last_fill
        now = (self._pane_width(), self.wide)
        if last is None or self._filled_as == now:
            return
        if not last[2] and not last[3]:
            return  # nothing in it depends on the width or the mode
        if self._filled_as[1] == now[1]:
            self._filled_as = now
            self._fit_text_column()
            return
        row = self.cursor_row
        self.fill(*last)
        if 0 <= row < self.row_count:
            self.move_cursor(row=row)

    # ---- paging: a table inside a pane that scrolls (Hits) lets the pane page past it ----

    def _outer(self, paging: bool) -> Widget | None:
        """The scrolling pane around this table (Hits holds several tables and findings), when
        the keys should move it: Home/End always, PageUp/PageDown when the table shows all
        its rows (nothing of its own to page through)."""
        if paging and self.max_scroll_y > 0:
            return None
        for ancestor in self.ancestors:
            if isinstance(ancestor, ScrollableContainer):
                return ancestor if ancestor.max_scroll_y > 0 else None
        return None

    def _page(self, paging: bool, move: str, own: Callable[[], None]) -> None:
        """`move` the scrolling pane around the table (`_outer`), else the table's `own` move."""
        if pane := self._outer(paging):
            getattr(pane, move)(animate=False)
        else:
            own()

    def action_page_down(self) -> None:
        self._page(True, "scroll_page_down", super().action_page_down)

    def action_page_up(self) -> None:
        self._page(True, "scroll_page_up", super().action_page_up)

    def action_scroll_home(self) -> None:
        self._page(False, "scroll_home", super().action_scroll_home)

    def action_scroll_end(self) -> None:
        self._page(False, "scroll_end", super().action_scroll_end)

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


def prepared_rows(
    rows: Iterable[tuple[str, list[object]]], shown: list[int], reserve: bool
) -> list[tuple[str, list[Text]]]:
    """Each row's cells of the `shown` columns as safe one-line texts (the last: the text)."""
    out = []
    for key, cells in rows:
        kept = [cells[i] for i in shown if i < len(cells)]
        if kept:
            out.append((key, [cell_text(c) for c in kept[:-1]] + [text_cell(kept[-1], reserve)]))
    return out


def cell_text(value: object, width: int = 70) -> Text:
    if isinstance(value, Text):
        return value
    if value is None:
        return Text("–", style="bright_black")
    return Text(preview(value, width))


def text_cell(value: object, reserve: bool) -> Text:
    """The last column's cell: WIDE_TEXT characters, cut with `…` to the column as drawn."""
    text = cell_text(value, WIDE_TEXT if reserve else 70).copy()
    text.no_wrap, text.overflow = True, "ellipsis"
    return text


class ExportTable(Message):
    """`x` on a table: write the rows it shows as CSV (the app asks first)."""

    def __init__(self, table: VimTable) -> None:
        super().__init__()
        self.table = table


class TableFilter(Input):
    """The filter box of one table, above it: what is typed filters the rows at once; Enter
    keeps the filter and goes back to the table, Esc clears it."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.TABLE_BOX)
    DEFAULT_CSS = "TableFilter { height: 3; }"

    def __init__(self, table: VimTable) -> None:
        super().__init__(placeholder="filter rows (Enter keeps, Esc clears; !text: without)")
        self.table = table

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.table.set_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close()

    def action_cancel(self) -> None:
        self.table.set_filter("")
        self._close()

    def _close(self) -> None:
        """Back to the table; a filter that kept no row leaves it no focus stop: the next."""
        table = self.table
        target = table if table.allow_focus() else next_stop(table)
        self.display = False
        if target is not None:
            target.focus()


def view_title(base: Text, tables: Iterable[VimTable], main: VimTable | None = None) -> Text:
    """A pane's title with what its tables' readers asked (filter, order), each table but the
    pane's `main` one named, right after the pane's name and node, where a narrow pane does not
    cut it: `Hits · b1000001 · 3 of 12 rows · filter 'x' · as of start · …`."""
    said = []
    for table in tables:
        words = table.view_words()
        if words:
            named = "" if table is main or not table.label else f"{table.label}: "
            said.append(named + words)
    if not said:
        return base
    parts = base.plain.split(" · ")
    at = len(" · ".join(parts[:2])) if len(parts) > 2 else len(base.plain)
    return Text.assemble(base[:at], (" · " + " · ".join(said), "bold"), base[at:])


class TablePane(Vertical):
    """A pane around one VimTable (Writes, Audit): while the table is empty the pane is the
    focus stop in its place, so `]` and 1–6 still land in its tab."""

    def allow_focus(self) -> bool:
        return not any(table.allow_focus() for table in self.query(VimTable))


def next_stop(widget: Widget, within: Widget | None = None) -> Widget | None:
    """Where the focus goes from `widget`, which cannot take it: the next stop after it in the
    nearest container around it that has one (going round that container, as Tab does), up to
    `within` (default: the screen). Never a text box: it would take the letters meant as
    commands."""
    chain = [w for w in widget.screen.focus_chain if w is not widget and not isinstance(w, Input)]
    for container in widget.ancestors:
        if not isinstance(container, Widget):
            break
        order = {w: i for i, w in enumerate(container.walk_children(with_self=True))}
        inside = [w for w in chain if w in order]
        if inside:
            mine = order[widget]
            return min(inside, key=lambda w: (order[w] < mine, order[w]))
        if container is within:
            break
    return None
