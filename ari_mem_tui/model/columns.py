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
- `Entries.from_records` / `Events.from_records` build tables from `MemoryEntry` / `AccessEvent`
  records (hand-built runs in tests, a few sources), `EntryBuilder` / `EventBuilder` a batch of
  well-formed lines at a time, one sequence per field (the readers' hot path), or row by row.

Entry ids (ours: backups carry none) are computed per row when first read (`Entries.id_at`):
a load needs none of them, and a SHA-1 per entry was a tenth of its time.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import struct
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, compress, islice, pairwise, repeat
from operator import attrgetter, getitem, is_, le
from typing import Any

import msgspec

from ari_mem_tui.model.records import AccessEvent, MemoryEntry

KINDS = ("node_scope", "react_step")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
OPS = ("read", "write")
OP_CODE = {op: code for code, op in enumerate(OPS)}
NONE = -1  # the code of None in every code column
DERIVED = -2  # a Texts start: the bytes are another table's (Events.derive_from)
ABSENT = -2  # a result row without that key
INHERIT = "inherit:"
NAN = math.nan

_decode_json = msgspec.json.Decoder().decode
_encode_json = msgspec.json.Encoder().encode
DIGITS = 4300  # Python's limit for an int from a string: the readers read a longer one as null


def json_value(raw: bytes | memoryview) -> Any:
    """Stored JSON bytes (metadata as its line had it) as their value: msgspec in C, else json
    for what msgspec refuses and the readers keep (an integer past 64 bits, a lone surrogate's
    escape), an integer of more than 4,300 digits read as null as the readers read it. An
    integer of 4,301 digits in one write's metadata made the run unreadable."""
    try:
        return _decode_json(raw)
    except msgspec.MsgspecError:
        pass
    try:
        return json.loads(bytes(raw), parse_int=_bounded_int)
    except (ValueError, RecursionError):
        return None


def _bounded_int(digits: str) -> int | None:
    return int(digits) if len(digits.lstrip("-")) <= DIGITS else None


def content_id(kind: str, node_id: str, ts: float | None, text: str) -> str:
    """Our id of an entry: what it is (kind, owner, ts, text), not where it sits in a file."""
    key = f"{kind}|{node_id}|{ts!r}|{text}"
    return "e" + hashlib.sha1(key.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _str(data: Any) -> str:
    return str(data, "utf-8", "surrogatepass")


def holding(column: Any, code: int) -> bytes:
    """Selectors for `compress` over a column of bytes: 1 where it holds `code`, else 0, made
    in one C pass (a comparison per item took twice as long at 230k events)."""
    table = bytearray(256)
    table[code] = 1
    return bytes(column).translate(table)


def put(column: array, values: Sequence[Any]) -> None:
    """`column.extend(values)`, the values packed by struct in one call: array's own
    conversion, item by item, costs twice as much, and a load converts millions of them.
    Raises struct.error for a value the column cannot hold."""
    column.frombytes(struct.pack(f"{len(values)}{column.typecode}", *values))


def packed(kind: str, values: Sequence[Any]) -> array:
    """`array(kind, values)`, packed as `put` packs."""
    column = array(kind)
    put(column, values)
    return column


# ---- strings ----


def string_hash(data: bytes | memoryview) -> int:
    """A 64-bit hash of a string's UTF-8 bytes that is the same in every process (Python's
    own str hash is salted per process, so it cannot be stored)."""
    return zlib.crc32(data) << 32 | zlib.adler32(data)


class _Codes(dict):
    """A StringTable's codes by string; a string it does not hold yet is added (given the next
    code) when it is looked up."""

    def __init__(self, strings: list[str | None]) -> None:
        super().__init__()
        self.strings = strings

    def __missing__(self, value: str) -> int:
        code = self[value] = len(self.strings)
        self.strings.append(value)
        return code


class StringTable:
    """The distinct strings of a run, each once; columns hold int codes into it (-1: None).

    Built by `code` / `codes` as the readers go, through a dict; then `freeze` keeps only one
    UTF-8 buffer with offsets (a reopened run's table is that buffer, mapped) and each string
    is decoded when first read. A frozen table finds a string's code (`find`) through its
    sorted hashes (`string_hash`, bisected), without a dict of every string; adding one
    (`code`) builds the dict again."""

    def __init__(self, strings: Iterable[str] = ()) -> None:
        self._list: list[str | None] = list(strings)
        self._codes: dict[Any, int] | None = None
        self._buf: memoryview | None = None
        self._offsets: Sequence[int] | None = None
        self._hashes: Sequence[int] | None = None  # sorted string_hash of every string
        self._order: Sequence[int] | None = None  # the code of each of them

    @classmethod
    def mapped(
        cls,
        buf: memoryview,
        offsets: Sequence[int],
        hashes: Sequence[int] | None = None,
        order: Sequence[int] | None = None,
    ) -> StringTable:
        table = cls()
        table._buf, table._offsets = buf, offsets
        table._list = [None] * (len(offsets) - 1)
        table._hashes, table._order = hashes, order
        return table

    def freeze(self) -> None:
        """Keep the strings as one buffer (their objects and the dict go: ~40 MB at 10k
        nodes); read, they are decoded one by one again. (The run index stores that buffer.)"""
        if self._codes is None and self._buf is not None:
            return  # (frozen already, or mapped)
        buf, offsets = self.export()
        self._buf, self._offsets = memoryview(buf), offsets
        self._list = [None] * (len(offsets) - 1)
        self._codes = None
        self._hashes = self._order = None

    def __len__(self) -> int:
        return len(self._list)

    def __getitem__(self, code: int) -> str | None:
        if code < 0:
            return None
        value = self._list[code]
        if value is None:
            offsets = self._offsets
            value = self._list[code] = _str(self._buf[offsets[code] : offsets[code + 1]])
        return value

    def _lookup(self) -> dict[Any, int]:
        codes = self._codes
        if codes is None:
            codes = _Codes(self._list)
            codes.update((self[i], i) for i in range(len(self._list)))
            codes[None] = NONE
            codes[msgspec.UNSET] = ABSENT  # a result row without the key
            self._codes = codes
            self._hashes = self._order = None  # (it grows now: the dict finds)
        return codes

    def code(self, value: str | None) -> int:
        """The code of `value`, added when new."""
        return self._lookup()[value]

    def codes(self, values: Sequence[Any]) -> array:
        """Codes of many values at once (None → -1, msgspec.UNSET → -2), new ones added in
        the order they come: C's map over the dict, and the strings it misses added in one
        update (a load meets ~400k new strings: one Python call each was a tenth of a second)."""
        lookup = self._lookup()
        found = list(map(lookup.get, values))
        if None in found:  # new strings: added at once, in the order they come
            new = dict.fromkeys(compress(values, map(is_, found, repeat(None))))
            first = len(self._list)
            self._list.extend(new)
            lookup.update(zip(new, range(first, first + len(new))))
            found = list(map(lookup.__getitem__, values))
        return packed("i", found)

    def find(self, value: str | None) -> int:
        """The code of `value`, or -1 when the table does not hold it."""
        if self._codes is not None or value is None:
            return self._lookup().get(value, NONE)
        hashes, order = self.hash_index()
        wanted = string_hash(utf8(value))
        pos = bisect_left(hashes, wanted)
        while pos < len(hashes) and hashes[pos] == wanted:
            if self[order[pos]] == value:
                return order[pos]
            pos += 1
        return NONE

    def hash_index(self) -> tuple[Sequence[int], Sequence[int]]:
        """(sorted hashes, their codes) of a frozen table, made on first use (or mapped)."""
        if self._hashes is None or self._order is None:
            buf, offsets = self._buf, self._offsets
            if buf is None or offsets is None:
                buf, offsets = self.export()
            hashes = [string_hash(buf[offsets[i] : offsets[i + 1]]) for i in range(len(self))]
            order = sorted(range(len(hashes)), key=hashes.__getitem__)
            self._hashes = array("Q", [hashes[i] for i in order])
            self._order = array("i", order)
        return self._hashes, self._order

    def export(self) -> tuple[bytes, array]:
        """The table as one UTF-8 buffer and the offsets of its strings (for the run index)."""
        if self._buf is not None and self._offsets is not None and self._codes is None:
            return self._buf, self._offsets  # type: ignore[return-value]  # (frozen as it is)
        parts = [utf8(self[i]) for i in range(len(self._list))]  # type: ignore[arg-type]
        offsets = array("q", accumulate(map(len, parts), initial=0))
        return b"".join(parts), offsets


# ---- texts and optional integers ----


class Groups:
    """Rows grouped by a code, as columns: the codes in order, where each one's rows end, and
    the rows one group after another (as the run index keeps them). A code's rows are read off
    them when asked: a reopen builds no list per group (10k nodes: tens of milliseconds)."""

    def __init__(self, codes: Sequence[int], ends: Sequence[int], rows: Sequence[int]) -> None:
        self.codes, self.ends, self.rows = codes, ends, rows
        self._place: dict[int, int] | None = None  # code -> its place, made on first use

    @classmethod
    def of(cls, groups: Mapping[int, list[int]]) -> Groups:
        ends = array("q", accumulate(map(len, groups.values())))
        return cls(array("i", groups), ends, array("i", chain.from_iterable(groups.values())))

    def items(self) -> Iterator[tuple[int, list[int]]]:
        """(code, its rows), codes in order."""
        for place, code in enumerate(self.codes):
            yield code, self._rows_at(place)

    def get(self, code: int, default: list[int] | None = None) -> list[int] | None:
        if self._place is None:
            self._place = dict(zip(self.codes, range(len(self.codes)), strict=True))
        place = self._place.get(code)
        return default if place is None else self._rows_at(place)

    def _rows_at(self, place: int) -> list[int]:
        start = self.ends[place - 1] if place else 0
        return self.rows[start : self.ends[place]].tolist()


class Texts:
    """Strings of a column as UTF-8 slices of one buffer: row i is buf[starts[i]:ends[i]], or
    None where starts[i] is -1. Decoded when read; `raw(i)` gives the bytes undecoded."""

    __slots__ = ("buf", "ends", "offset", "starts")

    def __init__(
        self, buf: Any, starts: Sequence[int], ends: Sequence[int], offset: int = 0
    ) -> None:
        self.buf = buf if isinstance(buf, memoryview) else memoryview(buf)
        self.starts, self.ends = starts, ends
        self.offset = offset  # where `buf` begins in `buf.obj` (a section of a mapped file)

    def find_all(self, needle: bytes) -> Iterator[int]:
        """Every place of `needle` in the buffer (a search in C, over the buffer's object)."""
        owner, base = self.buf.obj, self.offset
        if not isinstance(owner, (bytes, bytearray, mmap.mmap)):
            owner, base = bytes(self.buf), 0
        end = base + len(self.buf)
        at = owner.find(needle, base, end)
        while at >= 0:
            yield at - base
            at = owner.find(needle, at + 1, end)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, row: int) -> str | None:
        start = self.starts[row]
        return None if start < 0 else _str(self.buf[start : self.ends[row]])

    def raw(self, row: int) -> memoryview | None:
        start = self.starts[row]
        return None if start < 0 else self.buf[start : self.ends[row]]

    def size(self, row: int) -> int:
        start = self.starts[row]
        return -1 if start < 0 else self.ends[row] - start

    def take(self, rows: Sequence[int]) -> Texts:
        """The rows `rows`, in that order (the buffer is shared)."""
        starts, ends = self.starts, self.ends
        return Texts(
            self.buf,
            array("q", [starts[r] for r in rows]),
            array("q", [ends[r] for r in rows]),
            self.offset,
        )


class TextsBuilder:
    def __init__(self) -> None:
        self.buf = bytearray()
        self.starts = array("q")
        self.ends = array("q")

    def raw(self, row: int) -> bytes | None:
        """A row's bytes, copied (the buffer still grows: no view of it may be kept)."""
        start = self.starts[row]
        return None if start < 0 else bytes(self.buf[start : self.ends[row]])

    def add(self, data: bytes | memoryview | None) -> None:
        if data is None:
            self.starts.append(-1)
            self.ends.append(-1)
            return
        buf = self.buf
        self.starts.append(len(buf))
        buf += data
        self.ends.append(len(buf))

    def add_many(self, items: Sequence[bytes | None]) -> None:
        """Many rows at once (None: a None row)."""
        nones = None in items
        if nones:
            lengths = [0 if data is None else len(data) for data in items]
        else:
            lengths = list(map(len, items))
        ends = list(accumulate(lengths, initial=len(self.buf)))
        starts = packed("q", ends[:-1])
        ends = packed("q", ends[1:])
        if nones:
            for row in [row for row, data in enumerate(items) if data is None]:
                starts[row] = ends[row] = -1
        self.starts += starts
        self.ends += ends
        self.buf += b"".join(filter(None, items))

    def finish(self) -> Texts:
        return Texts(self.buf, self.starts, self.ends)


_INT_NONE = -(1 << 63)
_INT_MAX = (1 << 63) - 1


class OptInts:
    """Optional integers of any size: int64 items, a sentinel for None, a side dict for those
    past int64 (a hostile file's 30-digit `limit`)."""

    __slots__ = ("big", "values")

    def __init__(self, values: Sequence[int] | None = None, big: dict[int, int] | None = None):
        self.values = array("q") if values is None else values
        self.big = big or {}

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, row: int) -> int | None:
        value = self.values[row]
        if value == _INT_NONE:
            return self.big.get(row)
        return value

    def append(self, value: int | None) -> None:
        if value is None:
            self.values.append(_INT_NONE)
        elif _INT_NONE < value <= _INT_MAX:
            self.values.append(value)
        else:
            self.big[len(self.values)] = value
            self.values.append(_INT_NONE)

    def extend(self, values: Sequence[int | None]) -> None:
        try:
            if None in values:
                values = [_INT_NONE if v is None else v for v in values]
            put(self.values, values)
        except struct.error:  # a value past int64: one by one
            for value in values:
                self.append(value)

    def take(self, rows: Sequence[int]) -> OptInts:
        values = self.values
        taken = OptInts(array("q", [values[r] for r in rows]))
        if self.big:
            where = {row: pos for pos, row in enumerate(rows)}
            taken.big = {where[r]: v for r, v in self.big.items() if r in where}
        return taken


