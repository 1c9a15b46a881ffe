"""Who really read: attributing access-log read events to nodes (§4.5).

A read event's `node_id` is whichever node last *wrote* in that process, so it is stale. The
real reader is recovered from what the read was: a node's start-up search (its own query and
scope), the inheritance burst just before it, an LLM call in some node's trace_log with the
same arguments, the paper pipeline after BFTS, or the BFTS selector's react search. A read none
of these explains has no known reader ("unattributed"): its logged node_id is only the last
writer, so nothing is charged to that node. The logged node_id itself is never changed.

Siblings with the same parent and the same direction search with the same query and scope.
Their searches are told apart by what the files hold: a node's start-up search comes after it
was created (`created_at`) and before anything it did itself (its first write event, or a read
logged under its id, which means it had written). Where more than one assignment fits, the
files cannot tell: the elder is assumed to have searched first, and both searches say so
(`AccessEvent.reader_note`, and a problem line).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from itertools import product
from typing import Any

from ari_mem_tui.checkpoint.values import as_int, parse_iso
from ari_mem_tui.model import AccessEvent, Events, EventView, Node, Problem, TraceCall

STARTUP_LIMIT = 5
QUERY_CHARS = 200
GOAL_CHARS = 1500
DEFAULT_QUERY = "experiment result"
BURST_WINDOW_S = 30.0  # Tier 1b reads come right before the Tier 2 search
BURST_SCAN = 500  # inherit reads looked at backwards from a start-up search, at most
CREATED_SLACK_S = 1.0  # created_at and the access log come from two processes' clocks
ASSIGNMENTS_TRIED = 5000  # same-query siblings: exhaustive matching up to this many cases
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


def _mark(event: AccessEvent | EventView, reader: str | None, how: str) -> None:
    event.reader = reader
    event.reader_how = how


def start_direction(node: Node) -> tuple[str | None, str]:
    """The eval_summary the node had when it started (its direction, what ARI searched with),
    and the field it comes from; (None, "") when the files no longer hold it.

    `original_direction` is that text verbatim, even when empty (the planner gave none: ARI then
    searched with the goal). Where it is missing (a tree older than the field) or was blanked by
    a resume (§2.6: `ari resume` writes it back empty, with `name`, which a planned node always
    has), `eval_summary` still holds the direction unless the node succeeded, when it was
    replaced by the verdict: then the direction is lost.
    """
    direction = node.original_direction
    if direction is not None and not (direction == "" and not node.name):
        return direction, "original_direction"
    if node.status != "success":
        return node.eval_summary, "eval_summary"
    return None, ""


def goal_text(goal: str) -> str:
    """ARI's `goal_text`: the experiment text, cut past 1500 characters with a marker."""
    return goal if len(goal) <= GOAL_CHARS else goal[:GOAL_CHARS] + "\n...[truncated]"


def ari_query(summary: str | None, field: str, goal: str) -> tuple[str, str]:
    """ARI's search query (§5.8): `(eval_summary or goal_text or "experiment result")[:200]`
    on the eval_summary `summary` (read from `field`), and the field that gave it ("goal",
    "default" when the earlier ones were empty). The one place the rule is written."""
    for source, text in ((field, summary), ("goal", goal_text(goal))):
        if text:
            return text[:QUERY_CHARS], source
    return DEFAULT_QUERY, "default"


