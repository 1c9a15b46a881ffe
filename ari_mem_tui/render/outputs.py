"""Every JSON output of the tool, as pydantic models: the one place their fields are declared.

`summary`, `saw`, `audit`, `runs`, `health` (`--json`) and a dossier's `.json` are each built as
one of the documents below (`OUTPUTS`) and written by the one JSON writer (`render/text.py
json_text`, `render/indented.py`). `ari-mem-tui schema NAME` prints a document's JSON Schema;
the committed copies are `docs/schema/NAME.json` (`python scripts/make_schemas.py` writes them
again, and tests/test_schemas.py fails while they are stale, and validates every output of the
demo and the ARI-like run against them).

A field is added here, in its document's model (and, where the records do not carry it yet, to
the dict the document is built from); then `python scripts/make_schemas.py`. Every model
forbids fields it does not declare, so a field added to the data alone fails loudly (in the
tests) instead of reaching the output undocumented. Field order is output order: the outputs
are byte for byte what they were before these models (tests compare them), so a new field goes
where it should be read, and `schema_version` is raised when a field changes meaning or goes.

Building checks: every field of every document is validated by its model as it is built, but
for the lists of one row per node or entry of `health` (`Document.BULK`: 10,000s of rows), of
which the first row is (checking each made a 10k run's document five times slower to build;
`benchmarks/bench_json.py`); the schema test validates every row of every output. Numbers JSON
has no form for are the writer's business: NaN and Infinity are written `null` (README, JSON
output).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer

from ari_mem_tui.checkpoint.bulk import without_gc

SCHEMA_PREFIX = "ari-mem-tui/"
Severity = Literal["info", "warning", "error"]


class Out(BaseModel):
    """A part of an output: its fields declared, nothing else accepted."""

    # (defer_build: a model's validator is built when first used: a command builds one
    # document; descriptions in Field, not attribute docstrings, which pydantic reads from the
    # module's source at import: 20 ms of every command at load 1, 350 ms at load 20)
    model_config = ConfigDict(extra="forbid", defer_build=True)


# ---------------------------------------------------------------- shared parts
class ProblemOut(Out):
    """Something in the input that could not be read as it should."""

    file: str = Field(
        description="The file (relative to the checkpoint), or `letta:URL`, that holds the bad"
        " input."
    )
    where: str = Field(
        description="Where in it: `line 12`, `node node_ab12cd34`, `byte 40960` (may be empty)."
    )
    what: str = Field(description="What was skipped or assumed.")
    why: str
    severity: Severity


class CandidateOut(Out):
    """A checkpoint hash the run may have had, and where its files name it."""

    hash: str
    source: str = Field(
        description="Where: `this path`, `--checkpoint-hash`, `tree.json experiment_file`,"
        " `ari_run_<ts>.log Checkpoint`, `meta.json checkpoint_dir`, `ari.log checkpoint=`,"
        " `trace_log of NODE`, `the server's agent NAME`."
    )
    path: str = Field(description="The checkpoint path it is the hash of (empty: none named).")


class HashFindingOut(Out):
    """The checkpoint hash a replay rebuilds the footers with, and what checked it."""

    hash: str
    source: str = Field(description="Where it came from (as a candidate's `source`).")
    path: str
    found: bool | None = Field(
        description="true: it reproduced recorded searches; false: no candidate did (the run's"
        " hash is unknown); null: nothing checked it."
    )
    reproduced: int = Field(description="Recorded searches it reproduced, of `probes`.")
    probes: int
    tried: list[CandidateOut] = Field(description="The candidates tried, in order.")
    note: str


class FidelityOut(Out):
    """Whether the ranking is the run's own, and what its recording showed (README: Exact
    rankings; the words are search/fidelity.py's)."""

    exact: bool | None = Field(
        description="True only when the ranker is the run's own and the node's recorded search"
        " was reproduced; false: a stand-in, or a difference; null: nothing checked it."
    )
    label: str
    short: str
    ranker: str = Field(description="What ranked the replay, in words.")
    recorded: str = Field(
        description="What ranked the recording, in words (empty when none was recorded)."
    )
    note: str
    own: bool | None = Field(
        description="The ranker is the run's own: true, false (a stand-in), null (unknown)."
    )
    verified: bool | None = Field(
        description="The node's recorded search was reproduced: true, false, null (nothing to"
        " check it with)."
    )
    word: str = Field(
        description="exact, run's ranker, unchecked, not reproduced, stand-in or unverified."
    )
    cause: str = Field(description="Not reproduced: the likely cause (else empty).")
    hash: HashFindingOut | None = Field(
        description="The run's own model or server: the footer hash, and what checked it."
    )


