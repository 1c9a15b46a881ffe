"""Per-checkpoint lookup tables for replay, built once, so a replay costs O(node), not O(run).

A 200k-entry run must replay in milliseconds: scanning every entry or every access event per
replay in Python would cost more than the ranking itself. The index is cached on the Checkpoint
and rebuilt when its entry or event lists are replaced or change length (live follow).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict

from ari_mem_tui.model import Checkpoint, EventView
from ari_mem_tui.model.columns import INHERIT, KINDS

_KEY = "replay_index"


class ReplayIndex:
    """Read off the columns (model/columns.py): entry times per kind, read events by reader."""

    def __init__(self, ckpt: Checkpoint) -> None:
        self.signature = signature(ckpt)
        entries, events = ckpt.entries, ckpt.access_events
        # sorted lists, not numpy: `audit` and `summary` import this and need no numpy
        self.ts_by_kind: dict[str, list[float]] = {}
        self.untimed_by_kind: dict[str, int] = defaultdict(int)
        for code, kind in enumerate(KINDS):
            stamps = [t for k, t in zip(entries.kind, entries.ts, strict=True) if k == code]
            timed = sorted(t for t in stamps if not math.isnan(t))
            if timed:
                self.ts_by_kind[kind] = timed
            if len(timed) < len(stamps):
                self.untimed_by_kind[kind] = len(stamps) - len(timed)
        self.reads_by_reader: dict[str, list[EventView]] = defaultdict(list)
        self.unattributed_by_query: dict[str, list[EventView]] = defaultdict(list)
        strings, reader, query = events.strings, events.reader, events.query
        for row in events.rows_of_op("read"):
            if reader[row] >= 0 and strings[reader[row]]:
                self.reads_by_reader[strings[reader[row]]].append(events[row])  # type: ignore[index]
            else:
                text = strings[query[row]]
                if text and not text.startswith(INHERIT):
                    self.unattributed_by_query[text].append(events[row])

    def kind_count(self, kind: str, before: float | None) -> int:
        stamps = self.ts_by_kind.get(kind, [])
        if before is None or math.isnan(before):  # NaN counts all, as numpy's searchsorted did
            timed = len(stamps)
        else:
            timed = bisect_left(stamps, before)
        return timed + self.untimed_by_kind.get(kind, 0)


def signature(ckpt: Checkpoint) -> tuple[int, int, int, int]:
    return (id(ckpt.entries), len(ckpt.entries), id(ckpt.access_events), len(ckpt.access_events))


def replay_index(ckpt: Checkpoint) -> ReplayIndex:
    index = ckpt.derived.get(_KEY)
    if index is None or index.signature != signature(ckpt):
        index = ckpt.derived[_KEY] = ReplayIndex(ckpt)
    return index