def startup_query(node: Node, goal: str) -> tuple[str, str] | None:
    """(query, field) ARI's working-context builder searched with at the node's start: the
    rule on the eval_summary it had then (its direction); None when the files lost the
    direction (the start-up search is then found by its scope, see `Attributor`)."""
    direction, field = start_direction(node)
    return ari_query(direction, field, goal) if field else None


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
        self.lost: list[str] = []  # nodes whose direction the files no longer hold
        for nid, node in nodes.items():
            ancestors = node.ancestor_ids
            if not ancestors:  # the root's search short-circuits and is never logged
                continue
            found = startup_query(node, goal)
            if found is None:
                self.lost.append(nid)
            else:
                self.startup.setdefault((found[0], ancestors[-1], len(ancestors)), []).append(nid)
        self.calls: dict[tuple, dict[str, deque]] = {}
        for nid, calls in trace_calls.items():
            for call in calls:
                key = call_key(call)
                if key is not None:
                    self.calls.setdefault(key, {}).setdefault(nid, deque()).append(call)
        self.inherit_positions: list[int] = []  # indexes of inherit:get_node_memory reads
        self.reads: list[int] = []  # indexes of the read events
        self.acted: dict[str, float] = {}  # node -> its first own event (a write, or a read
        # logged under its id, which it could only be after writing)
        self.problems: list[Problem] = []

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
        return created is None or created <= ts + CREATED_SLACK_S

    def _could_start(self, node_id: str, ts: float) -> bool:
        """Could a search at ts be the node's start-up search? After its creation, before the
        node did anything itself (its start-up search is the first thing it does)."""
        return self._existed(node_id, ts) and ts < self.acted.get(node_id, math.inf)

    def _startup_groups(self, events: Events) -> dict[tuple, list[int]]:
        """Positions of the searches shaped like a start-up search, by (query, parent, depth)
        (read off the columns: a big run has tens of thousands of reads)."""
        groups: dict[tuple, list[int]] = {}
        strings = events.strings
        react = strings.find("react_step")
        coll, query, limit = events.coll, events.query, events.limit
        starts, ends, anc = events.anc_start, events.anc_end, events.anc
        for position in self.reads:
            if react >= 0 and coll[position] == react or limit[position] != STARTUP_LIMIT:
                continue
            text = strings[query[position]]
            first, last = starts[position], ends[position]
            if not text or text.startswith("inherit:") or first < 0 or last == first:
                continue
            key = (text, strings[anc[last - 1]], last - first)
            if key in self.startup:
                groups.setdefault(key, []).append(position)
        return groups

    def _assign(
        self, events: Events, nodes: list[str], positions: list[int]
    ) -> tuple[dict[str, int], bool]:
        """Which search was whose start-up search: (node -> position, ambiguous).

        One node takes its earliest search (its own later ones are LLM calls). Several take the
        assignment that places the most of them, on the earliest searches, each search after
        the node's creation and before its first own event; more than one such assignment means
        the files cannot tell, and the one found first (elder nodes first) is taken.
        """
        lineage = self.nodes[nodes[0]].ancestor_ids
        positions = [p for p in positions if events[p].ancestor_ids == lineage]
        if not positions:
            return {}, False
        if len(nodes) == 1:
            return {nodes[0]: positions[0]}, False
        order = sorted(nodes, key=lambda n: (self.created.get(n) is None, self.created.get(n)))
        options = [
            [p for p in positions if self._could_start(n, events[p].ts)] + [None] for n in order
        ]
        if math.prod(len(o) for o in options) > ASSIGNMENTS_TRIED:
            return self._assign_greedy(events, order, positions)
        return _best_assignment(order, options)

    def _assign_greedy(
        self, events: Events, order: list[str], positions: list[int]
    ) -> tuple[dict[str, int], bool]:
        """Many same-query siblings: each search to the eldest node that could have made it."""
        found: dict[str, int] = {}
        ambiguous = False
        for position in positions:
            fits = [
                n for n in order if n not in found and self._could_start(n, events[position].ts)
            ]
            if fits:
                found[fits[0]] = position
                ambiguous = ambiguous or len(fits) > 1
        return found, ambiguous

    def _startups(self, events: Events) -> None:
        for key, positions in self._startup_groups(events).items():
            nodes = self.startup[key]
            found, ambiguous = self._assign(events, nodes, positions)
            bursts = {}
            for reader, position in found.items():
                _mark(events[position], reader, "startup-search")
                bursts[reader] = self._burst(events, position, reader)
            if ambiguous:
                self._say_ambiguous(events, found, bursts)

    def _say_ambiguous(
        self, events: Events, found: dict[str, int], bursts: dict[str, list[int]]
    ) -> None:
        readers = sorted(found, key=lambda n: found[n])
        for reader, position in found.items():
            others = ", ".join(n for n in readers if n != reader)
            note = (
                f"the files cannot tell whether this start-up read was {reader}'s or "
                f"{others}'s (same parent, same direction, searched before either wrote): "
                f"assumed the elder searched first"
            )
            for place in [position, *bursts[reader]]:
                events[place].reader_note = note
        lines = ", ".join(str(events[found[n]].source_line) for n in readers)
        self.problems.append(
            Problem(
                file=events[found[readers[0]]].source or "memory_access.jsonl",
                where=f"lines {lines}",
                what=f"start-up searches of {', '.join(readers)} told apart by assumption",
                why=(
                    "same parent and direction, and each searched before either wrote: "
                    "assumed the elder searched first"
                ),
            )
        )

    def _lost_directions(self, events: Events) -> None:
        """A node whose direction is lost: its start-up search is the first search with its
        scope and limit 5, unclaimed and not an LLM call, made while it could start."""
        if not self.lost:
            return
        shaped: dict[tuple[str, int], list[int]] = {}  # (parent, depth) -> positions
        for position in self.reads:
            event = events[position]
            if (
                not event.reader_how
                and event.limit == STARTUP_LIMIT
                and event.query
                and not event.query.startswith("inherit:")
                and event.ancestor_ids
            ):
                key = (event.ancestor_ids[-1], len(event.ancestor_ids))
                shaped.setdefault(key, []).append(position)
        for nid in self.lost:
            lineage = self.nodes[nid].ancestor_ids
            for position in shaped.get((lineage[-1], len(lineage)), []):
                event = events[position]
                if (
                    event.reader_how
                    or event.ancestor_ids != lineage
                    or self._traced(event)
                    or not self._could_start(nid, event.ts)
                ):
                    continue
                _mark(event, nid, "startup-search")
                event.reader_note = (
                    "the node's direction is lost (no original_direction; eval_summary is its "
                    "verdict): its start-up search was found by its scope and limit"
                )
                self._burst(events, position, nid)
                break

    def _traced(self, event: AccessEvent) -> bool:
        key = read_key(event)
        return bool(key is not None and self.calls.get(key))

    def _burst(self, events: Events, position: int, reader: str) -> list[int]:
        """Give the inherit reads just before a start-up search to the same reader (their
        positions are returned)."""
        marked: list[int] = []
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
                marked.append(back)
                expect = place[targets[0]] - 1
        return marked

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

    def _first_acts(self, events: Events) -> None:
        """Each node's first event (read off the node and ts columns: every event counts)."""
        strings, acted = events.strings, self.acted
        node_of = {code: nid for nid in self.nodes if (code := strings.find(nid)) >= 0}
        for code, ts in zip(events.node, events.ts, strict=True):
            nid = node_of.get(code)
            if nid is not None and nid not in acted:
                acted[nid] = ts

    def attribute(self, events: Events) -> None:
        """Set reader / reader_how on every read event (events sorted by ts)."""
        strings = events.strings
        # the read events' rows, off the op column (a run has several writes to each read)
        self.reads = list(events.rows_of_op("read"))
        inherit, react = strings.find(INHERIT), strings.find("react_step")
        query, coll = events.query, events.coll
        self.inherit_positions = (
            [row for row in self.reads if query[row] == inherit] if inherit >= 0 else []
        )
        self._first_acts(events)
        for position in self.reads:
            if react >= 0 and coll[position] == react:
                _mark(events[position], "bfts-select", "bfts-select")
        self._startups(events)
        self._lost_directions(events)
        for position in self.reads:
            event = events[position]
            if event.reader_how:
                continue
            reader = self._trace(event)
            if reader is not None:
                _mark(event, reader, "trace_log")
            elif self._pipeline(event):
                _mark(event, "pipeline", "pipeline")
            else:
                _mark(event, None, "unattributed")

    def _pipeline(self, event: AccessEvent) -> bool:
        return (
            event.node_id == ""
            and bool(event.query)
            and event.query.startswith("inherit:")
            and self.bfts_end is not None
            and event.ts > self.bfts_end
        )


def _best_assignment(
    order: list[str], options: list[list[int | None]]
) -> tuple[dict[str, int], bool]:
    """Every assignment of each node (`order`) to one of its possible searches (`options`,
    None: no search), each search to one node at most, tried: the one that places the most
    nodes on the earliest searches, and whether another places them as well (the first found,
    elder nodes first, is taken then)."""
    best: list[dict[str, int]] = []
    best_key: tuple[int, int] | None = None
    for choice in product(*options):
        taken = [p for p in choice if p is not None]
        if len(taken) != len(set(taken)):
            continue
        key = (-len(taken), sum(taken))
        if best_key is None or key < best_key:
            best, best_key = [], key
        if key == best_key:
            best.append({n: p for n, p in zip(order, choice, strict=True) if p is not None})
    return best[0], len(best) > 1


def attribute_reads(
    events: Events,
    nodes: dict[str, Node],
    goal: str,
    trace_calls: dict[str, list[TraceCall]],
    problems: list[Problem] | None = None,
) -> None:
    """Attribute every read event; what the files cannot decide goes to `problems`."""
    attributor = Attributor(nodes, goal, trace_calls)
    attributor.attribute(events)
    if problems is not None:
        problems.extend(attributor.problems)
