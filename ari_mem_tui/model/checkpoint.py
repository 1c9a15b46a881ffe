"""The `Checkpoint` aggregate: one run, everything the readers found, and the problems met.

The run's tree is a networkx `DiGraph` (`Checkpoint.graph`, made by `tree_graph`): its walks
are networkx's, each iterative (no recursion: a run can be a chain 20,000 nodes deep) and
linear in what it visits.
"""

from __future__ import annotations

import difflib
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import networkx as nx

from ari_mem_tui.model.columns import (
    Entries,
    EntryView,
    Events,
    StringTable,
    entries_of,
    entry_row_of_id,
    events_of,
    recode_entries,
    recode_events,
)
from ari_mem_tui.model.records import (
    CoreBlocks,
    CowWrite,
    Node,
    Problem,
    TraceCall,
)


def _names(node_id: str) -> tuple[str, str, str]:
    """The names a person may type a node by, lowered: its id, the id without ARI's `node_`
    prefix, its short id (the last 8 characters, as ARI's dashboard and the tree show it)."""
    low = node_id.lower()
    return low, low.removeprefix("node_"), low[-8:]


class NodeRefError(LookupError):
    """A node reference (full id or suffix) that names no node, or several."""


def tree_graph(nodes: Mapping[str, Node], edges: Iterable[tuple[str, str]]) -> nx.DiGraph:
    """The run's tree: `nodes` in their order (creation order), parent → child `edges` (each
    parent's children in the order given: the tree's), and each node's attribute `node`, its
    record (what the tree widget labels and filters by). `set_depths` adds `depth`."""
    graph = nx.DiGraph()
    graph.add_nodes_from((node_id, {"node": node}) for node_id, node in nodes.items())
    graph.add_edges_from(edges)
    return graph


def set_depths(graph: nx.DiGraph) -> None:
    """Each node's attribute `depth`: its depth in the tree as drawn (a root 0), in one
    topological walk. nx.NetworkXUnfeasible when the graph has a cycle (a broken tree:
    checkpoint/tree.py cuts them, then calls this again)."""
    nodes, pred = graph.nodes, graph.pred
    for node_id in nx.topological_sort(graph):
        parent = next(iter(pred[node_id]), None)
        nodes[node_id]["depth"] = 0 if parent is None else nodes[parent]["depth"] + 1


