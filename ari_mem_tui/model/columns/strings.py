"""The run's string table: every distinct string once, columns holding int codes into it
(`StringTable`), rows grouped by a code (`Groups`), and a column's codes carried into another
table (`code_map`, `recode_column`)."""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import is_
from typing import Any

import msgspec

from ari_mem_tui.model.columns.encoding import ABSENT, NONE, decoded, packed, utf8


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
            value = self._list[code] = decoded(self._buf[offsets[code] : offsets[code + 1]])
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


def recode_column(column: Sequence[int], mapping: array) -> array:
    """A code column's codes through `mapping` (`code_map`); -1 and -2 stay as they are."""
    return array("i", [mapping[c] if c >= 0 else c for c in column])


def code_map(source: StringTable, target: StringTable) -> array:
    """The code in `target` of each string of `source`, by its code there (added when new)."""
    return target.codes([source[c] for c in range(len(source))])
