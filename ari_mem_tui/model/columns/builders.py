"""How the tables are built: `EntryBuilder` and `EventBuilder` take rows a batch at a time
(one sequence per field: the readers' hot path) or one at a time (pending tuples turned into
columns in bulk); `entries_of` / `events_of` make a table of records."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate, chain, islice, pairwise, repeat
from operator import getitem, le
from typing import Any

from ari_mem_tui.model.columns.encoding import (
    DERIVED,
    KIND_CODE,
    NAN,
    NONE,
    OP_CODE,
    fields_of,
    json_bytes,
    packed,
    put,
)
from ari_mem_tui.model.columns.entries import Entries, take_entries
from ari_mem_tui.model.columns.events import Events, take_events
from ari_mem_tui.model.columns.results import ResultRows
from ari_mem_tui.model.columns.strings import StringTable
from ari_mem_tui.model.columns.texts import OptInts, TextsBuilder


class _Pending:
    """What both builders share: rows added one at a time wait in `pending` as tuples, one
    field each, and are turned into the columns every PENDING rows (`_append` over one
    sequence per field: codes, encoding and hashes in bulk, not per row)."""

    PENDING = 4096
    pending: list[tuple]
    _append: Callable[..., None]  # each builder's own: one sequence per field

    def flush(self) -> None:
        """The pending rows into the columns."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        self._append(*zip(*pending))


class EntryBuilder(_Pending):
    """Entries appended a batch at a time (`add_rows`: one sequence per field), or row by row:
    each row a tuple in `pending`, turned into the columns every PENDING rows (codes, encoding
    and hashes in bulk, not per row)."""

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        self.kind = bytearray()
        self.node = array("i")
        self.ts = array("d")
        self.text = TextsBuilder()
        self.meta = TextsBuilder()
        self.meta_side: dict[int, Any] = {}
        self.source = array("i")
        self.line = OptInts()
        self.letta = array("i")
        self.step = OptInts()
        self.partial = bytearray()
        self.ckpt = array("i")
        self.ids: list[str | None] = []
        self.prefix = array("q")  # hash of each text's first PREFIX_CHARS (the join's key)
        # (kind, node_id, text, meta bytes, ts, source, line, step, partial, letta_id,
        # ari_checkpoint, entry id): strings not coded yet
        self.pending: list[tuple] = []

    def __len__(self) -> int:
        return len(self.kind) + len(self.pending)

    def meta_bytes(self, row: int) -> bytes | None:
        """A flushed row's metadata JSON bytes (None: none, or a value kept as it is)."""
        start = self.meta.starts[row]
        if start < 0 or row in self.meta_side:
            return None
        return bytes(self.meta.buf[start : self.meta.ends[row]])

    def add(
        self,
        kind: int,
        node_id: str,
        text: str,
        meta: bytes | None,
        ts: float | None,
        source: str,
        line: int | None,
        step: int | None,
        partial: bool = False,
        letta_id: str | None = None,
        ari_checkpoint: str | None = None,
        metadata: Any = None,
        entry_id: str | None = None,
    ) -> None:
        """One row; `meta` the metadata's JSON bytes (a well-formed backup line's: the hot path
        when a batch is read line by line), or `metadata` a value (kept as JSON when it
        round-trips, else as it is)."""
        if meta is None:
            meta = json_bytes(metadata)
            if meta is None:
                self.meta_side[len(self)] = metadata
        self.pending.append(
            (kind, node_id, text, meta, ts, source, line, step, partial, letta_id,
             ari_checkpoint, entry_id)
        )  # fmt: skip
        if len(self.pending) >= self.PENDING:
            self.flush()

    def add_record(self, record: Any) -> None:
        self.add(
            KIND_CODE[record.kind],
            record.node_id,
            record.text,
            None,
            record.ts,
            record.source,
            record.source_line,
            record.step,
            record.partial,
            record.letta_id,
            record.ari_checkpoint,
            metadata=record.metadata,
            entry_id=record.id,
        )

    def add_rows(
        self,
        kind: Sequence[int],
        node: Sequence[str],
        text: Sequence[str],
        meta: Sequence[bytes],
        ts: Sequence[float],
        source: str,
        first: int,
        step: Sequence[int | None],
    ) -> None:
        """Rows of well-formed backup lines numbered `first`, `first + 1` …, one sequence per
        field (the batch path of the reader: no tuple per row)."""
        self.flush()
        count = len(kind)
        nones = (None,) * count
        self._append(kind, node, text, meta, ts, (source,) * count,
                     range(first, first + count), step, bytes(count), nones, nones, nones)  # fmt: skip

    def _append(
        self,
        kind: Sequence[int],
        node: Sequence[str],
        text: Sequence[str],
        meta: Sequence[bytes | None],
        ts: Sequence[float | None],
        source: Sequence[str],
        line: Sequence[int | None],
        step: Sequence[int | None],
        partial: Sequence[int],
        letta: Sequence[str | None],
        ckpt: Sequence[str | None],
        ids: Sequence[str | None],
    ) -> None:
        """Rows, one sequence per field, into the columns."""
        codes = self.strings.codes
        self.kind.extend(kind)
        self.node.extend(codes(node))
        put(self.ts, [NAN if t is None else t for t in ts] if None in ts else ts)
        self.text.add_many(_utf8_all(text))
        put(self.prefix, _prefix_hashes(text))
        self.meta.add_many(meta)
        self.source.extend(codes(source))
        self.line.extend(line)
        self.step.extend(step)
        self.partial.extend(partial)
        self.letta.extend(codes(letta))
        self.ckpt.extend(codes(ckpt))
        self.ids.extend(ids)

    def finish(self, order: Sequence[int] | None = None) -> Entries:
        """The table, its rows in `order` when given (a permutation of the rows)."""
        self.flush()
        rows = order if order is not None and list(order) != list(range(len(self))) else None
        entries = Entries(
            self.strings,
            self.kind,
            self.node,
            self.ts,
            self.text.finish(),
            self.meta.finish(),
            self.source,
            self.line,
            self.letta,
            self.step,
            self.partial,
            self.ckpt,
            self.ids if any(i is not None for i in self.ids) else None,
            self.meta_side,
        )
        return entries if rows is None else take_entries(entries, rows)