@dataclass
class Checkpoint:
    path: Path
    run_id: str | None = None
    tree_source: str | None = None  # the file the tree came from
    experiment_goal: str = ""
    nodes: dict[str, Node] = field(default_factory=dict)  # creation order
    # parent -> child edges, node attributes `node` and `depth` (`tree_graph`, `set_depths`)
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    roots: list[str] = field(default_factory=list)
    # node_scope then react, file order: columns (model/columns/); a list of MemoryEntry
    # records assigned here is turned into columns
    entries: Entries = field(default_factory=list)  # type: ignore[assignment]
    core: CoreBlocks = field(default_factory=CoreBlocks)
    access_events: Events = field(default_factory=list)  # type: ignore[assignment]  # by ts
    access_summary: dict[str, dict[str, int]] = field(default_factory=dict)
    trace_calls: dict[str, list[TraceCall]] = field(default_factory=dict)  # by node id
    writes: list[CowWrite] = field(default_factory=list)  # the run's CoW log, ts order
    problems: list[Problem] = field(default_factory=list)
    # the run's 12-hex hash, set when a Letta server's footers are compared with it
    checkpoint_hash: str | None = None
    # the Letta embedding handle settings.json names (ARI's `letta_embedding_config`), if any
    letta_embedding_config: str | None = None
    # tables derived from the lists above by search code (the replay index), rebuilt by them
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.reindex()

    @property
    def strings(self) -> StringTable:
        """The run's distinct strings, shared by its entries and events (their codes)."""
        return self.__dict__.setdefault("_strings", StringTable())

    def reindex(self) -> None:
        """Forget the lookup tables after the tables above change (built again when used)."""
        entries = self.entries
        self.entries_by_id = EntriesById(entries)
        self.entries_by_letta_id = EntriesByLettaId(entries)
        self.entries_by_node = EntriesByNode(entries)
        self.access_events.entries = entries
        if "_pending_writes" not in self.__dict__:  # else indexed when they are built
            self._index_writes()

    def _index_writes(self) -> None:
        by_node: dict[str, list[CowWrite]] = {}
        for write in self.writes:
            by_node.setdefault(write.current_node, []).append(write)
        self.writes_by_node = by_node

    def resolve_node(self, ref: str) -> str:
        """The node a person means, any case: its full id or short id (the last 8 characters,
        as the tree shows it), else the one node whose id starts with `ref` (with or without
        `node_`, or its short id does), else the one whose id holds `ref` anywhere. Several at
        the first tier that has any: the candidates are listed, never one picked; none: the
        closest ids are suggested."""
        if ref in self.nodes:
            return ref
        wanted = ref.strip().lower()
        if not wanted:
            raise NodeRefError("an empty node id names no node")
        ids = list(self.nodes)
        names = [_names(nid) for nid in ids]  # (full, without node_, short), lowered
        tiers = (
            lambda n: wanted in (n[0], n[2]),
            lambda n: any(name.startswith(wanted) for name in n),
            lambda n: wanted in n[0],
        )
        for test in tiers:
            matches = [nid for nid, n in zip(ids, names, strict=True) if test(n)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
                raise NodeRefError(
                    f"{ref!r} matches {len(matches)} nodes: {shown}; give more of the id"
                )
        # people type the end of an id (the short id the tree shows): compare like with like
        by_tail = {n[0][-len(wanted) :]: nid for nid, n in zip(ids, names, strict=True)}
        close = difflib.get_close_matches(wanted, list(by_tail), n=3, cutoff=0.6)
        tail = f"; did you mean {', '.join(by_tail[c] for c in close)}?" if close else ""
        raise NodeRefError(f"no node matches {ref!r}{tail}")

    def defer_trace_calls(
        self, parse: Callable[[], dict[str, list[TraceCall]]], count: int
    ) -> None:
        """Leave `trace_calls` to `parse()`, run on its first read (most of a big run's tree is
        trace logs, and opening it needs none); `count` is how many calls it will give."""
        self.__dict__["_pending_trace_calls"] = (parse, count)

    def trace_call_count(self) -> int:
        """The number of trace_log calls, without parsing them when they are still deferred."""
        pending = self.__dict__.get("_pending_trace_calls")
        if pending is not None:
            return pending[1]
        return sum(len(calls) for calls in self.trace_calls.values())

    def read_tool_calls(self) -> Mapping[str, list[TraceCall]]:
        """Each node's trace_log calls, in trace order, or at least those of the read tools
        (attribution.READ_TOOLS): while `trace_calls` is deferred, the subset the loader parsed
        for the attribution and the CoW log (the deferred log's `trace_calls`), not every call."""
        if "_pending_trace_calls" in self.__dict__:
            parsed = self._pending_log("trace_calls")
            if parsed is not None:
                return parsed
        return self.trace_calls

    def defer_writes(self, build: Callable[[], list[CowWrite]]) -> None:
        """Leave `writes` (and `writes_by_node`) to `build()`, run on their first read (its
        `counts`, `for_node` and `rejected_in_order`, when it has them, answer without it)."""
        self.__dict__["_pending_writes"] = (build, None)  # (as _Deferred reads it)
        self.__dict__.pop("_writes_by_node", None)
        self.__dict__.pop("_node_writes", None)

    def node_writes(self, node_id: str) -> list[CowWrite]:
        """The CoW rows whose current node is `node_id`; while the log is deferred, only
        these are built (when its builder can: `for_node`), not the whole run's."""
        for_node = self._pending_log("for_node")
        if for_node is None:
            return self.writes_by_node.get(node_id, [])
        built = self.__dict__.setdefault("_node_writes", {})
        if node_id not in built:
            built[node_id] = for_node(node_id)
        return built[node_id]

    def rejected_writes(self) -> list[CowWrite]:
        """The CoW log's rejected rows, in its order; while the log is deferred, only these
        are built (when its builder can: `rejected_in_order`), not one row per entry."""
        rejected_in_order = self._pending_log("rejected_in_order")
        if rejected_in_order is None:
            return [write for write in self.writes if not write.accepted]
        return rejected_in_order()

    def pending_writes(self) -> Any:
        """The builder `defer_writes` was given, while the log is not built yet (else None)."""
        pending = self.__dict__.get("_pending_writes")
        return pending[0] if pending is not None else None

    def _pending_log(self, name: str) -> Any:
        """The deferred CoW log builder's `name` (None: the log is built, or has no such one)."""
        return getattr(self.pending_writes(), name, None)

    def write_counts(self) -> tuple[int, int]:
        """(accepted, rejected) rows of the CoW log, without building it when still deferred."""
        counts = self._pending_log("counts")
        if counts is not None:
            return counts
        accepted = sum(1 for write in self.writes if write.accepted)
        return accepted, len(self.writes) - accepted

    def lineage(self, node_id: str) -> list[str]:
        """root → … → node (inclusive), from the node's ancestor_ids: the scope ARI read with
        (rebuilt from the tree where the file had none: `Node.ancestor_ids`, a ParentChain)."""
        return [*self.nodes[node_id].ancestor_ids, node_id]

    def children(self, node_id: str) -> list[str]:
        return list(self.graph.successors(node_id)) if node_id in self.graph else []

    def tree_parent(self, node_id: str) -> str | None:
        """The node's parent as the tree draws it (the graph's edge), or None for a root; a
        node whose parent_id is not in the tree is one, as is one broken off a cycle."""
        if node_id not in self.graph:
            return None
        return next(self.graph.predecessors(node_id), None)

    def tree_path(self, node_id: str) -> list[str]:
        """root → … → node as the tree draws it. `lineage` is the scope ARI read with: its
        ancestor_ids may name nodes the tree does not hold (a parent missing from tree.json)."""
        if node_id not in self.graph:
            return [node_id]
        upwards = nx.dfs_preorder_nodes(self.graph.reverse(copy=False), node_id)  # node, parent …
        return list(upwards)[::-1]

    def tree_order(self) -> Iterator[str]:
        """Every node of the tree once, depth first from each root, children in order."""
        graph = self.graph
        return chain.from_iterable(
            nx.dfs_preorder_nodes(graph, root) for root in self.roots if root in graph
        )

    def tree_numbers(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each node's preorder number (`tree_order`) and subtree size: `a` is above `b` in the
        tree iff tin[a] < tin[b] < tin[a] + size[a] (`TreeAbove`), an O(1) test where walking a
        rebuilt scope (`ParentChain`) costs the depth. Linear in the tree; not kept."""
        order = list(self.tree_order())
        tin = {node_id: number for number, node_id in enumerate(order)}
        size: dict[str, int] = {}
        successors = self.graph.successors
        for node_id in reversed(order):  # children before parents
            size[node_id] = 1 + sum(size[child] for child in successors(node_id))
        return tin, size

    def with_tree_ancestors(self, node_ids: Iterable[str]) -> set[str]:
        """`node_ids` and every node above one of them in the tree: each walks up the tree
        until it meets a node an earlier one passed (linear in the tree, however deep)."""
        found: set[str] = set()
        graph = self.graph
        for node_id in node_ids:
            if node_id in found or node_id not in graph:
                continue
            upwards = nx.dfs_preorder_nodes(graph.reverse(copy=False), node_id)
            for step in upwards:  # node, parent, …: stop where an earlier walk went on
                if step in found:
                    break
                found.add(step)
        return found

    def descendants(self, node_id: str) -> set[str]:
        """The nodes below `node_id` in the tree (they started after it: it saw none of their
        memory)."""
        return nx.descendants(self.graph, node_id) if node_id in self.graph else set()

    def common_ancestor(self, a: str, b: str) -> str | None:
        """The deepest node of the tree above (or at) both `a` and `b`; None on different
        roots."""
        if a not in self.graph or b not in self.graph:
            return None
        return nx.lowest_common_ancestor(self.graph, a, b)

    def shared_scope(self, a: str, b: str) -> list[str]:
        """The nodes whose memory both `a` and `b` could read (in both scopes, root first):
        the lineage through their common ancestor, itself included unless it is `a` or `b`
        (a node reads its ancestors, not itself)."""
        theirs = set(self.nodes[b].ancestor_ids) if b in self.nodes else set()
        mine = self.nodes[a].ancestor_ids if a in self.nodes else []
        return [node_id for node_id in mine if node_id in theirs]


class EntriesById(Mapping[str, EntryView]):
    """Entries by our id; the ids are computed when first looked up."""

    def __init__(self, entries: Entries) -> None:
        self._entries = entries

    def __getitem__(self, entry_id: str) -> EntryView:
        row = entry_row_of_id(self._entries, entry_id) if isinstance(entry_id, str) else -1
        if row < 0:
            raise KeyError(entry_id)
        return self._entries[row]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries.all_ids())

    def __len__(self) -> int:
        return len(self._entries)


class EntriesByLettaId(MutableMapping[str, EntryView]):
    """Entries by Letta passage id (the last entry of an id wins), read off the `letta` codes;
    a passage id set here (an alias) is kept beside them until the next reindex."""

    def __init__(self, entries: Entries) -> None:
        self._entries = entries
        self._rows: array | None = None
        self._aliases: dict[str, EntryView] = {}

    def rows(self) -> array:
        """The entry row of every string code (-1: no entry has that passage id)."""
        if self._rows is None or len(self._rows) < len(self._entries.strings):
            rows = array("i", [-1]) * len(self._entries.strings)
            for row, code in enumerate(self._entries.letta):
                if code >= 0:
                    rows[code] = row
            self._rows = rows
        return self._rows

    def row_of_code(self, code: int) -> int:
        rows = self.rows()
        return rows[code] if 0 <= code < len(rows) else -1

    def __getitem__(self, letta_id: str) -> EntryView:
        alias = self._aliases.get(letta_id)
        if alias is not None:
            return alias
        code = self._entries.strings.find(letta_id) if letta_id else -1
        row = self.row_of_code(code)
        if row < 0:
            raise KeyError(letta_id)
        return self._entries[row]

    def __setitem__(self, letta_id: str, entry: EntryView) -> None:
        self._aliases[letta_id] = entry

    def __delitem__(self, letta_id: str) -> None:
        del self._aliases[letta_id]

    def __iter__(self) -> Iterator[str]:
        strings, rows = self._entries.strings, self.rows()
        found = [strings[code] for code in range(len(rows)) if rows[code] >= 0]
        return iter(dict.fromkeys([*found, *self._aliases]))  # type: ignore[list-item]

    def __len__(self) -> int:
        return sum(1 for _ in self)


class EntriesByNode(Mapping[str, list[EntryView]]):
    """Each node's node-scope entries, in table order (a list of views made when asked)."""

    def __init__(self, entries: Entries) -> None:
        self._entries = entries

    def group(self) -> None:
        """Group the rows by node now (a tenth of a second at 200k entries), so that the tree's
        first labels, a count per node, do not group them on the UI thread."""
        self._entries.rows_of_node(0)

    def rows(self, node_id: str) -> list[int]:
        entries = self._entries
        code = entries.strings.find(node_id)
        if code < 0:
            return []
        kind = entries.kind
        return [row for row in entries.rows_of_node(code) if kind[row] == 0]

    def __getitem__(self, node_id: str) -> list[EntryView]:
        rows = self.rows(node_id)
        if not rows:
            raise KeyError(node_id)
        entries = self._entries
        return [entries[row] for row in rows]

    def __iter__(self) -> Iterator[str]:
        entries = self._entries
        owners = dict.fromkeys(
            entries.node[row] for row in range(len(entries)) if entries.kind[row] == 0
        )
        return iter([entries.strings[code] for code in owners])  # type: ignore[misc]

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Table:
    """`Checkpoint.entries` / `access_events`: columns; a list of records is made into them,
    and a table of another string table is coded into the run's (one table per run)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Checkpoint | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__["_" + self.name]

    def __set__(self, obj: Checkpoint, value: Any) -> None:
        value = self._coded(obj, value)
        old = obj.__dict__.get("_entries")
        obj.__dict__["_" + self.name] = value
        self._link(obj, value, old)

    def _coded(self, obj: Checkpoint, value: Any) -> Any:
        """`value` as a table coded in the run's string table: records made into columns; a
        table of another string table keeps its own, which the run adopts, while the run's
        other table is empty (nothing else uses the run's), else is coded into the run's."""
        entries = self.name == "entries"
        if not isinstance(value, (Entries, Events)):
            return (entries_of if entries else events_of)(value, obj.strings)
        if value.strings is obj.strings:
            return value
        other_name = "_access_events" if entries else "_entries"
        other = obj.__dict__.get(other_name)
        if other is not None and len(other):
            return (recode_entries if entries else recode_events)(value, obj.strings)  # type: ignore[arg-type]
        obj.__dict__["_strings"] = value.strings  # adopt it: nothing else uses ours
        if other is not None:  # the other table, empty, coded in the adopted one too
            empty = events_of if entries else entries_of
            obj.__dict__[other_name] = empty(strings=value.strings)
        return value

    def _link(self, obj: Checkpoint, value: Any, old: Any) -> None:
        """The events joined to the run's entries as they are now (`old`: the entries before)."""
        entries = self.name == "entries"
        events = value if not entries else obj.__dict__.get("_access_events")
        if events is None:
            return
        if entries and old is not None and events.entries is old and value is not old:
            events.repoint_joins(old, value)  # (a Letta server's entries replace the files')
        events.entries = obj.__dict__.get("_entries")


class _Deferred:
    """A Checkpoint attribute that is plain, unless the loader left a function to build it on
    its first read (`defer_trace_calls`, `defer_writes`)."""

    def __init__(self, name: str, after: Callable[[Checkpoint], None] | None = None) -> None:
        self.name, self.after = name, after

    def __get__(self, obj: Checkpoint | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        pending = obj.__dict__.pop("_pending_" + self.name, None)
        if pending is not None:
            obj.__dict__["_" + self.name] = pending[0]()
            if self.after is not None:
                self.after(obj)
        return obj.__dict__["_" + self.name]

    def __set__(self, obj: Checkpoint, value: Any) -> None:
        obj.__dict__.pop("_pending_" + self.name, None)
        obj.__dict__["_" + self.name] = value


class _WritesByNode:
    """`Checkpoint.writes_by_node`, built with the writes when they are deferred."""

    def __get__(self, obj: Checkpoint | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj.writes  # noqa: B018 - builds deferred writes, which indexes them
        return obj.__dict__["_writes_by_node"]

    def __set__(self, obj: Checkpoint, value: dict[str, list[CowWrite]]) -> None:
        obj.__dict__["_writes_by_node"] = value


# installed after @dataclass made __init__, so that __init__'s assignments go through them
Checkpoint.entries = _Table("entries")  # type: ignore[assignment]
Checkpoint.access_events = _Table("access_events")  # type: ignore[assignment]
Checkpoint.trace_calls = _Deferred("trace_calls")  # type: ignore[assignment]
Checkpoint.writes = _Deferred("writes", after=Checkpoint._index_writes)  # type: ignore[assignment]
Checkpoint.writes_by_node = _WritesByNode()  # type: ignore[attr-defined]


@dataclass
class Run:
    """A checkpoint opened for browsing, with the ranker that replays its searches."""

    checkpoint: Checkpoint
    ranker: Any  # an ari_mem_tui.search ranker (embedded, BM25 or Letta)
    source_label: str  # "files: <path>" or "letta: <url> agent <name>"
    # a fresh load's index, not written yet (RunOptions.index_behind): the TUI runs it once the
    # first hits are shown; None when there is nothing to write
    save_index: Callable[[], bool] | None = None
    # where the audit of these files is kept for the next open (audit.AuditStore); None for a
    # Letta server's memory or with indexes off
    audit_store: Any = None
    # where the replay check of these files is kept (search/check_store.CheckStore); None with
    # indexes off
    check_store: Any = None
    # makes and keeps the run's summary (run_summary.py), given the audit when known; None
    # when one is kept for these files already (or there is nowhere to keep it)
    save_summary: Callable[[Any], bool] | None = None


class TreeAbove:
    """`x in TreeAbove(tin, size, node)`: whether `x` is above `node` in the tree (a proper
    ancestor), from `Checkpoint.tree_numbers`."""

    __slots__ = ("_at", "_size", "_tin")

    def __init__(self, tin: dict[str, int], size: dict[str, int], node_id: str) -> None:
        self._tin, self._size, self._at = tin, size, tin.get(node_id, -1)

    def __contains__(self, other: object) -> bool:
        at = self._tin.get(other)  # type: ignore[arg-type]
        return at is not None and at < self._at < at + self._size[other]  # type: ignore[index]
