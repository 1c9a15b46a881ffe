"""The demo run's content: per-node trace logs, memory entries, and every access-log event.

Built on the timeline of `demo.tree`. Each started node gets what ARI's agent loop leaves
behind (docs/ari-format.md §2.7, §3.9, §3.10, §4.5, §5.8): start-up reads (an `inherit:get_node_memory`
burst over its ancestors, then the Tier-2 `search_memory` with its direction as query), LLM tool
calls with their `trace_log` lines and auto `Tool <name>: …` entries, findings, survey summaries,
RESULT SUMMARY and node-end consolidation. A few planted events make the audit interesting: an
LLM search whose scope includes a sibling branch (a leak), an LLM `get_node_memory` of a cousin,
and `add_memory` calls rejected by the copy-on-write guard; one write whose insert lands
after another node's start-up search although it is stamped before that node's start (the one
recording a replay cannot match, see `plant_late_insert`); and a tool storm, a sweep whose
automatic `Tool …` entries fill another branch's node's window (`plant_tool_storm`).

Every started non-root node gets its start-up reads while the run has at most 1,500 started
nodes; bigger runs record them for 1,500 nodes spread evenly over the run (plus the planted
ones), as if the log's bounded queue had dropped the rest (§4.1). This keeps a 10,000-node run
under a minute and its access log near 100 MB.

Search results are ranked the way ARI's Letta path does it, with a cheap stand-in for embeddings:
a lexical score (how many of the query's informative words the entry holds; words found in
more than a tenth of all entries are ignored) over the WHOLE pool existing at read
time (node and react entries), window of top_k = 200, then post-filtered to the scope, keeping
the window order, score = max(0, 1 - 0.01 * window rank). Ranking uses inverted lists restricted
to the words of the run's queries, so a 200,000-entry pool costs milliseconds per search. Auto
entries that log a memory read are ranked by their query only (their final text depends on the
read's results, which are filled in afterwards, in time order). The start-up searches can be
ranked again afterwards by a real ranker (`demo.write_demo(record=…)`); no entry text depends
on their results.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ari_mem_tui.demo import text as T
from ari_mem_tui.demo.tree import SimNode, Timeline

TOP_K = 200  # ARI_MEMORY_LETTA_OVERFETCH default; limit 5 * 40 is smaller
PREVIEW = 200  # ARI_MEMORY_ACCESS_PREVIEW_CHARS
# an insert returns (its write event is logged) this long after the entry's ts at most: the
# passage reaches the server's pool somewhere in between
INSERT_S = (0.02, 0.35)
STARTUP_READ_NODES = 1500  # above this many started nodes, start-up reads are sampled
# the planted tool storm (`DemoRun.plant_tool_storm`): more automatic Tool entries than a
# top_k window holds, one a STORM_GAP seconds
STORM_CALLS, STORM_GAP = 240, 1.5
COW_ERROR = "node_id does not match current node (CoW violation)"
WORD = re.compile(r"\w+")
STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "on",
        "in",
        "to",
        "and",
        "or",
        "with",
        "for",
        "at",
        "by",
        "is",
        "it",
        "be",
        "as",
        "from",
        "into",
        "vs",
    }
)


@dataclass(slots=True)
class Entry:
    kind: str  # "node_scope" | "react_step"
    node_id: str  # owner (react: metadata.node_id or "")
    text: str
    metadata: dict[str, Any]
    ts: float
    eid: str  # passage id
    rank_text: str | None = None  # text used for ranking when `text` is filled in later
    index: int = -1  # position in the global ts order
    # when the insert returned (the write event's ts) when it is not the usual moment after `ts`:
    # the planted late insert, absent from the server's pool for a search made in between
    landed: float | None = None


@dataclass(slots=True)
class Read:
    ts: float
    collection: str
    query: str
    ancestor_ids: list[str] | None
    limit: int
    mode: str  # "search" | "inherit" | "react"
    results: list[dict[str, Any]] = field(default_factory=list)
    node_id: str | None = None  # logged "current node"; None = the stale one, computed later
    on_done: Callable[[Read, list[Entry]], None] | None = None  # fills trace lines / auto entry
    hits: list[Entry] = field(default_factory=list)


@dataclass
class NodeContent:
    trace: list[str] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    eval_summary: str | None = None
    error_log: str | None = None
    has_real_data: bool = False
    node_report_path: str | None = None
    experiment_result: Entry | None = None
    conclusion: Entry | None = None  # the node-end typed entry (experiment_result/failure_case)


# what a call handler returns: (tool name, args, result envelope or a Read answered later, seconds
# the tool took)
Call = tuple[str, dict[str, Any], "dict[str, Any] | Read", float]


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def envelope_line(envelope: dict[str, Any]) -> str:
    """A trace_log result line: two spaces, U+2190, and the Python repr of the MCP envelope."""
    return "  ← " + str(envelope)


def call_line(tool: str, args: dict[str, Any]) -> str:
    return "→ " + tool + "(" + dumps(args)[:4000] + ")"


def tool_entry_text(tool: str, envelope: dict[str, Any]) -> str:
    """The agent loop's auto entry: plain json.dumps of the envelope, cut to 1000 characters."""
    return f"Tool {tool}: {json.dumps(envelope)[:1000]}"


