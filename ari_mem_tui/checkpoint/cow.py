"""The copy-on-write log (§4.6): every node-scope write, accepted or rejected, in time order.

Accepted writes come from memory entries (backup or other files) and access-log write events,
merged into one row when joined. Rejected writes are never stored by ARI; they are recovered
from the writing node's trace_log (target and reason), timed where possible by the auto
`Tool <name>: …` entry the node wrote about the failed call. Such an entry is the log of a
refusal only when its tool is a guarded one and its result IS the guard's refusal; an entry
that merely quotes one (a search that returned such a passage) is an ordinary entry. React
writes are not CoW-guarded and are left out.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_right
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from itertools import compress
from typing import Any

from ari_mem_tui.checkpoint.bulk import without_gc
from ari_mem_tui.checkpoint.jsonlines import loads_record
from ari_mem_tui.checkpoint.trace_log import (
    GUARDED_TOOLS,
    REJECTION_MARKERS,
    cow_refusal,
    rejection_reason,
)
from ari_mem_tui.model import CowWrite, Entries, EntryView, Events, EventView, TraceCall
from ari_mem_tui.model.columns import Groups, Texts, holding

AUTO_ENTRY = re.compile(r"^Tool ([A-Za-z_][\w.:-]*): ")


def _row(**fields: Any) -> CowWrite:
    return CowWrite.from_data(fields)


def _written(entry: EntryView, event: EventView | None) -> tuple[str, float | None]:
    """The node current when an entry was written, and when: its write event's, else its own."""
    return (event.node_id, event.ts) if event else (entry.node_id, entry.ts)


def accepted_rows(entries: Iterable[EntryView], joined: Joined) -> list[CowWrite]:
    """One row per node-scope entry; `joined` gives an entry's write event."""
    rows = []
    for entry in entries:
        if entry.kind != "node_scope":
            continue
        event = joined.get(entry)
        from_log = entry.source == (event.source if event else None)
        current_node, ts = _written(entry, event)
        rows.append(
            _row(
                ts=ts,
                current_node=current_node,
                target_node=entry.node_id,
                tool="add_memory",
                accepted=True,
                entry_id=entry.id,
                letta_id=entry.letta_id,
                text=entry.text,
                metadata=entry.metadata,
                step=entry.step,
                source="access_log" if from_log else ("access_log+backup" if event else "backup"),
            )
        )
    return rows


def rejection_of_auto_entry(entry: EntryView) -> tuple[str, str] | None:
    """(tool, reason) when the entry is the node's own log of a write the CoW guard refused:
    `"Tool <guarded tool>: " + json.dumps({"result": <the refusal as JSON>})` (§4.6). The
    envelope of a refusal is short, never cut at ARI's 1,000 characters, so it always parses;
    an entry of another tool, or whose result only contains a refusal's words, is none."""
    text = entry.text
    if not text.startswith("Tool ") or not any(m in text for m in REJECTION_MARKERS):
        return None
    match = AUTO_ENTRY.match(text)
    tool = match.group(1) if match else ""
    if tool not in GUARDED_TOOLS or entry.metadata.get("tool", tool) != tool:
        return None
    try:
        envelope = loads_record(text[match.end() :])
        output = loads_record(envelope["result"]) if isinstance(envelope, dict) else None
    except (KeyError, TypeError, ValueError, RecursionError):
        return None
    reason = cow_refusal(tool, output)
    return (tool, reason) if reason else None


