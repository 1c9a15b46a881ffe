"""Nouns of memory health: did ARI's scoped memory reach the nodes that needed it?"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ari_mem_tui.model.records import RankerFidelity, Record


@dataclass(kw_only=True)
class NodeHealth(Record):
    """One node's start-up search (§5.8 Tier 2), seen from the window ARI post-filtered."""

    FLOATS = ("started", "share_other", "share_react", "share_tool")
    INTS = (
        "depth",
        "eligible",
        "reached",
        "hits",
        "hits_recorded",
        "hits_replayed",
        "limit",
        "window",
        "other_branches",
        "react",
        "lineage",
        "own",
        "tool",
        "shortfall",
    )

    node_id: str
    depth: int
    started: float | None = None  # best estimate of the node's start (§4.5)
    # "start-up search" | "first start-up read" | "created_at" | None
    started_source: str | None = None
    searched: bool = True  # False: a root (ARI searches nothing) or a node that never started
    why_not: str = ""  # for searched False
    eligible: int = 0  # ancestor entries ARI's post-filter would keep, as of the start
    reached: int = 0  # of those, how many were inside the top_k window (replayed)
    hits: int = 0  # what the node got: recorded when logged, else replayed
    hits_source: str = ""  # "recorded" | "replayed"
    hits_recorded: int | None = None  # the access log's start-up search, when logged
    hits_replayed: int | None = None  # our replay of it
    limit: int = 5
    window: int = 0  # rows in the replayed window (top_k, or the pool when smaller)
    other_branches: int = 0  # window rows from node-scope entries outside the lineage
    react: int = 0  # window rows that are ReAct steps
    lineage: int = 0  # window rows from the node's ancestors (= reached)
    own: int = 0  # window rows of the node's own entries (as of its start: normally 0)
    tool: int = 0  # window rows that are ARI's automatic `Tool …` entries (any node's)
    share_other: float = 0.0  # other_branches / window
    share_react: float = 0.0  # react / window
    share_tool: float = 0.0  # tool / window
    starved: bool = False  # eligible > 0 and hits < min(limit, eligible): crowded out
    shortfall: int = 0  # min(limit, eligible) - hits, when starved
    query: str = ""


@dataclass(kw_only=True)
class EntryUse(Record):
    """How often one memory entry was retrieved, and by whom (access log + trace_log)."""

    INTS = ("startup", "inherit", "llm", "other", "descendant_readers")

    entry_id: str
    node_id: str  # owner
    kind: str | None = None  # mem_kind / type
    text: str = ""  # a preview
    startup: int = 0  # returned by a start-up search (Tier 2)
    inherit: int = 0  # read by an inheritance read (Tier 1b get_node_memory)
    llm: int = 0  # returned to an LLM-initiated call (search_memory / get_node_memory)
    other: int = 0  # pipeline, unattributed reads
    readers: list[str] = field(default_factory=list)  # nodes that retrieved it (first 20)
    descendant_readers: int = 0  # distinct readers that descend from the owner
    owner_has_descendants: bool = False

    @property
    def total(self) -> int:
        return self.startup + self.inherit + self.llm + self.other


@dataclass(kw_only=True)
class Bucket(Record):
    """An aggregate over a group of searched nodes (one depth, or one slice of time)."""

    FLOATS = ("start", "mean_share_other", "mean_share_react", "mean_share_tool", "mean_reached")
    INTS = ("nodes", "starved")

    label: str  # "depth 3", or the slice's start time
    start: float | None = None  # for time slices
    nodes: int = 0  # searched nodes in the group
    starved: int = 0
    mean_share_other: float = 0.0
    mean_share_react: float = 0.0
    mean_share_tool: float = 0.0
    mean_reached: float = 0.0  # reached / eligible over nodes with eligible > 0


@dataclass(kw_only=True)
class EntrySummary(Record):
    INTS = (
        "total",
        "retrieved",
        "by_descendants",
        "never_by_descendant",
        "never_searched",
        "leaf_entries",
        "unresolved",
        "bulk_reads",
        "from_trace_log",
    )
    total: int = 0  # node-scope entries
    retrieved: int = 0  # retrieved at least once by anyone
    by_descendants: int = 0  # retrieved by at least one descendant of its owner
    never_by_descendant: int = 0  # owner has descendants, none of them retrieved it
    never_searched: int = 0  # owner has descendants, no descendant's search returned it
    leaf_entries: int = 0  # entries of nodes without descendants (nobody below to read them)
    reads: dict[str, int] = field(default_factory=dict)  # retrievals per category
    unresolved: int = 0  # result rows whose entry could not be found in the loaded memory
    bulk_reads: int = 0  # bulk reads: counts only, no entry ids (§4.2)
    from_trace_log: int = 0  # LLM reads taken from trace_log (no matching access-log event)