class HitOut(Out):
    rank: int = Field(description="1-based position among the node's hits.")
    global_rank: int = Field(description="0-based position in the unfiltered window; -1 unknown.")
    score: float
    entry_id: str
    node_id: str
    kind: str
    text: str
    mark: str = Field(
        description="Recorded vs replayed: empty (the same), replay-only, recorded-only, moved,"
        " changed."
    )
    differs: list[str] = Field(
        description="Which of rank, global_rank, score differ from the other list."
    )
    counterpart: dict[str, float | int] | None = Field(
        description="The same entry's rank, global_rank and score in the other list (null: not"
        " in it)."
    )


class MissedOut(Out):
    entry_id: str
    node_id: str
    global_rank: int | None = Field(
        description="Rank in the whole pool; null when unknown (a server's window only)."
    )
    text: str


class WindowOut(Out):
    """The top_k window's rows, by where they come from."""

    size: int
    node_scope: int
    react_step: int
    lineage: int
    self: int
    other_branches: int
    by_branch: dict[str, int] = Field(
        description="Rows per branch: the root's child each row's node descends from."
    )


class PoolOut(Out):
    size: int
    node_scope: int
    react_step: int
    window: WindowOut | None = Field(
        description="null: the ranker has no window (ARI's in-memory backend)."
    )


class ParamsOut(Out):
    limit: int
    overfetch: int | None = Field(description="null: no window (ARI's in-memory rule).")
    top_k: int | None = Field(description="null: no window (ARI's in-memory rule).")


class RecordedOut(Out):
    """The node's start-up search as the access log recorded it."""

    ts: float
    query: str
    limit: int | None
    hits: list[HitOut]
    backend: str = Field(
        description="Which backend recorded it: letta, in_memory, letta-substring, unknown."
    )
    ranker: str
    differences: int = Field(
        description="Entries that differ between the recording and the replay."
    )


class TierLineOut(Out):
    text: str
    truncated: bool
    entry_id: str | None


class TierOut(Out):
    """One tier of the working context the node was given at start."""

    key: Literal["1a", "1b", "1c", "2"]
    title: str
    header: str
    lines: list[TierLineOut]
    exact: bool
    note: str


class CoreOut(Out):
    """The core memory blocks as the node saw them."""

    model_config = ConfigDict(extra="ignore")  # (seeded_at is not shown)

    persona: str
    human: str
    ari_context: dict[str, Any]
    source: str
    approximate: bool


class WriteOut(Out):
    """One row of the copy-on-write log."""

    model_config = ConfigDict(extra="ignore")  # (the CoW row has more than `saw` shows)

    ts: float | None
    current_node: str
    target_node: str
    tool: str
    accepted: bool
    reason: str | None
    source: str
    entry_id: str | None
    text: str


class PassageOut(Out):
    """A passage a flagged read returned."""

    entry_id: str | None
    letta_id: str | None
    node_id: str
    text: str
    outside: bool = Field(description="Not the reader's ancestor or itself: this passage leaked.")


class FindingOut(Out):
    severity: Severity
    kind: str = Field(
        description="problem, leak, scope_violation, rejected_write, unattributed, second_hand."
    )
    node_id: str
    explanation: str
    ref: str = Field(description="Where it was seen.")
    ts: float | None
    targets: list[str]
    tool: str
    query: str | None
    scope: list[str]
    passages: list[PassageOut]
    text: str
    reason: str


