"""The demo run's BFTS timeline: which nodes exist, when each was expanded, started and finished.

A small discrete-event simulation of ARI's best-first tree search (§2, §8 of the docs/ari-format.md):
four workers, nodes created at expansion time (`created_at`), started later by a free worker,
finished with `success` or `failed`; a finished node is expanded into children created a few
seconds after it completes (failed nodes get one `debug` child). The simulation stops shortly
after the node budget is spent, so the last nodes are still `running` or `pending`, as in a run
stopped at its budget. Content (memory, trace) is made elsewhere from this timeline.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

WORKERS = 4  # ARI's max_parallel_nodes (hard-capped at 4)
MAX_CHILDREN = 4  # max_expansions_per_node


@dataclass
class SimNode:
    id: str
    parent: SimNode | None
    label: str
    created: float
    raw_label: str = ""
    start: float | None = None
    end: float | None = None  # planned finish; None = never started
    failed: bool = False
    children: list[SimNode] = field(default_factory=list)
    ancestors: list[str] = field(default_factory=list)  # root -> parent ids
    order: int = 0  # creation index

    @property
    def depth(self) -> int:
        return len(self.ancestors)

    def status(self, stop: float) -> str:
        if self.start is None or self.start > stop:
            return "pending"
        if self.end is None or self.end > stop:
            return "running"
        return "failed" if self.failed else "success"


def max_depth_for(nodes: int) -> int:
    """ARI's default max_depth is 5; bigger synthetic runs need more room to fit the node count."""
    depth, capacity = 5, sum(3**d for d in range(6))
    while capacity < nodes * 2:
        depth += 1
        capacity += 3**depth
    return depth


