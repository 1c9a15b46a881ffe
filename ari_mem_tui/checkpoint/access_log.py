"""`memory_access*.jsonl` (§4): read/write telemetry, merged from every file and sorted by ts.

Several processes append to the live file, so lines are only roughly in time order; rotated files
(`memory_access.<unix ts>.jsonl`) hold older events. The future bucketed layout keeps the same
files under `<workspace>/runs/<run_id>/traces/` (§1.1), which is read too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container
from dataclasses import dataclass
from itertools import filterfalse
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ari_mem_tui.checkpoint.jsonfile import MAX_DEPTH, json_error, read_json, usable_file
from ari_mem_tui.checkpoint.jsonlines import (
    batches,
    file_lines,
    json_records,
    loads_record,
    shallow_objects,
)
from ari_mem_tui.checkpoint.paths import display_name, workspace_root
from ari_mem_tui.checkpoint.problems import FileProblems
from ari_mem_tui.checkpoint.values import as_float, as_int, short
from ari_mem_tui.model import Events, Problem, StringTable
from ari_mem_tui.model.columns import EventBuilder

LIVE_FILE = "memory_access.jsonl"
SUMMARY_FILE = "memory_access.summary.json"
ROTATED = re.compile(r"^memory_access\.(\d+)\.jsonl$")
_KNOWN_SET = frozenset(
    (
        "ts",
        "node_id",
        "op",
        "collection",
        "entry_id",
        "text_preview",
        "metadata",
        "query",
        "ancestor_ids",
        "limit",
        "results",
    )
)
# names the loader sets; a log line carrying them must not pre-empt the loader's inference
_RESERVED = ("source", "source_line", "reader", "reader_how", "joined_entry", "reader_note")


@dataclass(slots=True)
class AccessLine:
    """One parsed access-log line: the AccessEvent fields, or why the line was skipped."""

    fields: dict[str, Any] | None = None
    error: str | None = None
    notes: list[str] | tuple = ()
    extra: dict[str, Any] | None = None  # unknown keys, kept on the event


def _opt_str(value: Any, key: str, notes: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    notes.append(f"{key} is a {type(value).__name__}; ignored")
    return None


def _ancestors(value: Any, notes: list[str]) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        notes.append(f"ancestor_ids is a {type(value).__name__}; ignored")
        return None
    kept = [item for item in value if isinstance(item, str)]
    if len(kept) != len(value):
        notes.append(f"dropped {len(value) - len(kept)} non-string ancestor ids")
    return kept


def _results(value: Any, notes: list[str]) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        notes.append(f"results is a {type(value).__name__}; ignored")
        return []
    kept = [item for item in value if isinstance(item, dict)]
    if len(kept) != len(value):
        notes.append(f"dropped {len(value) - len(kept)} results that are not objects")
    return kept


def _limit(value: Any, notes: list[str]) -> int | None:
    number = as_int(value)
    if number is None and value is not None:
        notes.append(f"limit {short(repr(value), 20)} is not an integer; ignored")
    return number


def _metadata(value: Any, notes: list[str]) -> dict[str, Any] | None:
    if value is not None and type(value) is not dict:
        notes.append(f"metadata is a {type(value).__name__}; ignored")
        return None
    return value


def _checked_fields(obj: dict[str, Any], ts: float, op: str, notes: list[str]) -> dict[str, Any]:
    """AccessEvent fields of a decoded line the typed reader did not take: each field as it
    is when it has its type, else what its checker keeps of it, with a note saying so."""
    get = obj.get
    # checked in this order so that the notes read in the order of the line's fields
    node_id = _opt_str(get("node_id"), "node_id", notes) or ""
    collection = _opt_str(get("collection"), "collection", notes) or ""
    entry_id = _opt_str(get("entry_id"), "entry_id", notes)
    preview = _opt_str(get("text_preview"), "text_preview", notes)
    query = _opt_str(get("query"), "query", notes)
    metadata = _metadata(get("metadata"), notes)
    ancestors = _ancestors(get("ancestor_ids"), notes)
    limit = _limit(get("limit"), notes)
    results = _results(get("results"), notes)
    return {
        "ts": ts,
        "node_id": node_id,
        "op": op,
        "collection": collection,
        "entry_id": entry_id,
        "text_preview": preview,
        "metadata": metadata,
        "query": query,
        "ancestor_ids": ancestors,
        "limit": limit,
        "results": results,
    }


def parse_access_line(line: str | bytes) -> AccessLine:
    """Parse one line of the access log into AccessEvent fields. Never raises."""
    if not line or line.isspace():
        return AccessLine()
    try:
        obj = loads_record(line)
    except (ValueError, RecursionError) as exc:
        return AccessLine(error=f"not JSON ({json_error(exc)})")
    return parse_access_object(obj)


def parse_access_object(obj: Any) -> AccessLine:
    """AccessEvent fields of one decoded access-log line, or why it is skipped. Never raises."""
    if type(obj) is not dict:
        return AccessLine(error=f"a JSON {type(obj).__name__}, not an object")
    ts = obj.get("ts")
    if type(ts) is not float:
        ts = as_float(ts)
        if ts is None:
            return AccessLine(error=f"ts {short(repr(obj.get('ts')), 30)} is not a number")
    elif not math.isfinite(ts):
        return AccessLine(error=f"ts {ts!r} is not a finite number")
    op = obj.get("op")
    if op != "read" and op != "write":
        return AccessLine(error=f"unknown op {short(repr(op), 30)}")
    notes: list[str] = []
    fields = _checked_fields(obj, ts, op, notes)
    extra = None
    if not _KNOWN_SET.issuperset(obj):
        extra = {key: value for key, value in obj.items() if key not in _KNOWN_SET}
        for key in _RESERVED:
            if extra.pop(key, None) is not None:
                notes.append(f"ignored the loader's own field {key!r}")
    return AccessLine(fields=fields, notes=notes, extra=extra)


class _Row(msgspec.Struct, forbid_unknown_fields=True):
    """One `results` item of the shapes ARI writes (§4.2); any other item takes the lenient
    reader. UNSET: the key is absent."""

    entry_id: str | None | UnsetType = UNSET
    src_node_id: str | None | UnsetType = UNSET
    node_id: str | None | UnsetType = UNSET
    score: float | None | UnsetType = UNSET
    type: str | None | UnsetType = UNSET
    count: int | None | UnsetType = UNSET


_NO_RESULTS = msgspec.Raw(b"[]")


class _Line(msgspec.Struct, forbid_unknown_fields=True):
    """What one well-formed line holds (§4.2): exactly its keys, each of its type, decoded in
    C; the metadata object is kept as its JSON bytes, and so are the results, decoded
    (`_DECODE_ROWS`) once per distinct array: a run's reads return the same lists again and
    again (10k nodes: 33k reads, 590k rows, 12k distinct lists)."""

    ts: float
    op: Literal["read", "write"]
    node_id: str = ""
    collection: str = ""
    entry_id: str | None = None
    text_preview: str | None = None
    metadata: msgspec.Raw = msgspec.Raw(b"null")  # (a Raw cannot be in a union)
    query: str | None = None
    ancestor_ids: list[str] | None = None
    limit: int | None = None
    results: msgspec.Raw = _NO_RESULTS


_DECODE_LINE = msgspec.json.Decoder(_Line).decode
_DECODE_ROWS = msgspec.json.Decoder(list[_Row]).decode


class _NotPlain(Exception):
    """A line the typed reader does not take whole; the lenient reader reads it."""


def _typed_line(raw: bytes) -> _Line:
    """The well-formed line, decoded and checked in C (its metadata an object, not nested too
    deeply: only metadata can nest, so only its bytes are counted); raises for any other line
    (the lenient reader then says what it kept)."""
    line = _DECODE_LINE(raw)
    if not math.isfinite(line.ts):
        raise msgspec.ValidationError("ts is not finite")
    data = bytes(line.metadata)
    if data == b"null":
        line.metadata = None  # type: ignore[assignment]
    else:
        if data[:1] != b"{":
            raise msgspec.ValidationError("metadata is not an object")
        if data.count(b"[") + data.count(b"{") > MAX_DEPTH:
            raise msgspec.ValidationError("metadata may be nested too deeply")
        line.metadata = data  # type: ignore[assignment]
    line.results = _DECODE_ROWS(line.results)  # type: ignore[assignment]
    return line


def _add_line(events: EventBuilder, line: _Line, source: str, line_no: int) -> None:
    events.add(
        line.ts,
        line.op,
        line.node_id,
        line.collection,
        line.entry_id,
        line.text_preview,
        line.metadata,  # type: ignore[arg-type]  # (its JSON bytes, or None)
        line.query,
        line.ancestor_ids,
        line.limit,
        source,
        line_no,
        structs=line.results,
    )


def _add_fields(events: EventBuilder, parsed: AccessLine, source: str, line_no: int) -> None:
    fields = parsed.fields or {}
    events.add(
        fields["ts"],
        fields["op"],
        fields["node_id"],
        fields["collection"],
        fields["entry_id"],
        fields["text_preview"],
        None,
        fields["query"],
        fields["ancestor_ids"],
        fields["limit"],
        source,
        line_no,
        metadata=fields["metadata"],
        rows=fields["results"],
        extra=parsed.extra,
    )


# ---- files ----


def _log_dirs(ckpt: Path, run_id: str | None, problems: list[Problem]) -> list[Path]:
    dirs = [ckpt]
    # the run id from tree.json names a folder: one that is absolute or climbs out (`../x`)
    # could make us read files outside the run, so it is not followed
    if run_id and (Path(run_id).is_absolute() or ".." in Path(run_id).parts or "/" in run_id):
        problems.append(
            Problem(
                file="tree.json",
                what="did not look for runs/<run_id>/traces",
                why=f"run_id {run_id!r} is not a plain folder name",
            )
        )
        return dirs
    if run_id:
        traces = workspace_root(ckpt) / "runs" / run_id / "traces"
        if traces.is_dir() and traces.resolve() != ckpt.resolve():
            dirs.append(traces)
    return dirs


def access_files(ckpt: Path, run_id: str | None, problems: list[Problem]) -> list[Path]:
    """Every access-log file: rotated ones oldest first, then the live file, per directory."""
    found: list[Path] = []
    for folder in _log_dirs(ckpt, run_id, problems):
        rotated = []
        for path in folder.glob("memory_access.*.jsonl"):
            match = ROTATED.match(path.name)
            if match and path.is_file():
                rotated.append((int(match.group(1)), path.name, path))
        found += [item[2] for item in sorted(rotated)]
        if usable_file(folder / LIVE_FILE, display_name(ckpt, folder / LIVE_FILE), problems):
            found.append(folder / LIVE_FILE)
    return found


def read_access_file(path: Path, name: str, problems: list[Problem], events: EventBuilder) -> None:
    """Every readable event of one file into `events`, a problem for each line skipped."""
    sink = FileProblems(name, problems)
    before = len(events)
    done = 0  # lines read
    try:
        with path.open("rb") as handle:
            for batch in batches(file_lines(handle)):
                typed = _typed_lines(batch, events.result_ranges)
                if typed is not None:
                    events.add_lines(*typed, name, done + 1)
                else:
                    _read_lines(batch, done + 1, name, sink, events)
                done += len(batch)
    except OSError as exc:
        problems.append(
            Problem(
                file=name,
                what=f"kept {len(events) - before} events read before the error",
                why=f"read error ({exc.__class__.__name__})",
                severity="error",
            )
        )
    sink.close()


_TS = attrgetter("ts")
_META = attrgetter("metadata")
_RESULTS = attrgetter("results")
Typed = tuple[list[_Line], list[bytes | None], list[bytes], dict[bytes, list[_Row]]]


def _typed_lines(batch: list[bytes], known: Container[bytes]) -> Typed | None:
    """Every line of the batch decoded as a well-formed line (`_typed_line`'s checks, each
    done in one C loop over the batch): the lines, their metadata bytes, their results' JSON
    bytes, and the rows of each results array not in `known` (met in an earlier batch),
    decoded once; None when any line is not one (the batch then takes the line-by-line
    reader, which says what each line is)."""
    try:
        lines = list(map(_DECODE_LINE, batch))
        results = list(map(bytes, map(_RESULTS, lines)))
        fresh = dict.fromkeys(filterfalse(known.__contains__, results))
        fresh = dict(zip(fresh, map(_DECODE_ROWS, fresh)))
    except (msgspec.DecodeError, RecursionError):
        return None
    if not all(map(math.isfinite, map(_TS, lines))):
        return None
    metas: list[Any] = list(map(bytes, map(_META, lines)))
    nulls = metas.count(b"null")
    if not shallow_objects(metas, nulls):
        return None
    if nulls:
        metas = [None if meta == b"null" else meta for meta in metas]
    return lines, metas, results, fresh


def _read_lines(
    batch: list[bytes], first: int, name: str, sink: FileProblems, events: EventBuilder
) -> None:
    """The lines of a batch one by one (numbered from `first`): each well-formed one as it
    is, any other through the lenient reader, which says what it kept or skipped."""
    for line_no, obj in json_records(batch, sink, _typed_line, first):
        if type(obj) is _Line:
            _add_line(events, obj, name, line_no)
            continue
        parsed = parse_access_object(obj)
        if parsed.error:
            sink.add(f"line {line_no}", "skipped the line", parsed.error)
            continue
        if parsed.notes:
            sink.add(
                f"line {line_no}",
                "read the event with defaults",
                "; ".join(parsed.notes),
                "info",
            )
        _add_fields(events, parsed, name, line_no)


def read_access_log(
    ckpt: Path,
    run_id: str | None,
    problems: list[Problem],
    strings: StringTable | None = None,
    previews: tuple[Any, Any] | None = None,
) -> Events:
    """All events of all access-log files, as columns coded into `strings`, stably sorted by
    ts. `previews`: (source_of, the entries being built) to keep a write's preview as the
    entry text it starts (EventBuilder._previews), not as its own bytes."""
    events = EventBuilder(strings if strings is not None else StringTable())
    if previews is not None:
        events.source_of, events.derived_from = previews
    for path in access_files(ckpt, run_id, problems):
        read_access_file(path, display_name(ckpt, path), problems, events)
    return events.finish()


def read_access_summary(
    ckpt: Path, run_id: str | None, problems: list[Problem]
) -> dict[str, dict[str, int]]:
    """`memory_access.summary.json`: per-node read/write counts of compacted rotated logs."""
    counts: dict[str, dict[str, int]] = {}
    for folder in _log_dirs(ckpt, run_id, []):  # read_access_log already said what was refused
        path = folder / SUMMARY_FILE
        if not path.is_file():
            continue
        name = display_name(ckpt, path)
        document = read_json(path, name, problems, retry=False)
        if document is None:
            continue
        if not isinstance(document, dict):
            problems.append(Problem(file=name, what="skipped the file", why="not a JSON object"))
            continue
        for node_id, value in document.items():
            row = value if isinstance(value, dict) else {}
            clean = {k: as_int(row.get(k)) for k in ("writes", "reads")}
            if not isinstance(value, dict) or None in clean.values():
                problems.append(
                    Problem(
                        file=name,
                        where=f"node {node_id}",
                        what="counted 0 for bad values",
                        why=f"expected {{writes: int, reads: int}}, got {short(repr(value), 40)}",
                    )
                )
            target = counts.setdefault(node_id, {"writes": 0, "reads": 0})
            for key, number in clean.items():
                target[key] += number or 0
    return counts
