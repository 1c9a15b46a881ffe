"""The one JSON Lines read loop of the loader (access logs, the backup, the v0.5 store).

Each line is decoded from its bytes by msgspec (in C, no intermediate str). A line msgspec
refuses is decoded again the slow way (UTF-8 text, then `json`), so a bad line gets the same
named problem as ever, and the few values only `json` accepts (NaN, Infinity, integers past
64 bits) still load as they did. The readers take the lines a batch at a time (`batches`): a
batch of well-formed lines goes into the columns at once, any other batch through
`json_records`, line by line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from operator import add
from typing import Any, Self

import msgspec

from ari_mem_tui.checkpoint.jsonfile import MAX_DEPTH, depth_exceeds, json_error
from ari_mem_tui.checkpoint.limits import current, hint, mib
from ari_mem_tui.checkpoint.problems import FileProblems

_DECODE = msgspec.json.Decoder().decode
CHUNK = 1 << 20


class TooLong(bytes):
    """Stands in for a line longer than the line limit: empty (a blank line to any reader that
    does not look closer), with the line's size and the limit it broke."""

    size: int
    limit: int

    def __new__(cls, size: int, limit: int) -> Self:
        line = super().__new__(cls)
        line.size, line.limit = size, limit
        return line

    def why(self) -> str:
        return (
            f"the line is {mib(self.size)} long, over the {mib(self.limit)} limit for one line"
            f" ({hint('line-mib')})"
        )


class LineSplitter:
    """Bytes fed in any pieces → complete lines (without the newline). A line that grows past
    `limit` is dropped as it comes (only its size is counted) and given as a TooLong, so
    memory stays bounded by the limit and a chunk; pieces of a pending line are kept in a list
    and joined once, never re-copied per chunk."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.skipping = False

    def _add(self, piece: bytes) -> None:
        self.size += len(piece)
        if self.skipping:
            return
        if self.size > self.limit:
            self.skipping, self.parts = True, []
        elif piece:
            self.parts.append(piece)

    def _end(self, piece: bytes) -> bytes:
        if not self.parts and not self.skipping:
            return piece  # the common case: nothing pending
        self._add(piece)
        line = TooLong(self.size, self.limit) if self.skipping else b"".join(self.parts)
        self.parts, self.size, self.skipping = [], 0, False
        return line

    def feed(self, data: bytes) -> list[bytes]:
        pieces = data.split(b"\n")
        last = pieces.pop()
        if pieces:
            pieces[0] = self._end(pieces[0])
            if max(map(len, pieces)) > self.limit:
                pieces = [TooLong(len(p), self.limit) if len(p) > self.limit else p for p in pieces]
        self._add(last)
        return pieces

    def finish(self) -> bytes | None:
        """The last line when the data did not end with a newline (else None)."""
        if not self.parts and not self.skipping:
            return None
        return self._end(b"")


def file_lines(handle: Any, limit: int | None = None) -> Iterator[bytes]:
    """The lines of a binary file, bounded by the line limit (see LineSplitter)."""
    splitter = LineSplitter(current().line_bytes if limit is None else limit)
    while chunk := handle.read(CHUNK):
        yield from splitter.feed(chunk)
    tail = splitter.finish()
    if tail is not None:
        yield tail


BATCH = 256  # lines decoded and put into the columns together (small: they stay in cache)


def batches(lines: Iterable[bytes]) -> Iterator[list[bytes]]:
    """The lines in lists of BATCH; a read error comes after the lines read before it."""
    batch: list[bytes] = []
    try:
        for line in lines:
            batch.append(line)
            if len(batch) == BATCH:
                yield batch
                batch = []
    except OSError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


def shallow_objects(metas: list[bytes], nulls: int = 0) -> bool:
    """Whether every one of a batch's metadata bytes is a JSON object (`nulls` of them may be
    `null`) with no more brackets than MAX_DEPTH, which bounds its depth: the batch readers'
    checks, each one C loop over the batch (False: the batch goes line by line)."""
    if sum(map(bytes.startswith, metas, repeat(b"{"))) + nulls != len(metas):
        return False
    opened = map(add, map(bytes.count, metas, repeat(b"[")), map(bytes.count, metas, repeat(b"{")))
    return max(opened) <= MAX_DEPTH


def loads_record(raw: bytes | str) -> Any:
    """One JSON value, as `json.loads` would give it.

    Raises ValueError with json's message (JSONDecodeError, or a plain ValueError for an
    integer over Python's digit limit), and RecursionError for a value nested deeper than
    MAX_DEPTH.
    """
    try:
        value = _DECODE(raw)
    except (msgspec.DecodeError, RecursionError):
        value = json.loads(raw)  # json's own error message, or a value msgspec refuses
    brackets = raw.count(b"[") + raw.count(b"{") if type(raw) is bytes else None
    if brackets is None:
        brackets = raw.count("[") + raw.count("{")
    # counting brackets is C-fast; the walk runs only for the rare line that could be that deep
    if brackets > MAX_DEPTH and depth_exceeds(value):
        raise RecursionError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def json_records(
    lines: Iterable[bytes],
    sink: FileProblems,
    typed: Callable[[bytes], Any] | None = None,
    start: int = 1,
) -> Iterator[tuple[int, Any]]:
    """(1-based line number, decoded value) of each line; blank lines are skipped silently, and a
    line that is not UTF-8 or not JSON, or too long (a TooLong), becomes a problem in `sink`
    ("skipped the line").

    `typed`: a msgspec decoder's `decode` for the well-formed line (a Struct, validated in C);
    a line it refuses is decoded as any JSON value instead, for the caller's lenient reader.
    It guards its own free-form parts (metadata) against deep nesting: the only parts that can
    nest, so the cost of the guard is theirs, not the line's. `start`: the first line's number.
    """
    for line_no, raw in enumerate(lines, start=start):
        if typed is not None:
            try:
                value = typed(raw)
            except (msgspec.DecodeError, RecursionError):
                pass  # not that shape (or not JSON at all): the generic path says which
            else:
                yield line_no, value
                continue
        try:
            value = _DECODE(raw)
        except (msgspec.DecodeError, RecursionError):
            if type(raw) is TooLong:
                sink.add(f"line {line_no}", "skipped the line", raw.why())
                continue
            if not raw.strip():
                continue
            value = _slow(raw, line_no, sink)
            if value is _SKIP:
                continue
        else:
            if (raw.count(b"[") + raw.count(b"{")) > MAX_DEPTH and depth_exceeds(value):
                sink.add(f"line {line_no}", "skipped the line", "not JSON (nested too deeply)")
                continue
        yield line_no, value


_SKIP = object()


def _slow(raw: bytes, line_no: int, sink: FileProblems) -> Any:
    text = sink.decode_line(raw, line_no)
    if text is None:
        return _SKIP
    try:
        return loads_record(text)
    except (ValueError, RecursionError) as exc:
        sink.add(f"line {line_no}", "skipped the line", f"not JSON ({json_error(exc)})")
        return _SKIP
