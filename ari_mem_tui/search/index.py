"""Per-checkpoint lookup tables for replay, built once, so a replay costs O(node), not O(run).

A 200k-entry run must replay in milliseconds: scanning every entry or every access event per
replay in Python would cost more than the ranking itself. The index is cached on the Checkpoint
and rebuilt when its entry or event lists are replaced or change length (live follow).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict

from ari_mem_tui.model import AccessEvent, Checkpoint

_KEY = "replay_index"


class ReplayIndex:
    def __init__(self, ckpt: Checkpoint) -> None:
        self.signature = signature(ckpt)
        # sorted lists, not numpy: `audit` and `summary` import this and need no numpy
        self.ts_by_kind: dict[str, list[float]] = {}
        self.untimed_by_kind: dict[str, int] = defaultdict(int)
        stamps: dict[str, list[float]] = defaultdict(list)
        for entry in ckpt.entries:
            if entry.ts is None:
                self.untimed_by_kind[entry.kind] += 1
            else:
                stamps[entry.kind].append(entry.ts)
        for kind, values in stamps.items():
            self.ts_by_kind[kind] = sorted(values)  # finite floats (the readers drop the rest)
        self.reads_by_reader: dict[str, list[AccessEvent]] = defaultdict(list)
        self.unattributed_by_query: dict[str, list[AccessEvent]] = defaultdict(list)
        for event in ckpt.access_events:
            if event.op != "read":
                continue
            if event.reader:
                self.reads_by_reader[event.reader].append(event)
            elif event.query and not event.is_inherit:
                self.unattributed_by_query[event.query].append(event)

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
