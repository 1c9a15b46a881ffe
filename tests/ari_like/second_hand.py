"""The planted second-hand leak of the simulated run (a step of its own: `run.py` calls in here).

Node D1 (under D) has its LLM search the memory of C, a branch beside its parent's: a scope
violation and a leak, and ARI keeps the result as D1's automatic `Tool search_memory: …` entry,
which quotes C's passages. Every descendant of D1 that starts later reads D1's memory in its
inheritance burst (`get_node_memory` per ancestor): it receives C's memory second-hand. D1 also
searches its own lineage: that kept result quotes only its ancestors' passages, which its
descendants may read themselves; it must not be flagged.

The calls are added to D1's plan without drawing from the run's random stream (their place and
think time are fixed), so every other node's timeline is the one the seed gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.ari_like.run import SimNode, Simulation

WRITER = "D1"  # plan key of the node whose kept result carries another branch's memory
ORIGIN = "C"  # plan key of the branch whose memory it carries
CALLS = ("search_branch", "search_lineage")
THINK_S = 2.0  # the LLM's turn before each planted call (fixed: no draw from the run's rng)
QUERY = "GFlops_per_s"  # words every finished node's memory holds (its run_bash output)


def calls_of(key: str) -> list[tuple[str, ...]]:
    """The planted calls of the node `key`, in order (none for any node but WRITER)."""
    return [(c,) for c in CALLS] if key == WRITER else []


def call(sim: Simulation, node: SimNode, what: str) -> tuple[str, dict[str, Any]]:
    """The tool and arguments of a planted call; the audit findings it must cause."""
    if what == "search_branch":
        origin = sim.planted.nodes[ORIGIN]
        for kind in ("scope_violation", "leak"):
            sim.planted.findings.append(
                {"kind": kind, "node": node.id, "targets": [origin], "tool": "search_memory"}
            )
        return "search_memory", {"query": QUERY, "ancestor_ids": [origin], "limit": 5}
    return "search_memory", {"query": QUERY, "ancestor_ids": node.ancestor_ids, "limit": 5}


def check(sim: Simulation) -> None:
    """What was planted came out as planned; its record in `sim.planted.second_hand`: the
    writer, the origin, the texts of the two kept results, and the nodes that read them."""
    writer, origin = sim.nodes[WRITER], sim.nodes[ORIGIN]
    kept = [
        r["text"]
        for r in sim.backend.backup_records()
        if r.get("node_id") == writer.id and r["text"].startswith("Tool search_memory: ")
    ]
    if len(kept) != 2:
        raise AssertionError(f"{WRITER} kept {len(kept)} search results, not 2")
    tainted, lineage = kept  # in the order they were made
    if origin.id not in tainted:
        raise AssertionError(f"{WRITER}'s search of {ORIGIN} returned none of its passages")
    if not any(a in lineage for a in writer.ancestor_ids):
        raise AssertionError(f"{WRITER}'s search of its lineage returned nothing")
    readers = [
        n.id
        for n in sim.nodes.values()
        if writer.id in n.ancestor_ids and n.status in ("success", "failed")
    ]
    if not readers:
        raise AssertionError(f"no descendant of {WRITER} ran")
    sim.planted.second_hand = {
        "writer": writer.id,
        "origin": origin.id,
        "tainted_text": tainted,
        "lineage_text": lineage,
        "readers": readers,
    }


def expected(planted: Any) -> tuple[set, set]:
    """What the audit must find, and nothing else: the tainted entries as (writer, origins),
    one per planted leak that an LLM read made (this one, and C2's read of its cousin A,
    which nobody reads after); the second-hand findings as (reader, writer, origins, kept text).
    """
    tainted = {(f["node"], tuple(f["targets"])) for f in planted.findings if f["kind"] == "leak"}
    sh = planted.second_hand
    found = {(r, sh["writer"], (sh["origin"],), sh["tainted_text"]) for r in sh["readers"]}
    return tainted, found


def found(report: Any, ckpt: Any) -> tuple[set, set]:
    """What the audit `report` of `ckpt` found, in `expected`'s terms."""
    tainted = {(t.node_id, tuple(t.origin_nodes)) for t in report.tainted}
    second = {
        (f.node_id, f.via_node, tuple(f.origin_nodes), ckpt.entries_by_id[f.entry_id].text)
        for f in report.second_hand
    }
    return tainted, second
