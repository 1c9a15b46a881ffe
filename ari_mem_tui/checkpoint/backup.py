"""`memory_backup.jsonl.gz`: node_scope, react_step and core_seed records (§3).

The backup is written from an atexit hook that SIGKILL can cut short, so the gzip may be
truncated or corrupt: everything decoded before the damage is kept and the stop is reported.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import msgspec

from ari_mem_tui.checkpoint.jsonfile import MAX_DEPTH, json_error
from ari_mem_tui.checkpoint.jsonlines import (
    LineSplitter,
    TooLong,
    batches,
    json_records,
    loads_record,
    shallow_objects,
)
from ari_mem_tui.checkpoint.limits import current, hint, mib
from ari_mem_tui.checkpoint.problems import FileProblems
from ari_mem_tui.checkpoint.values import as_float, as_int, nonfinite, nonfinite_why, short
from ari_mem_tui.model import Entries, Problem, StringTable
from ari_mem_tui.model.columns import (
    KIND_CODE,
    KINDS,
    EntryBuilder,
    fields_of,
    json_value,
    take_entries,
)

BACKUP_FILE = "memory_backup.jsonl.gz"
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_MAX_OUT = 8 << 20  # decompress in bounded steps: a gzip bomb must not take all memory


# ---- one line ----


@dataclass(slots=True)
class BackupLine:
    """One parsed backup line: a normalized record, or why it was skipped."""

    record: dict[str, Any] | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _ts(value: Any, notes: list[str]) -> float | None:
    ts = as_float(value)
    if ts is None and value is not None:
        notes.append(f"ts {short(repr(value), 30)} is not a number; kept without ts")
    return ts


def _metadata(value: Any, notes: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    notes.append(f"metadata is a {type(value).__name__}, not an object; replaced by {{}}")
    return {}


def _text(value: Any, key: str, notes: list[str]) -> str | None:
    if isinstance(value, str):
        return value
    if value is None:
        return None
    notes.append(f"{key} is a {type(value).__name__}; kept as its JSON text")
    return json.dumps(value, ensure_ascii=False)


def parse_memory_record(obj: dict[str, Any], kind: str) -> BackupLine:
    """A node_scope / react_step record (also used for the legacy stores)."""
    notes: list[str] = []
    text = obj.get("text")
    if type(text) is not str:
        text = _text(obj.get("content") if text is None else text, "text", notes)
        if text is None:
            return BackupLine(error=f"{kind} record without text")
    metadata = obj.get("metadata")
    if type(metadata) is not dict:
        metadata = _metadata(metadata, notes)
    ts = obj.get("ts")
    if type(ts) is not float or not math.isfinite(ts):
        ts = _ts(ts, notes)
    if kind == "node_scope":
        node_id = obj.get("node_id")
        if type(node_id) is not str or not node_id:
            return BackupLine(error="node_scope record without a string node_id")
    else:
        owner = metadata.get("node_id")
        node_id = owner if type(owner) is str else ""
    step = metadata.get("step")
    if step is not None and type(step) is not int:
        step = as_int(step)
    record = {
        "kind": kind,
        "node_id": node_id,
        "text": text,
        "metadata": metadata,
        "ts": ts,
        "step": step,
    }
    return BackupLine(record=record, notes=notes)


def parse_core_seed(obj: dict[str, Any]) -> BackupLine:
    notes: list[str] = []
    context = obj.get("context")
    if isinstance(context, str):  # tolerate the Letta block's JSON-string form
        try:
            context = json.loads(context) if context.strip() else {}
        except (ValueError, RecursionError):
            notes.append("context is a string that is not JSON; ignored")
            context = {}
    if context is None:
        context = {}
    if not isinstance(context, dict):
        notes.append(f"context is a {type(context).__name__}, not an object; ignored")
        context = {}
    record = {
        "kind": "core_seed",
        "persona": obj.get("persona") if isinstance(obj.get("persona"), str) else "",
        "human": obj.get("human") if isinstance(obj.get("human"), str) else "",
        "context": context,
        "seeded_at": as_float(obj.get("seeded_at")),
    }
    return BackupLine(record=record, notes=notes)


def parse_backup_line(line: str | bytes) -> BackupLine:
    """Parse one JSON line of the backup. Never raises."""
    if not line.strip():
        return BackupLine()
    try:
        obj = loads_record(line)
    except (ValueError, RecursionError) as exc:
        return BackupLine(error=f"not JSON ({json_error(exc)})")
    return parse_backup_object(obj)


def parse_backup_object(obj: Any) -> BackupLine:
    """A normalized record from one decoded backup line, or why it is skipped. Never raises."""
    if not isinstance(obj, dict):
        return BackupLine(error=f"a JSON {type(obj).__name__}, not an object")
    kind = obj.get("kind")
    if kind in ("node_scope", "react_step"):
        return parse_memory_record(obj, kind)
    if kind == "core_seed":
        return parse_core_seed(obj)
    if kind is None and "node_id" in obj and "text" in obj:
        parsed = parse_memory_record(obj, "node_scope")
        parsed.notes.append("record without kind; read as node_scope")
        return parsed
    return BackupLine(error=f"unknown record kind {short(repr(kind), 40)}")


# ---- the gzip stream ----


@dataclass
class StreamStop:
    """Why reading stopped early, if it did."""

    reason: str | None = None
    line: int = 0
    byte: int = 0  # offset in the decompressed stream


class GzipLines:
    """Lines of a (possibly damaged, possibly multi-member) gzip file, as bytes.

    Iterate, then look at `.stop`. A plain uncompressed file is read as-is (`.plain` True).
    Lines past the line limit come as TooLong; decompressing past the limit for this file's
    size (a gzip bomb) stops reading, with `.stop` saying so.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stop = StreamStop()
        self.plain = False
        self.lines = 0
        self.offset = 0
        self.limits = current()
        self.splitter = LineSplitter(self.limits.line_bytes)
        self.allowed = self.limits.gzip_bytes

    def __iter__(self) -> Iterator[bytes]:
        with self.path.open("rb") as handle:
            self.allowed = self.limits.gzip_allowed(os.fstat(handle.fileno()).st_size)
            head = handle.read(2)
            handle.seek(0)
            if head and head != GZIP_MAGIC:
                self.plain = True
                yield from self._plain(handle)
                return
            yield from self._gzip(handle)

    def _count(self, lines: list[bytes]) -> Iterator[bytes]:
        """The lines, counted a chunk at a time (a read error or a stop comes between chunks,
        when every line before it was given)."""
        self.lines += len(lines)
        self.offset += sum(map(len, lines)) + len(lines)
        self.offset += sum(raw.size for raw in lines if type(raw) is TooLong)  # (len 0)
        return iter(lines)

    def _plain(self, handle) -> Iterator[bytes]:
        while chunk := handle.read(_CHUNK):
            yield from self._count(self.splitter.feed(chunk))
        yield from self._finish()

    def _gzip(self, handle) -> Iterator[bytes]:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        feed = self.splitter.feed
        started = between = False  # between: one gzip member ended, the next not begun
        produced = 0
        while chunk := handle.read(_CHUNK):
            data = chunk
            while data:
                if between:
                    data = data.lstrip(b"\x00")  # zero padding after a member is harmless
                    if not data:
                        break
                    if not data.startswith(GZIP_MAGIC[: len(data)]):
                        self.stop.reason = "bytes after the end of the gzip stream"
                        yield from self._finish()
                        return
                    decomp, between = zlib.decompressobj(16 + zlib.MAX_WBITS), False
                saved = decomp.copy()
                try:
                    out = decomp.decompress(data, _MAX_OUT)
                except zlib.error as exc:
                    self.stop.reason = f"corrupt gzip ({exc})"
                    salvaged = _salvage(saved, data, max(0, self.allowed - produced))
                    yield from self._count(feed(salvaged))
                    yield from self._finish()
                    return
                started = True
                produced += len(out)
                if produced > self.allowed:  # the lines within the allowance, then stop
                    yield from self._count(feed(out[: len(out) - (produced - self.allowed)]))
                    self.stop.reason = (
                        f"it decompresses to more than {mib(self.allowed)} (from "
                        f"{mib(os.fstat(handle.fileno()).st_size)}; a gzip bomb?), over the limit"
                        f" ({hint('gzip-mib')}, gzip-ratio or gzip-floor-mib)"
                    )
                    yield from self._finish(complete_only=True)
                    return
                yield from self._count(feed(out))
                if decomp.eof:
                    data, between = decomp.unused_data, True
                else:
                    data = decomp.unconsumed_tail
        if started and not between:
            try:
                yield from self._count(feed(decomp.flush()))
            except zlib.error:
                pass
            if not decomp.eof:
                self.stop.reason = "truncated gzip (the stream ends before its end marker)"
        yield from self._finish()

    def _finish(self, complete_only: bool = False) -> Iterator[bytes]:
        if self.stop.reason:
            self.stop.line = self.lines + 1
            self.stop.byte = self.offset
        pending = None if complete_only else self.splitter.finish()
        if pending or type(pending) is TooLong:
            self.lines += 1
            self.offset += pending.size if type(pending) is TooLong else len(pending)
            yield pending


