"""A BFTS run simulated as ARI runs one, on a simulated clock, against a memory backend.

Up to four workers run nodes at once (their events interleave); each node, when started, asks
for its working context exactly as `build_working_context_messages` does (the experiment core,
one `get_node_memory` per ancestor root→parent, then `search_memory` with
`(eval_summary or goal_text or "experiment result")[:200]`, its ancestors, limit 5), then takes
ReAct steps: each LLM tool call adds a call and a result line to its trace_log and an automatic
`Tool <name>: …` entry written under its own id (the CoW guard's current node is set right
before each guarded write, so reads log whoever wrote last). A finished node writes its RESULT
SUMMARY and its consolidation entries, and is expanded: children created then (created_at),
started when a worker takes them. After the tree search, the paper pipeline reads every node's
memory from the ari-core process (node_id ""). The planted cases are listed in `Planted`.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import pydantic_core

from tests.ari_like import second_hand, texts
from tests.ari_like.backends import Backend, Process, iso

START = 1_781_946_000.0  # 2026-06-20 09:00:00 UTC: after ARI began logging inheritance reads
RUN_ID = "20260620090000_Sparse_CSR_SpMV_on_many-core_CPUs"
WORKERS = 4  # max_parallel_nodes
GOAL_CAP = 1500  # agent/loop.py truncates goal_text past 1500 characters


@dataclass(frozen=True)
class Planned:
    key: str
    parent: str | None
    label: str
    direction: str  # a key of texts.DIRECTIONS
    # "success" | "failed" | "pending" (created, never started) | LATE (the why-not planting:
    # pending through the tree search, run once it is over, a success)
    outcome: str
    calls: tuple[tuple[str, ...], ...] = ()  # planted LLM memory calls, in step order
    first_think: float | None = None  # the LLM's first turn, when the plan needs it long


# why-not planting: a node run only once the tree search is over (its rng draws come after
# every other node's, so nothing else moves): its pool holds every branch's memory, more than
# the top_k window of a Letta server, so some of its ancestors' entries rank below the window
LATE = "late"
# why-not planting: a direction that repeats the parent's verdict (texts.echo_parent), so the
# node's start-up search returns the parent's RESULT SUMMARY, which Tier 2 then skips because
# Tier 1b holds it ("seen by ARI but dropped from the context")
ECHO_PARENT = "echo_parent"

# Creation order per parent is the listing order; START_ORDER is the selector's preference.
PLAN = [
    Planned("R", None, "draft", "", "success", (("get_own",),)),
    Planned("A", "R", "draft", "A", "success", (("get_parent",),)),
    Planned("B", "R", "improve", "B", "success"),
    Planned("C", "R", "ablation", "C", "success", (("finding_japanese",),)),
    Planned("D", "R", "validation", "D", "failed"),
    Planned("A1", "A", "improve", "same_A", "success", (("add_parent",), ("finding",))),
    Planned("A2", "A", "improve", "same_A", "success", (("search_own",), ("get_parent",))),
    Planned("B1", "B", "improve", "same_B", "success", (("search_direction",),)),
    Planned("B2", "B", "improve", "same_B", "success", (("clear_parent",),)),
    Planned("C1", "C", "improve", "empty", "success"),
    Planned("C2", "C", "draft", "japanese", "success", (("get_cousin", "A"),)),
    Planned("D1", "D", "debug", "debug", "success"),
    Planned("A1a", "A1", "improve", "deep", "success", (("search_cow",),)),
    Planned("A1b", "A1", "ablation", "roofline", LATE),  # the why-not planting, below
    Planned("B2a", "B2", "validation", "seeds", "success", (("search_outside", "A1b"),)),
    Planned("C1a", "C1", "improve", "chunk", "success"),
    Planned("C1b", "C1", "ablation", ECHO_PARENT, "success"),  # the why-not planting, below
    Planned("D1a", "D1", "improve", "icx", "success"),
    Planned("D1b", "D1", "validation", "seeds", "pending"),
    Planned("A2a", "A2", "ablation", "roofline", "failed"),
    # started together by two idle workers, both searching before either writes: the files
    # cannot tell which search was whose
    Planned("D1a1", "D1a", "validation", "seeds", "success", first_think=25.0),
    Planned("D1a2", "D1a", "validation", "seeds", "success", first_think=25.0),
]
START_ORDER = [
    "R", "A", "B", "C", "D", "A1", "C2", "B2", "A2", "C1", "D1", "B1",
    "C1a", "C1b", "A1a", "B2a", "D1a", "A2a", "D1a1", "D1a2",
]  # fmt: skip
# plan keys of same-parent, same-direction pairs (elder first) and the start order each shows
SAME_DIRECTION = {("A1", "A2"): "elder first", ("B1", "B2"): "younger first",
                  ("D1a1", "D1a2"): "together"}  # fmt: skip


@dataclass
class Planted:
    """What the generated run holds that a reader must find, or must not be fooled by."""

    nodes: dict[str, str] = field(default_factory=dict)  # plan key -> node id
    # findings the audit must report, and nothing else: (kind, reader/writer, targets, tool)
    findings: list[dict[str, Any]] = field(default_factory=list)
    # node id -> the start-up search as recorded: [(entry id, source node, score)]
    startup: dict[str, list[tuple[str, str, float]]] = field(default_factory=dict)
    startup_ts: dict[str, float] = field(default_factory=dict)
    # pairs of same-parent, same-direction siblings: elder, younger, and which started first
    same_direction: list[dict[str, str]] = field(default_factory=list)
    empty_direction: str = ""
    japanese: str = ""
    # auto entries that quote a CoW error without being one: (node id, text)
    quoting_entries: list[tuple[str, str]] = field(default_factory=list)
    # the planted second-hand leak (second_hand.py): writer, origin, kept texts, readers
    second_hand: dict[str, Any] = field(default_factory=dict)
    # every read event's real reader, in access-log call order: (ts, query, reader)
    readers: list[tuple[float, str, str]] = field(default_factory=list)
    backend: str = ""
    # why-not: the node whose direction repeats its parent's verdict (ECHO_PARENT)
    echo_parent: str = ""
    # why-not: the node run after the tree search (LATE), its pool bigger than a window
    late: str = ""


@dataclass
class SimNode:
    plan: Planned
    id: str
    parent_id: str | None
    depth: int
    ancestor_ids: list[str]
    direction: str | None
    created_at: str = ""
    status: str = "pending"
    completed_at: str = ""
    children: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    eval_summary: str | None = None
    trace_log: list[str] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    error_log: str | None = None
    verdict: str = ""  # the evaluator's verdict, once finished (its RESULT SUMMARY's summary=)

    def to_dict(self) -> dict[str, Any]:
        """`Node.to_dict` as save_tree_json writes it (§2.2), in its key order."""
        label = self.plan.label
        name = f"root: {texts.TITLE[:40]}" if self.parent_id is None else node_name(self)
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "status": self.status,
            "retry_count": 0,
            "children": self.children,
            "created_at": self.created_at,
            "completed_at": self.completed_at,
            "artifacts": self.artifacts,
            "metrics": self.metrics,
            "has_real_data": bool(self.metrics),
            "eval_summary": self.eval_summary,
            "label": label,
            "raw_label": "",
            "name": name,
            "error_log": self.error_log,
            "ancestor_ids": self.ancestor_ids,
            "trace_log": self.trace_log,
            "original_direction": self.direction,
            "node_report_path": None,
        }


def mcp_text(value: dict) -> str:
    """The text an MCP client gets from a memory-skill tool returning `value`: FastMCP sends a
    dict as JSON indented by pydantic_core (`to_json(value, fallback=str, indent=2)`)."""
    return pydantic_core.to_json(value, fallback=str, indent=2).decode()


def auto_text(tool: str, envelope: dict) -> str:
    """The automatic entry of an LLM tool call (agent/loop.py): the envelope as
    `json.dumps(..., ensure_ascii=False)` writes it, cut at 1000 characters."""
    return f"Tool {tool}: " + json.dumps(envelope, ensure_ascii=False)[:1000]


def node_name(node: SimNode) -> str:
    first = (node.direction or "").split(".")[0].split("\n")[0].strip()
    if len(first) > 48:
        first = first[:45].rsplit(" ", 1)[0] + "…"
    return f"{node.plan.label}: {first}" if first else node.plan.label


class Simulation:
    def __init__(
        self,
        backend: Backend,
        clock: list[float],
        rng: random.Random,
        workspace: str | None = None,
    ) -> None:
        self.backend, self.clock, self.rng = backend, clock, rng
        # the workspace root the run ran in, when its prompts named the nodes' work dirs
        # (`<root>/experiments/<run_id>/<node>`, "cd here first"): the model's shell commands
        # then start with that `cd` (agent/loop.py's work_dir hint)
        self.workspace = workspace
        self.skill, self.core = Process("skill"), Process("core")
        self.planted = Planted(backend=backend.name)
        self.nodes: dict[str, SimNode] = {}  # by plan key, creation order
        self.pending: list[str] = []  # plan keys created and waiting for a worker
        self.queue: list[tuple[float, int, Generator[float, None, None]]] = []
        self.parked: list[Generator[float, None, None]] = []
        self.seq = 0
        self.running, self.concurrency = 0, [0]
        self.to_run = {p.key for p in PLAN if p.outcome not in ("pending", LATE)}
        self.goal_text = (
            texts.GOAL
            if len(texts.GOAL) <= GOAL_CAP
            else (texts.GOAL[:GOAL_CAP] + "\n...[truncated]")
        )

    # ---- the clock and the workers -----------------------------------------------------------
    def now(self) -> float:
        return self.clock[0]

    def spawn(self, proc: Generator[float, None, None], delay: float = 0.0) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (self.now() + delay, self.seq, proc))

    def loop(self) -> None:
        while self.queue:
            when, _, proc = heapq.heappop(self.queue)
            self.clock[0] = round(max(self.clock[0], when), 6)
            try:
                delay = next(proc)
            except StopIteration:
                continue
            if delay is None:  # parked: woken when a node becomes pending
                self.parked.append(proc)
            else:
                self.spawn(proc, delay)

    def make_pending(self, key: str) -> None:
        self.pending.append(key)
        woken, self.parked = self.parked, []
        for proc in woken:
            self.spawn(proc, 0.0)

    def worker(self) -> Generator[float | None, None, None]:
        while True:
            runnable = [k for k in self.pending if k in self.to_run]
            if not runnable:
                if not self.to_run:
                    return
                yield None  # park until a node becomes pending
                continue
            key = min(runnable, key=START_ORDER.index)
            self.pending.remove(key)
            self.to_run.discard(key)
            if len(runnable) > 1:  # the selector compares candidates: reads the react store
                self.backend.react_search(self.core, texts.GOAL, 5)
                yield self.rng.uniform(2.0, 4.0)
            yield from self.run_node(self.nodes[key])
            if not self.to_run and not self.pending_runnable():
                woken, self.parked = self.parked, []
                for proc in woken:
                    self.spawn(proc, 0.0)

    def pending_runnable(self) -> bool:
        return any(k in self.to_run for k in self.pending)

    # ---- one node --------------------------------------------------------------------------------
    def create(self, plan: Planned) -> SimNode:
        parent = self.nodes[plan.parent] if plan.parent else None
        if parent is None:
            node_id = f"node_{RUN_ID}_root"
        else:
            node_id = f"node_{self.rng.getrandbits(32):08x}"
        direction = None if parent is None else self.direction_of(plan, parent)
        node = SimNode(
            plan=plan,
            id=node_id,
            parent_id=parent.id if parent else None,
            depth=parent.depth + 1 if parent else 0,
            ancestor_ids=[*parent.ancestor_ids, parent.id] if parent else [],
            direction=direction,
            eval_summary=direction,
            created_at=iso(self.now()),
        )
        if parent is not None:
            parent.children.append(node_id)
        self.nodes[plan.key] = node
        self.planted.nodes[plan.key] = node_id
        return node

    def direction_of(self, plan: Planned, parent: SimNode) -> str:
        if plan.direction == ECHO_PARENT:  # the why-not planting (above PLAN)
            self.planted.echo_parent = f"{plan.key}"  # made an id in check_plan
            return texts.echo_parent(parent.verdict, parent.id)
        return texts.DIRECTIONS[plan.direction]

    def guarded(self, node: SimNode, tool: str, args: dict) -> dict:
        """An MCP call with cow_node_id=node.id: `_set_current_node` then the write, atomic."""
        self.skill.current = node.id
        if tool == "add_memory":
            return self.backend.add_memory(
                self.skill, args["node_id"], args["text"], args["metadata"]
            )
        return self.backend.clear_node_memory(self.skill, args["node_id"])

    def write(self, node: SimNode, text: str, metadata: dict) -> dict:
        args = {"node_id": node.id, "text": text, "metadata": metadata}
        return self.guarded(node, "add_memory", args)

    def read(self, tool: str, args: dict, reader: str, proc: Process | None = None) -> dict:
        proc = proc or self.skill
        if tool == "search_memory":
            return self.backend.search_memory(
                proc, args["query"], args["ancestor_ids"], args.get("limit", 5), reader
            )
        if tool == "get_node_memory":
            return self.backend.get_node_memory(proc, args["node_id"], reader)
        return self.backend.bulk_get_node_memory(proc, args["node_ids"], reader)

    def startup(self, node: SimNode) -> Generator[float, None, None]:
        """build_working_context_messages: Tier 1a (unlogged), 1b burst, Tier 2 search."""
        if not (node.depth > 0 and node.ancestor_ids):
            return
        for aid in node.ancestor_ids:
            self.read("get_node_memory", {"node_id": aid}, node.id)
            yield 0.0  # other workers' calls may come in between
        query = (node.eval_summary or self.goal_text or "experiment result")[:200]
        args = {"query": query, "ancestor_ids": node.ancestor_ids, "limit": 5}
        found = self.read("search_memory", args, node.id)
        self.planted.startup[node.id] = [
            (r["entry_id"], r["node_id"], r["score"]) for r in found["results"]
        ]
        self.planted.startup_ts[node.id] = self.now()
        yield 0.05

    def llm_call(self, node: SimNode, step: int, tool: str, args: dict) -> dict:
        """One LLM tool call: executed, traced, and logged as the node's auto entry."""
        if tool in ("add_memory", "clear_node_memory"):
            out = self.guarded(node, tool, args)
            envelope = {"result": mcp_text(out)}
        elif tool in ("search_memory", "get_node_memory", "bulk_get_node_memory"):
            envelope = {"result": mcp_text(self.read(tool, args, node.id))}
        elif tool == "run_bash":
            stdout, metrics = texts.bash_output(self.rng)
            node.metrics = {**metrics, "_scientific_score": round(self.rng.uniform(0.3, 0.9), 2)}
            node.artifacts.append(
                {"type": "code", "tool": tool, "content": args["command"], "step": step}
            )
            envelope = {"result": stdout}
        else:
            envelope = {"result": mcp_text({"ok": True, "path": args.get("filename", "spmv.c")})}
        node.trace_log.append(f"→ {tool}({json.dumps(args, ensure_ascii=False)[:4000]})")
        node.trace_log.append(f"  ← {envelope}")
        text = auto_text(tool, envelope)
        self.write(node, text, {"step": step, "tool": tool})
        return envelope

    def planted_call(self, node: SimNode, call: tuple[str, ...]) -> tuple[str, dict]:
        what = call[0]
        parent = node.parent_id or ""
        if what == "get_own":  # the root looks at its own (empty) memory before anyone wrote
            return "get_node_memory", {"node_id": node.id}
        if what == "get_parent":
            return "get_node_memory", {"node_id": parent}
        if what == "add_parent":  # a write under the parent's id: the CoW guard refuses it
            self.planted.findings.append(
                {
                    "kind": "rejected_write",
                    "node": node.id,
                    "targets": [parent],
                    "tool": "add_memory",
                }
            )
            text = f"Parent note: {texts.finding(self.rng, node.direction or '')}"
            return "add_memory", {"node_id": parent, "text": text, "metadata": {"type": "finding"}}
        if what == "clear_parent":
            self.planted.findings.append(
                {"kind": "rejected_write", "node": node.id, "targets": [parent],
                 "tool": "clear_node_memory"}
            )  # fmt: skip
            return "clear_node_memory", {"node_id": parent}
        if what == "finding":
            text = texts.finding(self.rng, node.direction or "")
            return "add_memory", {"node_id": node.id, "text": text, "metadata": {"type": "finding"}}
        if what == "finding_japanese":
            text = f"観察: {texts.DIRECTIONS['japanese']}と帯域の関係を記録した (GB_per_s)"
            return "add_memory", {"node_id": node.id, "text": text, "metadata": {"type": "finding"}}
        if what == "search_own":
            query = "GFlops_per_s baseline webbase"
            return "search_memory", {"query": query, "ancestor_ids": node.ancestor_ids, "limit": 5}
        if what == "search_direction":  # the LLM repeats its start-up search, same arguments
            args = {"query": (node.direction or "")[:200], "ancestor_ids": node.ancestor_ids}
            return "search_memory", {**args, "limit": 5}
        if what == "search_cow":  # finds an ancestor's auto entry about a refused write
            query = (
                "Tool add_memory: ok false error node_id does not match current node "
                "(CoW violation)"
            )
            return "search_memory", {"query": query, "ancestor_ids": node.ancestor_ids, "limit": 5}
        if what == "search_outside":  # a scope naming a node of another branch
            target = self.planted.nodes[call[1]]
            self.planted.findings.append(
                {"kind": "scope_violation", "node": node.id, "targets": [target],
                 "tool": "search_memory"}
            )  # fmt: skip
            scope = [*node.ancestor_ids, target]
            return "search_memory", {
                "query": "prefetch distance",
                "ancestor_ids": scope,
                "limit": 5,
            }
        if what in second_hand.CALLS:
            return second_hand.call(self, node, what)
        if what == "get_cousin":
            target = self.planted.nodes[call[1]]
            self.planted.findings.append(
                {"kind": "leak", "node": node.id, "targets": [target], "tool": "get_node_memory"}
            )
            return "get_node_memory", {"node_id": target}
        raise ValueError(what)

    def steps(self, node: SimNode) -> list[tuple[str, ...]]:
        """The node's LLM calls: planted memory calls among ordinary work."""
        ordinary = [("write_code",), ("run_bash",), ("read_file",), ("run_bash",)] * 3
        self.rng.shuffle(ordinary)
        calls: list[tuple[str, ...]] = []
        if node.parent_id is None:
            calls = [*node.plan.calls, ("generate_ideas",), ("survey",)]
        else:
            calls = list(node.plan.calls)
        for item in ordinary[: self.rng.randint(7, 10)]:
            calls.insert(self.rng.randint(1 if calls else 0, len(calls)), item)
        if ("run_bash",) not in calls:
            calls.append(("run_bash",))
        calls[1:1] = second_hand.calls_of(node.plan.key)  # a planted step of its own, no draw
        return calls

    def run_node(self, node: SimNode) -> Generator[float, None, None]:
        node.status = "running"
        self.running += 1
        self.concurrency.append(self.running)
        yield from self.startup(node)
        for step, call in enumerate(self.steps(node)):
            planted = call[0] in second_hand.CALLS
            think = second_hand.THINK_S if planted else self.rng.uniform(3.0, 12.0)
            yield node.plan.first_think if step == 0 and node.plan.first_think else think
            if call[0] in ("write_code", "read_file"):
                self.llm_call(node, step, call[0], {"filename": "spmv.c"})
            elif call[0] == "run_bash":
                yield self.rng.uniform(15.0, 60.0)
                command = "make && ./bench --all"
                if self.workspace:
                    command = f"cd {self.workspace}/experiments/{RUN_ID}/{node.id} && {command}"
                self.llm_call(node, step, "run_bash", {"command": command})
            elif call[0] == "generate_ideas":
                self.root_ideas(node, step)
            elif call[0] == "survey":
                self.llm_call(node, step, "survey", {"query": texts.TITLE})
                papers = "\n".join(
                    f"- [SpMV paper {i}]: CSR kernels on multicore, bandwidth bound"
                    for i in range(3)
                )
                self.write(node, f"SURVEY RESULTS:\n{papers}", {"type": "survey_papers"})
            else:
                tool, args = self.planted_call(node, call)
                out = self.llm_call(node, step, tool, args)
                self.note_quoting(node, tool, out)
        yield self.rng.uniform(5.0, 10.0)  # the evaluator
        yield from self.finish(node)

    def note_quoting(self, node: SimNode, tool: str, envelope: dict) -> None:
        if tool == "search_memory" and "CoW violation" in envelope["result"]:
            text = auto_text("search_memory", envelope)
            self.planted.quoting_entries.append((node.id, text))

    def root_ideas(self, node: SimNode, step: int) -> None:
        idea = {
            "title": "Nonzero-balanced CSR SpMV with prefetch",
            "description": "Row blocking by nonzero count plus x prefetch.",
        }
        self.llm_call(node, step, "generate_ideas", {"topic": texts.TITLE})
        context = {
            "experiment_goal": texts.GOAL,
            "primary_metric": "GFlops_per_s",
            "higher_is_better": True,
            "metric_rationale": "SpMV is bandwidth bound; flops track useful work.",
            "hardware_spec": {"scheduler": "none", "container": "none", "partitions": []},
            "selected_idea": f"{idea['title']}: {idea['description'][:400]}",
        }
        self.backend.seed_core_memory(context)
        self.backend.react_add(
            self.core,
            "EVALUATION_CRITERIA: primary_metric=GFlops_per_s higher_is_better=True "
            "rationale=SpMV is bandwidth bound",
            {"type": "evaluation_criteria", "node_id": node.id},
        )
        self.idea = {"ideas": [idea], "primary_metric": "GFlops_per_s", "higher_is_better": True}

    def finish(self, node: SimNode) -> Generator[float, None, None]:
        label = f"NodeLabel.{node.plan.label.upper()}"  # an f-string over a str Enum, Python 3.11
        if node.plan.outcome in ("success", LATE):
            if not node.metrics:
                node.metrics = {"GFlops_per_s": 9.5, "_scientific_score": 0.5}
            verdict = node.verdict = self.rng.choice(texts.VERDICTS)
            metrics = ", ".join(f"{k}={v}" for k, v in node.metrics.items())
            self.write(
                node,
                f"RESULT SUMMARY node={node.id} label={label}: metrics=[{metrics}] "
                f"summary={verdict[:300]}",
                {"type": "result_summary", "metrics": node.metrics},
            )
            yield 0.5
            self.consolidate(node, "experiment_result", verdict)
            node.status = "success"
            score = node.metrics.get("_scientific_score", 0.5)
            node.eval_summary = f"{verdict} [scientific_score={score:.2f}]"
        else:
            yield 0.5
            self.consolidate(node, "failure_case", "the reference check failed")
            node.status = "failed"
            node.error_log = "Max ReAct steps exceeded"
        node.completed_at = iso(self.now())
        self.running -= 1
        made = []
        for plan in PLAN:  # expand: one child per expand() call, an LLM call each
            if plan.parent == node.plan.key:
                yield self.rng.uniform(3.0, 6.0)
                made.append(self.create(plan).plan.key)
        for key in made:  # the children join the frontier once the expansion is over
            self.make_pending(key)

    def consolidate(self, node: SimNode, kind: str, text: str) -> None:
        """consolidate_node_memory (a guarded MCP call): the typed entries of §3.10."""
        ref = {"run_id": RUN_ID, "node_id": node.id}
        metric = next(iter(node.metrics.items()), None) if kind == "experiment_result" else None
        metadata = {
            "type": kind,
            "mem_kind": kind,
            "metric_ptr": {"name": metric[0], "value": metric[1]} if metric else None,
            "artifact_refs": [{"path": "spmv.c", "sha256": None, "role": "source"}],
            "node_report_ref": ref,
        }
        self.write(node, f"node {node.id}: {text}"[:600], metadata)

    def run_late(self) -> None:
        """The why-not planting (LATE): the nodes left pending, run one by one once every
        other node is done, before the paper pipeline."""
        for plan in PLAN:
            if plan.outcome == LATE and plan.key in self.nodes:
                self.pending.remove(plan.key)
                self.planted.late = self.nodes[plan.key].id
                self.spawn(self.run_node(self.nodes[plan.key]))
                self.loop()

    def pipeline(self) -> None:
        """After BFTS: nodes_tree enrichment and verified context, from ari-core (node_id "")."""
        for node in self.nodes.values():
            self.read("get_node_memory", {"node_id": node.id}, "pipeline", self.core)
        best = max(
            (n for n in self.nodes.values() if n.status == "success"),
            key=lambda n: n.metrics.get("_scientific_score", 0),
        )
        lineage = [*best.ancestor_ids, best.id]
        self.read("bulk_get_node_memory", {"node_ids": lineage}, "pipeline", self.core)
        self.best = best

    def run(self) -> None:
        self.create(PLAN[0])
        self.make_pending("R")
        for _ in range(WORKERS):
            self.spawn(self.worker())
        self.loop()
        self.run_late()
        self.clock[0] = round(self.clock[0] + 30.0, 6)
        self.pipeline()
        self.check_plan()

    def check_plan(self) -> None:
        """The planted cases came out as planned (the timeline is drawn from the seed)."""
        first_act: dict[str, float] = {}
        for event in self.backend.log.events:
            fields = event.fields
            if fields["node_id"] and fields["node_id"] not in first_act:
                first_act[fields["node_id"]] = fields["ts"]
        found = self.planted.startup_ts
        for (elder_key, younger_key), wanted in SAME_DIRECTION.items():
            elder, younger = self.nodes[elder_key].id, self.nodes[younger_key].id
            first, second = sorted((elder, younger), key=found.__getitem__)
            if found[second] < first_act[first]:
                order = "together"
            else:
                order = "elder first" if first == elder else "younger first"
            if order != wanted:
                raise AssertionError(f"{elder_key}/{younger_key} started {order}, not {wanted}")
            self.planted.same_direction.append({"elder": elder, "younger": younger, "order": order})
        second_hand.check(self)
        self.planted.empty_direction = self.nodes["C1"].id
        if self.planted.echo_parent:
            self.planted.echo_parent = self.nodes[self.planted.echo_parent].id
        self.planted.japanese = self.nodes["C2"].id
        if max(self.concurrency) < WORKERS:
            raise AssertionError(f"at most {max(self.concurrency)} nodes ran at once")