PREFIX_CHARS = 200  # ARI_MEMORY_ACCESS_PREVIEW_CHARS default: the join compares this much


# what EventBuilder.add_lines reads of a well-formed line's Struct (metadata and results
# come apart)
_LINE_FIELDS = (
    "ts", "op", "node_id", "collection", "entry_id", "text_preview", "query", "ancestor_ids",
    "limit",
)  # fmt: skip


def _utf8_all(values: Sequence[str | None]) -> list[bytes | None]:
    """`utf8` of each value (None stays None), encoded in one C loop."""
    kept = [value for value in values if value is not None]
    encoded = list(map(str.encode, kept, repeat("utf-8"), repeat("surrogatepass")))
    if len(kept) == len(values):
        return encoded  # type: ignore[return-value]
    them = iter(encoded)
    return [None if value is None else next(them) for value in values]


_HEAD = slice(PREFIX_CHARS)


def _prefix_hashes(values: Sequence[str | None]) -> list[int]:
    """hash of each value's first PREFIX_CHARS characters (0: None), in one C loop."""
    if None not in values:
        return list(map(hash, map(getitem, values, repeat(_HEAD))))
    return [0 if value is None else hash(value[:PREFIX_CHARS]) for value in values]


class EventBuilder(_Pending):
    """Events appended a batch of lines at a time (`add_lines`: Structs), or line by line: each
    a tuple in `pending`, turned into the columns every PENDING events (codes, encoding in
    bulk, not per event); `finish` sorts them by ts."""

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        self.ts = array("d")
        self.op = bytearray()
        self.node = array("i")
        self.coll = array("i")
        self.eid = array("i")
        self.query = array("i")
        self.source = array("i")
        self.reader = array("i")
        self.how = array("i")
        self.note = array("i")
        self.preview = TextsBuilder()
        self.meta = TextsBuilder()
        self.meta_side: dict[int, Any] = {}
        self.anc_start = array("q")
        self.anc_end = array("q")
        self.anc = array("i")
        self.limit = OptInts()
        self.res_start = array("q")
        self.res_end = array("q")
        self.rows = ResultRows()
        # the rows each results array was given, by its JSON bytes (`add_lines`: the same
        # array met again shares them)
        self.result_ranges: dict[bytes, tuple[int, int]] = {}
        self.line = OptInts()
        self.joined = array("i")
        self.joined_ids: dict[int, str] = {}
        self.extra: dict[int, Any] = {}
        self.preview_hash = array("q")
        self.preview_chars = array("i")
        self.derived = array("i")  # the entry row a preview is the start of (-1: its own)
        # finds such rows: (owner codes, hashes of the previews' starts, their bytes or None)
        # -> a row or -1 for each
        self.source_of: Any = None
        self.derived_from: Any = None  # where those rows are (the entries being built)
        # (reader, how, note) given
        self.attributed: dict[int, tuple[str | None, str, str]] = {}
        # (ts, op, node_id, collection, entry_id, preview, meta bytes, query, ancestors,
        # limit, source, line, typed rows, lenient rows)
        self.pending: list[tuple] = []

    def __len__(self) -> int:
        return len(self.ts) + len(self.pending)

    def add(
        self,
        ts: float,
        op: str,
        node_id: str,
        collection: str,
        entry_id: str | None,
        preview: str | None,
        meta: bytes | None,
        query: str | None,
        ancestors: list[str] | None,
        limit: int | None,
        source: str,
        line: int | None,
        metadata: Any = None,
        rows: list[Any] = (),  # type: ignore[assignment]
        extra: dict[str, Any] | None = None,
        structs: list[Any] | None = None,
    ) -> None:
        """One event; `meta` the metadata's JSON bytes, else `metadata` a value; its results
        `structs`, a well-formed line's rows decoded as Structs (the hot path when a batch is
        read line by line), else `rows` as the lenient reader gives them (any dicts)."""
        if meta is None and metadata is not None:
            meta = json_bytes(metadata)
            if meta is None:
                self.meta_side[len(self)] = metadata
        if extra:
            self.extra[len(self)] = extra
        self.pending.append(
            (ts, op, node_id, collection, entry_id, preview, meta, query, ancestors, limit,
             source, line, structs, None if structs is not None else list(rows))
        )  # fmt: skip
        if len(self.pending) >= self.PENDING:
            self.flush()

    def add_record(self, record: Any) -> None:
        row = len(self)
        self.add(
            record.ts,
            record.op,
            record.node_id,
            record.collection,
            record.entry_id,
            record.text_preview,
            None,
            record.query,
            record.ancestor_ids,
            record.limit,
            record.source,
            record.source_line,
            metadata=record.metadata,
            rows=record.results,
            extra=record.extra,
        )
        if record.reader is not None or record.reader_how or record.reader_note:
            self.attributed[row] = (record.reader, record.reader_how, record.reader_note)
        if record.joined_entry is not None:
            self.joined_ids[row] = record.joined_entry

    def add_lines(
        self,
        lines: Sequence[Any],
        metas: Sequence[bytes | None],
        results: Sequence[bytes],
        fresh: Mapping[bytes, Sequence[Any]],
        source: str,
        first: int,
    ) -> None:
        """Events of well-formed lines numbered `first`, `first + 1` …, column by column:
        `lines` Structs with the AccessEvent fields, `metas` their metadata JSON bytes (None:
        none), `results` their results' JSON bytes, `fresh` the rows (Structs) of each of
        those not in `result_ranges` yet. The batch path of the reader (no tuple per line)."""
        self.flush()
        if not lines:
            return
        count = len(lines)
        (ts, op, node, coll, eid, preview, query, ancestors, limit) = fields_of(lines, _LINE_FIELDS)
        self._append(ts, op, node, coll, eid, preview, metas, query, ancestors, limit,
                     (source,) * count, range(first, first + count), None, None)  # fmt: skip
        self._shared_results(results, fresh)

    def _append(
        self,
        ts: Sequence[float],
        op: Sequence[str],
        node: Sequence[str],
        coll: Sequence[str],
        eid: Sequence[str | None],
        preview: Sequence[str | None],
        meta: Sequence[bytes | None],
        query: Sequence[str | None],
        ancestors: Sequence[list[str] | None],
        limit: Sequence[int | None],
        source: Sequence[str],
        line: Sequence[int | None],
        typed: Sequence[Any] | None,
        lenient: Sequence[Any] | None,
    ) -> None:
        """Rows of events, one sequence per field, into the columns (lenient: None when every
        row's results are Structs; typed: None when the caller adds the results)."""
        first = len(self.ts)
        codes = self.strings.codes
        count = len(ts)
        put(self.ts, ts)
        self.op.extend(map(OP_CODE.__getitem__, op))
        self.node.extend(codes(node))
        self.coll.extend(codes(coll))
        self.eid.extend(codes(eid))
        self.query.extend(codes(query))
        self.source.extend(codes(source))
        encoded = _utf8_all(preview)
        # (for the join, which compares the first PREFIX_CHARS characters: dropped after it)
        hashes = _prefix_hashes(preview)
        put(self.preview_hash, hashes)
        put(self.preview_chars, [-1 if p is None else len(p) for p in preview])
        self._previews(encoded, hashes, first)
        self.meta.add_many(meta)
        self.limit.extend(limit)
        self.line.extend(line)
        self.reader.extend(array("i", [NONE]) * count)
        self.how.extend(codes([""]) * count)
        self.note.extend(codes([""]) * count)
        self.joined.extend(array("i", [NONE]) * count)
        for offset, (reader, how, note) in list(self.attributed.items()):
            if offset >= first:
                self.reader[offset] = self.strings.code(reader)
                self.how[offset] = self.strings.code(how)
                self.note[offset] = self.strings.code(note)
        self._ancestors(ancestors)
        if typed is not None:  # (else the caller adds them: `_shared_results`)
            self._results(typed, lenient)

    def _previews(self, encoded: list[bytes | None], hashes: list[int], first: int) -> None:
        """The previews of a flush: a node-scope write's that is the start of an entry's text
        (the entry it will be joined to, most likely; `source_of` finds one) is not kept, only
        that entry's row (`derived`; DERIVED and its size in the column): at 10k nodes, 40 MB
        not held while the log is read."""
        scope = self.strings.find("node_scope")
        if self.source_of is None or scope < 0:
            self.derived.extend(array("i", [NONE]) * len(encoded))
            self.preview.add_many(encoded)
            return
        coll = self.coll[first:]
        writes = [data if code == scope else None for data, code in zip(encoded, coll)]
        found = self.source_of(self.node[first:], hashes, writes)
        put(self.derived, found)
        preview = self.preview
        start = len(preview.starts)
        preview.add_many([data if row < 0 else None for data, row in zip(encoded, found)])
        # (a derived row: DERIVED and the preview's size, in place of its -1s)
        sizes = [-1 if data is None else len(data) for data in writes]
        preview.starts[start:] = packed(
            "q", [at if row < 0 else DERIVED for at, row in zip(preview.starts[start:], found)]
        )
        preview.ends[start:] = packed(
            "q",
            [at if row < 0 else size for at, row, size in zip(preview.ends[start:], found, sizes)],
        )

    def _ancestors(self, ancestors: Sequence[list[str] | None]) -> None:
        size = len(self.anc)
        lengths = [0 if items is None else len(items) for items in ancestors]
        bounds = list(accumulate(lengths, initial=size))
        if None in ancestors:  # (a None list: -1 for both bounds)
            put(self.anc_start, [-1 if a is None else b for a, b in zip(ancestors, bounds)])
            put(self.anc_end, [-1 if a is None else b for a, b in zip(ancestors, bounds[1:])])
        else:
            put(self.anc_start, bounds[:-1])
            put(self.anc_end, bounds[1:])
        flat = list(chain.from_iterable(filter(None, ancestors)))
        self.anc.extend(self.strings.codes(flat))

    def _shared_results(self, results: Sequence[bytes], fresh: Mapping[bytes, Any]) -> None:
        """Each event's results by their JSON bytes: an array met before points at the rows
        it was given then, a new one at its rows (`fresh`), added now."""
        ranges, rows = self.result_ranges, self.rows
        if fresh:
            bounds = accumulate(map(len, fresh.values()), initial=len(rows))
            ranges.update(zip(fresh, pairwise(bounds)))
            rows.add_typed(self.strings, list(chain.from_iterable(fresh.values())))
        starts, ends = zip(*map(ranges.__getitem__, results))
        put(self.res_start, starts)
        put(self.res_end, ends)

    def _results(self, typed: Sequence[Any], lenient: Sequence[Any] | None) -> None:
        rows, starts, ends = self.rows, self.res_start, self.res_end
        if lenient is None:  # every row's results are Structs: bounds by lengths, rows at once
            bounds = list(accumulate(map(len, typed), initial=len(rows)))
            put(starts, bounds[:-1])
            put(ends, bounds[1:])
            rows.add_typed(self.strings, list(chain.from_iterable(typed)))
            return
        plain: list[Any] = []
        size = len(rows)
        for structs, values in zip(typed, lenient, strict=True):
            starts.append(size)
            if values:  # lenient rows come one event at a time (rare)
                rows.add_typed(self.strings, plain)
                plain = []
                for value in values:
                    rows.add_value(self.strings, value)
                size = len(rows)
            elif structs:
                plain += structs
                size += len(structs)
            ends.append(size)
        rows.add_typed(self.strings, plain)

    def finish(self, sort: bool = True) -> Events:
        """The table; with `sort`, its rows stably sorted by ts (several files, several writers:
        lines come only roughly in time order)."""
        self.flush()
        events = Events(
            self.strings,
            ts=self.ts,
            op=self.op,
            node=self.node,
            coll=self.coll,
            eid=self.eid,
            preview=self.preview.finish(),
            meta=self.meta.finish(),
            meta_side=self.meta_side,
            query=self.query,
            anc_start=self.anc_start,
            anc_end=self.anc_end,
            anc=self.anc,
            limit=self.limit,
            res_start=self.res_start,
            res_end=self.res_end,
            rows=self.rows,
            source=self.source,
            line=self.line,
            reader=self.reader,
            how=self.how,
            note=self.note,
            joined=self.joined,
            joined_ids=self.joined_ids,
            extra=self.extra,
        )
        events.preview_hash, events.preview_chars = self.preview_hash, self.preview_chars
        if self.source_of is not None:
            events.derived, events.derived_from = self.derived, self.derived_from
        if not sort:
            return events
        ts = self.ts
        # (most logs are in time order already: told in one C pass, not by sorting them)
        if all(map(le, ts, islice(ts, 1, None))):
            return events
        order = sorted(range(len(ts)), key=ts.__getitem__)
        return take_events(events, order)


def entries_of(records: Iterable[Any] = (), strings: StringTable | None = None) -> Entries:
    """A table of `MemoryEntry` records (or views of another table), in their order; none: an
    empty table."""
    builder = EntryBuilder(StringTable() if strings is None else strings)
    for record in records:
        builder.add_record(record)
    return builder.finish()


def events_of(records: Iterable[Any] = (), strings: StringTable | None = None) -> Events:
    """A table of `AccessEvent` records (or views of another table), in their order; none: an
    empty table."""
    builder = EventBuilder(StringTable() if strings is None else strings)
    for record in records:
        builder.add_record(record)
    return builder.finish(sort=False)