def _salvage(decomp, data: bytes, cap: int, step: int = 1024) -> bytes:
    """What a failed decompress call would have produced before the damage (at most `cap`
    bytes: a corrupt gzip bomb is bounded too).

    Feeds the input in small pieces, then the failing piece byte by byte, so output decoded
    before a bad CRC or a corrupt block is not lost with the call that raised.
    """
    out: list[bytes] = []
    total = 0
    for start in range(0, len(data), step):
        if total >= cap:
            break
        saved = decomp.copy()
        try:
            piece = decomp.decompress(data[start : start + step], cap - total)
        except zlib.error:
            if step > 1:
                out.append(_salvage(saved, data[start : start + step], cap - total, 1))
            break
        out.append(piece)
        total += len(piece)
    return b"".join(out)


# ---- the whole file ----


@dataclass
class BackupResult:
    """What the backup gave: its entries are rows `start`… of `rows` (a builder the caller may
    share with other sources), its core seed, how many records were read."""

    rows: EntryBuilder = field(default_factory=lambda: EntryBuilder(StringTable()))
    start: int = 0
    end: int = 0
    core_seed: dict[str, Any] | None = None
    records: int = 0  # lines read as records (any kind)

    @property
    def count(self) -> int:
        return self.end - self.start

    @cached_property
    def entries(self) -> Entries:
        """The backup's entries alone, as a table (a caller that did not share its builder)."""
        table = self.rows.finish()
        if (self.start, self.end) == (0, len(table)):
            return table
        return take_entries(table, range(self.start, self.end))

    def stamps(self) -> list[float]:
        self.rows.flush()
        ts = self.rows.ts
        return [t for t in ts[self.start : self.end] if not math.isnan(t)]


