"""Who really read: attributing access-log read events to nodes (§4.5).

A read event's `node_id` is whichever node last *wrote* in that process, so it is stale. The
real reader is recovered from what the read was: a node's start-up search (its own query and
scope), the inheritance burst just before it, an LLM call in some node's trace_log with the
same arguments, the paper pipeline after BFTS, or the BFTS selector's react search. What is
left keeps the logged node_id, labelled "logged". The logged node_id itself is never changed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from typing import Any

from ari_mem_tui.checkpoint.values import as_int, parse_iso
from ari_mem_tui.model import AccessEvent, Node, TraceCall

STARTUP_LIMIT = 5
QUERY_CHARS = 200
GOAL_CHARS = 1500
DEFAULT_QUERY = "experiment result"
BURST_WINDOW_S = 30.0  # Tier 1b reads come right before the Tier 2 search
BURST_SCAN = 500  # inherit reads looked at backwards from a start-up search, at most
INHERIT = "inherit:get_node_memory"
BULK = "inherit:bulk_get_node_memory"
BULK_TOOLS = (
    "bulk_get_node_memory",
    "get_verified_context",
    "ancestor_typed_memory",
    "fold_reproducibility",
)
# the only tools whose trace_log calls `call_key` can match to a read event
READ_TOOLS = frozenset({"get_node_memory", "search_memory", "search_research_memory", *BULK_TOOLS})


def _mark(event: AccessEvent, reader: str | None, how: str) -> None:
    event.reader = reader
    event.reader_how = how


def startup_query(node: Node, goal: str) -> str:
    """The query ARI's working-context builder used at the node's start (§5.8)."""
    text = node.original_direction or node.eval_summary or goal[:GOAL_CHARS] or DEFAULT_QUERY
    return text[:QUERY_CHARS]


def read_key(event: AccessEvent) -> tuple | None:
    """What a read was, in terms a trace_log call can be compared with."""
    query = event.query or ""
    ancestors = tuple(event.ancestor_ids or ())
    if query == INHERIT:
        return ("inherit", ancestors[0]) if len(ancestors) == 1 else None
    if query == BULK:
        return ("bulk", ancestors)
    if event.collection == "react_step":
        return None
    return ("search", query, ancestors, event.limit)


def _ancestor_arg(args: dict[str, Any]) -> tuple[str, ...] | None:
    for key in ("ancestor_ids", "ancestors", "node_ids", "lineage"):
        value = args.get(key)
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
    return None


def call_key(call: TraceCall) -> tuple | None:
    """The read event a trace_log call would have logged, as a `read_key`."""
    args = call.args
    if not isinstance(args, dict):
        return None
    if call.tool == "get_node_memory" and isinstance(args.get("node_id"), str):
        return ("inherit", args["node_id"])
    ancestors = _ancestor_arg(args)
    if call.tool in BULK_TOOLS and ancestors is not None:
        return ("bulk", ancestors)
    query = args.get("query")
    if not isinstance(query, str) or ancestors is None:
        return None
    limit = as_int(args.get("limit"))
    limit = STARTUP_LIMIT if limit is None else limit
    if call.tool == "search_memory":
        return ("search", query, ancestors, limit)
    if call.tool == "search_research_memory":
        return ("search", query, ancestors, max(limit * 8, 40))
    return None


class Attributor:
    def __init__(
        self, nodes: dict[str, Node], goal: str, trace_calls: dict[str, list[TraceCall]]
    ) -> None:
        self.nodes = nodes
        self.created = {nid: parse_iso(n.created_at) for nid, n in nodes.items()}
        done = [parse_iso(n.completed_at) for n in nodes.values() if n.completed_at]
        self.bfts_end = max((t for t in done if t is not None), default=None)
        # keyed by (query, parent, depth), the whole lineage compared only on a match: a tuple
        # of every node's ancestors would be quadratic on a deep chain
        self.startup: dict[tuple[str, str, int], list[str]] = {}
        for nid, node in nodes.items():
            ancestors = node.ancestor_ids
            if ancestors:  # the root's search short-circuits and is never logged
                key = (startup_query(node, goal), ancestors[-1], len(ancestors))
                self.startup.setdefault(key, []).append(nid)
        self.calls: dict[tuple, dict[str, deque]] = {}
        for nid, calls in trace_calls.items():
            for call in calls:
                key = call_key(call)
                if key is not None:
                    self.calls.setdefault(key, {}).setdefault(nid, deque()).append(call)
        self.started: set[str] = set()
        self.inherit_positions: list[int] = []  # indexes of inherit:get_node_memory reads

    def _closest_before(self, candidates: list[str], ts: float) -> str:
        """The candidate created most recently before ts (else the earliest created)."""

        def rank(nid: str) -> tuple[int, float]:
            created = self.created.get(nid)
            if created is None:
                return (2, 0.0)
            return (0, ts - created) if created <= ts + 1.0 else (1, created - ts)

        return min(candidates, key=rank)

    def _existed(self, node_id: str, ts: float) -> bool:
        """A node cannot have read before it was created (unknown creation: assume it could)."""
        created = self.created.get(node_id)
        return created is None or created <= ts + 1.0

    def _startup(self, event: AccessEvent) -> str | None:
        if event.limit != STARTUP_LIMIT or event.ancestor_ids is None:
            return None
        lineage = event.ancestor_ids
        if not lineage:
            return None
        candidates = self.startup.get((event.query or "", lineage[-1], len(lineage)))
        if candidates:
            candidates = [nid for nid in candidates if self.nodes[nid].ancestor_ids == lineage]
        if not candidates:
            return None
        fresh = [nid for nid in candidates if nid not in self.started] or candidates
        reader = fresh[0] if len(fresh) == 1 else self._closest_before(fresh, event.ts)
        self.started.add(reader)
        return reader

    def _burst(self, events: list[AccessEvent], position: int, reader: str) -> None:
        """Give the inherit reads just before a start-up search to the same reader."""
        ancestors = self.nodes[reader].ancestor_ids
        place = {aid: i for i, aid in enumerate(ancestors)}
        expect = len(ancestors) - 1  # walking back in time: parent first, root last
        start_ts = events[position].ts
        before = bisect_left(self.inherit_positions, position)
        for back in reversed(self.inherit_positions[max(0, before - BURST_SCAN) : before]):
            event = events[back]
            if expect < 0 or event.ts < start_ts - BURST_WINDOW_S:
                break
            if event.reader_how:
                continue
            targets = event.ancestor_ids or []
            if len(targets) == 1 and place.get(targets[0], len(ancestors)) <= expect:
                _mark(event, reader, "inherit-burst")
                expect = place[targets[0]] - 1

    def _trace(self, event: AccessEvent) -> str | None:
        key = read_key(event)
        by_node = self.calls.get(key) if key is not None else None
        if not by_node:
            return None
        candidates = [
            nid for nid, queue in by_node.items() if queue and self._existed(nid, event.ts)
        ]
        if not candidates:
            return None
        reader = (
            candidates[0] if len(candidates) == 1 else self._closest_before(candidates, event.ts)
        )
        by_node[reader].popleft()
        return reader

    def attribute(self, events: list[AccessEvent]) -> None:
        """Set reader / reader_how on every read event (events sorted by ts)."""
        self.inherit_positions = [
            i for i, e in enumerate(events) if e.op == "read" and e.query == INHERIT
        ]
        for position, event in enumerate(events):
            if event.op != "read":
                continue
            if event.collection == "react_step":
                _mark(event, "bfts-select", "bfts-select")
                continue
            if event.query and not event.query.startswith("inherit:"):
                reader = self._startup(event)
                if reader is not None:
                    _mark(event, reader, "startup-search")
                    self._burst(events, position, reader)
        for event in events:
            if event.op != "read" or event.reader_how:
                continue
            reader = self._trace(event)
            if reader is not None:
                _mark(event, reader, "trace_log")
            elif self._pipeline(event):
                _mark(event, "pipeline", "pipeline")
            else:
                _mark(event, event.node_id or None, "logged")

    def _pipeline(self, event: AccessEvent) -> bool:
        return (
            event.node_id == ""
            and bool(event.query)
            and event.query.startswith("inherit:")
            and self.bfts_end is not None
            and event.ts > self.bfts_end
        )


def attribute_reads(
    events: list[AccessEvent],
    nodes: dict[str, Node],
    goal: str,
    trace_calls: dict[str, list[TraceCall]],
) -> None:
    Attributor(nodes, goal, trace_calls).attribute(events)
