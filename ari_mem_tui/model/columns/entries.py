"""A run's memory entries as columns (`Entries`), each row read through an `EntryView`;
entry ids computed when first read; rows taken in another order or recoded into another
string table. Built by `builders.EntryBuilder`."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from ari_mem_tui.model.columns.encoding import (
    KINDS,
    NONE,
    json_at,
    opt_ts,
    utf8,
    writable,
)
from ari_mem_tui.model.columns.strings import Groups, StringTable, code_map, recode_column
from ari_mem_tui.model.columns.texts import OptInts, Texts, TextsBuilder
from ari_mem_tui.model.records import MemoryEntry


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
    ts = property(lambda self: opt_ts(self._t.ts[self._i]))
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


class RowTable(Sequence):
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


class Entries(RowTable):
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

    def __len__(self) -> int:
        return len(self.kind)

    def __repr__(self) -> str:
        return f"Entries({len(self)} rows)"

    # -- fields --

    def metadata_at(self, row: int) -> dict[str, Any]:
        value = json_at(self.meta.raw(row), self.meta_side, row)
        return {} if value is None else value

    def set_letta(self, row: int, value: str | None) -> None:
        self.letta = writable(self.letta, "i")
        self.letta[row] = self.strings.code(value)

    def record(self, row: int) -> MemoryEntry:
        strings = self.strings
        return MemoryEntry(
            id=self.id_at(row),
            kind=KINDS[self.kind[row]],  # type: ignore[arg-type]
            node_id=strings[self.node[row]] or "",
            text=self.text[row] or "",
            metadata=self.metadata_at(row),
            ts=opt_ts(self.ts[row]),
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
        key = f"{KINDS[self.kind[row]]}|{self.strings[self.node[row]] or ''}|{opt_ts(self.ts[row])!r}|"
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


BULK_IDS = 2000  # ids made one by one before the rest are made at once


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


def entry_row_of_id(entries: Entries, entry_id: str) -> int:
    """The row of the entry whose id is `entry_id`, or -1."""
    index = entries.row_of_id
    if index is None:  # (built once per table: its rows and their ids never change)
        index = entries.row_of_id = {eid: row for row, eid in enumerate(entries.all_ids())}
    return index.get(entry_id, NONE)


def recode_entries(entries: Entries, strings: StringTable) -> Entries:
    """The same table with its codes into `strings` (a table read into another string table)."""
    if entries.strings is strings:
        return entries
    mapping = code_map(entries.strings, strings)
    recoded = take_entries(entries, range(len(entries)))
    recoded.strings = strings
    for name in ("node", "source", "letta", "ckpt"):
        setattr(recoded, name, recode_column(getattr(entries, name), mapping))
    return recoded
