"""The run audit: scope violations, leaks, rejected CoW writes and load problems, on hand-built
checkpoints (each rule), and on the demo, whose planted leak must be found."""

from __future__ import annotations

from search_helpers import build_tree

from ari_mem_tui.audit import audit
from ari_mem_tui.model import AccessEvent, CowWrite, Problem, TraceCall

# root -> 1 -> 3 ; root -> 2 -> 4
PARENTS = [0, 0, 1, 2]


def read(query, scope, reader, results=(), how="trace_log", collection="node_scope", line=1):
    return AccessEvent(
        ts=float(line),
        op="read",
        collection=collection,
        query=query,
        ancestor_ids=list(scope),
        results=list(results),
        reader=reader,
        reader_how=how,
        source="memory_access.jsonl",
        source_line=line,
    )


def test_a_clean_run_has_no_findings():
    ckpt = build_tree(PARENTS, [1] * 5)
    ckpt.access_events = [
        read(
            "direction 3",
            ["node_root", "node_0001"],
            "node_0003",
            how="startup-search",
            results=[{"entry_id": "x", "src_node_id": "node_0001", "score": 1.0}],
        ),
        read("mine", ["node_root", "node_0001", "node_0003"], "node_0003", line=2),  # self is ok
        read("inherit:get_node_memory", ["node_0001"], "node_0003", how="inherit-burst", line=3),
        read("partial", ["node_0001"], "node_0003", line=4),  # a subset is fine
    ]
    report = audit(ckpt)
    assert report.scope_violations == [] and report.leaks == []
    assert not report.has_findings


def test_sibling_scope_is_a_violation_and_its_hits_are_leaks():
    ckpt = build_tree(PARENTS, [1] * 5)
    ckpt.access_events = [
        read(
            "q",
            ["node_root", "node_0002"],
            "node_0003",
            line=7,
            results=[
                {"entry_id": "x", "src_node_id": "node_0002", "score": 1.0},
                {"entry_id": "y", "src_node_id": "node_root", "score": 0.99},
            ],
        ),
    ]
    report = audit(ckpt)
    assert [(f.node_id, f.targets, f.severity) for f in report.scope_violations] == [
        ("node_0003", ["node_0002"], "error")
    ]
    assert report.scope_violations[0].ref == "memory_access.jsonl line 7 (trace_log)"
    assert [(f.node_id, f.targets) for f in report.leaks] == [("node_0003", ["node_0002"])]
    assert report.has_findings


def test_inherit_reads_outside_the_lineage_are_leaks_but_pipeline_reads_are_not():
    ckpt = build_tree(PARENTS, [1] * 5)
    ckpt.access_events = [
        read("inherit:get_node_memory", ["node_0004"], "node_0003", line=1),
        read("inherit:bulk_get_node_memory", ["node_root", "node_0002"], "node_0001", line=2),
        read("inherit:get_node_memory", ["node_0004"], "pipeline", how="pipeline", line=3),
        read("inherit:get_node_memory", ["node_0004"], None, how="", line=4),
        read("goal", None or [], "bfts-select", collection="react_step", line=5),
    ]
    report = audit(ckpt)
    assert sorted((f.node_id, tuple(f.targets)) for f in report.leaks) == [
        ("node_0001", ("node_0002",)),
        ("node_0003", ("node_0004",)),
    ]
    assert report.scope_violations == []


def test_trace_log_calls_are_audited_and_not_double_counted():
    ckpt = build_tree(PARENTS, [1] * 5)
    ckpt.access_events = [read("q", ["node_0002"], "node_0003", line=9)]
    ckpt.trace_calls = {
        "node_0003": [
            TraceCall(
                node_id="node_0003",
                index=4,
                tool="search_memory",
                args_raw="",
                args={"query": "q", "ancestor_ids": ["node_0002"]},
            ),
            TraceCall(
                node_id="node_0003",
                index=6,
                tool="get_node_memory",
                args_raw="",
                args={"node_id": "node_0004"},
            ),
            TraceCall(
                node_id="node_0003",
                index=8,
                tool="search_memory",
                args_raw="",
                args={"query": "other", "ancestor_ids": ["node_root"]},
                result={"results": [{"node_id": "node_0002", "text": "t"}]},
            ),
            TraceCall(
                node_id="node_0003", index=10, tool="search_memory", args_raw="{trunc", args=None
            ),
        ]
    }
    report = audit(ckpt)
    assert len(report.scope_violations) == 1  # the event and its trace line are one read
    assert report.scope_violations[0].ref.startswith("memory_access.jsonl line 9")
    refs = sorted(f.ref for f in report.leaks)
    assert refs == ["trace_log of node_0003 #6", "trace_log of node_0003 #8"]


def test_rejected_writes_and_load_problems_are_listed():
    ckpt = build_tree(PARENTS, [1] * 5)
    ckpt.writes = [
        CowWrite(
            ts=1.0,
            current_node="node_0003",
            target_node="node_0001",
            tool="add_memory",
            accepted=False,
            reason="node_id does not match current node (CoW violation)",
            source="trace_log",
        ),
        CowWrite(
            ts=2.0,
            current_node="node_0003",
            target_node="node_0003",
            tool="add_memory",
            accepted=True,
            source="access_log",
        ),
    ]
    ckpt.problems = [Problem(file="tree.json", what="skipped 1 node", why="no id")]
    report = audit(ckpt)
    assert [(f.node_id, f.targets) for f in report.rejected_writes] == [
        ("node_0003", ["node_0001"])
    ]
    assert "CoW violation" in report.rejected_writes[0].explanation
    assert [f.explanation for f in report.problems] == ["tree.json: skipped 1 node (no id)"]
    assert not report.has_findings  # rejected writes alone do not fail the audit
