"""The audit and the replay on the generated demo checkpoints (fixtures from conftest.py):
the planted leak and CoW rejection are found, the second-hand leaks they cause too (in the
TUI's Audit tab and the reader's Hits findings), and ARI's invariants hold on every node."""

from __future__ import annotations

from pathlib import Path

import pytest

from ari_mem_tui.audit import audit, findings_by_node
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.replay import replay
from tests.tui_app_helpers import make_app, press, settle


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


def test_the_demo_shows_the_second_hand_leaks_its_leaks_cause(demo):
    """The demo's planted leaks are LLM reads, so their results are kept in the leaking
    nodes' memory, which their descendants inherit at their start. THEN the tainted entries are
    those of the leaking nodes, and the second-hand findings are exactly the reads (of any
    attributed reader but the writer) that list a tainted entry's passage id and whose reader's
    lineage does not hold the origin: checked here row by row from each read's results."""
    report = audit(demo)
    assert {t.node_id for t in report.tainted} == {f.node_id for f in report.leaks}
    events, expected = demo.access_events, set()
    for t in report.tainted:
        for row in events.rows_of_op("read"):
            event = events[row]
            reader = event.reader
            if reader not in demo.nodes or reader == t.node_id:
                continue
            lineage = {*demo.nodes[reader].ancestor_ids, reader}
            returned = any(r.get("entry_id") == t.letta_id for r in event.results)
            if returned and not set(t.origin_nodes) <= lineage:
                expected.add((reader, t.entry_id))
    assert {(f.node_id, f.entry_id) for f in report.second_hand} == expected
    assert len(expected) == 16


async def test_the_tui_shows_a_second_hand_leak_where_its_reader_is(small_ckpt: Path) -> None:
    """GIVEN the small demo's second-hand leak WHEN its reader is opened THEN its Hits findings
    show the chain origin → leak → entry → reader; the Audit tab lists it as second-hand."""
    report = audit(load_checkpoint(small_ckpt))
    found = report.second_hand[0]
    app = make_app(small_ckpt, initial_node=found.node_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == found.node_id
        hits = str(app.query_one("#hits-findings").render())
        assert app.query_one("#hits-findings").display
        assert "⚠ second-hand leak" in hits and f"origin  {found.origin_nodes[0]}" in hits
        assert f"leak    {found.via_node}'s {found.entry_tool}" in hits
        assert f"entry   {found.entry_id}" in hits and f"reader  {found.node_id}'s" in hits
        await press(pilot, "6")
        rows = [r for r in app.main.audit_pane.rows if r.kind == "second-hand"]
        assert [r.node_id for r in rows] == [f.node_id for f in report.second_hand]
        assert rows[0].text.startswith(found.explanation + " · chain: ")
    assert findings_by_node(report)[found.node_id][-1] is found
