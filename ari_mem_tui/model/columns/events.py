"""A run's access-log events as columns (`Events`), sorted by ts, each row read through an
`EventView`: a joined write's preview and metadata read off its entry, the reader's
attribution and join written in place; rows taken in another order or recoded into another
string table. Built by `builders.EventBuilder`."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import compress
from typing import Any

from ari_mem_tui.model.columns.encoding import (
    DERIVED,
    INHERIT,
    NONE,
    OP_CODE,
    OPS,
    decoded,
    holding,
    json_at,
    writable,
)
from ari_mem_tui.model.columns.entries import Entries, RowTable, entry_row_of_id
from ari_mem_tui.model.columns.results import ResultRows
from ari_mem_tui.model.columns.strings import StringTable, code_map, recode_column
from ari_mem_tui.model.columns.texts import OptInts, Texts
from ari_mem_tui.model.records import AccessEvent


class EventView:
    """One access-log event of an `Events` table, read from its columns when a field is read."""

    __slots__ = ("_i", "_t")

    def __init__(self, table: Events, row: int) -> None:
        self._t, self._i = table, row

    row = property(lambda self: self._i)
    ts = property(lambda self: self._t.ts[self._i])
    op = property(lambda self: OPS[self._t.op[self._i]])
    node_id = property(lambda self: self._t.strings[self._t.node[self._i]])
    collection = property(lambda self: self._t.strings[self._t.coll[self._i]])
    entry_id = property(lambda self: self._t.strings[self._t.eid[self._i]])
    text_preview = property(lambda self: self._t.preview_at(self._i))
    metadata = property(lambda self: json_at(self._t.meta_raw(self._i), self._t.meta_side, self._i))
    query = property(lambda self: self._t.strings[self._t.query[self._i]])
    ancestor_ids = property(lambda self: self._t.ancestors_at(self._i))
    limit = property(lambda self: self._t.limit[self._i])
    results = property(lambda self: self._t.results_at(self._i))
    source = property(lambda self: self._t.strings[self._t.source[self._i]])
    source_line = property(lambda self: self._t.line[self._i])
    extra = property(lambda self: self._t.extra.get(self._i))

    @property
    def reader(self) -> str | None:
        return self._t.strings[self._t.reader[self._i]]

    @reader.setter
    def reader(self, value: str | None) -> None:
        self._t.set_code("reader", self._i, value)

    @property
    def reader_how(self) -> str:
        return self._t.strings[self._t.how[self._i]] or ""

    @reader_how.setter
    def reader_how(self, value: str) -> None:
        self._t.set_code("how", self._i, value)

    @property
    def reader_note(self) -> str:
        return self._t.strings[self._t.note[self._i]] or ""

    @reader_note.setter
    def reader_note(self, value: str) -> None:
        self._t.set_code("note", self._i, value)

    @property
    def joined_entry(self) -> str | None:
        return self._t.joined_at(self._i)

    @joined_entry.setter
    def joined_entry(self, value: str | None) -> None:
        self._t.set_joined(self._i, value)

    @property
    def is_inherit(self) -> bool:
        query = self.query
        return bool(query) and query.startswith(INHERIT)

    def as_record(self) -> AccessEvent:
        return self._t.record(self._i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventView):
            if other._t is self._t and other._i == self._i:
                return True
            return self.as_record() == other.as_record()
        if isinstance(other, AccessEvent):
            return self.as_record() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventView({self.as_record()!r})"


class Events(RowTable):
    """A run's access-log events as columns, sorted by ts (see the module docstring)."""

    _what = "event"

    _view = EventView

    @staticmethod
    def _as_record(other):
        return other.as_record() if isinstance(other, EventView) else other

    def __init__(self, strings: StringTable, **columns: Any) -> None:
        self.strings = strings
        self.ts = columns["ts"]
        self.op = columns["op"]
        self.node = columns["node"]
        self.coll = columns["coll"]
        self.eid = columns["eid"]
        self.preview: Texts = columns["preview"]
        self.meta: Texts = columns["meta"]
        self.meta_side: dict[int, Any] = columns.get("meta_side") or {}
        self.query = columns["query"]
        self.anc_start, self.anc_end, self.anc = (
            columns["anc_start"],
            columns["anc_end"],
            columns["anc"],
        )
        self.limit: OptInts = columns["limit"]
        self.res_start, self.res_end = columns["res_start"], columns["res_end"]
        self.rows: ResultRows = columns["rows"]
        self.source = columns["source"]
        self.line: OptInts = columns["line"]
        self.reader = columns["reader"]
        self.how = columns["how"]
        self.note = columns["note"]  # the attribution's note on a read (code of "": none)
        self.joined = columns["joined"]  # entry row, or -1
        self.joined_ids: dict[int, str] = columns.get("joined_ids") or {}  # ids of no row
        self.extra: dict[int, Any] = columns.get("extra") or {}
        self.entries: Entries | None = None  # the run's entries, which `joined` points into
        # the entry row each joined write's preview (and metadata) are read from (-1: its own),
        # in `derived_from`, the entries of the load (kept when a Letta server's replace them)
        self.derived = columns.get("derived")
        self.derived_from: Entries | None = columns.get("derived_from")
        # the join's keys, from the reader (None once joined): hash of each preview's first
        # PREFIX_CHARS characters, and its length in characters
        self.preview_hash: Any = None
        self.preview_chars: Any = None

    def __len__(self) -> int:
        return len(self.ts)

    def __repr__(self) -> str:
        return f"Events({len(self)} rows)"

    # -- bulk --

    def op_counts(self) -> dict[str, int]:
        """Events per op, counted in C over the op column."""
        op = bytes(self.op)
        return {name: op.count(code) for code, name in enumerate(OPS)}

    def rows_of_op(self, op: str) -> Iterator[int]:
        """The rows of the events of `op` ("read" or "write"), in order (found in C)."""
        return compress(range(len(self)), holding(self.op, OP_CODE[op]))

    def read_hows(self) -> dict[str, int]:
        """How the read events were attributed (`reader_how`), with their counts."""
        counts: dict[int, int] = {}
        how = self.how
        for row in self.rows_of_op("read"):
            code = how[row]
            counts[code] = counts.get(code, 0) + 1
        return {self.strings[code] or "": count for code, count in counts.items()}

    # -- fields --

    def preview_raw(self, row: int) -> memoryview | None:
        """The preview's bytes: its own, or the start of the entry text it was joined to."""
        preview = self.preview
        if preview.starts[row] == DERIVED:
            source = self.derived_from.text.raw(self.derived[row])  # type: ignore[union-attr]
            return source[: preview.ends[row]]  # type: ignore[index]
        return preview.raw(row)

    def preview_at(self, row: int) -> str | None:
        raw = self.preview_raw(row)
        return None if raw is None else decoded(raw)

    def meta_raw(self, row: int) -> memoryview | None:
        """The metadata's JSON bytes: its own, or those of the entry it was joined to."""
        if self.meta.starts[row] == DERIVED:
            return self.derived_from.meta.raw(self.derived[row])  # type: ignore[union-attr]
        return self.meta.raw(row)

    def derive_from(self, entries: Entries, same_meta: bytearray) -> None:
        """Keep no copy of what a joined write shares with its entry (`derived`: the entry row
        of each, or -1; the join checked): the preview, the start of the entry's text, and the
        metadata where its bytes are the entry's (`same_meta`). A 10k-node run's 200k previews
        were 40 MB twice over. The rest is copied into buffers of their own."""
        derived, preview, meta = self.derived, self.preview, self.meta
        own = [row for row in range(len(self)) if derived[row] < 0]
        starts, ends = preview.starts, preview.ends
        lengths = array(  # (a derived row's size; a row derived as it was read holds it)
            "q", [e if s == DERIVED else e - s for s, e in zip(starts, ends, strict=True)]
        )
        self.preview = _compacted(preview, own, array("q", [DERIVED]) * len(self), lengths)
        mine = [row for row in range(len(self)) if not same_meta[row]]
        self.meta = _compacted(
            meta, mine, array("q", [DERIVED]) * len(self), array("q", [DERIVED]) * len(self)
        )
        self.derived_from = entries

    def ancestors_at(self, row: int) -> list[str] | None:
        start = self.anc_start[row]
        if start < 0:
            return None
        strings, anc = self.strings, self.anc
        return [strings[anc[i]] for i in range(start, self.anc_end[row])]  # type: ignore[misc]

    def ancestor_codes(self, row: int) -> Sequence[int] | None:
        start = self.anc_start[row]
        return None if start < 0 else self.anc[start : self.anc_end[row]]

    def results_at(self, row: int) -> list[Any]:
        rows, strings = self.rows, self.strings
        return [rows.row(strings, i) for i in range(self.res_start[row], self.res_end[row])]

    def scores_at(self, row: int) -> list[Any]:
        """The `score` of each of the event's results (None where one has none), as
        `results_at` gives them, without making their dicts."""
        return list(map(self.rows.score_at, range(self.res_start[row], self.res_end[row])))

    def set_code(self, column: str, row: int, value: str | None) -> None:
        target = writable(getattr(self, column), "i")
        setattr(self, column, target)
        target[row] = self.strings.code(value)

    def joined_at(self, row: int) -> str | None:
        target = self.joined[row]
        if target >= 0 and self.entries is not None:
            return self.entries.id_at(target)
        return self.joined_ids.get(row)

    def set_joined(self, row: int, value: str | None) -> None:
        """Point the event at the entry of id `value` (None: at none)."""
        target = NONE
        if value is not None and self.entries is not None:
            target = entry_row_of_id(self.entries, value)
        self.join_row(row, target)
        if target < 0 and value is not None:
            self.joined_ids[row] = value  # (an id no entry of the table has)

    def join_row(self, row: int, target: int) -> None:
        """Point the event at row `target` of `entries` (-1: at none)."""
        self.joined = writable(self.joined, "i")
        self.joined_ids.pop(row, None)
        self.joined[row] = target

    def repoint_joins(self, old: Entries, new: Entries) -> None:
        """Keep the joins when `old`, the entries `joined` points into, give way to `new` (a
        Letta server's): a write joined to an entry stays joined to the entry of the same id
        in `new`, else it keeps that id alone (as a record's `joined_entry` would)."""
        self.entries, joined = new, self.joined
        rows = [row for row, target in enumerate(joined) if target >= 0]
        ids = old.all_ids() if rows else []
        for row in rows:  # (each row read before it is set)
            self.set_joined(row, ids[joined[row]])

    def record(self, row: int) -> AccessEvent:
        strings = self.strings
        return AccessEvent(
            ts=self.ts[row],
            node_id=strings[self.node[row]] or "",
            op=OPS[self.op[row]],  # type: ignore[arg-type]
            collection=strings[self.coll[row]] or "",
            entry_id=strings[self.eid[row]],
            text_preview=self.preview_at(row),
            metadata=json_at(self.meta_raw(row), self.meta_side, row),
            query=strings[self.query[row]],
            ancestor_ids=self.ancestors_at(row),
            limit=self.limit[row],
            results=self.results_at(row),
            source=strings[self.source[row]] or "",
            source_line=self.line[row] or 0,
            reader=strings[self.reader[row]],
            reader_how=strings[self.how[row]] or "",
            reader_note=strings[self.note[row]] or "",
            joined_entry=self.joined_at(row),
            extra=self.extra.get(row),
        )