def add_entry(
    rows: EntryBuilder, record: dict[str, Any], source: str, line: int, partial: bool = False
) -> None:
    """A row from a record checked by `parse_memory_record`."""
    rows.add(
        KIND_CODE[record["kind"]],
        record["node_id"],
        record["text"],
        None,
        record["ts"],
        source,
        line,
        record["step"],
        partial,
        metadata=record["metadata"],
    )


class _Record(msgspec.Struct):
    """A well-formed node_scope / react_step line, as §3.2 and §3.3 give it (other keys are
    ignored, as `parse_memory_record` ignores them); the metadata kept as its JSON bytes."""

    kind: Literal["node_scope", "react_step"]
    text: str
    ts: float
    metadata: msgspec.Raw = msgspec.Raw(b"{}")
    node_id: str = ""


class _Meta(msgspec.Struct):
    """The two metadata keys the loader reads itself (any others are left in the bytes)."""

    node_id: Any = None
    step: int | None = None


_DECODE_RECORD = msgspec.json.Decoder(_Record).decode
_DECODE_META = msgspec.json.Decoder(_Meta).decode
_EMPTY_META = b"{}"


class _Checked(tuple):
    """A record `_typed_record` already checked: (kind code, owner, text, metadata bytes, ts,
    step); a JSON line never decodes to this type."""

    __slots__ = ()

    def as_record(self) -> dict[str, Any]:
        """The record `parse_memory_record` gives for the same line."""
        kind, node_id, text, meta, ts, step = self
        return {
            "kind": KINDS[kind],
            "node_id": node_id,
            "text": text,
            "metadata": json_value(meta),
            "ts": ts,
            "step": step,
        }


def _typed_record(raw: bytes) -> _Checked:
    """The checked record of a well-formed line, decoded in C; raises for any other line (the
    lenient reader then says what it kept or why it skipped it)."""
    line = _DECODE_RECORD(raw)
    meta = bytes(line.metadata)
    node_id, step = line.node_id, None
    if meta != _EMPTY_META:
        if meta[:1] != b"{" or meta.count(b"[") + meta.count(b"{") > MAX_DEPTH:
            raise msgspec.ValidationError("metadata is not a plain object")
        keys = _DECODE_META(meta)  # (an int step only: any other takes the lenient reader)
        step = keys.step
        if line.kind == "react_step":
            node_id = keys.node_id if type(keys.node_id) is str else ""
    if not node_id and line.kind == "node_scope" or not math.isfinite(line.ts):
        raise msgspec.ValidationError("not a plain record")
    return _Checked((KIND_CODE[line.kind], node_id, line.text, meta, line.ts, step))


_RECORD_FIELDS = ("kind", "node_id", "text", "metadata", "ts")