class Timeline:
    """Runs the simulation; afterwards `nodes` (creation order), `stop` and `selects` are set."""

    def __init__(self, rng: random.Random, n_nodes: int, t0: float, run_id: str) -> None:
        self.rng = rng
        self.n_nodes = max(2, n_nodes)
        self.t0 = t0
        self.run_id = run_id
        self.max_depth = max_depth_for(self.n_nodes)
        self.nodes: list[SimNode] = []
        self.ids: set[str] = set()
        self.pending: list[SimNode] = []
        self.running: list[tuple[float, int, SimNode]] = []  # heap by planned end
        self.selects: list[float] = []  # times of BFTS selections among >= 2 pending nodes
        self.stop = t0

    # ---- helpers ----
    def new_id(self) -> str:
        while True:
            nid = f"node_{self.rng.getrandbits(32):08x}"
            if nid not in self.ids:
                self.ids.add(nid)
                return nid

    def create(self, parent: SimNode | None, label: str, at: float, raw: str = "") -> SimNode:
        nid = f"node_{self.run_id}_root" if parent is None else self.new_id()
        node = SimNode(id=nid, parent=parent, label=label, created=at, raw_label=raw)
        node.order = len(self.nodes)
        if parent is not None:
            node.ancestors = [*parent.ancestors, parent.id]
            parent.children.append(node)
        self.nodes.append(node)
        return node

    def duration(self, node: SimNode) -> float:
        if node.parent is None:
            return self.rng.uniform(1200, 1800)
        if node.failed:
            return self.rng.uniform(240, 900)
        return self.rng.uniform(480, 1800)

    def launch(self, node: SimNode, now: float) -> None:
        node.start = max(now, node.created) + self.rng.uniform(0.8, 2.5)
        if node.parent is not None:
            p_fail = 0.12 if node.label == "debug" else 0.22
            node.failed = self.rng.random() < p_fail
            # the second draft always fails, so every run shows a failed node and its debug child
            siblings = node.parent.children
            if node.label == "draft" and len(siblings) > 1 and node is siblings[1]:
                node.failed = True
        node.end = node.start + self.duration(node)
        heapq.heappush(self.running, (node.end, node.order, node))

    # ---- expansion ----
    def child_labels(self, node: SimNode) -> list[tuple[str, str]]:
        room = self.n_nodes - len(self.nodes)
        if room <= 0:
            return []
        if node.parent is None:
            return [("draft", "")] * min(room, 2 if self.n_nodes <= 10 else 3)
        if node.depth >= self.max_depth:
            return []
        if node.failed:
            return [("debug", "")]
        k = self.rng.choices([1, 2, 3], weights=[35, 40, 25])[0]
        if len(self.pending) >= 10:
            k = 0
        elif len(self.pending) >= 6:
            k = min(k, 1)
        k = min(k, room, MAX_CHILDREN - len(node.children))
        out = []
        for _ in range(k):
            roll = self.rng.random()
            if roll < 0.5:
                out.append(("improve", ""))
            elif roll < 0.72:
                out.append(("ablation", ""))
            elif roll < 0.97 or node.depth < 2:
                out.append(("validation", "") if node.depth >= 1 else ("improve", ""))
            else:
                out.append(("other", "replication"))
        return out

    def expand(self, node: SimNode, at: float) -> None:
        t = at + self.rng.uniform(2.0, 6.0)
        for label, raw in self.child_labels(node):
            self.pending.append(self.create(node, label, t, raw))
            t += self.rng.uniform(0.05, 0.6)

    def reexpand(self, now: float) -> None:
        """Nothing left to run but budget left: expand the latest finished node again (frontier)."""
        for node in reversed(self.nodes):
            if (
                node.end is not None
                and node.end <= now
                and not node.failed
                and len(node.children) < MAX_CHILDREN
                and node.depth < self.max_depth
            ):
                self.expand(node, now)
                return

    def pick(self) -> SimNode:
        """Deepest pending node first (best-first favours refining promising lines)."""
        best = max(self.pending, key=lambda n: (n.depth, -n.order))
        self.pending.remove(best)
        return best

    def dispatch(self, now: float) -> None:
        while self.pending and len(self.running) < WORKERS:
            if len(self.pending) >= 2:
                self.selects.append(now + self.rng.uniform(0.1, 0.6))
            self.launch(self.pick(), now)
            now += self.rng.uniform(2.0, 4.0)  # the loop starts one worker at a time

    # ---- main loop ----
    def run(self) -> list[SimNode]:
        root = self.create(None, "draft", self.t0)
        self.launch(root, self.t0)
        full_at: float | None = None
        while self.running:
            end, _, node = heapq.heappop(self.running)
            if full_at is not None and end > full_at + 45.0:
                heapq.heappush(self.running, (end, node.order, node))
                break
            self.expand(node, end)
            if len(self.nodes) >= self.n_nodes and full_at is None:
                full_at = end + 8.0
            if not self.pending and not self.running and len(self.nodes) < self.n_nodes:
                self.reexpand(end + 5.0)
            self.dispatch(end + 2.0)
        last = max(n.created for n in self.nodes)
        self.stop = max(full_at or last, last) + 45.0
        self.ensure_running_and_pending()
        self.thin_selects()
        return self.nodes

    def thin_selects(self) -> None:
        """Keep a few BFTS selections (each becomes a react_search read), evenly spread."""
        picks = [t for t in self.selects if t < self.stop]
        keep = max(3, self.n_nodes // 10)
        if len(picks) > keep:
            step = len(picks) / keep
            picks = [picks[int(i * step)] for i in range(keep)]
        self.selects = picks

    def ensure_running_and_pending(self) -> None:
        """Guarantee both a `running` and a `pending` node, as a run stopped at its budget has."""
        stop = self.stop
        leaves = [n for n in self.nodes if not n.children and n.parent is not None]
        if not any(n.status(stop) == "pending" for n in self.nodes):
            cand = [n for n in leaves if n.start is not None]
            if cand:
                node = max(cand, key=lambda n: (n.created, n.order))
                node.start = node.end = None
        if not any(n.status(stop) == "running" for n in self.nodes):
            cand = [n for n in leaves if n.start is not None and n.start < stop - 20]
            if cand:
                node = max(cand, key=lambda n: (n.start, n.order))
                node.end = stop + self.rng.uniform(300, 900)