def rejected_rows(
    entries_by_node: Mapping[str, list[EntryView]],
    trace_calls: Mapping[str, list[TraceCall]],
    joined: Joined,
) -> list[CowWrite]:
    """Rejections from trace_logs, each matched in order to the node's auto entries of its tool
    (which time it); `joined` gives an entry's write event. `entries_by_node` may hold only the
    entries that can be auto entries of a refusal (`CowLog.autos`)."""
    rows = []
    nodes = list(dict.fromkeys([*trace_calls, *entries_by_node]))
    for node_id in nodes:
        autos: dict[str, deque[tuple[EntryView, str]]] = {}
        for entry in entries_by_node.get(node_id, []):
            found = rejection_of_auto_entry(entry)
            if found:
                autos.setdefault(found[0], deque()).append((entry, found[1]))
        for call in trace_calls.get(node_id, []):
            reason = rejection_reason(call)
            if reason is None:
                continue
            auto = autos[call.tool].popleft() if autos.get(call.tool) else None
            args = call.args or {}
            target = args.get("node_id")
            text = args.get("text", args.get("content", ""))
            rows.append(
                _row(
                    ts=_auto_ts(auto, joined),
                    current_node=node_id,
                    target_node=target if isinstance(target, str) else "",
                    tool=call.tool,
                    accepted=False,
                    reason=reason,
                    text=text if isinstance(text, str) else call.args_raw[:200],
                    metadata=args.get("metadata")
                    if isinstance(args.get("metadata"), dict)
                    else None,
                    step=auto[0].step if auto else None,
                    source="trace_log",
                    logged_by=auto[0].id if auto else None,
                )
            )
        for tool, left in autos.items():  # refused writes whose trace_log line is gone
            for entry, reason in left:
                rows.append(
                    _row(
                        ts=_auto_ts((entry, reason), joined),
                        current_node=node_id,
                        target_node="",
                        tool=tool,
                        accepted=False,
                        reason=reason,
                        text=entry.text,
                        step=entry.step,
                        source="auto_entry",
                        logged_by=entry.id,
                    )
                )
    return rows


def _auto_ts(auto: tuple[EntryView, str] | None, joined: Joined) -> float | None:
    """When the refused write was made: when its auto entry was written."""
    if auto is None:
        return None
    entry = auto[0]
    return _written(entry, joined.get(entry))[1]


def order_rows(rows: list[CowWrite], latest: Mapping[str, float] | None = None) -> list[CowWrite]:
    """Time order; a row without ts stays right after the rows its node had before it, and
    after `latest[node]`, the latest ts of that node's rows left out of `rows`, if any."""
    keyed = []
    last: dict[str, float] = {}
    latest = latest or {}
    for seq, row in enumerate(rows):
        if row.ts is not None:
            last[row.current_node] = row.ts
            key = row.ts
        else:
            node = row.current_node
            key = max(last.get(node, -math.inf), latest.get(node, -math.inf))
        keyed.append((key, seq, row))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in keyed]


def _rows_holding(texts: Texts, needles: list[bytes]) -> list[int]:
    """The rows whose text holds one of `needles`, ascending: the needles are looked for in
    the whole buffer at C speed, each place found mapped to its row (rows' texts are disjoint
    slices of the buffer), not by reading every row."""
    places = {at for needle in needles for at in texts.find_all(needle)}
    if not places:
        return []
    starts, ends = texts.starts, texts.ends
    by_start = sorted((s, row) for row, s in enumerate(starts) if s >= 0)
    firsts = [s for s, _ in by_start]
    rows = set()
    for at in places:
        pos = bisect_right(firsts, at) - 1
        if pos >= 0:
            row = by_start[pos][1]
            if at < ends[row]:
                rows.add(row)
    return sorted(rows)


def joined_rows(events: Events, entries: int) -> array:
    """Each of `entries` rows' write event (the last one joined to it; -1: none): the events'
    `joined` column turned round (what the run index keeps, for `Joined`)."""
    rows = array("i", [-1]) * entries
    for event, row in enumerate(events.joined):
        if row >= 0:
            rows[row] = event
    return rows


class Joined:
    """Each entry's write event (the last one joined to it), read off the events' `joined`
    column: by entry row; an event joined by an id of no row (hand-built) by that id. `rows`,
    when known (`joined_rows` of these events, as the run index keeps it), spares the pass
    over every event that a reopened run's first replay would wait for."""

    def __init__(self, entries: Entries, events: Events, rows: Sequence[int] | None = None):
        self._entries, self._events = entries, events
        self._rows: Sequence[int] = array("i", [-1]) * len(entries)
        self._ids: dict[str, int] = {}
        if events.entries is not None and events.entries is not entries:
            # the events point into other entries now (a Letta server's, swapped in): an entry
            # is its joined event's by id (the same content has the same id)
            for event in range(len(events)):
                entry_id = events.joined_at(event)
                if entry_id is not None:
                    self._ids[entry_id] = event
            return
        usable = rows is not None and len(rows) == len(entries)
        self._rows = rows if usable else joined_rows(events, len(entries))  # type: ignore[assignment]
        for event, entry_id in events.joined_ids.items():
            self._ids[entry_id] = event

    def event_row(self, entry: int) -> int:
        event = self._rows[entry]
        if event < 0 and self._ids:
            event = self._ids.get(self._entries.id_at(entry), -1)
        return event

    def event_rows(self, entries: list[int]) -> list[int]:
        """`event_row` of each of `entries` (in C, unless events are joined by id)."""
        if self._ids:
            return [self.event_row(entry) for entry in entries]
        return list(map(self._rows.__getitem__, entries))

    def get(self, entry: EntryView) -> EventView | None:
        event = self._rows[entry.row] if entry.table is self._entries else -1
        if event < 0 and self._ids:
            event = self._ids.get(entry.id, -1)
        return self._events[event] if event >= 0 else None


