"""The start-up context rebuilt tier by tier (§5.8): field order, caps, dedupe, root cases."""

from __future__ import annotations

from pathlib import Path

from search_helpers import FakeRanker, build_tree, make_entry

from ari_mem_tui.model import AccessEvent, CoreBlocks
from ari_mem_tui.search.replay import replay
from ari_mem_tui.search.tiers import HEADER_1A


def tiers_of(ckpt, node_id, ranker=None):
    result = replay(ckpt, node_id, ranker or FakeRanker(ckpt.entries))
    return {t.key: t for t in result.tiers}


def seeded(ckpt, **context):
    ckpt.core = CoreBlocks(ari_context=context, source="memory_backup.jsonl.gz")
    return ckpt


def test_core_fields_in_fixed_order_with_caps_and_python_repr():
    ckpt = seeded(
        build_tree([0], [0, 0]),
        selected_idea="I" * 1600,
        hardware_spec={"scheduler": "slurm", "partitions": []},
        metric_rationale="  " + "r" * 450 + "  ",
        higher_is_better=False,
        primary_metric="accuracy",
        experiment_goal="never injected",
        empty="",
    )
    tier = tiers_of(ckpt, "node_0001")["1a"]
    assert tier.header == HEADER_1A and tier.exact
    texts = [line.text for line in tier.lines]
    assert texts[0] == "  primary_metric: accuracy"
    assert texts[1] == "  higher_is_better: False"
    assert texts[2] == "  metric_rationale: " + "r" * 400 + " …[truncated]"
    assert texts[3] == "  hardware_spec: {'scheduler': 'slurm', 'partitions': []}"
    assert texts[4] == "  selected_idea: " + "I" * 1500 + " …[truncated]"
    assert [line.truncated for line in tier.lines] == [False, False, True, False, True]
    assert len(texts) == 5


def test_empty_values_are_skipped_and_approximate_core_is_labelled():
    ckpt = seeded(
        build_tree([0], [0, 0]), primary_metric="", hardware_spec={}, higher_is_better=True
    )
    ckpt.core.approximate, ckpt.core.source = True, "idea.json"
    tier = tiers_of(ckpt, "node_0001")["1a"]
    assert [line.text for line in tier.lines] == ["  higher_is_better: True"]
    assert not tier.exact and "idea.json" in tier.note


def test_root_sees_no_core_no_ancestor_tiers():
    ckpt = seeded(build_tree([0], [2, 0]), primary_metric="accuracy")
    tiers = tiers_of(ckpt, "node_root")
    assert tiers["1a"].lines == [] and "root" in tiers["1a"].note
    assert tiers["1b"].lines == [] and tiers["2"].lines == []
    assert "root" in tiers["1b"].note


def summary(i, node, text, ts, kind="result_summary"):
    return make_entry(i, node, text, metadata={"type": kind}, ts=ts)


def test_ancestor_conclusions_root_to_parent_deduped_capped_and_before_start():
    ckpt = build_tree([0, 1, 2], [0, 0, 0, 0])
    ckpt.entries = [
        summary(1, "node_0001", "P" * 130 + " parent", 10.0),
        summary(2, "node_root", "R" * 700, 5.0),
        summary(3, "node_0002", "P" * 130 + " dup", 11.0),  # same first 120 chars: dropped
        summary(4, "node_0002", "not a summary", 12.0, kind="finding"),
        summary(5, "node_0002", "   ", 13.0),
        summary(6, "node_0002", "written after the start", 500.0),
        summary(7, "node_0003", "the node's own", 14.0),
    ]
    ckpt.reindex()
    ckpt.nodes["node_0003"].created_at = "1970-01-01T00:01:40+00:00"  # 100.0
    tier = tiers_of(ckpt, "node_0003")["1b"]
    assert [line.text for line in tier.lines] == ["- " + "R" * 600, "- " + "P" * 130 + " parent"]
    assert [line.truncated for line in tier.lines] == [True, False]
    assert tier.header == "[Established conclusions from ancestor nodes (2):]"


def test_supplement_uses_the_recorded_search_dedupes_against_1b_and_caps():
    ckpt = build_tree([0], [0, 0])
    long_text = "L" * 450
    ckpt.entries = [
        summary(1, "node_root", "conclusion text", 1.0),
        make_entry(2, "node_root", long_text, ts=2.0, letta_id="p2"),
        make_entry(3, "node_root", "only in the replay", ts=3.0),
    ]
    ckpt.entries[0].letta_id = "p1"
    ckpt.reindex()
    # without a log: the replay, approximate
    tier = tiers_of(ckpt, "node_0001")["2"]
    assert not tier.exact and "approximate" in tier.note
    assert [line.text for line in tier.lines] == ["- " + "L" * 400, "- only in the replay"]
    ckpt.access_events = [
        AccessEvent(
            ts=9.0,
            op="read",
            query="direction 1",
            ancestor_ids=["node_root"],
            limit=5,
            reader="node_0001",
            reader_how="startup-search",
            results=[{"entry_id": "p1", "score": 1.0}, {"entry_id": "p2", "score": 0.99}],
        )
    ]
    tier = tiers_of(ckpt, "node_0001")["2"]
    assert tier.exact and "recorded" in tier.note
    assert [line.text for line in tier.lines] == ["- " + "L" * 400]  # p1 is in 1b
    assert tier.lines[0].truncated
    assert tier.header == "[Related prior findings from ancestors (1):]"


def test_metric_contract_tier_only_when_the_file_exists(tmp_path: Path):
    ckpt = build_tree([0], [0, 0], path=tmp_path)
    assert tiers_of(ckpt, "node_0001")["1c"].lines == []
    (tmp_path / "metric_contract.json").write_text('{"claims": []}\n{"more": 1}')
    tier = tiers_of(ckpt, "node_0001")["1c"]
    assert [line.text for line in tier.lines] == ['metric_contract.json: {"claims": []}']
    assert not tier.exact
    assert tiers_of(ckpt, "node_root")["1c"].lines == []