class SecondHandOut(FindingOut):
    """A node that received another branch's memory second-hand: its read (the finding's
    `tool`, `query`, `ref`, `ts`) returned an entry that keeps a leaking read's result."""

    entry_id: str = Field(description="The tainted entry (our id).")
    via_node: str = Field(description="The entry's writer, whose read leaked.")
    origin_nodes: list[str] = Field(
        description="Whose memory the entry quotes, outside the reader's lineage (= targets)."
    )
    entry_ts: float | None = Field(description="When the entry was written.")
    entry_tool: str = Field(description="The read the entry keeps.")
    leak_ref: str = Field(description="Where the leaking read was seen; empty: no record.")
    leak_ts: float | None = Field(description="When it was made; null: a trace_log call.")


class TaintedOut(Out):
    """An entry that keeps a leaking read's result, quoting another branch's passages."""

    entry_id: str
    letta_id: str | None
    node_id: str = Field(description="Its writer.")
    ts: float | None
    tool: str = Field(description="The read it keeps.")
    origin_nodes: list[str]
    read_ref: str = Field(description="Where the leaking read was seen; empty: no record.")
    read_ts: float | None
    passages: list[PassageOut] = Field(description="The passages it quotes, as far as it goes.")


class Document(Out):
    """A whole output: `schema` names it, `schema_version` the version of its shape."""

    # lists of one row per node or entry (10,000s): declared, each row's type in the schema, but
    # only their first row is checked as the document is built (`output`); the schema test
    # checks every row. Checking all made a 10k run's `health --json` 5 times slower to build
    # (bench_json.py: 19 → 90 ms quiet, 57 → 396 ms at load 14) and `--all-entries` 1.5 s slower.
    BULK: ClassVar[tuple[str, ...]] = ()

    schema_: str = Field(alias="schema")
    schema_version: int


# ---------------------------------------------------------------- summary
class CoreSummaryOut(Out):
    seeded: bool
    source: str
    approximate: bool


class CountsOut(Out):
    nodes: int
    roots: int
    entries: int
    node_scope: int
    react_step: int
    partial_entries: int
    events: int
    reads: int
    write_events: int
    reads_by_attribution: dict[str, int]
    trace_calls: int
    writes: int
    accepted_writes: int
    rejected_writes: int
    problems: int
    problems_by_severity: dict[str, int]


class KindCheckOut(Out):
    checked: int
    reproduced: int


class ReplayCheckOut(Out):
    """Every recorded search a replay can rebuild, replayed with the chosen ranker and compared
    (README: Exact rankings)."""

    ranker: str
    checked: int = Field(description="Recorded searches compared.")
    reproduced: int = Field(description="Of them, reproduced: entries, order, ranks, scores.")
    differs: list[str] = Field(description="Nodes whose recorded searches differ.")
    by_kind: dict[str, KindCheckOut] = Field(
        description="`start-up` searches and the `other` ones (the LLM's, the pipeline's) apart."
    )
    word: str = Field(description="The run's verdict: search/fidelity.py's words.")
    label: str
    note: str = Field(description="Why nothing was checked, or what was left out.")
    complete: bool = Field(description="false: interrupted (and not kept).")


class SummaryOutput(Document):
    """`ari-mem-tui summary CKPT --json`: what a checkpoint holds, with the problems met."""

    schema_: Literal["ari-mem-tui/summary"] = Field("ari-mem-tui/summary", alias="schema")
    schema_version: Literal[1] = 1
    path: str
    memory_source: str
    checkpoint_hash: str = Field(description="The hash a replay rebuilds the footers with.")
    checkpoint_hash_source: HashFindingOut | None = Field(
        description="Where the hash came from, and what checked it (null: not asked)."
    )
    replay_check: ReplayCheckOut | None = Field(
        description="How far replays reproduce the run's recorded searches (null: unread run)."
    )
    run_id: str | None
    tree_source: str | None = Field(description="The file the tree came from (null: no tree).")
    core: CoreSummaryOut
    counts: CountsOut
    access_summary: dict[str, dict[str, int]] = Field(
        description="ARI's own summary file, as written: per node, reads and writes."
    )
    problems: list[ProblemOut]


