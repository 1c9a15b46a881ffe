"""Joining access-log write events to memory entries (§4.6), so logged entry ids resolve.

Backups carry no passage ids. A write event and an entry are the same write when they have the
same owner, the entry text starts with the event's `text_preview`, their metadata are equal, and
the entry's ts (taken before the insert) is at most JOIN_TOLERANCE_S before the event's ts (taken
after it). Events are matched in time order to the nearest unclaimed entry, which pairs exact
duplicates 1:1. Entries are bucketed by (kind, owner, hash of the first PREVIEW_CHARS
characters), so the join is linear in practice.

It works on the columns (model/columns/): the entries still being built (an EntryBuilder,
which the entries made for unmatched events are appended to) and the finished events; a joined
pair sets the entry's passage id and the event's `joined` row.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from itertools import repeat
from typing import Any

from ari_mem_tui.checkpoint.values import as_int
from ari_mem_tui.model import Events, Problem, StringTable
from ari_mem_tui.model.columns import KIND_CODE, NONE, PREFIX_CHARS, EntryBuilder, json_value

PREVIEW_CHARS = PREFIX_CHARS  # ARI_MEMORY_ACCESS_PREVIEW_CHARS default
JOIN_TOLERANCE_S = 2.0  # event ts − entry ts: the Letta round-trip, with room to spare
CLOCK_SLACK_S = 0.01  # float rounding: an entry may appear a hair after its event
KINDS = ("node_scope", "react_step")


def owner_of(collection: str, node_id: str, metadata: Any) -> str:
    """The entry owner a write event names: node_id, or metadata.node_id for react writes."""
    if collection == "react_step":
        owner = (metadata or {}).get("node_id") if isinstance(metadata, dict) else None
        return owner if isinstance(owner, str) else ""
    return node_id


class _Bucket:
    """Entry rows sharing a bucket key: timed ones sorted by ts, then untimed."""

    __slots__ = ("stamps", "timed", "untimed")

    def __init__(self) -> None:
        self.stamps: list[float] = []
        self.timed: list[int] = []
        self.untimed: list[int] = []


class EntryIndex:
    """The entries still being built, bucketed for the join; claimed rows are marked taken.

    A bucket's key is one int (the hash of kind, owner and text prefix) and a bucket of one row
    is that row itself: most hold one, and a 200k-entry run's index then costs a dict of ints,
    not 200k objects. A key shared by accident is harmless: `_fits` checks kind and owner."""

    def __init__(self, rows: EntryBuilder) -> None:
        self.rows = rows
        ts, kind, node, prefix = rows.ts, rows.kind, rows.node, rows.prefix
        timed = sorted((r for r in range(len(ts)) if ts[r] == ts[r]), key=ts.__getitem__)
        untimed = (r for r in range(len(ts)) if ts[r] != ts[r])
        buckets: dict[int, Any] = {}
        for row in (*timed, *untimed):
            key = hash((kind[row], node[row], prefix[row]))
            found = buckets.get(key)
            if found is None:
                buckets[key] = row
            elif type(found) is int:
                buckets[key] = [found, row]
            else:
                found.append(row)
        self.buckets = buckets
        self._by_owner: dict[tuple[int, int], list[int]] | None = None
        self.taken = bytearray(len(ts))

    def _bucket(self, rows: list[int]) -> _Bucket:
        ts = self.rows.ts
        bucket = _Bucket()
        for row in rows:
            if ts[row] == ts[row]:
                bucket.stamps.append(ts[row])
                bucket.timed.append(row)
            else:
                bucket.untimed.append(row)
        return bucket

    def by_owner(self) -> dict[tuple[int, int], list[int]]:
        """Rows by (kind, owner), timed by ts then untimed (for a preview shorter than the
        bucket key)."""
        if self._by_owner is None:
            kind, node, ts = self.rows.kind, self.rows.node, self.rows.ts
            groups: dict[tuple[int, int], list[int]] = {}
            for row in range(len(kind)):
                groups.setdefault((kind[row], node[row]), []).append(row)
            for rows in groups.values():
                rows.sort(key=lambda r: (ts[r] != ts[r], ts[r] if ts[r] == ts[r] else 0.0))
            self._by_owner = groups
        return self._by_owner

    def _fits(self, row: int, kind: int, owner: int, preview: bytes, meta: Any) -> bool:
        rows = self.rows
        if self.taken[row] or rows.kind[row] != kind or rows.node[row] != owner:
            return False
        start = rows.text.starts[row]
        if rows.text.ends[row] - start < len(preview):
            return False
        if rows.text.buf[start : start + len(preview)] != preview:
            return False
        return _same_metadata(rows, row, meta)

    def _nearest(self, bucket: _Bucket, ts: float, *want: Any) -> int:
        stamps = bucket.stamps
        stop = bisect_right(stamps, ts + CLOCK_SLACK_S)
        for pos in range(stop - 1, -1, -1):
            if stamps[pos] < ts - JOIN_TOLERANCE_S:
                break
            if self._fits(bucket.timed[pos], *want):
                return bucket.timed[pos]
        return next((r for r in bucket.untimed if self._fits(r, *want)), NONE)

    def _one(self, row: int, ts: float, *want: Any) -> int:
        """`_nearest` for a bucket of one row."""
        stamp = self.rows.ts[row]
        if not math.isnan(stamp) and not ts - JOIN_TOLERANCE_S <= stamp <= ts + CLOCK_SLACK_S:
            return NONE
        return row if self._fits(row, *want) else NONE

    def sources(self, owners: Sequence[int], keys: Sequence[int], datas: list) -> list[int]:
        """For each node-scope write (its owner, the hash of its preview's first PREVIEW_CHARS
        characters, its preview's bytes; None: no preview), an entry of that owner whose text
        starts with the preview, or -1: what the preview can be read from instead of being
        kept (`EventBuilder._previews`)."""
        buckets, text = self.buckets, self.rows.text
        buf, starts, ends = text.buf, text.starts, text.ends
        found = []
        # (the bucket keys hashed and looked up in C, then each preview compared in place)
        looked = map(buckets.get, map(hash, zip(repeat(0), owners, keys)))
        for bucket, data in zip(looked, datas, strict=True):
            source = NONE
            if bucket is not None and data is not None:
                for row in (bucket,) if type(bucket) is int else bucket:
                    start = starts[row]
                    if ends[row] - start >= len(data) and buf.startswith(data, start):
                        source = row
                        break
            found.append(source)
        return found

    def claim(
        self, kind: int, owner: int, ts: float, data: bytes, key: int, chars: int, meta: Any
    ) -> int:
        """The entry row this write is, or -1: `data` its preview's bytes, `key` the hash of
        its first PREVIEW_CHARS characters, `chars` its length in characters; `meta` its
        metadata (JSON bytes, or a value)."""
        want = (kind, owner, data, meta)
        found = NONE
        key = hash((kind, owner, key))
        bucket = self.buckets.get(key)
        if type(bucket) is int:
            found = self._one(bucket, ts, *want)
        elif bucket is not None:
            if type(bucket) is list:  # (made a _Bucket once, on its first claim)
                bucket = self.buckets[key] = self._bucket(bucket)
            found = self._nearest(bucket, ts, *want)
        if found < 0 and chars < PREVIEW_CHARS:  # a shorter configured preview
            text = self.rows.text
            rows = [
                row
                for row in self.by_owner().get((kind, owner), [])
                if text.buf[text.starts[row] : text.starts[row] + len(data)] == data
            ]
            found = self._nearest(self._bucket(rows), ts, *want)
        if found >= 0:
            self.taken[found] = 1
        return found


def _quick_claim(index: EntryIndex) -> Any:
    """`claim` for the common case, in one function: a bucket of one entry, in the time
    window, whose text starts with the preview and whose metadata bytes are the event's. It
    claims only what `claim` would claim; anything else (-1) is left to `claim`."""
    buckets, taken, rows = index.buckets, index.taken, index.rows
    kinds, nodes, stamps = rows.kind, rows.node, rows.ts
    text, meta_text, side = rows.text, rows.meta, rows.meta_side
    low, high = JOIN_TOLERANCE_S, CLOCK_SLACK_S

    def quick(kind: int, owner: int, ts: float, data: bytes, key: int, meta: Any) -> int:
        row = buckets.get(hash((kind, owner, key)))
        if type(row) is not int or taken[row] or kinds[row] != kind or nodes[row] != owner:
            return NONE
        stamp = stamps[row]
        if not (ts - low <= stamp <= ts + high or math.isnan(stamp)):
            return NONE
        start = text.starts[row]
        if text.ends[row] - start < len(data) or text.buf[start : start + len(data)] != data:
            return NONE
        start = meta_text.starts[row]
        if type(meta) is not bytes or start < 0 or row in side:
            return NONE
        if meta_text.buf[start : meta_text.ends[row]] != meta:
            return NONE
        taken[row] = 1
        return row

    return quick


def _read_off_claim(index: EntryIndex, events: Events) -> Any:
    """`_quick_claim` for a node-scope write whose preview was read off an entry's text (its
    `derived` row, found in the same bucket as `quick` looks in): the text was compared then,
    so only the rest is checked here, on the bytes where they lie (no copies). Claims only
    what `quick` would claim (then with the same metadata bytes); anything else is -1."""
    buckets, taken, rows = index.buckets, index.taken, index.rows
    kinds, nodes, stamps = rows.kind, rows.node, rows.ts
    entry_meta, side = rows.meta, rows.meta_side
    derived, node, ts, hashes = events.derived, events.node, events.ts, events.preview_hash
    meta, event_side = events.meta, events.meta_side
    low, high = JOIN_TOLERANCE_S, CLOCK_SLACK_S
    if derived is None or events.derived_from is not rows:
        return lambda _event: NONE

    def read_off(event: int) -> int:
        row = derived[event]
        if row < 0 or taken[row] or kinds[row] != 0 or nodes[row] != node[event]:
            return NONE
        if buckets.get(hash((0, node[event], hashes[event]))) != row:
            return NONE  # (not a bucket of this one row: `claim` decides)
        stamp, when = stamps[row], ts[event]
        if not (when - low <= stamp <= when + high or math.isnan(stamp)):
            return NONE
        mine = meta.raw(event)
        start = entry_meta.starts[row]
        if mine is None or event in event_side or start < 0 or row in side:
            return NONE
        if entry_meta.ends[row] - start != len(mine) or not entry_meta.buf.startswith(mine, start):
            return NONE
        taken[row] = 1
        return row

    return read_off


def _same_metadata(rows: EntryBuilder, row: int, meta: Any) -> bool:
    """The entry's metadata equals the event's (None counting as {}): the same JSON bytes, or,
    when they differ (key order, spacing), the same values."""
    text = rows.meta
    start = text.starts[row]
    mine = None if start < 0 else bytes(text.buf[start : text.ends[row]])
    if isinstance(meta, (bytes, bytearray)) and mine is not None and mine == meta:
        return True
    if mine is None and row in rows.meta_side:
        value = rows.meta_side[row]
    else:
        value = _decode(mine) if mine is not None else {}
    other = _decode(meta) if isinstance(meta, (bytes, bytearray)) else meta
    return value == (other or {})


def _decode(data: bytes) -> Any:
    return json_value(data)  # (msgspec alone refused an integer of 4,301 digits: exit 3)


def _event_meta(events: Events, row: int) -> Any:
    """The event's metadata as JSON bytes (None: no metadata), or its value when only the
    lenient reader could keep it."""
    if row in events.meta_side:
        return events.meta_side[row]
    raw = events.meta_raw(row)
    return None if raw is None else bytes(raw)


def join_writes(
    events: Events, rows: EntryBuilder, problems: list[Problem], index: EntryIndex | None = None
) -> bytearray:
    """Join write events to entry rows in place: the entry gets the event's passage id, the
    event the entry's row (`joined`, and `derived`: its preview is the start of that entry's
    text); an event no entry matches gets an entry of its own (its preview, partial),
    appended to `rows`. Returns, per event, whether its metadata bytes are its entry's.
    `index`: the entries' index, when it was built before the log was read (to read previews
    off the entries' texts)."""
    rows.flush()
    index = index or EntryIndex(rows)
    strings = events.strings
    joined, derived = events.joined, events.derived
    if derived is None:
        derived = events.derived = array("i", [NONE]) * len(events)
    same_meta = bytearray(len(events))
    unmatched: dict[int, list[int]] = {}
    odd: Counter = Counter()
    coll, ts, eid = events.coll, events.ts, events.eid
    hashes, chars = events.preview_hash, events.preview_chars
    kinds = _kind_codes(strings)
    quick = _quick_claim(index)
    read_off = _read_off_claim(index, events)
    for event in events.rows_of_op("write"):
        kind = kinds.get(coll[event])
        if kind is None:
            odd[events.source[event]] += 1
            continue
        row = read_off(event) if kind == 0 else NONE
        if row >= 0:
            rows.letta[row] = eid[event]
            same_meta[event] = 1
            joined[event] = row
            continue
        meta = _event_meta(events, event)
        owner = _owner(events, event, kind, meta)
        raw = events.preview_raw(event)
        data = b"" if raw is None else bytes(raw)
        row = quick(kind, owner, ts[event], data, hashes[event], meta)
        if row < 0:
            row = index.claim(kind, owner, ts[event], data, hashes[event], chars[event], meta)
        if row < 0:
            row = _entry_from_event(
                events, event, rows, kind, owner, meta, data.decode("utf-8", "surrogatepass")
            )
            unmatched.setdefault(events.source[event], []).append(events.line[event] or 0)
        else:
            rows.letta[row] = eid[event]
            if raw is not None:
                derived[event] = row
                same_meta[event] = isinstance(meta, bytes) and meta == rows.meta_bytes(row)
        joined[event] = row
    events.preview_hash = events.preview_chars = None
    _unjoined_problems(strings, unmatched, odd, problems)
    return same_meta


