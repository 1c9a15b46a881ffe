"""The audit and the replay on the generated demo checkpoints (fixtures from conftest.py):
the planted leak and CoW rejection are found, and ARI's invariants hold on every node."""

from __future__ import annotations

from pathlib import Path

import pytest

from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.replay import replay


@pytest.fixture(scope="module")
def demo(demo_ckpt: Path):
    return load_checkpoint(demo_ckpt)


def test_the_planted_leak_and_rejected_write_are_found(small_ckpt: Path):
    ckpt = load_checkpoint(small_ckpt)
    report = audit(ckpt)
    assert report.leaks, "the demo plants an LLM search over a sibling's memory"
    assert report.has_findings
    for finding in [*report.leaks, *report.scope_violations]:
        assert finding.node_id in ckpt.nodes
        lineage = {*ckpt.nodes[finding.node_id].ancestor_ids, finding.node_id}
        assert finding.targets and not set(finding.targets) & lineage
    assert report.rejected_writes
    assert all(f.node_id in ckpt.nodes for f in report.rejected_writes)


def test_demo_audit_finds_leaks_and_cow_holds(demo):
    report = audit(demo)
    assert report.leaks and report.rejected_writes
    assert demo.writes
    # CoW: a write is accepted iff its target is the current node
    assert all(w.accepted == (w.target_node == w.current_node) for w in demo.writes)


def test_replay_invariants_on_every_demo_node(demo):
    ranker = make_ranker(demo, "bm25")
    recorded = 0
    for node_id, node in demo.nodes.items():
        result = replay(demo, node_id, ranker)
        allowed = set(node.ancestor_ids)
        assert all(h.node_id in allowed and h.kind == "node_scope" for h in result.hits)
        ranks = [h.global_rank for h in result.hits]
        assert ranks == sorted(ranks) and all(r < result.params["top_k"] for r in ranks)
        assert all(m.global_rank is None or m.global_rank >= 200 for m in result.missed)
        if not allowed:
            assert result.hits == [] and result.recorded is None
        if result.recorded is not None:
            recorded += 1
            assert all(h.node_id in allowed for h in result.recorded.hits)
            assert result.recorded.query == result.query
    assert recorded > 0, "the demo logs start-up searches: some must be found"