# ---------------------------------------------------------------- saw
class SawOutput(Document):
    """`ari-mem-tui saw CKPT NODE --json`: what one node saw, and why."""

    schema_: Literal["ari-mem-tui/saw"] = Field("ari-mem-tui/saw", alias="schema")
    schema_version: Literal[1] = 1
    node_id: str
    query: str
    query_source: str = Field(description="start, now or custom.")
    query_field: str
    params: ParamsOut
    pool: PoolOut
    hits: list[HitOut]
    eligible: int
    missed: list[MissedOut]
    exact_scope: list[HitOut] = Field(description="The hits a pre-filtered search would give.")
    recorded: RecordedOut | None
    as_of: float | None = Field(
        description="Epoch seconds the pool was cut at; null: today's pool."
    )
    as_of_source: str | None
    tiers: list[TierOut]
    core: CoreOut
    writes: list[WriteOut]
    embedder: str
    windowless: bool = Field(
        description="true: the ranker has no top_k window (ARI's in-memory backend): no global"
        " ranks."
    )
    fallback: bool
    fidelity: FidelityOut
    notes: list[str]


# ---------------------------------------------------------------- audit
class AuditOutput(Document):
    """`ari-mem-tui audit CKPT --json`: leaks, scope violations, rejected writes, second-hand
    leaks."""

    schema_: Literal["ari-mem-tui/audit"] = Field("ari-mem-tui/audit", alias="schema")
    schema_version: Literal[1] = 1
    problems: list[FindingOut]
    scope_violations: list[FindingOut]
    leaks: list[FindingOut]
    rejected_writes: list[FindingOut]
    unattributed: list[FindingOut] = Field(
        description="Reads no reader could be established for: listed, never counted as findings."
    )
    second_hand: list[SecondHandOut] = Field(
        description="Reads that handed a node another branch's memory in a tainted entry; not"
        " in the exit code."
    )
    tainted: list[TaintedOut] = Field(
        description="Entries that keep a leaking read's result, quoting another branch's memory."
    )
    memory_source: str


# ---------------------------------------------------------------- runs
class RunSummaryOut(Out):
    made: float = Field(description="When it was made (epoch seconds).")
    nodes: int
    entries: int
    leaks: int
    scope_violations: int
    rejected_writes: int
    unattributed: int = Field(description="Reads whose reader the files cannot establish.")
    problems: int = Field(description="The load's problems, any severity.")
    judged: int = Field(description="Nodes whose start-up search is recorded (judged on it).")
    starved: int = Field(
        description="Of the judged, those that got fewer hits than min(limit, entries of their "
        "lineage written before they started): health's rule, on the recorded hits."
    )
    unjudged: int = Field(description="Nodes that searched without a recording (health replays).")
    replay_checked: int | None = Field(description="Recorded searches replayed; null: unchecked.")
    replay_reproduced: int | None = Field(description="Of them, reproduced; null: unchecked.")
    replay_word: str = Field(description="The replay check's verdict (search/fidelity.py's words).")
    replay_ranker: str = Field(
        description="What ranked the replays (in-memory, run:<model>, letta:<url> …); empty: "
        "unchecked."
    )


class RunInfoOut(Out):
    run_id: str
    path: str
    folder: str
    created: float | None
    created_source: str
    nodes: int | None
    completed: int
    failed: int
    running: int
    pending: int
    entries: int | None
    size: int = Field(description="Bytes of every file under the run's folder.")
    last_change: float | None
    live: bool = Field(description="A `.ari_pid` marker: the run may still be going.")
    recent: float | None = Field(description="When this tool last opened it.")
    problems: list[ProblemOut]
    summary: RunSummaryOut | None = Field(
        description="The run at a glance, kept beside its run index by its first open here "
        "(run_summary.py); null: never opened here (`runs --scan` makes it)."
    )


class RunsOutput(Document):
    """`ari-mem-tui runs DIR --json`: the runs of a workspace, newest first."""

    schema_: Literal["ari-mem-tui/runs"] = Field("ari-mem-tui/runs", alias="schema")
    schema_version: Literal[1] = 1
    path: str
    kind: Literal["run", "workspace", "none"]
    where: list[str]
    runs: list[RunInfoOut]
    message: str


# ---------------------------------------------------------------- health
class NodeHealthOut(Out):
    node_id: str
    depth: int
    started: float | None
    started_source: str | None
    searched: bool
    why_not: str
    eligible: int
    reached: int
    hits: int
    hits_source: str
    hits_recorded: int | None
    hits_replayed: int | None
    limit: int
    window: int
    other_branches: int
    react: int
    lineage: int
    own: int
    tool: int = Field(description="Window rows that are ARI's automatic `Tool …` entries.")
    share_other: float
    share_react: float
    share_tool: float
    starved: bool = Field(description="eligible > 0 and fewer hits than min(limit, eligible).")
    shortfall: int
    query: str


