"""Memory health of a whole run: did ARI's scoped memory reach the nodes that needed it?

ARI ranks the agent's WHOLE pool (every branch, ReAct steps too), takes the top_k window, and
only then keeps the reader's ancestors (§5.1). In a big run other branches crowd the ancestors
out of the window and a node gets fewer hits than its lineage holds (§5.3, the real failure
mode). For every node this replays its start-up search as of its start with the same code as
`saw` (`search.replay`), counts what the window held, and takes the hits the node really got
from the access log where the search was logged ("recorded"), from the replay otherwise
("replayed"). For every entry it counts the reads that returned it: start-up searches,
inheritance reads and LLM calls from the access log, and LLM calls found only in a node's
trace_log. Nothing here writes anything; the TUI runs `compute_health` in a worker.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from math import isnan
from typing import Any, NamedTuple

import networkx as nx
import numpy as np

from ari_mem_tui.checkpoint.attribution import call_key, read_key
from ari_mem_tui.checkpoint.jsonlines import loads_record
from ari_mem_tui.model import AccessEvent, Checkpoint, EntryView, Node, ParentChain, RankerFidelity
from ari_mem_tui.model.columns import INHERIT, KINDS, NONE
from ari_mem_tui.model.health import Bucket, EntrySummary, EntryUse, Health, NodeHealth
from ari_mem_tui.model.words import plural
from ari_mem_tui.search.backends import run_backend
from ari_mem_tui.search.dropped import Dropping, drop_mask, is_tool_auto, tool_auto_mask
from ari_mem_tui.search.fidelity import ranker_fidelity, recording_ranker
from ari_mem_tui.search.rankers import Ranker, Ranking
from ari_mem_tui.search.replay import (
    DEFAULT_LIMIT,
    OVERFETCH,
    checkpoint_hash,
    eligible_entry,
    top_k_for,
)
from ari_mem_tui.search.startup import node_query, recorded_startup_search, start_time

ProgressFn = Callable[[int, int], None]
NODE_SCOPE = KINDS.index("node_scope")  # its code in the entries' kind column
TIME_SLICES = 24
TOP_ENTRIES = 30
NEVER_SHOWN = 200
READERS_KEPT = 20
PREVIEW = 160
CATEGORIES = ("startup", "inherit", "llm", "other")
HOW_CATEGORY = {
    "startup-search": "startup",
    "inherit-burst": "inherit",
    "trace_log": "llm",
    "pipeline": "other",
    "logged": "other",
}


class Cancelled(Exception):
    """Raised inside `compute_health` when its `cancelled()` says so (the caller catches it)."""


@dataclass(frozen=True)
class Search:
    """How a health pass searches: ARI's own settings by default, another set in a what-if
    (what_if.py): `limit` and the window (`top_k`, else ARI's `max(overfetch, 40·limit)`), the
    pool as of each node's start or today's, kinds of memory left out as if ARI had not stored
    them (search/dropped.py), and whether a node's hits are the access log's where its search
    was logged (the run's own settings only: other settings' hits can only be replayed)."""

    limit: int = DEFAULT_LIMIT
    top_k: int | None = None
    overfetch: int = OVERFETCH
    as_of_start: bool = True
    drop: tuple[str, ...] = ()
    recorded: bool = True

    @property
    def window(self) -> int:
        return self.top_k if self.top_k is not None else top_k_for(self.limit, self.overfetch)


def compute_health(
    ckpt: Checkpoint,
    ranker: Ranker,
    limit: int = DEFAULT_LIMIT,
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] | None = None,
    all_entries: bool = False,
    search: Search | None = None,
    hits: dict[str, list[str]] | None = None,
    entries_of: Health | None = None,
) -> Health:
    """Health of every node and entry. `progress(done, total)` is called as nodes are done;
    when `cancelled()` turns true the nodes done so far are returned with `complete` False.
    `search` (default: ARI's settings with `limit`) says how each node searches; `hits`, when
    given, is filled with each node's hit entry ids; `entries_of`, a report of the same run
    whose entry retrievals are taken as they are (they are the access log's: no setting
    changes them)."""
    search = search or Search(limit=limit)
    limit, top_k = search.limit, search.window
    report = Health(run_id=ckpt.run_id, ranker=getattr(ranker, "name", "?"), limit=limit)
    report.top_k = top_k
    report.pool = "start" if search.as_of_start else "now"
    report.drop = list(search.drop)
    mask = drop_mask(ckpt.entries, search.drop)
    if mask is not None:
        ranker = Dropping(ranker, ckpt.entries, mask, search.drop)  # type: ignore[assignment]
    nodes = list(ckpt.nodes.values())
    total = len(nodes) + 1  # the entry pass is the last step
    every = max(1, total // 200)
    used: Counter[str] = Counter()
    ckpt_hash = checkpoint_hash(ckpt)
    lineages = Lineages(ckpt, ckpt_hash, exclude=mask)
    for done, node in enumerate(nodes):
        if cancelled is not None and cancelled():
            report.complete = False
            report.notes.append(f"interrupted after {done} of {len(nodes)} nodes")
            break
        report.nodes.append(
            node_health(ckpt, node, ranker, search, ckpt_hash, used, lineages, hits)
        )
        if progress is not None and (done + 1) % every == 0:
            progress(done + 1, total)
    report.ranker = ", ".join(name for name, _ in used.most_common()) or report.ranker
    if used:
        report.fidelity = _fidelity(ckpt, ranker, used.most_common(1)[0][0])
    _totals(report)
    if report.complete:
        _entries(report, ckpt, lineages, all_entries, entries_of)
    else:
        report.notes.append("entry retrievals not counted: the run was interrupted")
    report.notes.extend(_notes(report))
    if progress is not None:
        progress(total if report.complete else len(report.nodes), total)
    return report


def _fidelity(ckpt: Checkpoint, ranker: Ranker, most: str) -> RankerFidelity:
    """Whether the ranking most nodes were ranked with is the run's own."""
    backend = run_backend(ckpt).name
    handle = ckpt.letta_embedding_config
    return ranker_fidelity(
        ranker, most, backend, handle, recording_ranker(backend, handle), backend
    )


def _totals(report: Health) -> None:
    """The run's counts and buckets, from its searched nodes."""
    searched = [n for n in report.nodes if n.searched]
    report.searched = len(searched)
    report.starved = sum(1 for n in searched if n.starved)
    report.recorded = sum(1 for n in searched if n.hits_source == "recorded")
    report.replayed = sum(1 for n in searched if n.hits_source == "replayed")
    report.by_depth = by_depth(searched)
    report.over_time = over_time(searched)


def _entries(
    report: Health,
    ckpt: Checkpoint,
    lineages: Lineages,
    all_entries: bool,
    entries_of: Health | None,
) -> None:
    """Each entry's retrievals: counted from the logs, or taken from `entries_of` (a report
    of the same run: the logs do not change with the settings)."""
    if entries_of is not None:
        report.entries, report.all_entries = entries_of.entries, entries_of.all_entries
        report.top_entries = entries_of.top_entries
        report.never_retrieved = entries_of.never_retrieved
        return
    usage = entry_usage(ckpt, lineages)
    report.entries = usage.summary
    report.top_entries = usage.top(TOP_ENTRIES)
    report.never_retrieved = usage.never(NEVER_SHOWN)
    if all_entries:
        report.all_entries = usage.every()


def node_health(
    ckpt: Checkpoint,
    node: Node,
    ranker: Ranker,
    search: Search,
    ckpt_hash: str | None,
    used: Counter[str],
    lineages: Lineages | None = None,
    hits: dict[str, list[str]] | None = None,
) -> NodeHealth:
    lineages = lineages or Lineages(ckpt, ckpt_hash)
    limit = search.limit
    depth = node.depth if node.depth is not None else len(node.ancestor_ids)
    row = NodeHealth(node_id=node.id, depth=depth, limit=limit)
    if not node.ancestor_ids:
        row.searched, row.why_not = False, "a root: ARI searches nothing without ancestors"
        return row
    started, how = start_time(ckpt, node)
    recorded, _ = recorded_startup_search(ckpt, node)
    if node.status == "pending" and recorded is None:
        row.searched, row.why_not = False, "never started (pending)"
        return row
    row.started, row.started_source = started, how
    before = started if search.as_of_start else None
    query, _source = node_query(ckpt, node)
    row.query = query
    row.eligible = lineages.eligible(node, before)
    ranking = ranker.rank(query, search.window, before_ts=before)
    used[ranking.used or getattr(ranker, "name", "?")] += 1
    # counted off the run's columns in one pass (a model's attribute costs ~1 µs a set). A
    # backend without a window (ARI's in-memory one) crowds nothing out: its "window" is every
    # entry it could return, so it gives only `reached` (the lineage's) and what the post-filter
    # keeps; the post-filter's hits (`post_filter`) are the first `limit` kept, their number kept
    counts = lineages.window_counts(ranking, node, before, limit if hits is not None else 0)
    row.reached = counts.lineage
    if not ranking.windowless:
        row.window = ranking.window_len
        row.react, row.lineage, row.own = counts.react, counts.lineage, counts.own
        row.other_branches, row.tool = counts.other, counts.tool
    if row.window:
        row.share_other = round(row.other_branches / row.window, 4)
        row.share_react = round(row.react / row.window, 4)
        row.share_tool = round(row.tool / row.window, 4)
    row.hits_replayed = min(limit, counts.kept)  # as many as `post_filter` keeps
    found = recorded if search.recorded else None  # (other settings: replayed only)
    ids = _set_hits(ckpt, row, found, counts.hits)
    if hits is not None:
        hits[node.id] = ids
    expected = min(limit, row.eligible)
    row.starved = row.eligible > 0 and row.hits < expected
    row.shortfall = expected - row.hits if row.starved else 0
    return row


def _set_hits(
    ckpt: Checkpoint, row: NodeHealth, recorded: AccessEvent | None, replayed: list[str] | None
) -> list[str]:
    """The node's hits: the access log's where its search was logged, else the replay's; and
    their entry ids (the replay's `replayed`, when they were asked for)."""
    if recorded is not None:
        row.hits_recorded = min(len(recorded.results), row.limit)
        row.hits, row.hits_source = row.hits_recorded, "recorded"
        return _recorded_ids(ckpt, recorded.results[: row.limit])
    row.hits, row.hits_source = row.hits_replayed or 0, "replayed"
    return replayed or []


def _recorded_ids(ckpt: Checkpoint, results: list[dict]) -> list[str]:
    """A recording's hits as entry ids (a passage the loaded memory lacks: its passage id)."""
    ids = []
    for result in results:
        letta_id = str(result.get("entry_id") or "")
        entry = ckpt.entries_by_letta_id.get(letta_id)
        ids.append(entry.id if entry is not None else letta_id)
    return ids


class WindowCounts(NamedTuple):
    """A window's rows by what they are (`Lineages.window_counts`), and its first hits."""

    react: int
    lineage: int
    own: int
    other: int
    kept: int
    tool: int
    hits: list[str] | None = None


class _EntryColumns:
    """The entry columns `Lineages.window_counts` reads, as numpy arrays (copies: the run's
    own may grow under a live follow), and node ids' codes in their string table."""

    def __init__(
        self, ckpt: Checkpoint, ckpt_hash: str | None, exclude: np.ndarray | None = None
    ) -> None:
        entries = ckpt.entries
        self.strings = entries.strings
        self.kind = np.array(entries.kind, dtype=np.uint8)
        self.node = np.array(entries.node, dtype=np.int64)
        self.ts = np.array(entries.ts, dtype=np.float64)
        same = np.ones(len(self.kind), dtype=bool)
        if ckpt_hash is not None:  # ARI's checkpoint test: no hash (NONE), or this one
            ckpt_codes = np.array(entries.ckpt, dtype=np.int64)
            same = (ckpt_codes == NONE) | (ckpt_codes == self.strings.find(ckpt_hash))
        self.scoped = self.kind == NODE_SCOPE
        self.kept = self.scoped & same  # ARI's post-filter but for the scope
        if exclude is not None:  # (left out by a what-if: never in a pool)
            self.kept &= ~exclude
        self.tool = tool_auto_mask(entries)  # ARI's automatic `Tool …` entries
        self._codes: dict[str, int] = {}

    def code_of(self, node_id: str) -> int:
        """The code of a node id (NONE when no entry names it: the table may lack it)."""
        code = self._codes.get(node_id)
        if code is None:
            code = self._codes[node_id] = self.strings.find(node_id)
        return code

    def by_code(self, values: Mapping[str, int]) -> np.ndarray:
        """`values` (by node id) as an array by code, -1 where none; its last slot is the
        value of code NONE (-1: an entry without a node), so any owner code indexes it."""
        out = np.full(len(self.strings) + 1, -1, dtype=np.int64)
        for node_id, value in values.items():
            code = self.code_of(node_id)
            if code >= 0:
                out[code] = value
        return out


class Lineages:
    """Scopes and eligible counts for every node of a run in time linear in the run.

    A node's scope is its `ancestor_ids`. Written in the file, they are a list, as long as the
    file made them; rebuilt from `parent_id` (a `ParentChain`), walking them per node costs the
    depth, and a 20,000-deep chain costs 200 million steps. For those, one walk of the tree
    gives each node a preorder number and a subtree size (an ancestor test in O(1)), and each
    node's count of eligible ancestor entries written before its start comes from a running
    count over the path from its root (a Fenwick tree over the entries' times).
    """

    def __init__(
        self, ckpt: Checkpoint, ckpt_hash: str | None, exclude: np.ndarray | None = None
    ) -> None:
        self.ckpt, self.ckpt_hash = ckpt, ckpt_hash
        self.exclude = exclude  # rows a what-if leaves out (search/dropped.py): not eligible
        self._scopes: dict[str, Container[str]] = {}
        self._own_stamps: dict[str, tuple[int, list[float]]] = {}
        self._same_ckpt: set[int] | None = None  # the ckpt column's codes of this checkpoint
        self._chain_counts: dict[str, int] | None = None
        self._tin: dict[str, int] = {}
        self._size: dict[str, int] = {}
        self._walked = False
        self._entry_columns: _EntryColumns | None = None
        self._tin_by_code: np.ndarray | None = None
        self._size_by_code: np.ndarray | None = None
        self.node_ids = list(ckpt.nodes)  # a node's index in the arrays below
        self.node_index = {node_id: i for i, node_id in enumerate(self.node_ids)}
        self._tins: np.ndarray | None = None
        self._anc_codes: dict[int, np.ndarray] = {}

    def _walk(self) -> None:
        """Preorder numbers and subtree sizes of every node reachable from a root."""
        if self._walked:
            return
        self._walked = True
        graph, order = self.ckpt.graph, list(self.ckpt.tree_order())  # (networkx's preorder)
        self._tin.update((node_id, number) for number, node_id in enumerate(order))
        size = self._size  # subtree sizes, children before parents: one pass, linear
        for node_id in reversed(order):
            size[node_id] = 1 + sum(size.get(c, 0) for c in graph.successors(node_id))

    def _walked_chain(self, node: Node) -> bool:
        """Whether `node`'s scope is its parent links, and the tree walk reached it."""
        if type(node.ancestor_ids) is not ParentChain:
            return False
        self._walk()
        return node.id in self._tin

    def scope(self, node: Node) -> Container[str]:
        found = self._scopes.get(node.id)
        if found is None:
            if self._walked_chain(node):
                found = _Descends(self._tin, self._size, node.id)
            else:
                found = frozenset(node.ancestor_ids)
            self._scopes[node.id] = found
        return found

    def scope_of(self, node_id: str) -> Container[str]:
        node = self.ckpt.nodes.get(node_id)
        return self.scope(node) if node is not None else frozenset()

    def eligible(self, node: Node, started: float | None) -> int:
        """How many entries ARI's post-filter would keep for `node` as of `started`."""
        if not self._walked_chain(node):
            total = 0
            for ancestor in dict.fromkeys(node.ancestor_ids):
                untimed, stamps = self._stamps(ancestor)
                total += untimed + (
                    len(stamps) if started is None else bisect_left(stamps, started)
                )
            return total
        if self._chain_counts is None:
            self._chain_counts = self._count_chains()
        return self._chain_counts.get(node.id, 0)

    def _stamps(self, node_id: str) -> tuple[int, list[float]]:
        """A node's eligible entries: how many have no ts, and the others' ts, sorted."""
        found = self._own_stamps.get(node_id)
        if found is None:
            ts = self.ckpt.entries.ts
            own = [ts[row] for row in self._own_eligible(node_id)]
            stamps = sorted(t for t in own if not isnan(t))  # (NaN: no ts)
            found = self._own_stamps[node_id] = (len(own) - len(stamps), stamps)
        return found

    def _own_eligible(self, node_id: str) -> list[int]:
        """The rows of the node's own entries that ARI's post-filter keeps for a node that
        may read them (`eligible_entry`: node-scope, of this checkpoint), off the columns."""
        rows = self.ckpt.entries_by_node.rows(node_id)
        if self.exclude is not None:
            exclude = self.exclude
            rows = [row for row in rows if not exclude[row]]
        if self.ckpt_hash is None:
            return rows
        ckpt, same = self.ckpt.entries.ckpt, self._same_ckpt_codes()
        return [row for row in rows if ckpt[row] in same]

    def _same_ckpt_codes(self) -> set[int]:
        """The ckpt column's codes that pass ARI's checkpoint test (None's, NONE, passes; a
        hash the table lacks finds NONE too)."""
        if self._same_ckpt is None:
            self._same_ckpt = {NONE, self.ckpt.entries.strings.find(self.ckpt_hash)}
        return self._same_ckpt

    def _columns(self) -> _EntryColumns:
        if self._entry_columns is None:
            self._entry_columns = _EntryColumns(self.ckpt, self.ckpt_hash, self.exclude)
        return self._entry_columns

    def in_scope(self, owners: np.ndarray, reader: int) -> np.ndarray:
        """Whether each owner (a code of the entries' node column) is in the scope of the
        node `reader` (an index into `node_ids`): `scope`'s test, on codes. A node whose scope
        is the tree's (a walked ParentChain) tests preorder numbers and subtree sizes, any
        other its ancestor ids' codes."""
        mine = int(self._chain_tins()[reader])
        if mine < 0:
            return _members(owners, self._ancestor_codes(reader))
        if self._tin_by_code is None:
            columns = self._columns()
            self._tin_by_code = columns.by_code(self._tin)
            self._size_by_code = columns.by_code(self._size)
        at, size = self._tin_by_code[owners], self._size_by_code[owners]  # type: ignore[index]
        return (at >= 0) & (at < mine) & (mine < at + size)

    def in_scopes(self, owners: np.ndarray, readers: np.ndarray) -> np.ndarray:
        """`in_scope` of each owner for the reader beside it, a reader at a time."""
        out = np.zeros(len(owners), dtype=bool)
        order = np.argsort(readers, kind="stable")
        ordered = readers[order]
        bounds = np.flatnonzero(np.diff(ordered)) + 1
        for group in np.split(order, bounds) if len(order) else ():
            out[group] = self.in_scope(owners[group], int(readers[group[0]]))
        return out

    def _chain_tins(self) -> np.ndarray:
        """Each node's preorder number where its scope is the tree's, else -1 (by index)."""
        if self._tins is None:
            nodes = self.ckpt.nodes
            self._tins = np.array(
                [self._tin[n] if self._walked_chain(nodes[n]) else -1 for n in self.node_ids],
                dtype=np.int64,
            )
        return self._tins

    def _ancestor_codes(self, index: int) -> np.ndarray:
        """The codes of a node's ancestor ids, sorted (those the string table holds: no entry
        is owned by another)."""
        found = self._anc_codes.get(index)
        if found is None:
            node = self.ckpt.nodes[self.node_ids[index]]
            code_of = self._columns().code_of
            codes = [c for c in map(code_of, dict.fromkeys(node.ancestor_ids)) if c >= 0]
            found = self._anc_codes[index] = np.sort(np.array(codes, dtype=np.int64))
        return found

    def window_counts(
        self, ranking: Ranking, node: Node, started: float | None, limit: int = 0
    ) -> WindowCounts:
        """A ranking's window rows that are ReAct steps, the lineage's (as of `started`), the
        node's own, other branches', how many ARI's post-filter keeps (`eligible_entry`), how
        many are ARI's automatic `Tool …` entries, and (`limit` > 0) the ids of the first
        `limit` kept: the node's hits.

        Read off the run's entry columns, with numpy: a big run's health counts 200 rows for
        each of 10,000 nodes. An entry the columns do not hold (a passage a Letta server
        added since the run was read) is tested on its own fields, by the same rules."""
        rows = np.asarray(ranking.window_rows(self.ckpt.entries), dtype=np.int64)
        found = rows >= 0
        every = found.all()
        at = rows if every else rows[found]
        columns = self._columns()
        owner = columns.node[at]
        code = columns.code_of(node.id)
        tests = (
            columns.scoped[at],
            self.in_scope(owner, self.node_index[node.id]) & columns.kept[at],
            np.ones(len(at), dtype=bool) if started is None else ~(columns.ts[at] >= started),
            owner == code if code >= 0 else np.zeros(len(at), dtype=bool),
            columns.tool[at],
        )  # (a ts NaN, none, is in the pool)
        if not every:
            tests = self._with_records(tests, found, ranking.window, node, started)
        counts = _tally(*tests)
        hits = None
        if limit:
            first = np.flatnonzero(tests[1])[:limit].tolist()
            hits = [self._id_at(rows, ranking, i) for i in first]
        return WindowCounts(*counts, hits)

    def _with_records(
        self,
        tests: tuple[np.ndarray, ...],
        found: np.ndarray,
        window: list[Any],
        node: Node,
        started: float | None,
    ) -> tuple[np.ndarray, ...]:
        """`tests` (of the window's rows the columns hold) with the others' beside them, in
        window order, each tested on its own fields."""
        scope = self.scope(node)
        others = [window[i] for i in np.flatnonzero(~found).tolist()]
        theirs = (
            [e.kind == "node_scope" for e in others],
            [eligible_entry(e, scope, self.ckpt_hash) for e in others],
            [started is None or e.ts is None or e.ts < started for e in others],
            [e.node_id == node.id for e in others],
            [is_tool_auto(e) for e in others],
        )
        out = []
        for mine, other in zip(tests, theirs, strict=True):
            both = np.zeros(len(found), dtype=bool)
            both[found] = mine
            both[~found] = other
            out.append(both)
        return tuple(out)

    def _id_at(self, rows: np.ndarray, ranking: Ranking, position: int) -> str:
        row = int(rows[position])
        return self.ckpt.entries.id_at(row) if row >= 0 else ranking.window[position].id

    def _count_chains(self) -> dict[str, int]:
        """Each ParentChain node's eligible count, from one depth-first walk: the entries of
        the nodes on the path above it, those without ts always, the others if before its
        start."""
        ckpt, graph = self.ckpt, self.ckpt.graph
        kind, ts = ckpt.entries.kind, ckpt.entries.ts
        stamps = sorted({t for k, t in zip(kind, ts, strict=True) if k == 0 and not isnan(t)})
        tree = [0] * (len(stamps) + 1)  # Fenwick tree of path entries by time rank

        def add(ts: float, delta: int) -> None:
            i = bisect_left(stamps, ts) + 1
            while i < len(tree):
                tree[i] += delta
                i += i & -i

        def before(ts: float) -> int:  # path entries with ts < `ts`
            i, total = bisect_left(stamps, ts), 0
            while i > 0:
                total += tree[i]
                i -= i & -i
            return total

        counts: dict[str, int] = {}
        on_path = untimed = 0
        walks = (nx.dfs_labeled_edges(graph, root) for root in ckpt.roots if root in graph)
        for _parent, node_id, how in chain.from_iterable(walks):  # entering, then leaving
            if how not in ("forward", "reverse"):
                continue
            entering = how == "forward"
            own = self._own_eligible(node_id)
            sign = 1 if entering else -1
            if entering:
                node = ckpt.nodes.get(node_id)
                if node is not None and type(node.ancestor_ids) is ParentChain:
                    started, _ = start_time(ckpt, node)
                    counts[node_id] = on_path if started is None else untimed + before(started)
            for row in own:
                if isnan(ts[row]):  # (no ts)
                    untimed += sign
                else:
                    add(ts[row], sign)
            on_path += sign * len(own)
        return counts


class _Descends:
    """`x in scope`: whether node `x` is a proper ancestor of the node, from preorder numbers
    and subtree sizes (x's subtree holds the node)."""

    __slots__ = ("_node_tin", "_size", "_tin")

    def __init__(self, tin: dict[str, int], size: dict[str, int], node_id: str) -> None:
        self._tin, self._size = tin, size
        self._node_tin = tin.get(node_id, -1)

    def __contains__(self, other: object) -> bool:
        at = self._tin.get(other)  # type: ignore[arg-type]
        return at is not None and at < self._node_tin < at + self._size[other]  # type: ignore[index]


# ---------------------------------------------------------------------- across the run
def _bucket(label: str, rows: list[NodeHealth], start: float | None = None) -> Bucket:
    bucket = Bucket(label=label, start=start, nodes=len(rows))
    if not rows:
        return bucket
    bucket.starved = sum(1 for r in rows if r.starved)
    bucket.mean_share_other = round(sum(r.share_other for r in rows) / len(rows), 4)
    bucket.mean_share_react = round(sum(r.share_react for r in rows) / len(rows), 4)
    bucket.mean_share_tool = round(sum(r.share_tool for r in rows) / len(rows), 4)
    fed = [r.reached / r.eligible for r in rows if r.eligible]
    bucket.mean_reached = round(sum(fed) / len(fed), 4) if fed else 0.0
    return bucket


def by_depth(rows: list[NodeHealth]) -> list[Bucket]:
    groups: dict[int, list[NodeHealth]] = defaultdict(list)
    for row in rows:
        groups[row.depth].append(row)
    return [_bucket(f"depth {d}", groups[d]) for d in sorted(groups)]


def by_depth_ranges(rows: list[NodeHealth], most: int) -> list[Bucket]:
    """Like `by_depth`, in at most `most` buckets of consecutive depths (a 20,000-deep chain
    has 20,000 depths: a table of them says nothing a person can read)."""
    if not rows:
        return []
    deepest = max(r.depth for r in rows)
    span = max(1, -(-(deepest + 1) // most))  # depths per bucket, rounded up
    groups: dict[int, list[NodeHealth]] = defaultdict(list)
    for row in rows:
        groups[row.depth // span].append(row)
    return [
        _bucket(f"depth {g * span}–{min(deepest, g * span + span - 1)}", groups[g])
        for g in sorted(groups)
    ]


def over_time(rows: list[NodeHealth], slices: int = TIME_SLICES) -> list[Bucket]:
    """Searched nodes in `slices` equal slices of start time (empty slices kept, as zeros)."""
    timed = [r for r in rows if r.started is not None]
    if not timed:
        return []
    first = min(r.started for r in timed)  # type: ignore[type-var]
    last = max(r.started for r in timed)  # type: ignore[type-var]
    span = (last - first) or 1.0
    count = min(slices, len(timed))
    groups: list[list[NodeHealth]] = [[] for _ in range(count)]
    for row in timed:
        index = min(count - 1, int((row.started - first) / span * count))  # type: ignore[operator]
        groups[index].append(row)
    return [
        _bucket(_utc(first + i * span / count), group, first + i * span / count)
        for i, group in enumerate(groups)
    ]


def _utc(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return str(ts)


def _notes(report: Health) -> list[str]:
    notes = []
    if report.recorded and report.replayed:
        notes.append(
            f"hits: {plural(report.recorded, 'node')} from the access log (recorded), "
            f"{report.replayed} from replays ({report.ranker})"
        )
    elif report.replayed:
        notes.append(f"hits: every node's from a replay ({report.ranker}); no search was logged")
    elif report.recorded:
        notes.append("hits: every node's from the access log (recorded)")
    if report.searched and report.ranker == "in-memory":
        notes.append(
            "ranked with ARI's in-memory rule (the run's own backend): it scores only each "
            "node's ancestors, so no window crowds anything out; 'reached' counts the lineage "
            "entries that match the query at all"
        )
    elif report.searched:
        notes.append(
            f"window shares and 'reached' come from replays ({report.ranker}) as of each node's "
            f"start: the access log records the hits, not the window"
        )
    return notes


# ---------------------------------------------------------------------- per entry
class EntryUsage:
    """Retrieval counts of every node-scope entry, from the access log and the trace logs.

    It reads the run's columns (model/columns/) with numpy: a big run's access log returns
    ~600,000 result rows. Each returned node-scope entry is one "retrieval", kept in read
    order as arrays: its entry row, its reader (an index into `Lineages.node_ids`, -1 when the
    reader is not a node of the run), whether that reader descends from the entry's owner, and
    whether the read was a search. Counts are kept by entry row; ids are made only for what is
    shown."""

    def __init__(self, ckpt: Checkpoint, lineages: Lineages | None = None) -> None:
        self.ckpt = ckpt
        self.entries = ckpt.entries
        self.lineages = lineages or Lineages(ckpt, checkpoint_hash(ckpt))
        self.counts = np.zeros((len(self.entries), len(CATEGORIES)), dtype=np.int64)
        self.summary = EntrySummary()
        self._kind = np.array(self.entries.kind, dtype=np.uint8)
        self._owner = np.array(self.entries.node, dtype=np.int64)
        self._parts: list[tuple[np.ndarray, ...]] = []  # (row, reader, search) per batch
        self._extra: list[tuple[int, int, bool]] = []  # one by one, from the trace logs

    def _add(self, rows: np.ndarray, slots: np.ndarray, readers: np.ndarray, search: np.ndarray):
        """Count retrievals (arrays in read order: entry row, category slot, reader, search)."""
        np.add.at(self.counts, (rows, slots), 1)
        reads = self.summary.reads
        for slot in slots[_first_of_each(slots)].tolist():  # (in the order they come)
            category = CATEGORIES[slot]
            reads[category] = reads.get(category, 0) + int(np.count_nonzero(slots == slot))
        self._parts.append((rows, readers, search))

    def add(self, entry: EntryView, category: str, reader: str | None, search: bool) -> None:
        """One retrieval (the trace logs': few), batched until `finish`."""
        slot = CATEGORIES.index(category)
        self.counts[entry.row, slot] += 1
        reads = self.summary.reads
        reads[category] = reads.get(category, 0) + 1
        index = self.lineages.node_index.get(reader, -1) if reader is not None else -1
        self._extra.append((entry.row, index, search))

    def _letta_rows(self) -> np.ndarray:
        """The entry row of every string code that is a passage id (-1: none); a re-id's
        alias (Letta's, set on the map) wins, as the map's own lookup has it."""
        by_letta = self.ckpt.entries_by_letta_id
        rows = np.array(by_letta.rows(), dtype=np.int64)
        strings = self.entries.strings
        for letta_id, entry in getattr(by_letta, "_aliases", {}).items():
            code = strings.find(letta_id)
            if 0 <= code < len(rows):
                rows[code] = entry.row
        return rows

    def count_access_log(self) -> Counter[tuple[str, tuple]]:
        """Every read event's returned entries; gives back the trace-matched reads per node."""
        matched: Counter[tuple[str, tuple]] = Counter()
        events = self.ckpt.access_events
        strings = events.strings
        reads = np.fromiter(events.rows_of_op("read"), dtype=np.int64)
        react = strings.find("react_step")
        if react >= 0:
            reads = reads[np.array(events.coll, dtype=np.int64)[reads] != react]
        if not len(reads):
            return matched
        # per event: category slot, reader, whether a search (not an inheritance read)
        slot, inherit = self._categories(reads)
        reader_codes = np.array(events.reader, dtype=np.int64)[reads]
        readers = self._readers(reader_codes)
        trace = strings.find("trace_log")
        if trace >= 0:
            hows = np.array(events.how, dtype=np.int64)[reads]
            for event in reads[(hows == trace) & (reader_codes >= 0)].tolist():
                reader = strings[events.reader[event]]
                key = read_key(events[event]) if reader else None
                if key is not None:
                    matched[(reader, key)] += 1
        # every result row of these events, in read order, and the entry each returned
        starts = np.array(events.res_start, dtype=np.int64)[reads]
        lengths = np.array(events.res_end, dtype=np.int64)[reads] - starts
        which = np.repeat(np.arange(len(reads)), lengths)
        at = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(len(which))
        target = self._targets(at)
        returned = target >= 0
        returned[returned] = self._kind[target[returned]] == NODE_SCOPE
        which = which[returned]
        self._add(target[returned], slot[which], readers[which], ~inherit[which])
        return matched

    def _categories(self, reads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each read's category slot, and whether it is an inheritance read (its query
        says so; an inheritance read the attribution took for a start-up search is one)."""
        events = self.ckpt.access_events
        strings = events.strings
        hows = np.array(events.how, dtype=np.int64)[reads]
        queries = np.array(events.query, dtype=np.int64)[reads]
        slot = np.empty(len(reads), dtype=np.int64)
        for code in _distinct(hows).tolist():
            how = strings[code] or "logged"
            slot[hows == code] = CATEGORIES.index(HOW_CATEGORY.get(how, "other"))
        distinct = _distinct(queries)
        said = [bool(q) and q.startswith(INHERIT) for q in map(strings.__getitem__, distinct)]
        inherit = _members(queries, distinct[np.array(said, dtype=bool)])  # (sorted)
        slot[inherit & (slot == CATEGORIES.index("startup"))] = CATEGORIES.index("inherit")
        return slot, inherit

    def _readers(self, codes: np.ndarray) -> np.ndarray:
        """Each reader code's node index (-1: no reader, or not a node of the run)."""
        strings, index = self.entries.strings, self.lineages.node_index
        distinct = _distinct(codes)
        found = [index.get(strings[c], -1) if c >= 0 else -1 for c in distinct.tolist()]
        return np.array(found, dtype=np.int64)[np.searchsorted(distinct, codes)]

    def _targets(self, at: np.ndarray) -> np.ndarray:
        """The entry row each result row `at` returned; -1: one whose passage is not in the
        loaded memory (counted as unresolved), -2: one naming no entry (a bulk read's count,
        counted as such, or a blank id)."""
        events, summary = self.ckpt.access_events, self.summary
        results, strings = events.rows, events.strings
        codes = np.array(results.codes["entry_id"], dtype=np.int64)[at]
        side = _members(at, np.array(sorted(results.side), dtype=np.int64))
        blank = (codes < 0) & ~side
        empty = strings.find("")
        if empty >= 0:
            blank |= codes == empty
        counted = np.frombuffer(bytes(results.count_state), dtype=np.uint8)[at] != 0
        summary.bulk_reads += int(np.count_nonzero(blank & counted))  # ("count" in the row)
        letta_rows = self._letta_rows()
        target = np.full(len(at), -2, dtype=np.int64)
        plain = ~blank & ~side
        target[plain] = letta_rows[codes[plain]]
        by_letta = self.ckpt.entries_by_letta_id
        for i in np.flatnonzero(side).tolist():  # rows of another shape, kept whole
            row = results.side[int(at[i])]
            letta_id = row.get("entry_id") if isinstance(row, dict) else None
            if not letta_id:
                summary.bulk_reads += isinstance(row, dict) and "count" in row
                continue
            entry = by_letta.get(str(letta_id))
            target[i] = entry.row if entry is not None else -1
        summary.unresolved += int(np.count_nonzero(target == -1))
        return target

    def count_trace_logs(self, matched: Counter[tuple[str, tuple]]) -> None:
        """LLM reads a node's trace_log shows but the access log does not (log off, dropped).
        Only the read tools' calls are needed: those the loader has parsed already."""
        by_letta = self.ckpt.entries_by_letta_id
        for node_id, calls in self.ckpt.read_tool_calls().items():
            for call in calls:
                if call.tool not in ("search_memory", "get_node_memory"):
                    continue
                key = call_key(call)
                if key is not None and matched[(node_id, key)] > 0:
                    matched[(node_id, key)] -= 1
                    continue
                for entry in self._trace_entries(call, by_letta):
                    self.summary.from_trace_log += 1
                    self.add(entry, "llm", node_id, call.tool == "search_memory")

    def _trace_entries(self, call: Any, by_letta: Mapping[str, EntryView]) -> list[EntryView]:
        """The entries a traced search_memory or get_node_memory call returned."""
        result = _call_payload(call)
        if result is None:
            return []
        if call.tool == "search_memory":
            return _searched_entries(result, by_letta)
        return self._inherited_entries(call, result)

    def _inherited_entries(self, call: Any, result: dict) -> list[EntryView]:
        """The entries of the node a get_node_memory call named that its result holds: its
        rows carry no entry id, so each is matched on (ts, text) among that node's entries."""
        target = (call.args or {}).get("node_id")
        if not isinstance(target, str):
            return []
        own = {(e.ts, e.text): e for e in self.ckpt.entries_by_node.get(target, [])}
        found: list[EntryView] = []
        for row in result.get("entries") or []:
            if isinstance(row, dict):
                entry = own.get((row.get("ts"), row.get("text")))
                if entry is not None:
                    found.append(entry)
        return found

    def finish(self) -> None:
        """The summary, from the retrievals: who descends from whose entries."""
        parts = self._parts
        if self._extra:
            extra = np.array(self._extra, dtype=np.int64).reshape(-1, 3)
            parts = [*parts, (extra[:, 0], extra[:, 1], extra[:, 2].astype(bool))]
        rows, readers, search = (
            np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
            for i in range(3)
        )
        known = readers >= 0  # (a reader that is no node of the run counts no reader)
        rows, readers, search = rows[known], readers[known], search[known].astype(bool)
        descends = self.lineages.in_scopes(self._owner[rows], readers)
        self._rows, self._readers, self._descends = rows, readers, descends
        self._by_row = np.argsort(rows, kind="stable")  # each row's retrievals, in read order
        self._sorted_rows = rows[self._by_row]
        n = len(self.entries)
        self._desc_any = np.zeros(n, dtype=bool)
        self._desc_any[rows[descends]] = True
        desc_search = np.zeros(n, dtype=bool)
        desc_search[rows[descends & search]] = True
        parents = {parent for parent, _child in self.ckpt.graph.edges}
        codes = [c for c in map(self.entries.strings.find, parents) if c >= 0]
        self._has_children = _members(self._owner, np.array(sorted(codes), dtype=np.int64))
        node_scope = self._kind == NODE_SCOPE
        self._node_scope = np.flatnonzero(node_scope)
        inner = node_scope & self._has_children  # entries with someone below to read them
        summary = self.summary
        summary.total = len(self._node_scope)
        summary.retrieved = int(np.count_nonzero(node_scope & self.counts.any(axis=1)))
        summary.leaf_entries = summary.total - int(np.count_nonzero(inner))
        summary.by_descendants = int(np.count_nonzero(inner & self._desc_any))
        summary.never_by_descendant = int(np.count_nonzero(inner & ~self._desc_any))
        summary.never_searched = int(np.count_nonzero(inner & ~desc_search))

    def use(self, row: int) -> EntryUse:
        entry = self.entries[row]
        counts = self.counts[row].tolist()
        lo, hi = np.searchsorted(self._sorted_rows, [row, row + 1])
        mine = self._by_row[lo:hi]  # this entry's retrievals, in read order
        ids = self.lineages.node_ids
        readers = dict.fromkeys(self._readers[mine].tolist())
        return EntryUse(
            entry_id=entry.id,
            node_id=entry.node_id,
            kind=entry.mem_kind,
            text=entry.text[:PREVIEW],
            startup=counts[0],
            inherit=counts[1],
            llm=counts[2],
            other=counts[3],
            readers=[ids[i] for i in list(readers)[:READERS_KEPT]],
            descendant_readers=len(set(self._readers[mine][self._descends[mine]].tolist())),
            owner_has_descendants=bool(self._has_children[row]),
        )

    def top(self, n: int) -> list[EntryUse]:
        """The `n` most retrieved entries, ties by id (made only for the rows that tie at the
        cut: ids cost a hash each)."""
        totals = self.counts.sum(axis=1)
        counted = np.flatnonzero(totals > 0)
        if 0 < n < len(counted):
            cut = np.partition(totals[counted], len(counted) - n)[len(counted) - n]
            counted = counted[totals[counted] >= cut]
        id_at = self.entries.id_at
        ranked = sorted(counted.tolist(), key=lambda row: (-int(totals[row]), id_at(row)))
        return [self.use(row) for row in ranked[:n]]

    def never(self, n: int) -> list[EntryUse]:
        """The first `n` entries none of their owner's descendants retrieved."""
        rows = self._node_scope[self._has_children[self._node_scope]]
        rows = rows[~self._desc_any[rows]][:n]
        return [self.use(row) for row in rows.tolist()]

    def every(self) -> list[EntryUse]:
        return [self.use(row) for row in self._node_scope.tolist()]


def _tally(
    scoped: np.ndarray, eligible: np.ndarray, before: np.ndarray, own: np.ndarray, tool: np.ndarray
) -> tuple[int, int, int, int, int, int]:
    """Window rows by what they are (`Lineages.window_counts`: ReAct steps, the lineage's,
    the node's own, other branches', kept, ARI's automatic `Tool …` entries), from a test per
    row: node-scope, kept by ARI's post-filter (node-scope ones only), in the pool as of the
    start, the node's own, an automatic tool entry."""
    lineage = eligible & before
    crowding = scoped & ~lineage  # node-scope rows outside the lineage's pool
    crowding_own = int(np.count_nonzero(crowding & own))
    return (
        len(scoped) - int(np.count_nonzero(scoped)),
        int(np.count_nonzero(lineage)),
        crowding_own,
        int(np.count_nonzero(crowding)) - crowding_own,
        int(np.count_nonzero(eligible)),
        int(np.count_nonzero(tool)),
    )


def _call_payload(call: Any) -> dict | None:
    """A traced call's decoded result, unwrapped where it holds its payload as a JSON string
    under "result"; None when it is not an object."""
    result = call.result
    if isinstance(result, dict) and isinstance(result.get("result"), str):
        try:
            inner = loads_record(result["result"])
        except (ValueError, RecursionError):
            inner = None
        result = inner if isinstance(inner, dict) else result
    return result if isinstance(result, dict) else None


def _searched_entries(result: dict, by_letta: Mapping[str, EntryView]) -> list[EntryView]:
    """The node-scope entries a search_memory result's rows name by passage id."""
    found: list[EntryView] = []
    for row in result.get("results") or []:
        if isinstance(row, dict) and row.get("entry_id"):
            entry = by_letta.get(str(row["entry_id"]))
            if entry is not None and entry.kind == "node_scope":
                found.append(entry)
    return found


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (numpy's set functions import numpy.ma: ~0.1 s)."""
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def _members(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of `values` is one of `keys` (sorted)."""
    if not len(keys):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    return keys[at] == values


def _first_of_each(values: np.ndarray) -> np.ndarray:
    """The position of each distinct value's first occurrence, in order."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return np.sort(order[first])


def entry_usage(ckpt: Checkpoint, lineages: Lineages | None = None) -> EntryUsage:
    usage = EntryUsage(ckpt, lineages)
    matched = usage.count_access_log()
    usage.count_trace_logs(matched)
    usage.finish()
    return usage
