"""What a table row is when it is shown in full or listed as a problem: `RowDetail` (any table's
row, for the entry view) and `AuditRow` (a line of the Audit tab). Plain data, below the widgets,
screens and messages that pass them around, so none of those imports another for them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ari_mem_tui.model import EntryView, MemoryEntry


@dataclass(frozen=True)
class RowDetail:
    """A table row to view in full: its fields (name, value) and its text; `node_id` is the
    node `o` goes to; `entry` is the memory entry the row shows, when it is known."""

    title: str
    fields: tuple[tuple[str, object], ...] = ()
    text: str = ""
    node_id: str | None = None
    entry: MemoryEntry | EntryView | None = field(default=None, compare=False)


@dataclass
class AuditRow:
    severity: str  # "error" | "warning" | "info"
    kind: str  # "problem", "leak", "scope violation", "rejected write", …
    node_id: str | None
    text: str
