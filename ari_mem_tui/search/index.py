"""Per-checkpoint lookup tables for replay, built once, so a replay costs O(node), not O(run).

A 200k-entry run must replay in milliseconds: scanning every entry or every access event per
replay in Python would cost more than the ranking itself. The index is cached on the Checkpoint
and rebuilt when its entry or event lists are replaced or change length (live follow).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from itertools import compress, filterfalse

from ari_mem_tui.model import Checkpoint, EventView
from ari_mem_tui.model.columns import INHERIT, KINDS, holding

_KEY = "replay_index"


class ReplayIndex:
    """Read off the columns (model/columns/): entry times per kind, read events by reader.

    Built before a run's first replay, so kept to passes in C and row numbers: the events'
    views are made for the few rows a replay asks for (a view of each of a 10k-node run's
    33k reads took half of this index's time)."""

    def __init__(self, ckpt: Checkpoint) -> None:
        self.signature = signature(ckpt)
        entries, events = ckpt.entries, ckpt.access_events
        # sorted lists, not numpy: `audit` and `summary` import this and need no numpy
        self.ts_by_kind: dict[str, list[float]] = {}
        self.untimed_by_kind: dict[str, int] = defaultdict(int)
        for code, kind in enumerate(KINDS):
            stamps = list(compress(entries.ts, holding(entries.kind, code)))
            timed = sorted(filterfalse(math.isnan, stamps))
            if timed:
                self.ts_by_kind[kind] = timed
            if len(timed) < len(stamps):
                self.untimed_by_kind[kind] = len(stamps) - len(timed)
        self._events = events
        strings, reader, query = events.strings, events.reader, events.query
        self._reads: dict[int, list[int]] = defaultdict(list)  # rows by reader code
        for row in events.rows_of_op("read"):
            self._reads[reader[row]].append(row)
        self._unattributed: dict[str, list[int]] = defaultdict(list)
        for code in [code for code in self._reads if code < 0 or not strings[code]]:
            for row in self._reads.pop(code):
                text = strings[query[row]]
                if text and not text.startswith(INHERIT):
                    self._unattributed[text].append(row)

    def reads_of(self, reader: str) -> list[EventView]:
        """The read events attributed to node `reader`, in log order."""
        code = self._events.strings.find(reader) if reader else -1
        return self._views(self._reads.get(code, []) if code >= 0 else [])

    def unattributed(self, query: str) -> list[EventView]:
        """The read events attributed to no node whose query is `query`, in log order."""
        return self._views(self._unattributed.get(query, []))

    def _views(self, rows: list[int]) -> list[EventView]:
        events = self._events
        return [events[row] for row in rows]  # type: ignore[misc]

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