def opt_ints(values: Iterable[int | None]) -> OptInts:
    column = OptInts()
    for value in values:
        column.append(value)
    return column


def _ts(value: float) -> float | None:
    return None if math.isnan(value) else value  # NaN stands for "no ts"


def _json(raw: memoryview | None, side: Mapping[int, Any], row: int) -> Any:
    if row in side:
        return side[row]
    return None if raw is None else json_value(raw)


def json_bytes(value: Any) -> bytes | None:
    """`value` as JSON that decodes back to an equal value, else None (NaN, odd keys …)."""
    try:
        data = _encode_json(value)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return None
    try:
        return data if _decode_json(data) == value else None
    except (msgspec.MsgspecError, RecursionError):
        return None


def _writable(column: Any, kind: str) -> Any:
    """`column` itself when it can be written, else an array copy (a reopen's mapped columns
    are read-only; the few writes after a load, a Letta swap's re-join, copy first)."""
    return column if isinstance(column, (array, bytearray)) else array(kind, column)


# ---- memory entries ----


class EntryView:
    """One entry of an `Entries` table, read from its columns when a field is read."""

    __slots__ = ("_i", "_t")

    def __init__(self, table: Entries, row: int) -> None:
        self._t, self._i = table, row

    row = property(lambda self: self._i)
    table = property(lambda self: self._t)
    id = property(lambda self: self._t.id_at(self._i))
    kind = property(lambda self: KINDS[self._t.kind[self._i]])
    node_id = property(lambda self: self._t.strings[self._t.node[self._i]])
    text = property(lambda self: self._t.text[self._i])
    metadata = property(lambda self: self._t.metadata_at(self._i))
    ts = property(lambda self: _ts(self._t.ts[self._i]))
    source = property(lambda self: self._t.strings[self._t.source[self._i]])
    source_line = property(lambda self: self._t.line[self._i])
    step = property(lambda self: self._t.step[self._i])
    partial = property(lambda self: bool(self._t.partial[self._i]))
    ari_checkpoint = property(lambda self: self._t.strings[self._t.ckpt[self._i]])

    @property
    def letta_id(self) -> str | None:
        return self._t.strings[self._t.letta[self._i]]

    @letta_id.setter
    def letta_id(self, value: str | None) -> None:
        self._t.set_letta(self._i, value)

    @property
    def mem_kind(self) -> str | None:
        """Typed-memory kind as ARI reads it: `mem_kind`, falling back to `type`."""
        metadata = self.metadata
        value = metadata.get("mem_kind") or metadata.get("type")
        return str(value) if value is not None else None

    def as_record(self) -> MemoryEntry:
        return self._t.record(self._i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EntryView):
            if other._t is self._t and other._i == self._i:
                return True
            return self.as_record() == other.as_record()
        if isinstance(other, MemoryEntry):
            return self.as_record() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like the Struct it stands for

    def __repr__(self) -> str:
        return f"EntryView({self.as_record()!r})"


