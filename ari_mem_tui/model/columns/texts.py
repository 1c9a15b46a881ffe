"""Free text as UTF-8 slices of one buffer per column (`Texts`, built by `TextsBuilder`),
and integers that may be None or of any size (`OptInts`)."""

from __future__ import annotations

import mmap
import struct
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any

from ari_mem_tui.model.columns.encoding import decoded, packed, put


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
        return None if start < 0 else decoded(self.buf[start : self.ends[row]])

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


INT_NONE = -(1 << 63)
INT_MAX = (1 << 63) - 1


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
        if value == INT_NONE:
            return self.big.get(row)
        return value

    def append(self, value: int | None) -> None:
        if value is None:
            self.values.append(INT_NONE)
        elif INT_NONE < value <= INT_MAX:
            self.values.append(value)
        else:
            self.big[len(self.values)] = value
            self.values.append(INT_NONE)

    def extend(self, values: Sequence[int | None]) -> None:
        try:
            if None in values:
                values = [INT_NONE if v is None else v for v in values]
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
