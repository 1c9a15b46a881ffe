"""One row in full: a memory entry (text, metadata, provenance), or any table's row (a write,
an audit finding, a hit), every field of the row above its whole text, wrapped.

Every table of the app opens its rows here (Enter or `v`), so nothing a table cuts is out of
reach. Everything shown is data and literal: `clean` makes control characters visible, and the
text is put in `rich.text.Text`, never parsed as markup.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import EntryView, MemoryEntry
from ari_mem_tui.render.text import clean, fmt_ts, pretty_json, short_id
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.rows import RowDetail


def entry_text(entry: MemoryEntry | EntryView) -> Text:
    out = Text()
    out.append(f"{clean(entry.id, False)}\n", style="bold")
    out.append(f"{entry.kind}  node {clean(entry.node_id or '–', False)}", style="cyan")
    if entry.mem_kind:
        out.append(f"  type {clean(entry.mem_kind, False)}", style="magenta")
    if entry.step is not None:
        out.append(f"  step {entry.step}")
    out.append(f"\nwritten {fmt_ts(entry.ts)}   from {clean(entry.source, False)}")
    if entry.source_line:
        out.append(f" line {entry.source_line}")
    if entry.letta_id:
        out.append(f"   passage {clean(entry.letta_id, False)}")
    if entry.partial:
        out.append("\npartial: this is a preview or a capped copy", style="yellow")
    out.append("\n\n")
    out.append(clean(entry.text))
    if entry.metadata:
        out.append("\n\nmetadata\n", style="bold cyan")
        out.append(clean(pretty_json(entry.metadata)))
    return out


def field_value(value: object) -> str:
    """A field as one literal line (a `Text` cell keeps its plain text, not its style)."""
    if isinstance(value, Text):
        value = value.plain
    if value is None or value == "":
        return "–"
    return clean(value)


def row_text(detail: RowDetail) -> Text:
    """The row's fields, then its whole text (or the entry it shows, in full)."""
    if detail.entry is not None and not detail.fields:
        return entry_text(detail.entry)
    out = Text()
    out.append(clean(detail.title, False) + "\n", style="bold")
    width = max((len(name) for name, _ in detail.fields), default=0)
    for name, value in detail.fields:
        out.append(f"{name:<{width}}  ", style="cyan")
        out.append(field_value(value) + "\n")
    if detail.node_id:
        out.append(f"o: go to node {short_id(detail.node_id)}\n", style="bright_black")
    out.append("\n")
    if detail.entry is not None:
        out.append_text(entry_text(detail.entry))
    else:
        out.append(clean(detail.text) if detail.text else "(no text recorded)")
    return out


class EntryScreen(ModalScreen[str | None]):
    """Dismissed with the node to go to (`o`), else None."""

    # Esc, y, o; then Y (why the node did (not) see it), the app's, shown here
    BINDINGS: ClassVar[list[BindingType]] = [*keys.bindings(keys.ENTRY), *keys.bindings(keys.VIEW)]

    def __init__(self, entry: MemoryEntry | EntryView | RowDetail) -> None:
        super().__init__()
        if not isinstance(entry, RowDetail):
            entry = RowDetail("memory entry", text=entry.text, entry=entry)
        self.detail = entry
        self.entry = entry.entry

    @property
    def text(self) -> str:
        return self.entry.text if self.entry is not None else self.detail.text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="entry-body"):
            yield Static(row_text(self.detail), id="entry-text")
        yield KeyBar()  # its own keys (Esc closes, y copies, o goes), not the tree's under it

    def entry_under_cursor(self) -> str | None:
        """`Y` here (the app's): why the node did (not) see this entry."""
        return self.entry.id if self.entry is not None else None

    def action_close(self) -> None:
        self.dismiss(None)

    def action_go_to_node(self) -> None:
        if self.detail.node_id:
            self.dismiss(self.detail.node_id)
        else:
            self.notify("this row names no node of the run")

    def action_copy(self) -> None:
        self.app.copy_text(self.text, "the entry's text")  # type: ignore[attr-defined]

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query("#entry-body").results(VerticalScroll), direction)


def entry_view(ckpt: Checkpoint | None, entry_id: str, row: RowDetail | None) -> EntryScreen | None:
    """The view of entry `entry_id` (`OpenEntry`): `row`'s fields above it when it was opened
    from a table row, the row alone (saying so) when the entry is not in the loaded memory;
    None when there is neither."""
    entry = ckpt.entries_by_id.get(entry_id) if ckpt else None
    if row is None:
        return EntryScreen(entry) if entry is not None else None
    if entry is None:
        row = replace(row, title=row.title + " (entry not in the loaded memory)")
    return EntryScreen(replace(row, entry=entry))
