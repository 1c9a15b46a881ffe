"""Joining access-log write events to memory entries (§4.6), so logged entry ids resolve.

Backups carry no passage ids. A write event and an entry are the same write when they have the
same owner, the entry text starts with the event's `text_preview`, their metadata are equal, and
the entry's ts (taken before the insert) is at most JOIN_TOLERANCE_S before the event's ts (taken
after it). Events are matched in time order to the nearest unclaimed entry, which pairs exact
duplicates 1:1. Entries are indexed by (kind, owner, first PREVIEW_CHARS characters), so the
join is linear in practice.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

from ari_mem_tui.checkpoint.entry_ids import EntryIds
from ari_mem_tui.checkpoint.values import as_int
from ari_mem_tui.model import AccessEvent, MemoryEntry, Problem

PREVIEW_CHARS = 200  # ARI_MEMORY_ACCESS_PREVIEW_CHARS default
JOIN_TOLERANCE_S = 2.0  # event ts − entry ts: the Letta round-trip, with room to spare
CLOCK_SLACK_S = 0.01  # float rounding: an entry may appear a hair after its event
KINDS = ("node_scope", "react_step")


def owner_of(event: AccessEvent) -> str:
    """The entry owner a write event names: node_id, or metadata.node_id for react writes."""
    if event.collection == "react_step":
        owner = (event.metadata or {}).get("node_id")
        return owner if isinstance(owner, str) else ""
    return event.node_id


@dataclass
class _Bucket:
    """Entries sharing (kind, owner, text prefix): timed ones sorted by ts, then untimed."""

    stamps: list[float] = field(default_factory=list)
    timed: list[MemoryEntry] = field(default_factory=list)
    untimed: list[MemoryEntry] = field(default_factory=list)


class EntryIndex:
    def __init__(self, entries: list[MemoryEntry]) -> None:
        self.buckets: dict[tuple[str, str, str], _Bucket] = {}
        self.by_owner: dict[tuple[str, str], list[MemoryEntry]] = {}
        for entry in sorted(entries, key=lambda e: (e.ts is None, e.ts or 0.0)):
            key = (entry.kind, entry.node_id, entry.text[:PREVIEW_CHARS])
            bucket = self.buckets.setdefault(key, _Bucket())
            if entry.ts is None:
                bucket.untimed.append(entry)
            else:
                bucket.stamps.append(entry.ts)
                bucket.timed.append(entry)
            self.by_owner.setdefault((entry.kind, entry.node_id), []).append(entry)
        self.taken: set[str] = set()

    def _fits(self, entry: MemoryEntry, event: AccessEvent, preview: str) -> bool:
        return (
            entry.id not in self.taken
            and entry.text.startswith(preview)
            and entry.metadata == (event.metadata or {})
        )

    def _nearest(self, bucket: _Bucket, event: AccessEvent, preview: str) -> MemoryEntry | None:
        stop = bisect_right(bucket.stamps, event.ts + CLOCK_SLACK_S)
        for pos in range(stop - 1, -1, -1):
            if bucket.stamps[pos] < event.ts - JOIN_TOLERANCE_S:
                break
            if self._fits(bucket.timed[pos], event, preview):
                return bucket.timed[pos]
        return next((e for e in bucket.untimed if self._fits(e, event, preview)), None)

    def claim(self, event: AccessEvent) -> MemoryEntry | None:
        kind, owner, preview = event.collection, owner_of(event), event.text_preview or ""
        found = None
        bucket = self.buckets.get((kind, owner, preview[:PREVIEW_CHARS]))
        if bucket is not None:
            found = self._nearest(bucket, event, preview)
        if found is None and len(preview) < PREVIEW_CHARS:  # a shorter configured preview
            scan = _Bucket()
            for entry in self.by_owner.get((kind, owner), []):
                if entry.text.startswith(preview):
                    target = scan.untimed if entry.ts is None else scan.timed
                    target.append(entry)
                    if entry.ts is not None:
                        scan.stamps.append(entry.ts)
            found = self._nearest(scan, event, preview)
        if found is not None:
            self.taken.add(found.id)
        return found


def _share(event: AccessEvent, entry: MemoryEntry) -> None:
    """A joined event's metadata equals its entry's (the join demands it), and a short text's
    preview is the whole text: hold one copy of each (about 60 MB on 200k writes)."""
    if event.metadata:
        event.metadata = entry.metadata
    if event.text_preview == entry.text:
        event.text_preview = entry.text


def join_writes(
    events: list[AccessEvent],
    entries: list[MemoryEntry],
    ids: EntryIds,
    problems: list[Problem],
) -> list[MemoryEntry]:
    """Join write events to entries in place; return entries made for unmatched events."""
    index = EntryIndex(entries)
    orphans: list[MemoryEntry] = []
    unmatched: dict[str, list[int]] = {}
    odd: Counter = Counter()
    for event in events:
        if event.op != "write":
            continue
        if event.collection not in KINDS:
            odd[event.source] += 1
            continue
        entry = index.claim(event)
        if entry is None:
            entry = entry_from_event(event, ids)
            orphans.append(entry)
            unmatched.setdefault(event.source, []).append(event.source_line)
        else:
            entry.letta_id = event.entry_id
            _share(event, entry)
        event.joined_entry = entry.id
    for source, lines in unmatched.items():
        shown = ", ".join(str(n) for n in lines[:5]) + (" …" if len(lines) > 5 else "")
        problems.append(
            Problem(
                file=source,
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
                file=source, what=f"did not join {count} write events", why="unknown collection"
            )
        )
    return orphans


def entry_from_event(event: AccessEvent, ids: EntryIds) -> MemoryEntry:
    """The entry a write event proves existed, from its 200-character preview."""
    metadata = event.metadata or {}
    owner, text = owner_of(event), event.text_preview or ""
    values = {
        "id": ids.make(event.collection, owner, event.ts, text),
        "kind": event.collection,
        "node_id": owner,
        "text": text,
        "metadata": metadata,
        "ts": event.ts,
        "source": event.source,
        "source_line": event.source_line,
        "letta_id": event.entry_id,
        "step": as_int(metadata.get("step")),
        "partial": True,
    }
    return MemoryEntry(**values)