class BucketOut(Out):
    label: str
    start: float | None
    nodes: int
    starved: int
    mean_share_other: float
    mean_share_react: float
    mean_share_tool: float
    mean_reached: float


class EntrySummaryOut(Out):
    total: int
    retrieved: int
    by_descendants: int
    never_by_descendant: int
    never_searched: int
    leaf_entries: int
    reads: dict[str, int]
    unresolved: int
    bulk_reads: int
    from_trace_log: int


class EntryUseOut(Out):
    entry_id: str
    node_id: str
    kind: str | None
    text: str
    startup: int
    inherit: int
    llm: int
    other: int
    readers: list[str]
    descendant_readers: int
    owner_has_descendants: bool


class HealthOutput(Document):
    """`ari-mem-tui health CKPT --json`: memory health of a run."""

    BULK = ("nodes", "by_depth", "over_time", "all_entries")

    schema_: Literal["ari-mem-tui/health"] = Field("ari-mem-tui/health", alias="schema")
    schema_version: Literal[1] = 1
    run_id: str | None
    ranker: str
    fidelity: FidelityOut | None
    limit: int
    top_k: int
    pool: Literal["start", "now"] = Field(
        description="Each node's pool: as of its search (start) or today's (now)."
    )
    drop: list[Literal["tool-auto", "react"]] = Field(
        description="Kinds of memory left out as if ARI had not stored them (a what-if)."
    )
    nodes: list[NodeHealthOut]
    searched: int
    starved: int
    recorded: int
    replayed: int
    by_depth: list[BucketOut]
    over_time: list[BucketOut]
    entries: EntrySummaryOut
    top_entries: list[EntryUseOut]
    never_retrieved: list[EntryUseOut]
    all_entries: list[EntryUseOut] | None = Field(
        description="Every entry's retrievals, with --all-entries (else null)."
    )
    complete: bool = Field(description="false: interrupted; the numbers cover `nodes` only.")
    notes: list[str]


# ---------------------------------------------------------------- why (saw --why)
class WhyStepOut(Out):
    key: Literal["searched", "time", "searchable", "scope", "window", "match", "limit", "context"]
    status: Literal["pass", "fail", "n/a"]
    reason: str = Field(description="What decided the step, as a short code.")
    numbers: dict[str, Any] = Field(description="What the step was decided on (README).")
    says: str = Field(description="The step in words, its numbers in them.")


class NextOutOut(Out):
    entry_id: str
    node_id: str
    rank: int | None = Field(description="Its rank among the kept rows; null: below the window.")
    score: float | None
    global_rank: int | None
    where: Literal["past the limit", "below the window"]


class WhyHitOut(Out):
    rank: int
    score: float
    global_rank: int
    limit: int
    hits: int
    next_out: NextOutOut | None = Field(description="The first entry the limit or window left out.")


class WhyRecordedOut(Out):
    returned: bool = Field(description="Whether the logged start-up search returned the entry.")
    rank: int | None
    score: float | None


class WhyOutput(Document):
    """`ari-mem-tui saw CKPT NODE --why ENTRY --json`: why a node did (not) see an entry."""

    schema_: Literal["ari-mem-tui/why"] = Field("ari-mem-tui/why", alias="schema")
    schema_version: Literal[1] = 1
    node_id: str
    entry_id: str
    passage_id: str | None
    entry_node: str
    kind: str
    text: str
    verdict: Literal[
        "searched", "time", "searchable", "scope", "window", "match", "limit", "context", "seen"
    ] = Field(description="The first failing step's key, or seen.")
    steps: list[WhyStepOut]
    hit: WhyHitOut | None
    recorded: WhyRecordedOut | None
    query: str
    query_source: str
    as_of: float | None = Field(description="Epoch seconds the pool was cut at; null: today's.")
    as_of_source: str | None
    params: ParamsOut
    embedder: str
    windowless: bool
    fidelity: FidelityOut
    notes: list[str]
    headline: str