class DemoRun:
    """Generates everything; afterwards the attributes hold what the file writers need."""

    def __init__(self, rng: random.Random, timeline: Timeline, entries_total: int) -> None:
        self.rng = rng
        self.tl = timeline
        self.run_id = timeline.run_id
        self.stop = timeline.stop
        self.nodes = timeline.nodes
        self.by_id = {n.id: n for n in self.nodes}
        self.entries: list[Entry] = []
        self.reads: list[Read] = []
        self.content: dict[str, NodeContent] = {n.id: NodeContent() for n in self.nodes}
        self.directions: dict[str, str | None] = {}
        self.core_context: dict[str, Any] = {}
        self.queries: list[str] = []
        started = [n for n in self.nodes if n.status(self.stop) != "pending"]
        self.per_node = max(6, entries_total // max(1, len(started)))
        # big runs: start-up reads for at most STARTUP_READ_NODES nodes, evenly spread (§4.1:
        # the access log's writer queue drops events when it overflows)
        self.startup_stride = -(-len(started) // STARTUP_READ_NODES)
        self.specials: dict[str, list[tuple[float, str, str]]] = {}
        self.late: dict[str, Any] = {}  # the planted late insert: reader, writer, entries
        self.storm: dict[str, Any] = {}  # the planted tool storm: its writer and its reader
        # the storm's passage ids come from a stream of their own: planting it changes no
        # other entry of the run (`plant_tool_storm`)
        self.storm_rng = random.Random(f"{timeline.run_id}:tool-storm")
        self.startups: list[list[Read]] = []
        self.startup_of: dict[str, list[Read]] = {}  # node id -> its start-up reads
        self.started_count = 0

    # ---------------------------------------------------------------- ids and writes
    def passage_id(self, rng: random.Random | None = None) -> str:
        """`passage-` + a version-4 UUID drawn from the rng (str(uuid.UUID(int=x, version=4)))."""
        x = (rng or self.rng).getrandbits(128)
        x = (x & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
        x = (x & ~(0xF000 << 64)) | (4 << 76)  # version 4
        h = f"{x:032x}"
        return f"passage-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def sha(self) -> str:
        return f"{self.rng.getrandbits(256):064x}"

    def write(
        self,
        node: str,
        text: str,
        meta: dict[str, Any],
        ts: float,
        kind: str = "node_scope",
        rank_text: str | None = None,
        rng: random.Random | None = None,
    ) -> Entry:
        entry = Entry(kind, node, text, meta, round(ts, 6), self.passage_id(rng), rank_text)
        self.entries.append(entry)
        return entry

    # ---------------------------------------------------------------- directions
    def make_directions(self) -> None:
        seen: set[str] = set()
        for node in self.nodes:
            if node.parent is None:
                self.directions[node.id] = None
                continue
            bank = T.BANK[node.label]
            is_first_draft = node.label == "draft" and node is node.parent.children[0]
            template = bank[0] if is_first_draft else self.rng.choice(bank)
            base = text = T.fill(template, self.rng)
            n = 1
            while text[:200] in seen:  # siblings must differ: the query is what tells them apart
                n += 1
                suffix = f" (variant {n})"
                text = base[: 200 - len(suffix)] + suffix
            seen.add(text[:200])
            self.directions[node.id] = text
            self.queries.append(text[:200])

    # ---------------------------------------------------------------- planted events
    def plant(self) -> None:
        """Choose who leaks, who reads a cousin, who gets a write rejected (timeline only)."""
        stop = self.stop
        started = [
            n for n in self.nodes if n.parent is not None and n.start is not None and n.start < stop
        ]

        def pick(
            pred: Callable[[SimNode, SimNode], bool], skip: set[str]
        ) -> tuple[SimNode, SimNode, float] | None:
            return _pick_reader(started, self.nodes, pred, skip, stop)

        leak = pick(lambda x, y: x.parent is y.parent, set()) or pick(lambda _x, _y: True, set())
        used = set()
        if leak:
            x, y, t = leak
            self.specials.setdefault(x.id, []).append((t, "leak", y.id))
            used.add(x.id)
        cousin = (
            pick(
                lambda x, y: (
                    x.parent is not y.parent
                    and _lca_depth(x, y) == x.depth - 2
                    and y.depth == x.depth
                ),
                used,
            )
            or pick(lambda x, y: x.parent is not y.parent, used)
            or pick(lambda _x, _y: True, set())
        )
        if cousin:
            x, y, t = cousin
            self.specials.setdefault(x.id, []).append((t, "cousin", y.id))
        for i, node in enumerate(started):
            if i % 15 == 1 or (len(started) == 1):
                lo, hi = _window(node, stop)
                if hi > lo:
                    t = lo + (hi - lo) * 0.6
                    self.specials.setdefault(node.id, []).append((t, "reject", node.parent.id))
        self.plant_late_insert(started)
        self.plant_tool_storm(started)

    def plant_late_insert(self, started: list[SimNode]) -> None:
        """One write stamped before a node's start-up search but landing after it (§3.2, §4.2:
        the entry's ts is taken before the insert, the write event's after it returned).

        A node of another branch, running meanwhile, has its LLM add a finding on the same
        idea as the reader's direction just before the reader starts; the Letta server is slow
        with that insert, so the reader's recorded search misses it, while a replay as of the
        reader's start (entries stamped before it) ranks it first in the window: the reader's
        hits move one window rank down. The one place where recording and replay differ.
        """
        stop = self.stop
        for x in started:
            done = x.end is not None and x.end <= stop and not x.failed
            if x.depth < 2 or not done or x.id in self.specials or x.label == "debug":
                continue
            t = x.start - 0.5
            writers = [
                y
                for y in started
                if _off_lineage(x, y)
                and y.start + 6.0 < t
                and t < min(y.end or stop + 600.0, stop) - 12.0
            ]
            if writers:  # preferably one with no planted finding of its own
                y = min(writers, key=lambda n: (n.id in self.specials, n.order))
                self.specials.setdefault(y.id, []).append((t, "late_finding", x.id))
                self.late = {"reader": x, "writer": y}
                return

    def plant_tool_storm(self, started: list[SimNode]) -> None:
        """A node starved by another branch's automatic `Tool …` entries, and the what-if that
        feeds it (`health --what-if drop=tool-auto`; docs/ari-format.md §3.9, §5.3).

        A node of another branch sweeps the reader's idea with STORM_CALLS tool calls before
        the reader starts: each call's automatic entry quotes the reader's direction, so they
        outrank every entry of the reader's lineage in the whole pool and fill its top_k window
        (ARI ranks before it filters): the reader's start-up search returns nothing from its
        ancestors. Left out as if ARI had not stored them, its lineage's findings and
        conclusions reach the window again. Planted on the timeline only (no draw of the rng):
        the reader is the deepest finished node with a recorded start-up search and no other
        planted role, the writer the off-lineage node with the most time to sweep in before it.
        """
        stop = self.stop
        busy = {*self.specials, getattr(self.late.get("reader"), "id", "")}
        readers = [
            x
            for x in started
            if x.depth >= 2 and x.end is not None and x.end <= stop and not x.failed
            and x.id not in busy and x.label != "debug"
        ]  # fmt: skip
        for x in sorted(readers, key=lambda n: (-n.depth, n.order)):
            y = self._storm_writer(x, started, busy)
            if y is not None:
                begin = y.start + 20.0  # type: ignore[operator]
                calls = [(begin + i * STORM_GAP, "storm", x.id) for i in range(STORM_CALLS)]
                self.specials.setdefault(y.id, []).extend(calls)
                self.storm = {"reader": x, "writer": y}
                return

    def _storm_writer(self, x: SimNode, started: list[SimNode], busy: set[str]) -> SimNode | None:
        """The off-lineage node with the most time to sweep in before `x` starts (enough for
        STORM_CALLS calls), else None."""
        stop = self.stop
        writers = []
        for y in started:
            if not _off_lineage(x, y) or y.id in busy or y.start is None:
                continue
            room = min(y.end or stop, x.start - 30.0, stop) - (y.start + 20.0)  # type: ignore[operator]
            if room >= STORM_CALLS * STORM_GAP:
                writers.append((room, -y.order, y))
        return max(writers, key=lambda w: w[:2])[2] if writers else None

    # ---------------------------------------------------------------- whole run
    def build(self) -> None:
        self.make_directions()
        self.plant()
        # leak readers go last, so the sibling whose memory they read already has its entries
        leakers = {x for x, calls in self.specials.items() if any(k == "leak" for _, k, _ in calls)}
        order = [n for n in self.nodes if n.id not in leakers]
        order += [n for n in self.nodes if n.id in leakers]
        for node in order:
            if node.start is not None and node.start < self.stop:
                self.node_run(node)
            else:
                self.content[node.id].eval_summary = self.directions[node.id]
        self.bfts_selects()
        self.pipeline_reads()
        self.separate_startups()
        self.land_late_insert()

    def node_run(self, node: SimNode) -> None:
        self.started_count += 1
        if node.parent is not None and (
            self.startup_stride == 1
            or node.order % self.startup_stride == 0
            or node.id in self.specials
            or node is self.late.get("reader")
            or node is self.storm.get("reader")
        ):
            self.startup_reads(node)
        calls = self.plan_calls(node)
        self.execute(node, calls)
        status = node.status(self.stop)
        if status in ("success", "failed"):
            self.finish(node, status)
        else:
            self.content[node.id].eval_summary = self.directions[node.id]

    # ---------------------------------------------------------------- start-up reads
    def startup_reads(self, node: SimNode) -> None:
        """Tier 1b's get_node_memory per ancestor (root first), then Tier 2's search (§5.8)."""
        t = node.start + self.rng.uniform(0.2, 0.6)
        group = []
        for aid in node.ancestors:
            group.append(Read(t, "node_scope", "inherit:get_node_memory", [aid], 0, "inherit"))
            t += self.rng.uniform(0.01, 0.04)
        query = (self.directions[node.id] or T.EXPERIMENT_MD[:1500])[:200]
        group.append(Read(t + 0.05, "node_scope", query, list(node.ancestors), 5, "search"))
        self.reads.extend(group)
        self.startups.append(group)
        self.startup_of[node.id] = group

    def separate_startups(self) -> None:
        """Move a start-up sequence past any other read, or any write, that falls inside it.

        ARI's working-context builder issues these reads back to back; keeping them contiguous
        in the log is what lets a reader attribute the burst to its node (§4.5). No insert is
        under way between its first read (the node's start, as a replay dates it) and its
        search either, so the pool the search ranked is exactly the pool as of the node's start.
        """
        writes = sorted(e.ts for e in self.entries)
        pending = INSERT_S[1]  # a write is under way from its ts until its insert returns
        for _ in range(20):
            times = sorted((r.ts, id(r)) for r in self.reads)
            moved = False
            for group in self.startups:
                first, last = group[0].ts, group[-1].ts
                mine = {id(r) for r in group}
                lo = bisect.bisect_left(times, (first, -1))
                hi = bisect.bisect_right(times, (last, float("inf")))
                inside = [ts for ts, rid in times[lo:hi] if rid not in mine]
                lo = bisect.bisect_left(writes, first - pending)
                inside += [w + pending for w in writes[lo : bisect.bisect_right(writes, last)]]
                if inside:
                    shift = max(inside) - first + 0.02
                    for read in group:
                        read.ts += shift
                    moved = True
            if not moved:
                break
        for read in self.reads:
            read.ts = round(read.ts, 6)

    def land_late_insert(self) -> None:
        """Date the planted late insert against the reader's start-up reads as they now stand:
        stamped before the first, landing just after the search: a slow Letta insert, under a
        second (the access-log join pairs a write event with an entry up to 2 s older)."""
        if not self.late.get("entry"):
            return
        entry, auto = self.late["entry"], self.late["auto"]
        group = self.startup_of[self.late["reader"].id]
        entry.landed = round(group[-1].ts + 0.2, 6)
        # stamped a quarter second before the reader's start, and under a second before it landed
        entry.ts = round(max(group[0].ts - 0.25, entry.landed - 0.95), 6)
        # the tool call returned once the insert had landed: its auto entry comes after that
        auto.ts = round(entry.landed + 0.05, 6)

    def startup_searches(self) -> list[tuple[str, Read]]:
        """(reader, read) of every recorded start-up search (the Tier-2 read closing a burst)."""
        return [(node_id, group[-1]) for node_id, group in self.startup_of.items()]

    def unseen(self, read: Read) -> list[Entry]:
        """Entries stamped before `read` whose insert had not landed when it ran."""
        late = self.late.get("entry")
        if late is not None and late.ts < read.ts < (late.landed or late.ts):
            return [late]
        return []

    # ---------------------------------------------------------------- call plan
    def plan_calls(self, node: SimNode) -> list[tuple[float, str, str]]:
        """(time, tool-or-special, target) for each LLM tool call of the node, time-ordered."""
        budget = int(self.per_node * self.rng.uniform(0.75, 1.25))
        n_calls = max(3, budget - 4)
        begin = node.start + 4.0
        end = (node.end or self.stop + 600.0) - 8.0
        gap = max(0.5, (end - begin) / (n_calls + 1))
        calls: list[tuple[float, str, str]] = []
        if node.parent is None:
            calls.append((begin, "generate_ideas", ""))
            calls.append((begin + gap * 0.5, "survey", ""))
        weights = [
            ("run_code", 34),
            ("run_bash", 24),
            ("write_file", 11),
            ("read_file", 11),
            ("add_memory", 6),
            ("survey", 2),
            ("get_experiment_context", 2),
        ]
        if node.parent is not None:
            weights += [("search_memory", 1), ("get_node_memory", 1)]
            if node.label in ("validation", "other"):
                calls.append((begin + gap * 1.5, "repro", ""))
        tools, w = zip(*weights)
        cum = list(itertools.accumulate(w))
        for i in range(n_calls):
            t = begin + gap * (i + 1) + self.rng.uniform(-0.2, 0.2) * gap
            calls.append((t, self.rng.choices(tools, cum_weights=cum)[0], ""))
        for t, kind, target in self.specials.get(node.id, []):
            calls.append((t, kind, target))
            if kind == "reject":
                calls.append((t + 20.0, "bracket_finding", ""))
                calls.append((t + 30.0, "japanese_note", ""))
        calls.sort(key=lambda c: c[0])
        return [c for c in calls if c[0] < self.stop - 1.0]

    # ---------------------------------------------------------------- executing calls
    def execute(self, node: SimNode, calls: list[tuple[float, str, str]]) -> int:
        content = self.content[node.id]
        step = 0
        last_t = -1.0
        for t, kind, target in calls:
            storm = kind == "storm"  # the planted sweep: a turn a call, no draw of the rng
            if storm or t - last_t > 1.0 or self.rng.random() < 0.7:
                step += 1  # a new LLM turn; otherwise a second call batched in the same turn
            if not storm:
                last_t = t
            tool, args, outcome, exec_s = TOOL_CALLS[kind](self, node, t, step, target)
            if node.end is not None:  # a tool finishes before its node does
                exec_s = max(0.05, min(exec_s, node.end - 3.0 - t))
            content.trace.append(call_line(tool, args))
            if isinstance(outcome, Read):
                self.defer(node, tool, args, outcome, t + exec_s, step)
                continue
            content.trace.append(envelope_line(outcome))
            rng = self.storm_rng if storm else None
            auto = self.auto_entry(node, tool, outcome, t + exec_s, step, rng=rng)
            if kind == "late_finding":
                self.late["auto"] = auto
        return step

    def defer(
        self, node: SimNode, tool: str, args: dict[str, Any], read: Read, ts: float, step: int
    ) -> None:
        """An LLM memory read: its result line and auto entry are filled once it is ranked."""
        content = self.content[node.id]
        slot = len(content.trace)
        content.trace.append("")  # replaced by the result line in `done`
        subject = args.get("query") or args.get("node_id") or ""
        entry = self.auto_entry(node, tool, {}, ts, step, rank_text=f"Tool {tool}: {subject}")

        def done(r: Read, hits: list[Entry]) -> None:
            if r.mode == "search":
                payload: dict[str, Any] = {
                    "results": [
                        {
                            "entry_id": e.eid,
                            "node_id": e.node_id,
                            "text": e.text,
                            "metadata": e.metadata,
                            "score": res["score"],
                        }
                        for e, res in zip(hits, r.results)
                    ]
                }
            else:
                payload = {
                    "entries": [{"text": e.text, "metadata": e.metadata, "ts": e.ts} for e in hits]
                }
            envelope = {"result": dumps(payload)}
            content.trace[slot] = envelope_line(envelope)
            entry.text = tool_entry_text(tool, envelope)

        read.on_done = done
        self.reads.append(read)

    def auto_entry(
        self,
        node: SimNode,
        tool: str,
        envelope: dict[str, Any],
        ts: float,
        step: int,
        rank_text: str | None = None,
        rng: random.Random | None = None,
    ) -> Entry:
        text = tool_entry_text(tool, envelope)
        # a few tool results land in the react store: ARI's fallback when add_memory raised
        if rank_text is None and self.fallback(node, step):
            meta = {"node_id": node.id, "step": step}
            return self.write("", text, meta, ts, "react_step", rng=rng)
        meta = {"step": step, "tool": tool}
        return self.write(node.id, text, meta, ts, rank_text=rank_text, rng=rng)

    @staticmethod
    def fallback(node: SimNode, step: int) -> bool:
        """The few writes whose MCP add_memory raised, so ARI copied them to the react store."""
        return step == 2 and node.order % 5 == 2 and node.order < 100

    def call_generate_ideas(self, node: SimNode, t: float, _step: int, _: str) -> Call:
        args = {"topic": T.TITLE, "n_ideas": 2}
        idea = {
            "ideas": T.IDEAS,
            "primary_metric": T.PRIMARY_METRIC,
            "higher_is_better": True,
            "metric_rationale": T.METRIC_RATIONALE,
        }
        ts = t + self.rng.uniform(20, 40)
        self.write(
            "",
            f"EVALUATION_CRITERIA: primary_metric={T.PRIMARY_METRIC} "
            f"higher_is_better=True rationale={T.METRIC_RATIONALE}",
            {"type": "evaluation_criteria", "node_id": node.id},
            ts + 0.2,
            "react_step",
        )
        first = T.IDEAS[0]
        plan = "; ".join(
            f"§{i + 1} {s.split('. ', 1)[-1].rstrip('.')}"
            for i, s in enumerate(first["experiment_plan"].split(". ")[1:4])
        )
        self.core_context = {
            "experiment_goal": T.EXPERIMENT_MD,
            "primary_metric": T.PRIMARY_METRIC,
            "higher_is_better": True,
            "metric_rationale": T.METRIC_RATIONALE,
            "hardware_spec": T.HARDWARE_SPEC,
            "selected_idea": f"{first['title']}: {first['description'][:400]} | Plan: {plan}",
        }
        return "generate_ideas", args, {"result": dumps(idea)}, ts - t

    def call_survey(self, node: SimNode, t: float, step: int, _: str) -> Call:
        papers = self.rng.sample(T.SURVEY_PAPERS, k=min(5, self.rng.randint(3, 5)))
        query = T.fill("SpMV {m} CSR optimisation many-core", self.rng)
        result = {
            "papers": [
                {"title": p[0], "abstract": p[1], "year": 2010 + i} for i, p in enumerate(papers)
            ]
        }
        text = "SURVEY RESULTS:\n" + "\n".join(f"- [{p[0]}]: {p[1][:200]}…" for p in papers)
        if self.fallback(node, step):  # add_memory raised: ARI keeps a react copy instead
            meta = {"type": "survey_papers", "node_id": node.id}
            self.write("", text, meta, t + 9.0, "react_step")
        else:
            self.write(node.id, text, {"type": "survey_papers"}, t + 9.0)
        return "survey", {"query": query, "max_results": 5}, {"result": dumps(result)}, 8.5

    def call_run_code(self, node: SimNode, _t: float, step: int, _: str) -> Call:
        code = T.fill(self.rng.choice(T.CODE_SNIPPETS), self.rng)
        self.content[node.id].artifacts.append(
            {"type": "code", "tool": "run_code", "content": code[:16000], "step": step}
        )
        if self.rng.random() < 0.08:
            env = {"error": "Tool 'run_code' failed after 3 attempts: timeout after 600 s"}
            return "run_code", {"code": code, "language": "c"}, env, 30.0
        stdout = T.fill(
            "matrix={m} threads={t} GFlops_per_s={gf:.2f} GB_per_s={bw:.1f}\n"
            "check: max_rel_err=3.1e-15 OK",
            self.rng,
        )
        if self.rng.random() < 0.1:
            stdout += "\n[red]WARN[/red] numa_alloc_onnode fell back to malloc"
        out = {"stdout": stdout, "stderr": "", "returncode": 0}
        return "run_code", {"code": code, "language": "c"}, {"result": dumps(out)}, 6.0

    def call_storm(self, node: SimNode, _t: float, step: int, target: str) -> Call:
        """One point of the planted sweep (`plant_tool_storm`): a run_bash whose output quotes
        the starved reader's direction. No rng: the planting leaves the rest of the run as is."""
        point = self.storm.setdefault("points", 0) + 1
        self.storm["points"] = point
        idea = (self.directions[target] or "")[:160]
        cmd = f"./sweep.sh --point {point}"
        self.content[node.id].artifacts.append(
            {"type": "code", "tool": "run_bash", "content": cmd, "step": step}
        )
        out = {"stdout": f"sweep point {point}/{STORM_CALLS}: {idea}", "exit_code": 0}
        return "run_bash", {"command": cmd}, {"result": dumps(out)}, 0.4

    def call_run_bash(self, node: SimNode, _t: float, step: int, _: str) -> Call:
        cmd = T.fill(self.rng.choice(T.BASH_COMMANDS), self.rng)
        self.content[node.id].artifacts.append(
            {"type": "code", "tool": "run_bash", "content": cmd, "step": step}
        )
        out = {
            "stdout": T.fill("{m}: {gf:.2f} GFlops/s, {bw:.1f} GB/s (median of 10)", self.rng),
            "exit_code": 0,
        }
        return "run_bash", {"command": cmd}, {"result": dumps(out)}, 4.0

    def call_write_file(self, _node: SimNode, _t: float, _step: int, _: str) -> Call:
        path = self.rng.choice(["spmv.c", "bench.sh", "Makefile", "plot.py"])
        body = T.fill(self.rng.choice(T.CODE_SNIPPETS), self.rng)
        res = {"ok": True, "path": path, "bytes": len(body.encode())}
        return "write_file", {"path": path, "content": body}, {"result": dumps(res)}, 0.3

    def call_read_file(self, _node: SimNode, _t: float, _step: int, _: str) -> Call:
        path = T.fill("results/{m}.csv", self.rng)
        body = T.fill("matrix,threads,gflops,gbs\n{m},{t},{gf:.2f},{bw:.1f}", self.rng)
        return "read_file", {"path": path}, {"result": body}, 0.2

    def call_get_experiment_context(self, _node: SimNode, _t: float, _step: int, _: str) -> Call:
        return "get_experiment_context", {}, {"result": dumps(self.core_context)}, 0.2

    def call_add_memory(
        self, node: SimNode, t: float, _step: int, _: str, text: str | None = None
    ) -> Call:
        text = text or T.fill(self.rng.choice(T.FINDINGS), self.rng)
        meta = {"type": "finding"}
        entry = self.write(node.id, text, meta, t + 0.15)
        res = {"ok": True, "id": entry.eid}
        return (
            "add_memory",
            {"node_id": node.id, "text": text, "metadata": meta},
            {"result": dumps(res)},
            0.4,
        )

    def call_bracket_finding(self, node: SimNode, t: float, step: int, target: str) -> Call:
        text = (
            "Parent's numbers hold: metrics=[GFlops_per_s, GB_per_s] agree with results.csv. "
            "The harness prints [red]FAIL[/red] for skipped matrices and tags like [bold] "
            "and [/x] verbatim; they are not errors."
        )
        return self.call_add_memory(node, t, step, target, text=text)

    def call_japanese_note(self, node: SimNode, t: float, step: int, target: str) -> Call:
        return self.call_add_memory(node, t, step, target, text=T.JAPANESE_NOTE)

    def call_late_finding(self, node: SimNode, t: float, step: int, target: str) -> Call:
        """The finding of the planted late insert: the same idea as `target`'s direction."""
        idea = (self.directions[target] or "").rstrip(".")
        m = self.rng.choice(T.MATRICES)
        gain = self.rng.uniform(4.0, 12.0)
        text = f"Tried the same idea on this branch ({idea}): +{gain:.1f}% GFlops_per_s on {m}."
        call = self.call_add_memory(node, t, step, target, text=text)
        self.late["entry"] = self.entries[-1]
        return call

    def call_reject(self, _node: SimNode, _t: float, _step: int, target: str) -> Call:
        text = T.fill("Conclusion for the parent: block size {b} is best on {m}", self.rng)
        args = {"node_id": target, "text": text, "metadata": {"type": "finding"}}
        res = {"ok": False, "error": COW_ERROR}
        return "add_memory", args, {"result": dumps(res)}, 0.3

    def call_repro(self, node: SimNode, t: float, step: int, _: str) -> Call:
        target = None
        for aid in reversed(node.ancestors):
            target = self.content[aid].experiment_result
            if target is not None:
                break
        if target is None:
            return self.call_run_bash(node, t, step, "")
        status = "rerun_failed" if node.failed else "rerun_passed"
        text = f"reproducibility: {target.eid} -> {status}"
        meta = {
            "type": "reproducibility_event",
            "mem_kind": "reproducibility_event",
            "metric_ptr": target.metadata.get("metric_ptr"),
            "artifact_refs": [
                {"path": "results/rerun.csv", "sha256": self.sha(), "role": "data_output"}
            ],
            "node_report_ref": {"run_id": self.run_id, "node_id": node.id},
            "repro_target_id": target.eid,
            "repro_status": status,
        }
        entry = self.write(node.id, text, meta, t + 0.2)
        args = {"node_id": node.id, "target_id": target.eid, "status": status}
        res = {"ok": True, "id": entry.eid}
        return "add_reproducibility_event", args, {"result": dumps(res)}, 0.4

    # LLM memory reads: the result is known only after ranking, so they finish in `on_done`
    def call_search_memory(
        self,
        node: SimNode,
        t: float,
        _step: int,
        _target: str,
        scope: list[str] | None = None,
        query: str | None = None,
    ) -> Call:
        query = query or T.fill(
            self.rng.choice(
                [
                    "cache blocking results on {m}",
                    "GFlops_per_s {m} best kernel",
                    "why did the build fail",
                    "throughput on {m}",
                    "NUMA first-touch speedup",
                ]
            ),
            self.rng,
        )
        scope = scope if scope is not None else list(node.ancestors)
        args = {"query": query, "ancestor_ids": scope, "limit": 5}
        self.queries.append(query)
        read = Read(round(t + 0.2, 6), "node_scope", query, scope, 5, "search")
        return "search_memory", args, read, 0.4

    def call_leak(self, node: SimNode, t: float, step: int, target: str) -> Call:
        # the LLM quotes the sibling's conclusion: its typed entry written at the sibling's end
        other = self.content[target].conclusion
        query = other.text if other is not None else self.directions[target] or ""
        scope = [*node.ancestors, target]
        return self.call_search_memory(node, t, step, target, scope=scope, query=query[:200])

    def call_get_node_memory(self, node: SimNode, t: float, _step: int, target: str) -> Call:
        target = target or node.ancestors[-1]
        read = Read(
            round(t + 0.15, 6), "node_scope", "inherit:get_node_memory", [target], 0, "inherit"
        )
        return "get_node_memory", {"node_id": target}, read, 0.4

    def call_cousin(self, node: SimNode, t: float, step: int, target: str) -> Call:
        return self.call_get_node_memory(node, t, step, target)

    # ---------------------------------------------------------------- node end
    def finish(self, node: SimNode, status: str) -> None:
        content = self.content[node.id]
        direction = self.directions[node.id]
        end = node.end
        rid = {"run_id": self.run_id, "node_id": node.id}
        content.node_report_path = f"{self.run_id}/{node.id}/node_report.json"
        m = self.rng.choice(T.MATRICES)
        if status == "failed":
            content.error_log = self.rng.choice(T.ERRORS)
            content.eval_summary = direction
            content.artifacts.append({"type": "result", "stdout": content.error_log})
            text = T.fill(
                self.rng.choice(T.FAILURES), self.rng, nid=node.id, err=content.error_log, m=m
            )[:600]
            meta = {
                "type": "failure_case",
                "mem_kind": "failure_case",
                "metric_ptr": None,
                "artifact_refs": [{"path": "build.log", "sha256": self.sha(), "role": "log"}],
                "node_report_ref": rid,
            }
            content.conclusion = self.write(node.id, text, meta, end + self.rng.uniform(0.3, 1.2))
            return
        parent_gf = 6.0
        if node.parent is not None:
            parent_gf = self.content[node.parent.id].metrics.get("GFlops_per_s", 6.0)
        gf = round(max(1.0, parent_gf * self.rng.uniform(0.92, 1.25)), 2)
        bw = round(gf * 12 * self.rng.uniform(0.95, 1.05), 2)
        score = round(self.rng.uniform(0.35, 0.9), 2)
        content.metrics = {
            "GFlops_per_s": gf,
            "GB_per_s": bw,
            "rows": self.rng.choice([1585478, 952203]),
            "_scientific_score": score,
            "_axis_scores": {
                "novelty": round(self.rng.uniform(0.2, 0.9), 2),
                "rigor": round(self.rng.uniform(0.3, 0.95), 2),
            },
            "_comparison_found": 1.0,
        }
        content.has_real_data = True
        reason = (
            f"Measured {gf:.2f} GFlops_per_s and {bw:.1f} GB_per_s on {m} with real "
            f"timings; compared against the parent kernel."
        )
        content.eval_summary = f"{reason} [scientific_score={score:.2f}]"
        stdout = f"matrix={m} GFlops_per_s={gf} GB_per_s={bw}"
        content.artifacts.append({"type": "result", "stdout": stdout})
        mlist = ", ".join(f"{k}={v}" for k, v in content.metrics.items())
        label = "NodeLabel." + node.label.upper()
        summary = f"{reason} Direction: {direction or T.TITLE}"[:300]
        self.write(
            node.id,
            f"RESULT SUMMARY node={node.id} label={label}: metrics=[{mlist}] summary={summary}",
            {"type": "result_summary", "metrics": content.metrics},
            end - self.rng.uniform(1.0, 2.5),
        )
        headline = T.fill(
            self.rng.choice(T.HEADLINES), self.rng, label=node.label, m=m, gf=gf, bw=bw
        )[:600]
        meta = {
            "type": "experiment_result",
            "mem_kind": "experiment_result",
            "metric_ptr": {"name": "GFlops_per_s", "value": gf},
            "artifact_refs": [
                {"path": "spmv.c", "sha256": self.sha(), "role": "source"},
                {"path": f"results/{m}.csv", "sha256": self.sha(), "role": "data_output"},
            ],
            "node_report_ref": rid,
        }
        t = end + self.rng.uniform(0.3, 1.0)
        content.experiment_result = self.write(node.id, headline, meta, t)
        content.conclusion = content.experiment_result
        if self.rng.random() < 0.6:
            hints = "; ".join(T.fill(h, self.rng) for h in self.rng.sample(T.HINTS, 2))[:600]
            meta = {
                "type": "reflection",
                "mem_kind": "reflection",
                "metric_ptr": None,
                "artifact_refs": [],
                "node_report_ref": rid,
                "confidence": 0.4,
            }
            self.write(node.id, hints, meta, t + self.rng.uniform(0.2, 0.6))

    # ---------------------------------------------------------------- ari-core process reads
    def bfts_selects(self) -> None:
        query = T.EXPERIMENT_MD
        self.queries.append(query)
        for t in self.tl.selects:
            self.reads.append(Read(round(t, 6), "react_step", query, None, 5, "react", node_id=""))

    def pipeline_reads(self) -> None:
        t = self.stop + 75.0
        for node in self.nodes:
            self.reads.append(
                Read(
                    round(t, 6),
                    "node_scope",
                    "inherit:get_node_memory",
                    [node.id],
                    0,
                    "inherit",
                    node_id="",
                )
            )
            t += 0.05

    # ---------------------------------------------------------------- ranking and reads
    def resolve(self) -> None:
        """Order entries in time, answer every read from the pool as it was, fill deferrals."""
        self.entries.sort(key=lambda e: e.ts)
        for i, entry in enumerate(self.entries):
            entry.index = i
        self.ts_list = [e.ts for e in self.entries]
        self.index_words()
        own = [e for e in self.entries if e.kind == "node_scope"]
        self.writer_ts = [e.ts for e in own]
        self.writer_id = [e.node_id for e in own]
        self.by_node: dict[str, list[Entry]] = {}
        for entry in own:
            self.by_node.setdefault(entry.node_id, []).append(entry)
        self.by_node_ts = {k: [e.ts for e in v] for k, v in self.by_node.items()}
        self.react = [e for e in self.entries if e.kind == "react_step"]
        self.react_words = {id(e): self.words(e.text[:300]) for e in self.react}
        self.reads.sort(key=lambda r: r.ts)
        for read in self.reads:
            if read.node_id is None:
                k = bisect.bisect_left(self.writer_ts, read.ts)
                read.node_id = self.writer_id[k - 1] if k else ""
            ANSWERS[read.mode](self, read)
            if read.on_done is not None:
                read.on_done(read, read.hits)

    def index_words(self) -> None:
        """Inverted lists (entry positions, ascending) for the words any query uses."""
        vocab = set()
        for q in self.queries:
            vocab.update(self.words(q))
        lists: dict[str, list[int]] = {}
        for entry in self.entries:
            text = entry.rank_text if entry.rank_text is not None else entry.text
            for w in set(WORD.findall(text[:300].lower())) & vocab:
                lists.setdefault(w, []).append(entry.index)
        # words in more than a tenth of the pool carry no signal (an IDF cut); dropping them
        # keeps every search's cost proportional to the entries that share a rare word
        common = max(50, len(self.entries) // 10)
        self.postings = {
            w: np.asarray(v, dtype=np.int64) for w, v in lists.items() if len(v) <= common
        }

    @staticmethod
    def words(text: str) -> set[str]:
        return {w for w in WORD.findall(text.lower()) if w not in STOP}

    def window(self, query: str, n: int, extra: int = 0) -> np.ndarray:
        """Positions of the top-`TOP_K` (+ `extra`) pool entries (pool = first n), best first,
        ties by age."""
        top_k = TOP_K + extra
        counts = np.zeros(n, dtype=np.int32)
        for w in self.words(query):
            post = self.postings.get(w)
            if post is not None:
                counts[post[: np.searchsorted(post, n)]] += 1
        if n <= top_k:
            return np.argsort(-counts, kind="stable")
        pos = np.flatnonzero(counts)
        if len(pos) >= top_k:
            key = (-counts[pos]).astype(np.int64) * n + pos
            best = np.argpartition(key, top_k - 1)[:top_k]
            return pos[best[np.argsort(key[best])]]
        ranked = pos[np.argsort(-counts[pos], kind="stable")]
        zeros = np.flatnonzero(counts == 0)[: top_k - len(pos)]
        return np.concatenate([ranked, zeros])

    def answer_search(self, read: Read) -> None:
        scope = set(read.ancestor_ids or ())
        n = bisect.bisect_left(self.ts_list, read.ts)
        unseen = {id(e) for e in self.unseen(read)}
        ranked = (self.entries[p] for p in self.window(read.query, n, len(unseen)).tolist())
        for rank, entry in enumerate(e for e in ranked if id(e) not in unseen):
            if entry.kind == "node_scope" and entry.node_id in scope:
                read.hits.append(entry)
                read.results.append(
                    {
                        "entry_id": entry.eid,
                        "src_node_id": entry.node_id,
                        "score": max(0.0, 1.0 - 0.01 * rank),
                    }
                )
                if len(read.hits) == read.limit:
                    break

    def answer_inherit(self, read: Read) -> None:
        target = (read.ancestor_ids or [""])[0]
        entries = self.by_node.get(target, [])
        k = bisect.bisect_left(self.by_node_ts.get(target, []), read.ts)
        read.hits = entries[:k]
        read.results = [
            {"src_node_id": target, "entry_id": e.eid, "type": e.metadata.get("type")}
            for e in read.hits
        ]
        read.limit = len(read.hits)

    def answer_react(self, read: Read) -> None:
        pool = [e for e in self.react if e.ts < read.ts]
        want = self.words(read.query)
        ranked = sorted(pool, key=lambda e: -len(want & self.react_words[id(e)]))
        read.hits = ranked[: read.limit]
        read.results = [
            {"entry_id": e.eid, "src_node_id": "", "score": max(0.0, 1.0 - 0.01 * r)}
            for r, e in enumerate(read.hits)
        ]


# what a node's plan may hold (kind → the method that makes that tool call and its outcome);
# every handler takes (node, t, step, target), whether it uses them all or not
TOOL_CALLS: dict[str, Callable[..., Call]] = {
    "generate_ideas": DemoRun.call_generate_ideas,
    "survey": DemoRun.call_survey,
    "run_code": DemoRun.call_run_code,
    "run_bash": DemoRun.call_run_bash,
    "storm": DemoRun.call_storm,
    "write_file": DemoRun.call_write_file,
    "read_file": DemoRun.call_read_file,
    "get_experiment_context": DemoRun.call_get_experiment_context,
    "add_memory": DemoRun.call_add_memory,
    "bracket_finding": DemoRun.call_bracket_finding,
    "japanese_note": DemoRun.call_japanese_note,
    "late_finding": DemoRun.call_late_finding,
    "reject": DemoRun.call_reject,
    "repro": DemoRun.call_repro,
    "search_memory": DemoRun.call_search_memory,
    "leak": DemoRun.call_leak,
    "get_node_memory": DemoRun.call_get_node_memory,
    "cousin": DemoRun.call_cousin,
}
# how a deferred read is answered, by its mode
ANSWERS: dict[str, Callable[[DemoRun, Read], None]] = {
    "search": DemoRun.answer_search,
    "inherit": DemoRun.answer_inherit,
    "react": DemoRun.answer_react,
}


# ---------------------------------------------------------------- planting: who reads whom


def _window(n: SimNode, stop: float) -> tuple[float, float]:
    """When a node may make a planted read: well after its start, well before its end."""
    end = min(n.end or stop, stop)
    return n.start + 15.0, end - 25.0


def _finished_before(n: SimNode, t: float, stop: float) -> bool:
    return n.end is not None and n.end < t and n.end <= stop


def _off_lineage(x: SimNode, y: SimNode) -> bool:
    return y is not x and y.id not in x.ancestors and x.id not in y.ancestors


def _lca_depth(x: SimNode, y: SimNode) -> int:
    common = 0
    for a, b in zip(x.ancestors, y.ancestors):
        if a != b:
            break
        common += 1
    return common


def _pick_reader(
    readers: list[SimNode],
    nodes: list[SimNode],
    pred: Callable[[SimNode, SimNode], bool],
    skip: set[str],
    stop: float,
) -> tuple[SimNode, SimNode, float] | None:
    """(reader, node read, when): the closest off-lineage pair `pred` allows, read after the
    other node finished, inside the reader's window."""
    best = None
    for x in readers:
        if x.id in skip:
            continue
        lo, hi = _window(x, stop)
        for y in nodes:
            if y.parent is None or not _off_lineage(x, y) or not pred(x, y):
                continue
            if not _finished_before(y, hi - 40, stop):
                continue
            t = max(lo, y.end + 40.0)
            if t > hi:
                continue
            score = (_lca_depth(x, y), not y.failed, -x.order, -y.order)
            if best is None or score > best[0]:
                best = (score, x, y, t)
        if best is not None and best[0][0] >= 1:
            break
    return None if best is None else best[1:]
