"""The bulk of a run as columns: memory entries, access events and the rows of read results.

Why: a 10k-node run holds 200k entries, 230k access events and 600k result rows. As one Python
object each (plus a dict per row, a str per id) they took ~600 MB and most of the load's time;
as columns they take a tenth of that, and the run index (checkpoint/index.py) stores the same
columns, so a reopen maps them instead of decoding anything.

The layout:
- every field is one column: a stdlib `array` (or, on a reopen, a memoryview of the mapped
  index, cast to the same type), one item per row;
- strings that recur (node ids, passage ids, queries, collections, file names) are int codes
  into one `StringTable` per run, shared by the entries and the events (so an event's
  `entry_id` and an entry's `letta_id` are the same code); -1 stands for None;
- free text (entry texts, metadata JSON, write previews) lives in one UTF-8 buffer per column
  with a start and an end per row (`Texts`), decoded when a row is read;
- numbers that may be None or of any size (`OptInts`) are int64 with a sentinel and a side
  dict for the rest;
- what only the lenient readers produce (a metadata value JSON cannot round-trip, unknown keys,
  a result row of another shape) is kept as Python objects in a side dict by row: rare.

Why stdlib `array` and not numpy or Arrow: the columns need no arithmetic of their own, only
storage, and `array` costs nothing to import (numpy ~0.1 s, Arrow ~0.3 s and ~100 MB installed),
which keeps `summary` of a small run quick. Every column exposes the buffer protocol, so the
bulk consumers that do want vector arithmetic (the replay index, the pool, health) wrap a column
in numpy without a copy (`numpy.frombuffer`).

The narrow API every consumer reads through:
- `Entries` and `Events` are Sequences of light views made on demand (`entries[i]` is an
  `EntryView` with `.text`, `.node_id` …, `events[i]` an `EventView`); a consumer that touches
  few rows reads views, and nothing depends on a record being a Python object;
- bulk consumers read the columns (`Entries.kind`, `.node`, `.ts`, `Events.op`, `.reader` …)
  and the string table's codes;
- `entries_of` / `events_of` build tables from `MemoryEntry` / `AccessEvent` records
  (hand-built runs in tests, a few sources), `EntryBuilder` / `EventBuilder` a batch of
  well-formed lines at a time, one sequence per field (the readers' hot path), or row by row.

Entry ids (ours: backups carry none) are computed per row when first read (`Entries.id_at`):
a load needs none of them, and a SHA-1 per entry was a tenth of its time.

Where each part lives (every name below is imported from here): `encoding` (codes, JSON and UTF-8
bytes, packed int columns), `strings` (the string table, groups of rows by a code), `texts`
(text columns, optional integers), `entries` and `events` (the tables and their row views),
`results` (the rows of read results), `builders` (the tables' builders).
"""

from __future__ import annotations

from ari_mem_tui.model.columns.builders import (
    PREFIX_CHARS,
    EntryBuilder,
    EventBuilder,
    entries_of,
    events_of,
)
from ari_mem_tui.model.columns.encoding import (
    INHERIT,
    KIND_CODE,
    KINDS,
    NONE,
    content_id,
    fields_of,
    holding,
    json_value,
    utf8,
)
from ari_mem_tui.model.columns.entries import (
    Entries,
    EntryView,
    entry_row_of_id,
    recode_entries,
    take_entries,
)
from ari_mem_tui.model.columns.events import Events, EventView, recode_events, take_events
from ari_mem_tui.model.columns.results import ResultRows
from ari_mem_tui.model.columns.strings import Groups, StringTable
from ari_mem_tui.model.columns.texts import OptInts, Texts

__all__ = [
    "INHERIT",
    "KINDS",
    "KIND_CODE",
    "NONE",
    "PREFIX_CHARS",
    "Entries",
    "EntryBuilder",
    "EntryView",
    "EventBuilder",
    "EventView",
    "Events",
    "Groups",
    "OptInts",
    "ResultRows",
    "StringTable",
    "Texts",
    "content_id",
    "entries_of",
    "entry_row_of_id",
    "events_of",
    "fields_of",
    "holding",
    "json_value",
    "recode_entries",
    "recode_events",
    "take_entries",
    "take_events",
    "utf8",
]
