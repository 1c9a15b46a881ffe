"""The demo run's content: per-node trace logs, memory entries, and every access-log event.

Built on the timeline of `demo.tree`. Each started node gets what ARI's agent loop leaves
behind (docs/ari-format.md §2.7, §3.9, §3.10, §4.5, §5.8): start-up reads (an
`inherit:get_node_memory` burst over its ancestors, then the Tier-2 `search_memory` with its
direction as query), LLM tool calls with their `trace_log` lines and auto `Tool <name>: …`
entries (each call's handler in `demo.calls`), findings, survey summaries, and what a node
leaves at its end (`demo.node_end`). A few planted events (`demo.planted`) make the audit
interesting. Every read is answered afterwards, in time order, by the demo's stand-in for the
server's ranking (`demo.ranking`).

Every started non-root node gets its start-up reads while the run has at most 1,500 started
nodes; bigger runs record them for 1,500 nodes spread evenly over the run (plus the planted
ones), as if the log's bounded queue had dropped the rest (§4.1). This keeps a 10,000-node run
under a minute and its access log near 100 MB.

The start-up searches can be ranked again afterwards by a real ranker
(`demo.write_demo(record=…)`); no entry text depends on their results.
"""

from __future__ import annotations

import bisect
import itertools
import random
from typing import Any

from ari_mem_tui.demo import text as T
from ari_mem_tui.demo.calls import TOOL_CALLS
from ari_mem_tui.demo.node_end import finish
from ari_mem_tui.demo.planted import plant
from ari_mem_tui.demo.ranking import Pool
from ari_mem_tui.demo.records import (
    INSERT_S,
    Entry,
    Read,
    call_line,
    dumps,
    envelope_line,
    tool_entry_text,
)
from ari_mem_tui.demo.state import RunState
from ari_mem_tui.demo.tree import SimNode, Timeline

STARTUP_READ_NODES = 1500  # above this many started nodes, start-up reads are sampled


class DemoRun(RunState):
    """Generates everything, in the order ARI's run would have: directions, the planted cases,
    each started node's reads, calls and end, ari-core's own reads; then answers every read."""

    def __init__(self, rng: random.Random, timeline: Timeline, entries_total: int) -> None:
        super().__init__(rng, timeline)
        started = [n for n in self.nodes if n.status(self.stop) != "pending"]
        self.per_node = max(6, entries_total // max(1, len(started)))
        # big runs: start-up reads for at most STARTUP_READ_NODES nodes, evenly spread (§4.1:
        # the access log's writer queue drops events when it overflows)
        self.startup_stride = -(-len(started) // STARTUP_READ_NODES)
        self.startups: list[list[Read]] = []
        self.startup_of: dict[str, list[Read]] = {}  # node id -> its start-up reads

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

    # ---------------------------------------------------------------- whole run
    def build(self) -> None:
        self.make_directions()
        self.planted = plant(self.nodes, self.stop)
        specials = self.planted.specials
        # leak readers go last, so the sibling whose memory they read already has its entries
        leakers = {x for x, calls in specials.items() if any(k == "leak" for _, k, _ in calls)}
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
        self.planted.land_late_insert(self.startup_of)

    def node_run(self, node: SimNode) -> None:
        planted = self.planted
        if node.parent is not None and (
            self.startup_stride == 1
            or node.order % self.startup_stride == 0
            or node.id in planted.specials
            or node is planted.late.get("reader")
            or node is planted.storm.get("reader")
        ):
            self.startup_reads(node)
        calls = self.plan_calls(node)
        self.execute(node, calls)
        status = node.status(self.stop)
        if status in ("success", "failed"):
            finish(self, node, status)
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

    def startup_searches(self) -> list[tuple[str, Read]]:
        """(reader, read) of every recorded start-up search (the Tier-2 read closing a burst)."""
        return [(node_id, group[-1]) for node_id, group in self.startup_of.items()]

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
        for t, kind, target in self.planted.specials.get(node.id, []):
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
                self.planted.late["auto"] = auto
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

    # ---------------------------------------------------------------- answering the reads
    def resolve(self) -> None:
        """Order entries in time, answer every read from the pool as it was, fill deferrals."""
        self.entries.sort(key=lambda e: e.ts)
        for i, entry in enumerate(self.entries):
            entry.index = i
        pool = Pool(self.entries, self.queries, self.planted.unseen)
        self.reads.sort(key=lambda r: r.ts)
        for read in self.reads:
            if read.node_id is None:
                read.node_id = pool.last_writer(read.ts)
            pool.answer(read)
            if read.on_done is not None:
                read.on_done(read, read.hits)