class _RowTable(Sequence):
    """What `Entries` and `Events` share: a Sequence of views made on demand, one per row,
    equal to another table or a list of records row by row."""

    _view: Any  # the view class of a row
    _what = "row"

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._view(self, i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{self._what} index out of range")
        return self._view(self, index)

    def __iter__(self) -> Iterator[Any]:
        return (self._view(self, i) for i in range(len(self)))

    def views(self, rows: Sequence[int]) -> list[Any]:
        """The views of `rows` (each in range: a ranker's window), without `[i]`'s checks."""
        view = self._view
        return [view(self, i) for i in rows]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (type(self), list, tuple)):
            return len(self) == len(other) and all(
                self.record(i) == self._as_record(o) for i, o in enumerate(other)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class Entries(_RowTable):
    """A run's memory entries as columns (see the module docstring); rows are views."""

    _what = "entry"

    _view = EntryView

    @staticmethod
    def _as_record(other):
        return _record_of(other)

    def __init__(
        self,
        strings: StringTable,
        kind: Any,
        node: Any,
        ts: Any,
        text: Texts,
        meta: Texts,
        source: Any,
        line: OptInts,
        letta: Any,
        step: OptInts,
        partial: Any,
        ckpt: Any,
        ids: list[str | None] | Texts | None = None,
        meta_side: dict[int, Any] | None = None,
        by_node: Groups | None = None,
    ) -> None:
        self.strings = strings
        self.kind, self.node, self.ts = kind, node, ts
        self.text, self.meta, self.meta_side = text, meta, meta_side or {}
        self.source, self.line = source, line
        self.letta, self.step, self.partial, self.ckpt = letta, step, partial, ckpt
        self.ids = ids
        self._by_node: dict[int, list[int]] | Groups | None = by_node  # (`rows_of_node`)
        self.row_of_id: dict[str, int] | None = None  # (entry_row_of_id's, once built)

    @classmethod
    def empty(cls, strings: StringTable | None = None) -> Entries:
        return EntryBuilder(strings or StringTable()).finish()

    @classmethod
    def from_records(cls, records: Iterable[Any], strings: StringTable) -> Entries:
        """A table of `MemoryEntry` records (or views of another table)."""
        builder = EntryBuilder(strings)
        for record in records:
            builder.add_record(record)
        return builder.finish()

    def __len__(self) -> int:
        return len(self.kind)

    def __repr__(self) -> str:
        return f"Entries({len(self)} rows)"

    # -- fields --

    def metadata_at(self, row: int) -> dict[str, Any]:
        value = _json(self.meta.raw(row), self.meta_side, row)
        return {} if value is None else value

    def set_letta(self, row: int, value: str | None) -> None:
        self.letta = _writable(self.letta, "i")
        self.letta[row] = self.strings.code(value)

    def record(self, row: int) -> MemoryEntry:
        strings = self.strings
        return MemoryEntry(
            id=self.id_at(row),
            kind=KINDS[self.kind[row]],  # type: ignore[arg-type]
            node_id=strings[self.node[row]] or "",
            text=self.text[row] or "",
            metadata=self.metadata_at(row),
            ts=_ts(self.ts[row]),
            source=strings[self.source[row]] or "",
            source_line=self.line[row],
            letta_id=strings[self.letta[row]],
            step=self.step[row],
            partial=bool(self.partial[row]),
            ari_checkpoint=strings[self.ckpt[row]],
        )

    # -- ids --

    def id_at(self, row: int) -> str:
        ids = self.ids
        if isinstance(ids, Texts):  # (a reopen's: the ids its first open was asked for)
            found = ids[row]
            if found is not None:
                return found
            ids = self.ids = self._known_list()
        elif ids is None:
            ids = self.ids = [None] * len(self)
        found = ids[row]
        if found is None:
            self._made = getattr(self, "_made", 0) + 1
            if self._made > BULK_IDS:  # a bulk reader (health): every id at once is cheaper
                return self.all_ids()[row]
            found = ids[row] = self._make_id(row)
        return found

    def _known_list(self) -> list[str | None]:
        """The ids known so far, one per row (None: not made yet)."""
        ids = self.ids
        if isinstance(ids, Texts):
            return [ids[row] for row in range(len(self))]
        return [None] * len(self) if ids is None else ids

    def known_ids(self) -> Texts | None:
        """The ids made (or given) so far as a text column, None for a row not made yet
        (what the run index keeps: a fresh load makes none it is not asked for); None when
        none is known."""
        ids = self.ids
        if ids is None or isinstance(ids, Texts):
            return ids
        if all(found is None for found in ids):
            return None
        column = TextsBuilder()
        column.add_many([None if found is None else utf8(found) for found in ids])
        return column.finish()

    def _same(self, a: int, b: int) -> bool:
        """Rows a and b hold the same content (kind, owner, ts, text)."""
        ts = self.ts
        return (
            self.kind[a] == self.kind[b]
            and self.node[a] == self.node[b]
            and (ts[a] == ts[b] or (ts[a] != ts[a] and ts[b] != ts[b]))
            and self.text.raw(a) == self.text.raw(b)
        )

    def _content_id(self, row: int) -> str:
        """`content_id` of the row, hashing its text's bytes as they are in the buffer (the
        UTF-8 of the text: not decoded, encoded again)."""
        key = f"{KINDS[self.kind[row]]}|{self.strings[self.node[row]] or ''}|{_ts(self.ts[row])!r}|"
        digest = hashlib.sha1(utf8(key))
        text = self.text.raw(row)
        if text is not None:
            digest.update(text)
        return "e" + digest.hexdigest()[:12]

    def _make_id(self, row: int) -> str:
        """`content_id`, suffixed `-2`, `-3` … for the second, third … row of the same content
        (exact duplicates, counted in table order, which keeps the order they were read in)."""
        base = self._content_id(row)
        group = self.rows_of_node(self.node[row])
        same = sum(1 for other in group if other < row and self._same(other, row))
        return base if same == 0 else f"{base}-{same + 1}"

    def all_ids(self) -> list[str]:
        """Every row's id (the run index stores them; a lookup by id needs them all)."""
        ids = self.ids = self._known_list()
        if None not in ids:
            return ids  # type: ignore[return-value]
        seen: dict[str, list[int]] = {}
        content = self._content_id
        for row in range(len(self)):
            base = content(row)
            earlier = seen.setdefault(base, [])
            if ids[row] is None:
                # (most contents are met once: no earlier row to compare with)
                same = sum(1 for other in earlier if self._same(other, row)) if earlier else 0
                ids[row] = base if same == 0 else f"{base}-{same + 1}"
            earlier.append(row)
        return ids  # type: ignore[return-value]

    # -- groups --

    def rows_of_node(self, code: int) -> list[int]:
        """The rows owned by node `code` (every kind), in table order."""
        if self._by_node is None:
            groups: dict[int, list[int]] = {}
            for row, owner in enumerate(self.node):
                groups.setdefault(owner, []).append(row)
            self._by_node = groups
        return self._by_node.get(code, [])  # type: ignore[return-value]

    def node_groups(self) -> Groups:
        """`rows_of_node` of every node, as columns (what the run index keeps)."""
        self.rows_of_node(0)
        groups = self._by_node
        return groups if isinstance(groups, Groups) else Groups.of(groups)  # type: ignore[arg-type]

    def kind_counts(self) -> dict[str, int]:
        """Rows per kind, counted in C over the kind column."""
        kind = bytes(self.kind)
        return {name: kind.count(code) for code, name in enumerate(KINDS)}

    def partial_count(self) -> int:
        return len(self) - bytes(self.partial).count(0)

    def texts(self) -> list[str]:
        """Every row's text, decoded (bulk: the rankers' corpus)."""
        text = self.text
        return [text[i] or "" for i in range(len(self))]


def _record_of(item: Any) -> MemoryEntry:
    return item.as_record() if isinstance(item, EntryView) else item


class EntryBuilder:
    """Entries appended a batch at a time (`add_rows`: one sequence per field), or row by row:
    each row a tuple in `pending`, turned into the columns every PENDING rows (codes, encoding
    and hashes in bulk, not per row)."""

    PENDING = 4096

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

    def add_plain(
        self,
        kind: int,
        node_id: str,
        text: str,
        meta: bytes,
        ts: float | None,
        source: str,
        line: int,
        step: int | None,
    ) -> None:
        """A row of a well-formed backup line (the hot path: one tuple)."""
        pending = self.pending
        pending.append((kind, node_id, text, meta, ts, source, line, step, 0, None, None, None))
        if len(pending) >= self.PENDING:
            self.flush()

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
        """One row; `meta` the metadata's JSON bytes, or `metadata` a value (kept as JSON when
        it round-trips, else as it is)."""
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

    def flush(self) -> None:
        """The pending rows into the columns."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        self._append(*zip(*pending))

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


BULK_IDS = 2000  # ids made one by one before the rest are made at once
PREFIX_CHARS = 200  # ARI_MEMORY_ACCESS_PREVIEW_CHARS default: the join compares this much


def take_entries(entries: Entries, rows: Sequence[int]) -> Entries:
    """The rows `rows` of `entries`, in that order (buffers shared)."""
    ids = entries.ids
    if isinstance(ids, Texts):
        ids = ids.take(rows)
    elif ids is not None:
        ids = [ids[r] for r in rows]
    where = {row: pos for pos, row in enumerate(rows)} if entries.meta_side else {}
    return Entries(
        entries.strings,
        bytearray(entries.kind[r] for r in rows),
        array("i", [entries.node[r] for r in rows]),
        array("d", [entries.ts[r] for r in rows]),
        entries.text.take(rows),
        entries.meta.take(rows),
        array("i", [entries.source[r] for r in rows]),
        entries.line.take(rows),
        array("i", [entries.letta[r] for r in rows]),
        entries.step.take(rows),
        bytearray(entries.partial[r] for r in rows),
        array("i", [entries.ckpt[r] for r in rows]),
        ids,
        {where[r]: v for r, v in entries.meta_side.items() if r in where},
    )


# ---- access events ----

ROW_KEYS = ("entry_id", "src_node_id", "node_id", "score", "type", "count")
_ROW_CODES = ("entry_id", "src_node_id", "node_id", "type")  # str | None, as codes
_UNSET = msgspec.UNSET
_STATE_ABSENT, _STATE_NONE, _STATE_VALUE = 0, 1, 2


class ResultRows:
    """The rows of every read event's `results`, as columns: the keys ARI writes (entry_id,
    src_node_id, node_id, type: codes; score: float; count: int), each row's dict rebuilt
    when read; a row of another shape is kept whole in `side`."""

    def __init__(
        self,
        codes: dict[str, Any] | None = None,
        score: Any = None,
        score_state: Any = None,
        count: OptInts | None = None,
        count_state: Any = None,
        side: dict[int, Any] | None = None,
    ) -> None:
        self.codes = codes or {key: array("i") for key in _ROW_CODES}
        self.score = array("d") if score is None else score
        self.score_state = bytearray() if score_state is None else score_state
        self.count = count or OptInts()
        self.count_state = bytearray() if count_state is None else count_state
        self.side = side or {}

    def __len__(self) -> int:
        return len(self.score)

    def row(self, strings: StringTable, index: int) -> Any:
        if index in self.side:
            return self.side[index]
        out: dict[str, Any] = {}
        for key in ROW_KEYS:
            if key == "score":
                state = self.score_state[index]
                if state:
                    out[key] = self.score[index] if state == _STATE_VALUE else None
            elif key == "count":
                state = self.count_state[index]
                if state:
                    out[key] = self.count[index] if state == _STATE_VALUE else None
            else:
                code = self.codes[key][index]
                if code != ABSENT:
                    out[key] = strings[code]
        return out

    def score_at(self, index: int) -> Any:
        """`row(…, index).get("score")`, without making the row."""
        if index in self.side:
            return self.side[index].get("score")
        return self.score[index] if self.score_state[index] == _STATE_VALUE else None

    def add_typed(self, strings: StringTable, rows: Sequence[Any]) -> None:
        """Rows decoded as Structs of the known keys (msgspec.UNSET where a key is absent)."""
        if not rows:
            return
        eid, src, node, kind, scores, counts = fields_of(rows, _ROW_FIELDS)
        codes = strings.codes
        self.codes["entry_id"].extend(codes(eid))
        self.codes["src_node_id"].extend(codes(src))
        self.codes["node_id"].extend(codes(node))
        self.codes["type"].extend(codes(kind))
        states = bytes(map(_STATES.get, scores, repeat(_STATE_VALUE)))
        if states.count(_STATE_VALUE) == len(states):
            put(self.score, scores)
        else:
            put(self.score, [s if type(s) is float else NAN for s in scores])
        self.score_state += states
        states = bytes(map(_STATES.get, counts, repeat(_STATE_VALUE)))
        if states.count(_STATE_ABSENT) == len(states):  # (ARI writes no count but rarely)
            self.count.values.extend(array("q", [_INT_NONE]) * len(states))
        else:
            self.count.extend([c if type(c) is int else None for c in counts])
        self.count_state += states

    def _number(self, score: Any, count: Any) -> None:
        if score is _UNSET:
            self.score.append(NAN)
            self.score_state.append(_STATE_ABSENT)
        elif score is None:
            self.score.append(NAN)
            self.score_state.append(_STATE_NONE)
        else:
            self.score.append(score)
            self.score_state.append(_STATE_VALUE)
        if count is _UNSET or count is None:
            self.count.append(None)
            self.count_state.append(_STATE_ABSENT if count is _UNSET else _STATE_NONE)
        else:
            self.count.append(count)
            self.count_state.append(_STATE_VALUE)

    def add_value(self, strings: StringTable, row: Any) -> None:
        """A row as the lenient reader gives it (any dict)."""
        if not _plain_row(row):
            self.side[len(self)] = row
            for key in _ROW_CODES:
                self.codes[key].append(ABSENT)
            self._number(_UNSET, _UNSET)
            return
        for key in _ROW_CODES:
            self.codes[key].append(strings.code(row[key]) if key in row else ABSENT)
        self._number(row.get("score", _UNSET), row.get("count", _UNSET))


_STATES = {_UNSET: _STATE_ABSENT, None: _STATE_NONE}  # (any other value: _STATE_VALUE)
_ROW_FIELDS = ("entry_id", "src_node_id", "node_id", "type", "score", "count")
# what EventBuilder.add_lines reads of a well-formed line's Struct (metadata and results
# come apart)
_LINE_FIELDS = (
    "ts", "op", "node_id", "collection", "entry_id", "text_preview", "query", "ancestor_ids",
    "limit",
)  # fmt: skip


def fields_of(items: Sequence[Any], names: Sequence[str]) -> list[list[Any]]:
    """Each named attribute of every item, one list per name, read in C (a list per name is
    about half the cost of a tuple per item taken apart by zip)."""
    return [list(map(attrgetter(name), items)) for name in names]


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


def _plain_row(row: Any) -> bool:
    """A dict of the known keys, each of the type its column holds."""
    if type(row) is not dict or not set(row) <= _ROW_KEY_SET:
        return False
    for key in _ROW_CODES:
        value = row.get(key)
        if value is not None and type(value) is not str:
            return False
    score, count = row.get("score"), row.get("count")
    if score is not None and type(score) is not float:
        return False
    return count is None or (type(count) is int and _INT_NONE < count <= _INT_MAX)


_ROW_KEY_SET = frozenset(ROW_KEYS)


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
    metadata = property(lambda self: _json(self._t.meta_raw(self._i), self._t.meta_side, self._i))
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


class Events(_RowTable):
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

    @classmethod
    def empty(cls, strings: StringTable | None = None) -> Events:
        return EventBuilder(strings or StringTable()).finish()

    @classmethod
    def from_records(cls, records: Iterable[Any], strings: StringTable) -> Events:
        builder = EventBuilder(strings)
        for record in records:
            builder.add_record(record)
        return builder.finish(sort=False)

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
        return None if raw is None else _str(raw)

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
        target = _writable(getattr(self, column), "i")
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
        self.joined = _writable(self.joined, "i")
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
            metadata=_json(self.meta_raw(row), self.meta_side, row),
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


def entry_row_of_id(entries: Entries, entry_id: str) -> int:
    """The row of the entry whose id is `entry_id`, or -1."""
    index = entries.row_of_id
    if index is None:  # (built once per table: its rows and their ids never change)
        index = entries.row_of_id = {eid: row for row, eid in enumerate(entries.all_ids())}
    return index.get(entry_id, NONE)


class EventBuilder:
    """Events appended a batch of lines at a time (`add_lines`: Structs), or line by line: each
    a tuple in `pending`, turned into the columns every PENDING events (codes, encoding in
    bulk, not per event); `finish` sorts them by ts."""

    PENDING = 4096

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

    def add_plain(
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
        line: int,
        rows: list[Any],
    ) -> None:
        """An event of a well-formed line, its results as Structs (the hot path: one tuple)."""
        pending = self.pending
        pending.append(
            (ts, op, node_id, collection, entry_id, preview, meta, query, ancestors, limit,
             source, line, rows, None)
        )  # fmt: skip
        if len(pending) >= self.PENDING:
            self.flush()

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
    ) -> None:
        """One event; `meta` the metadata's JSON bytes, else `metadata` a value; `rows` its
        results as the lenient reader gives them (any dicts)."""
        row = len(self)
        if meta is None and metadata is not None:
            meta = json_bytes(metadata)
            if meta is None:
                self.meta_side[row] = metadata
        if extra:
            self.extra[row] = extra
        self.pending.append(
            (ts, op, node_id, collection, entry_id, preview, meta, query, ancestors, limit,
             source, line, None, list(rows))
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

    def flush(self) -> None:
        """The pending events into the columns."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        self._append(*zip(*pending))

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