# ---------------------------------------------------------------- health --what-if
class WhatIfSettingsOut(Out):
    limit: int
    overfetch: int
    top_k: int
    ranker: str = Field(description="The ranker's name (own: the one `health` ranks with).")
    pool: Literal["start", "now"]
    drop: list[Literal["tool-auto", "react"]]


class WhatIfNodeOut(Out):
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
    gained: list[str] = Field(description="Entry ids only the what-if returned.")
    lost: list[str] = Field(description="Entry ids only the run's own returned.")
    share_other_own: float
    share_other_what_if: float
    share_tool_own: float
    share_tool_what_if: float


class WhatIfDepthOut(Out):
    label: str
    nodes: int
    starved_own: int
    starved_what_if: int
    reached_own: float
    reached_what_if: float
    share_other_own: float
    share_other_what_if: float
    share_tool_own: float
    share_tool_what_if: float
    share_react_own: float
    share_react_what_if: float


class WhatIfChangesOut(Out):
    starved_own: int
    starved_what_if: int
    no_longer_starved: list[str]
    newly_starved: list[str]
    hits_gained: int
    hits_lost: int
    nodes_changed: int
    nodes: list[WhatIfNodeOut]
    by_depth: list[WhatIfDepthOut]


class HealthWhatIfOutput(Document):
    """`ari-mem-tui health CKPT --what-if SETTINGS --json`: the run's own health beside it
    under other settings."""

    schema_: Literal["ari-mem-tui/health-what-if"] = Field(
        "ari-mem-tui/health-what-if", alias="schema"
    )
    schema_version: Literal[1] = 1
    settings: WhatIfSettingsOut
    own_settings: WhatIfSettingsOut
    same: bool = Field(description="The what-if's settings are the run's own.")
    changes: WhatIfChangesOut
    notes: list[str]
    own: HealthOutput = Field(description="What `health --json` prints.")
    what_if: HealthOutput = Field(description="What `health --json` prints under the settings.")


# ---------------------------------------------------------------- dossier
class NodeOut(Out):
    """A node as tree.json holds it: the fields ARI writes, any other keys of the file as they
    were, then `artifacts` and `trace_log`."""

    model_config = ConfigDict(extra="allow")

    id: str
    parent_id: str | None
    depth: int | None
    status: str | None
    retry_count: int | None
    children: list[str]
    created_at: str | None
    completed_at: str | None
    metrics: dict[str, Any]
    has_real_data: bool | None
    eval_summary: str | None
    label: str | None
    raw_label: str | None
    name: str | None
    error_log: str | None
    ancestor_ids: list[str]
    original_direction: str | None
    node_report_path: str | None
    scope_reconstructed: bool = Field(
        description="ancestor_ids was missing in the file and rebuilt from parent_id."
    )
    artifacts: list[Any]
    trace_log: list[str]

    @model_serializer(mode="wrap")
    def _file_order(self, handler: Any) -> dict[str, Any]:
        """The file's other keys before `artifacts` and `trace_log`, as the node dumps them."""
        data = handler(self)
        for name in ("artifacts", "trace_log"):
            data[name] = data.pop(name)
        return data


class DossierOutput(Document):
    """A node's dossier (`e` in the TUI): the node, its lineage, its replay, its findings."""

    schema_: Literal["ari-mem-tui/dossier"] = Field("ari-mem-tui/dossier", alias="schema")
    schema_version: Literal[2] = (
        2  # 2: `schema` and `schema_version` took `dossier_version`'s place
    )
    checkpoint: str
    run_id: str | None
    node: NodeOut | None
    lineage: list[str]
    replay: SawOutput = Field(description="What `saw --json` prints for the node.")
    findings: list[SecondHandOut | FindingOut]


# ---------------------------------------------------------------- compare, writes, export
class CompareSideOut(Out):
    """One node of a comparison (`a`: the marked node, `b`: the current one, as in the TUI)."""

    node_id: str
    lineage_from_common: list[str] = Field(
        description="The common ancestor → the node (the whole lineage: no common ancestor)."
    )
    only_here_hits: list[str] = Field(
        description="Entry ids of this side's hits the other side lacks (`◆`)."
    )
    only_here_context: list[str] = Field(
        description="Context lines this side was given and the other was not."
    )
    replay: SawOutput = Field(description="What `saw --json` prints for the node.")