def _typed_records(batch: list[bytes]) -> tuple[Any, ...] | None:
    """Every line of the batch as `_typed_record` checks it, each check done in one C loop
    over the batch: (kind codes, owners, texts, metadata bytes, ts, steps); None when any line
    is not a well-formed record (the batch then takes the line-by-line reader)."""
    try:
        records = list(map(_DECODE_RECORD, batch))
    except (msgspec.DecodeError, RecursionError):
        return None
    kinds, owners, texts, raws, stamps = fields_of(records, _RECORD_FIELDS)
    if not all(map(math.isfinite, stamps)):
        return None
    metas = list(map(bytes, raws))
    steps: Any = (None,) * len(metas)
    if metas.count(_EMPTY_META) != len(metas):
        keyed = _metadata_keys(kinds, owners, metas)
        if keyed is None:
            return None
        steps, owners = keyed
    if "" in owners and any(not o and k == "node_scope" for k, o in zip(kinds, owners)):
        return None
    return [KIND_CODE[kind] for kind in kinds], owners, texts, metas, stamps, steps


def _metadata_keys(
    kinds: list[str], owners: list[str], metas: list[bytes]
) -> tuple[list[Any], list[str]] | None:
    """What a batch's metadata says, decoded in one C loop: each record's step, and the owners
    (a react record's is its metadata's node_id); None when any metadata is not a plain object
    (the batch then takes the line-by-line reader)."""
    if not shallow_objects(metas):
        return None
    try:
        keys = list(map(_DECODE_META, metas))  # ({} gives no step and no owner)
    except (msgspec.DecodeError, RecursionError):
        return None
    steps = [key.step for key in keys]
    if "react_step" in kinds:
        owners = [
            owner if kind != "react_step" or meta == _EMPTY_META
            else key.node_id if type(key.node_id) is str else ""
            for kind, owner, meta, key in zip(kinds, owners, metas, keys)
        ]  # fmt: skip
    return steps, owners


def read_backup(
    path: Path, name: str, problems: list[Problem], rows: EntryBuilder | None = None
) -> BackupResult:
    """Every readable record of the backup into `rows` (a new table when None), with a
    problem for each skipped line."""
    result = BackupResult() if rows is None else BackupResult(rows=rows, start=len(rows))
    rows = result.rows
    result.end = result.start
    sink = FileProblems(name, problems)
    stream = GzipLines(path)
    done = 0  # lines read
    try:
        for batch in batches(stream):
            checked = _typed_records(batch)
            if checked is not None:
                kinds, owners, texts, metas, stamps, steps = checked
                rows.add_rows(kinds, owners, texts, metas, stamps, name, done + 1, steps)
                result.records += len(batch)
                result.end += len(batch)
            else:
                _read_lines(batch, done + 1, name, sink, result)
            done += len(batch)
    except OSError as exc:
        problems.append(
            Problem(
                file=name,
                where=f"line {stream.lines + 1}",
                what=f"kept {result.count} entries read before it",
                why=f"read error ({exc.__class__.__name__}: {exc})",
                severity="error",
            )
        )
    sink.close()
    if stream.plain:
        problems.append(Problem(file=name, what="read as plain JSON Lines", why="not a gzip file"))
    if stream.stop.reason:
        problems.append(
            Problem(
                file=name,
                where=f"line {stream.stop.line} (byte {stream.stop.byte} of the decompressed data)",
                what=f"kept the {result.count} entries decoded before it; the rest is lost",
                why=stream.stop.reason,
                severity="error",
            )
        )
    return result


def _read_lines(
    batch: list[bytes], first: int, name: str, sink: FileProblems, result: BackupResult
) -> None:
    """The lines of a batch one by one (numbered from `first`): each well-formed record as it
    is, any other through the lenient reader, which says what it kept or skipped."""
    add = result.rows.add
    for line_no, obj in json_records(batch, sink, _typed_record, first):
        if type(obj) is _Checked:
            result.records += 1
            kind, node_id, text, meta, ts, step = obj
            add(kind, node_id, text, meta, ts, name, line_no, step)
            result.end += 1
            continue
        _read_record(obj, line_no, name, sink, result)


def _read_record(
    obj: Any, line_no: int, name: str, sink: FileProblems, result: BackupResult
) -> None:
    where = f"line {line_no}"
    parsed = parse_backup_object(obj)
    if parsed.error:
        sink.add(where, "skipped the line", parsed.error)
        return
    if parsed.record is None:
        return
    result.records += 1
    if parsed.notes:
        sink.add(where, "read the record with defaults", "; ".join(parsed.notes), "info")
    if parsed.record["kind"] == "core_seed":
        odd = nonfinite(parsed.record["context"], "context")
        if odd:  # (json reads NaN, Infinity and 1e400; a JSON output writes null for them)
            sink.add(where, "kept the core_seed's context as read", nonfinite_why(odd))
        if result.core_seed is not None:
            sink.add(
                where,
                "used this core_seed record",
                "more than one core_seed; the last wins",
                "info",
            )
        result.core_seed = parsed.record
        return
    add_entry(result.rows, parsed.record, name, line_no)
    result.end += 1