def _kind_codes(strings: StringTable) -> dict[int, int]:
    """The entry kind (KIND_CODE) of each collection name's string code, for the names the
    log holds: a write to any other collection joins nothing."""
    kinds = {strings.find(name): KIND_CODE[name] for name in KINDS}
    kinds.pop(NONE, None)
    return kinds


def _owner(events: Events, event: int, kind: int, meta: Any) -> int:
    """The string code of the node a write's entry belongs to: the writer's, but a ReAct
    step's owner is named in its metadata."""
    if kind != 1:
        return events.node[event]
    value = _decode(meta) if isinstance(meta, bytes) else meta
    return events.strings.code(owner_of("react_step", "", value))


def _unjoined_problems(
    strings: StringTable, unmatched: dict[int, list[int]], odd: Counter, problems: list[Problem]
) -> None:
    """A problem per log file for its write events without a memory record (their lines, the
    first five), and for those to a collection that is not memory's."""
    for source, lines in unmatched.items():
        shown = ", ".join(str(n) for n in lines[:5]) + (" …" if len(lines) > 5 else "")
        problems.append(
            Problem(
                file=strings[source] or "",
                where=f"lines {shown}",
                what=f"{len(lines)} write events have no memory record; kept their previews as "
                "partial entries",
                why="written after the backup, cleared, lost, or no backup",
                severity="info",
            )
        )
    for source, count in odd.items():
        problems.append(
            Problem(
                file=strings[source] or "",
                what=f"did not join {count} write events",
                why="unknown collection",
            )
        )


def _entry_from_event(
    events: Events, event: int, rows: EntryBuilder, kind: int, owner: int, meta: Any, text: str
) -> int:
    """The entry a write event proves existed, from its 200-character preview: its row."""
    value = _decode(meta) if isinstance(meta, bytes) else meta
    metadata = value if isinstance(value, dict) else {}
    strings = events.strings
    rows.add(
        kind,
        strings[owner] or "",
        text,
        meta if isinstance(meta, bytes) else (b"{}" if meta is None else None),
        events.ts[event],
        strings[events.source[event]] or "",
        events.line[event],
        as_int(metadata.get("step")),
        True,
        strings[events.eid[event]],
        metadata=metadata,
    )
    return len(rows) - 1