@dataclass(kw_only=True)
class Health(Record):
    """The JSON of `ari-mem-tui health`: per node, per entry, and across the run."""

    INTS = ("limit", "top_k", "searched", "starved", "recorded", "replayed")

    run_id: str | None = None
    ranker: str  # the ranking the replays used ("bm25", "minilm", "letta:…")
    fidelity: RankerFidelity | None = None  # whether that ranking is the run's own
    limit: int = 5
    top_k: int = 200
    pool: str = "start"  # each node's pool: as of its search ("start") or today's ("now")
    drop: list[str] = field(default_factory=list)  # kinds of memory left out (a what-if)
    nodes: list[NodeHealth] = field(default_factory=list)  # tree order
    searched: int = 0
    starved: int = 0
    recorded: int = 0  # nodes whose hits came from the access log
    replayed: int = 0  # nodes whose hits came from a replay
    by_depth: list[Bucket] = field(default_factory=list)
    over_time: list[Bucket] = field(default_factory=list)
    entries: EntrySummary = field(default_factory=EntrySummary)
    top_entries: list[EntryUse] = field(default_factory=list)  # most retrieved
    never_retrieved: list[EntryUse] = field(default_factory=list)  # by a descendant (first N)
    all_entries: list[EntryUse] | None = None  # with --all-entries
    complete: bool = True  # False: interrupted; the numbers cover `nodes` only
    notes: list[str] = field(default_factory=list)


# ---- what if: the same run under other memory settings (what_if.py) ----


@dataclass(kw_only=True)
class WhatIfNode(Record):
    """One node whose search came out otherwise under the what-if settings: its hits on both
    sides (entry ids gained and lost), starved on either, and what its window held."""

    FLOATS = ("share_other_own", "share_other_what_if", "share_tool_own", "share_tool_what_if")
    INTS = (
        "depth",
        "hits_own",
        "hits_what_if",
        "eligible_own",
        "eligible_what_if",
        "reached_own",
        "reached_what_if",
    )

    node_id: str
    depth: int
    hits_own: int
    hits_what_if: int
    eligible_own: int
    eligible_what_if: int
    reached_own: int
    reached_what_if: int
    starved_own: bool
    starved_what_if: bool
    gained: list[str] = field(default_factory=list)  # entry ids only the what-if returned
    lost: list[str] = field(default_factory=list)  # entry ids only the run's own returned
    share_other_own: float = 0.0
    share_other_what_if: float = 0.0
    share_tool_own: float = 0.0
    share_tool_what_if: float = 0.0


@dataclass(kw_only=True)
class WhatIfDepth(Record):
    """One depth on both sides: nodes, starved, ancestor memory reached, window shares."""

    FLOATS = (
        "reached_own",
        "reached_what_if",
        "share_other_own",
        "share_other_what_if",
        "share_tool_own",
        "share_tool_what_if",
        "share_react_own",
        "share_react_what_if",
    )
    INTS = ("nodes", "starved_own", "starved_what_if")

    label: str
    nodes: int = 0
    starved_own: int = 0
    starved_what_if: int = 0
    reached_own: float = 0.0
    reached_what_if: float = 0.0
    share_other_own: float = 0.0
    share_other_what_if: float = 0.0
    share_tool_own: float = 0.0
    share_tool_what_if: float = 0.0
    share_react_own: float = 0.0
    share_react_what_if: float = 0.0


@dataclass(kw_only=True)
class WhatIfChanges(Record):
    INTS = ("starved_own", "starved_what_if", "hits_gained", "hits_lost", "nodes_changed")

    starved_own: int = 0
    starved_what_if: int = 0
    no_longer_starved: list[str] = field(default_factory=list)
    newly_starved: list[str] = field(default_factory=list)
    hits_gained: int = 0
    hits_lost: int = 0
    nodes_changed: int = 0
    nodes: list[WhatIfNode] = field(default_factory=list)  # no longer starved first
    by_depth: list[WhatIfDepth] = field(default_factory=list)


@dataclass(kw_only=True)
class WhatIf(Record):
    """`health --what-if`: the run's own health beside the same run under other settings."""

    settings: dict[str, Any] = field(default_factory=dict)  # the what-if's
    own_settings: dict[str, Any] = field(default_factory=dict)
    same: bool = False  # the what-if's settings are the run's own: its side IS `health`
    changes: WhatIfChanges = field(default_factory=WhatIfChanges)
    notes: list[str] = field(default_factory=list)
    own: Health
    what_if: Health