_TOOL = b"Tool "
_MARKERS = [marker.encode() for marker in REJECTION_MARKERS]


class CowLog:
    """The CoW log of a load, built when it is asked for: one node's rows (`for_node`, what a
    replay shows), the counts, or the whole run's log in time order (when it is called).

    It reads the run's columns (model/columns/): the entries a refusal's auto entry can be
    are found in the text buffer's bytes (`Tool …` holding a refusal's words), not by reading
    every entry; the entries by current node come off the node and joined columns.
    `trace_calls` may be a lazy mapping (trace_log.TraceCallsByNode): one node's rows then
    parse only that node's trace_log. `counts`, when known (the run index stores them), spares
    the rejected rows of the whole run until the log is called; `rejected`, when known (the
    index stores them too: `stored_rejected`), spares them altogether: (the rows as
    `rejected` gives them, the place in that list of each row `rejected_in_order` gives).
    `current`, when known (`stored_current`), spares the grouping of the entries by current
    node that a run's first replay would wait for, and `joined` (`joined_rows`) the pass over
    every event that finds each entry's write event.
    """

    def __init__(
        self,
        entries: Entries,
        events: Events,
        trace_calls: Mapping[str, list[TraceCall]],
        counts: tuple[int, int] | None = None,
        rejected: tuple[list[CowWrite], list[int]] | None = None,
        current: Groups | None = None,
        joined: Sequence[int] | None = None,
    ) -> None:
        self.entries, self.events, self.trace_calls = entries, events, trace_calls
        self._current, self._joined = current, joined
        self._rejected: list[CowWrite] | None = None
        self._order: list[int] | None = None
        if counts is not None:
            self.__dict__["counts"] = counts
        if rejected is not None:
            self._rejected, self._order = rejected

    @cached_property
    def counts(self) -> tuple[int, int]:
        """(accepted, rejected) rows, counted on first use: the TUI never asks at open."""
        return without_gc(lambda: (self.entries.kind_counts()["node_scope"], len(self.rejected)))

    # the tables below wait for a first use: a reopened run may never read its CoW log

    @cached_property
    def autos(self) -> dict[str, list[EntryView]]:
        """The node-scope entries that may log a refused write (`rejection_of_auto_entry`
        decides), by owner, owners in the order their first entry comes."""
        entries = self.entries
        kind, node = entries.kind, entries.node
        found: dict[int, list[int]] = {}
        for row in _rows_holding(entries.text, _MARKERS):
            if not kind[row] and entries.text.raw(row)[:5] == _TOOL:  # type: ignore[index]
                found.setdefault(node[row], []).append(row)
        owners = dict.fromkeys(compress(node, holding(kind, 0)))  # first-entry order
        strings = entries.strings
        return {
            strings[code] or "": [entries[row] for row in found[code]]
            for code in owners
            if code in found
        }

    @cached_property
    def by_current_node(self) -> dict[str, list[int]]:
        """Node-scope entry rows by the node current when they were written (the event's, if
        logged), in the order the whole log takes them; nodes in the order they first come."""
        strings = self.entries.strings
        groups = self._current if self._current is not None else self._current_groups()
        return {strings[code] or "": rows for code, rows in groups.items()}

    def _current_groups(self) -> dict[int, list[int]]:
        """`by_current_node` by node code (a run's first replay waits for it: C passes and one
        loop, no method call a row); made once (the index write and the log both ask)."""
        made = self.__dict__.get("_current_made")
        if made is None:
            made = self.__dict__["_current_made"] = self._group_by_current()
        return made

    def _group_by_current(self) -> dict[int, list[int]]:
        entries = self.entries
        rows = list(compress(range(len(entries)), holding(entries.kind, 0)))
        event_node, owner = self.events.node, entries.node
        groups: defaultdict[int, list[int]] = defaultdict(list)
        for row, event in zip(rows, self.joined.event_rows(rows), strict=True):
            groups[event_node[event] if event >= 0 else owner[row]].append(row)
        return groups

    def _current_entries(self, node_id: str) -> list[EntryView]:
        entries = self.entries
        return [entries[row] for row in self._current_rows(node_id)]

    def _current_rows(self, node_id: str) -> list[int]:
        """`by_current_node[node_id]`: read off the stored groups, while the others are not
        needed (a replay asks for one node's)."""
        stored = self._current
        if stored is None or not node_id or "by_current_node" in self.__dict__:
            return self.by_current_node.get(node_id, [])
        code = self.entries.strings.find(node_id)
        return stored.get(code, []) if code >= 0 else []  # type: ignore[return-value]

    @cached_property
    def joined(self) -> Joined:
        return Joined(self.entries, self.events, self._joined)

    @property
    def rejected(self) -> list[CowWrite]:
        if self._rejected is None:
            self._rejected = rejected_rows(self.autos, self.trace_calls, self.joined)
        return self._rejected

    def __call__(self) -> list[CowWrite]:
        per_node: dict[str, list[CowWrite]] = {}
        for row in accepted_rows(self.entries, self.joined) + self.rejected:
            per_node.setdefault(row.current_node, []).append(row)
        for rows in per_node.values():  # per node: timed rows by ts, untimed ones where they fell
            rows[:] = _node_order(rows)
        return order_rows([row for rows in per_node.values() for row in rows])

    def rejected_in_order(self) -> list[CowWrite]:
        """The rejected rows in the order the whole log (`self()`) gives them, without its
        accepted rows (one per entry). That order is: nodes as they first appear (accepted rows
        first), each node's rows in `_node_order`, then all by ts, where a row without ts takes
        its node's latest ts before it, accepted rows included."""
        if self._order is not None:
            return [self.rejected[place] for place in self._order]
        groups: dict[str, list[CowWrite]] = {}
        for row in self.rejected:
            groups.setdefault(row.current_node, []).append(row)
        rank = {node_id: place for place, node_id in enumerate(self.by_current_node)}
        nodes = sorted(groups, key=lambda node_id: rank.get(node_id, len(rank)))  # stable
        rows = [row for node_id in nodes for row in _node_order(groups[node_id])]
        return order_rows(rows, self._latest_accepted(groups))

    def _latest_accepted(self, nodes: Iterable[str]) -> dict[str, float]:
        """Each node's latest ts among its accepted rows (the nodes without one are left out)."""
        latest = {}
        for node_id in nodes:
            entries = self._current_entries(node_id)
            stamps = [_written(e, self.joined.get(e))[1] for e in entries]
            timed = [ts for ts in stamps if ts is not None]
            if timed:
                latest[node_id] = max(timed)
        return latest

    def for_node(self, node_id: str) -> list[CowWrite]:
        """The rows whose current node is `node_id`, as the whole log lists them (its order
        keeps each node's rows in `_node_order`), without building the others."""
        rows = accepted_rows(self._current_entries(node_id), self.joined)
        if self._rejected is not None:
            rows += [row for row in self._rejected if row.current_node == node_id]
        else:
            own = {node_id: self.autos.get(node_id, [])}
            calls = {node_id: self.trace_calls.get(node_id, [])}
            rows += rejected_rows(own, calls, self.joined)
        return _node_order(rows)


def _node_order(rows: list[CowWrite]) -> list[CowWrite]:
    timed = sorted((r for r in rows if r.ts is not None), key=lambda r: r.ts)
    untimed = [r for r in rows if r.ts is None]
    return timed + untimed


def stored_current(log: CowLog) -> Groups:
    """What `CowLog(..., current=…)` takes: `by_current_node` as columns (node codes, where
    each node's rows end, the rows node after node)."""
    return log._current if log._current is not None else Groups.of(log._current_groups())


def stored_rejected(log: CowLog) -> tuple[list[CowWrite], list[int]]:
    """What `CowLog(..., rejected=…)` takes, from a log that computed it."""
    rows = log.rejected
    place = {id(row): at for at, row in enumerate(rows)}
    return rows, [place[id(row)] for row in log.rejected_in_order()]
