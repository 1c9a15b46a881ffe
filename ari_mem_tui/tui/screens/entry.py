"""A memory entry in full: text, metadata, provenance."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ari_mem_tui.model import MemoryEntry
from ari_mem_tui.render.text import clean, fmt_ts, pretty_json
from ari_mem_tui.tui import keys


def entry_text(entry: MemoryEntry) -> Text:
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


class EntryScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("y", "copy", "Copy text"),
        *keys.bindings(keys.VIEW),
    ]

    def __init__(self, entry: MemoryEntry) -> None:
        super().__init__()
        self.entry = entry

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="entry-body"):
            yield Static(entry_text(self.entry), id="entry-text")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.entry.text)
        self.notify("entry text copied")

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query("#entry-body").results(VerticalScroll), direction)