class CompareOutput(Document):
    """`ari-mem-tui compare CKPT A B --json`: two nodes' start-up searches side by side."""

    schema_: Literal["ari-mem-tui/compare"] = Field("ari-mem-tui/compare", alias="schema")
    schema_version: Literal[1] = 1
    path: str
    common_ancestor: str | None = Field(description="null: the nodes have different roots.")
    shared_lineage: list[str] = Field(description="The root → the common ancestor.")
    a: CompareSideOut
    b: CompareSideOut


class CowRowOut(Out):
    """One row of the copy-on-write log, every field (`saw`'s `writes` show fewer)."""

    ts: float | None
    current_node: str
    target_node: str
    tool: str
    accepted: bool
    reason: str | None
    entry_id: str | None
    letta_id: str | None = Field(description="The passage's id on a Letta server.")
    text: str
    metadata: dict[str, Any] | None
    step: int | None = Field(description="The ReAct step that wrote it.")
    source: str
    logged_by: str | None = Field(
        description="A rejected write's log: the entry in which ARI kept the refused call's result."
    )


class WritesOutput(Document):
    """`ari-mem-tui writes CKPT [NODE] --json`: the copy-on-write log, as the Writes tab."""

    BULK = ("writes",)

    schema_: Literal["ari-mem-tui/writes"] = Field("ari-mem-tui/writes", alias="schema")
    schema_version: Literal[1] = 1
    path: str
    node_id: str | None = Field(description="null: the whole run's log.")
    scope: Literal["node", "run"]
    count: int
    rejected: int
    writes: list[CowRowOut] = Field(
        description="The rows `--filter` and `--sort` leave, in their order."
    )


class ExportOutput(Document):
    """`ari-mem-tui export CKPT NODE --json`: the dossier's two files, written."""

    schema_: Literal["ari-mem-tui/export"] = Field("ari-mem-tui/export", alias="schema")
    schema_version: Literal[1] = 1
    node_id: str
    markdown: str = Field(description="The path of the dossier's Markdown half.")
    json_: str = Field(alias="json", description="The path of the dossier's JSON half.")


OUTPUTS: dict[str, type[Document]] = {
    "summary": SummaryOutput,
    "saw": SawOutput,
    "audit": AuditOutput,
    "runs": RunsOutput,
    "health": HealthOutput,
    "dossier": DossierOutput,
    "compare": CompareOutput,
    "writes": WritesOutput,
    "export": ExportOutput,
    "why": WhyOutput,
    "health-what-if": HealthWhatIfOutput,
}


class OutputError(TypeError):
    """Data that does not fit its output's model: a field not declared, or of another type."""


def output(model: type[Document], data: dict[str, Any]) -> dict[str, Any]:
    """`data` checked as the document `model` (OutputError names a field that is not of its
    type, or not declared), as the plain data the JSON writer writes: `schema` and
    `schema_version` first, then the fields in their declared order. With the collector
    paused: a big run's health is 40,000 rows, each a model, and the collector would scan the
    whole run again and again while they are made (twice the time)."""
    return without_gc(_checked, model, data)


def _checked(model: type[Document], data: dict[str, Any]) -> dict[str, Any]:
    """The document checked and dumped, its BULK lists with their first row only, then put
    back whole (plain data already: `as_data`) at their place."""
    rows = {name: data[name] for name in model.BULK if data.get(name)}
    sample = {name: found[:1] for name, found in rows.items()}
    try:
        document = model.model_validate({**data, **sample}).model_dump(by_alias=True)
    except ValidationError as exc:  # a bug of ours: say where it is mended
        raise OutputError(
            f"{exc} (every field of a JSON output is declared in render/outputs.py; then"
            " `python scripts/make_schemas.py`)"
        ) from exc
    document.update(rows)  # (a key keeps its place: the output's field order)
    return document


JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"  # (what pydantic writes)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the document `name` (a key of OUTPUTS), its dialect named."""
    return {"$schema": JSON_SCHEMA_DIALECT, **OUTPUTS[name].model_json_schema(by_alias=True)}
