"""The demo run's planted cases: who plays each role, chosen from the timeline alone.

A few planted events make the audit interesting: an LLM search whose scope includes a sibling
branch (a leak), an LLM `get_node_memory` of a cousin, and `add_memory` calls rejected by the
copy-on-write guard; one write whose insert lands after another node's start-up search although
it is stamped before that node's start (the one recording a replay cannot match, see
`plant_late_insert`); and a tool storm, a sweep whose automatic `Tool …` entries fill another
branch's node's window (`plant_tool_storm`). Planting draws nothing from the run's rng, so the
rest of the run is what it would be without it; the calls themselves are made in `demo.calls`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ari_mem_tui.demo.records import Entry, Read
from ari_mem_tui.demo.tree import SimNode

# the planted tool storm (`plant_tool_storm`): more automatic Tool entries than a top_k window
# holds, one a STORM_GAP seconds
STORM_CALLS, STORM_GAP = 240, 1.5


@dataclass
class Planted:
    """Who plays each planted role, and what the planted calls left once made."""

    # node id -> its planted calls (time, kind, target), merged into its call plan
    specials: dict[str, list[tuple[float, str, str]]] = field(default_factory=dict)
    # the late insert: its reader and writer; once written, its `entry` and the call's `auto` entry
    late: dict[str, Any] = field(default_factory=dict)
    # the tool storm: its writer and reader; the `points` swept so far
    storm: dict[str, Any] = field(default_factory=dict)

    def unseen(self, read: Read) -> list[Entry]:
        """Entries stamped before `read` whose insert had not landed when it ran."""
        late = self.late.get("entry")
        if late is not None and late.ts < read.ts < (late.landed or late.ts):
            return [late]
        return []

    def land_late_insert(self, startup_of: dict[str, list[Read]]) -> None:
        """Date the planted late insert against the reader's start-up reads as they now stand:
        stamped before the first, landing just after the search: a slow Letta insert, under a
        second (the access-log join pairs a write event with an entry up to 2 s older)."""
        if not self.late.get("entry"):
            return
        entry, auto = self.late["entry"], self.late["auto"]
        group = startup_of[self.late["reader"].id]
        entry.landed = round(group[-1].ts + 0.2, 6)
        # stamped a quarter second before the reader's start, and under a second before it landed
        entry.ts = round(max(group[0].ts - 0.25, entry.landed - 0.95), 6)
        # the tool call returned once the insert had landed: its auto entry comes after that
        auto.ts = round(entry.landed + 0.05, 6)


def plant(nodes: list[SimNode], stop: float) -> Planted:
    """Choose who leaks, who reads a cousin, who gets a write rejected (timeline only)."""
    planted = Planted()
    specials = planted.specials
    started = [n for n in nodes if n.parent is not None and n.start is not None and n.start < stop]

    def pick(
        pred: Callable[[SimNode, SimNode], bool], skip: set[str]
    ) -> tuple[SimNode, SimNode, float] | None:
        return _pick_reader(started, nodes, pred, skip, stop)

    leak = pick(lambda x, y: x.parent is y.parent, set()) or pick(lambda _x, _y: True, set())
    used = set()
    if leak:
        x, y, t = leak
        specials.setdefault(x.id, []).append((t, "leak", y.id))
        used.add(x.id)
    cousin = (
        pick(
            lambda x, y: (
                x.parent is not y.parent and _lca_depth(x, y) == x.depth - 2 and y.depth == x.depth
            ),
            used,
        )
        or pick(lambda x, y: x.parent is not y.parent, used)
        or pick(lambda _x, _y: True, set())
    )
    if cousin:
        x, y, t = cousin
        specials.setdefault(x.id, []).append((t, "cousin", y.id))
    for i, node in enumerate(started):
        if i % 15 == 1 or (len(started) == 1):
            lo, hi = _window(node, stop)
            if hi > lo:
                t = lo + (hi - lo) * 0.6
                specials.setdefault(node.id, []).append((t, "reject", node.parent.id))
    plant_late_insert(planted, started, stop)
    plant_tool_storm(planted, started, stop)
    return planted


def plant_late_insert(planted: Planted, started: list[SimNode], stop: float) -> None:
    """One write stamped before a node's start-up search but landing after it (§3.2, §4.2:
    the entry's ts is taken before the insert, the write event's after it returned).

    A node of another branch, running meanwhile, has its LLM add a finding on the same
    idea as the reader's direction just before the reader starts; the Letta server is slow
    with that insert, so the reader's recorded search misses it, while a replay as of the
    reader's start (entries stamped before it) ranks it first in the window: the reader's
    hits move one window rank down. The one place where recording and replay differ.
    """
    specials = planted.specials
    for x in started:
        done = x.end is not None and x.end <= stop and not x.failed
        if x.depth < 2 or not done or x.id in specials or x.label == "debug":
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
            y = min(writers, key=lambda n: (n.id in specials, n.order))
            specials.setdefault(y.id, []).append((t, "late_finding", x.id))
            planted.late = {"reader": x, "writer": y}
            return


def plant_tool_storm(planted: Planted, started: list[SimNode], stop: float) -> None:
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
    busy = {*planted.specials, getattr(planted.late.get("reader"), "id", "")}
    readers = [
        x
        for x in started
        if x.depth >= 2 and x.end is not None and x.end <= stop and not x.failed
        and x.id not in busy and x.label != "debug"
    ]  # fmt: skip
    for x in sorted(readers, key=lambda n: (-n.depth, n.order)):
        y = _storm_writer(x, started, busy, stop)
        if y is not None:
            begin = y.start + 20.0  # type: ignore[operator]
            calls = [(begin + i * STORM_GAP, "storm", x.id) for i in range(STORM_CALLS)]
            planted.specials.setdefault(y.id, []).extend(calls)
            planted.storm = {"reader": x, "writer": y}
            return


def _storm_writer(
    x: SimNode, started: list[SimNode], busy: set[str], stop: float
) -> SimNode | None:
    """The off-lineage node with the most time to sweep in before `x` starts (enough for
    STORM_CALLS calls), else None."""
    writers = []
    for y in started:
        if not _off_lineage(x, y) or y.id in busy or y.start is None:
            continue
        room = min(y.end or stop, x.start - 30.0, stop) - (y.start + 20.0)  # type: ignore[operator]
        if room >= STORM_CALLS * STORM_GAP:
            writers.append((room, -y.order, y))
    return max(writers, key=lambda w: w[:2])[2] if writers else None


# ---------------------------------------------------------------- who reads whom


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