def _recode(column: Sequence[int], mapping: array) -> array:
    return array("i", [mapping[c] if c >= 0 else c for c in column])


def _mapping(source: StringTable, target: StringTable) -> array:
    return target.codes([source[c] for c in range(len(source))])


def recode_entries(entries: Entries, strings: StringTable) -> Entries:
    """The same table with its codes into `strings` (a table read into another string table)."""
    if entries.strings is strings:
        return entries
    mapping = _mapping(entries.strings, strings)
    recoded = take_entries(entries, range(len(entries)))
    recoded.strings = strings
    for name in ("node", "source", "letta", "ckpt"):
        setattr(recoded, name, _recode(getattr(entries, name), mapping))
    return recoded


def recode_events(events: Events, strings: StringTable) -> Events:
    if events.strings is strings:
        return events
    mapping = _mapping(events.strings, strings)
    recoded = take_events(events, range(len(events)))
    recoded.strings = strings
    for name in ("node", "coll", "eid", "query", "anc", "source", "reader", "how", "note"):
        setattr(recoded, name, _recode(getattr(events, name), mapping))
    rows = events.rows
    recoded.rows = ResultRows(
        {key: _recode(codes, mapping) for key, codes in rows.codes.items()},
        rows.score,
        rows.score_state,
        rows.count,
        rows.count_state,
        rows.side,
    )
    return recoded