def _compacted(texts: Texts, rows: list[int], starts: array, ends: array) -> Texts:
    """`texts` with only `rows` kept in a buffer of their own; every other row's start and end
    are those given (DERIVED markers)."""
    buf = bytearray()
    for row in rows:
        data = texts.raw(row)
        if data is None:
            starts[row] = ends[row] = -1
        else:
            starts[row] = len(buf)
            buf += data
            ends[row] = len(buf)
    return Texts(bytes(buf), starts, ends)


def take_events(events: Events, rows: Sequence[int]) -> Events:
    """The rows `rows` of `events`, in that order (buffers and result rows shared)."""

    def ints(column: Any, kind: str = "i") -> array:
        return array(kind, [column[r] for r in rows])

    def side(values: dict[int, Any]) -> dict[int, Any]:
        return {where[r]: v for r, v in values.items() if r in where}

    where = {row: pos for pos, row in enumerate(rows)}
    taken = Events(
        events.strings,
        ts=ints(events.ts, "d"),
        op=bytearray(events.op[r] for r in rows),
        node=ints(events.node),
        coll=ints(events.coll),
        eid=ints(events.eid),
        preview=events.preview.take(rows),
        meta=events.meta.take(rows),
        meta_side=side(events.meta_side),
        query=ints(events.query),
        anc_start=ints(events.anc_start, "q"),
        anc_end=ints(events.anc_end, "q"),
        anc=events.anc,
        limit=events.limit.take(rows),
        res_start=ints(events.res_start, "q"),
        res_end=ints(events.res_end, "q"),
        rows=events.rows,
        source=ints(events.source),
        line=events.line.take(rows),
        reader=ints(events.reader),
        how=ints(events.how),
        note=ints(events.note),
        joined=ints(events.joined),
        joined_ids=side(events.joined_ids),
        extra=side(events.extra),
    )
    taken.entries = events.entries
    if events.derived is not None:
        taken.derived = array("i", [events.derived[r] for r in rows])
        taken.derived_from = events.derived_from
    if events.preview_hash is not None:
        taken.preview_hash = array("q", [events.preview_hash[r] for r in rows])
        taken.preview_chars = array("i", [events.preview_chars[r] for r in rows])
    return taken


def recode_events(events: Events, strings: StringTable) -> Events:
    if events.strings is strings:
        return events
    mapping = code_map(events.strings, strings)
    recoded = take_events(events, range(len(events)))
    recoded.strings = strings
    for name in ("node", "coll", "eid", "query", "anc", "source", "reader", "how", "note"):
        setattr(recoded, name, recode_column(getattr(events, name), mapping))
    rows = events.rows
    recoded.rows = ResultRows(
        {key: recode_column(codes, mapping) for key, codes in rows.codes.items()},
        rows.score,
        rows.score_state,
        rows.count,
        rows.count_state,
        rows.side,
    )
    return recoded
