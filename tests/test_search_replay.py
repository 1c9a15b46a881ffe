"""ARI's scoped search (§5.1–§5.2), replayed: each rule pinned, then the §7 invariants as
property tests over generated trees, with a fake ranker and with the real BM25 ranker."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_helpers import FakeRanker, build_tree, make_entry

from ari_mem_tui.model import AccessEvent
from ari_mem_tui.search.embedded import BM25Ranker, Pool
from ari_mem_tui.search.replay import replay, top_k_for
from ari_mem_tui.search.startup import node_query

# root -> 1 -> 3 ; root -> 2 -> 4 (so 3 and 4 are cousins, 1 and 2 siblings)
PARENTS = [0, 0, 1, 2]


def scored(ckpt, order: list[str]) -> FakeRanker:
    """A fake ranker ranking `order` first (in that order), then the rest in pool order."""
    scores = {eid: float(len(order) - i) for i, eid in enumerate(order)}
    return FakeRanker(ckpt.entries, scores)


def test_query_prefers_direction_then_eval_summary_then_goal_then_default():
    ckpt = build_tree([0], [0, 0])
    node = ckpt.nodes["node_0001"]
    node.status, node.name = "failed", "improve: d"
    node.original_direction, node.eval_summary = "d" * 250, "e"
    assert node_query(ckpt, node) == ("d" * 200, "original_direction")
    node.original_direction = None  # an old tree: a failed node's eval_summary is its direction
    assert node_query(ckpt, node) == ("e", "eval_summary")
    node.eval_summary = ""
    ckpt.experiment_goal = "g" * 3000
    assert node_query(ckpt, node) == ("g" * 200, "goal")
    ckpt.experiment_goal = ""
    assert node_query(ckpt, node) == ("experiment result", "default")


def test_an_empty_direction_searches_with_the_goal_even_after_a_verdict():
    """ARI's query is `(eval_summary or goal_text or ...)` with the eval_summary at start: an
    empty direction meant the goal, whatever verdict the node holds today."""
    ckpt = build_tree([0], [0, 0])
    node = ckpt.nodes["node_0001"]
    node.status, node.name = "success", "improve"
    node.original_direction, node.eval_summary = "", "great [scientific_score=0.80]"
    ckpt.experiment_goal = "# Goal\n" + "g" * 3000
    assert node_query(ckpt, node) == (("# Goal\n" + "g" * 3000)[:200], "goal")


def test_a_succeeded_node_without_its_direction_says_the_verdict_stands_in():
    """§2.6: an old tree has no original_direction, a resumed one writes it back empty (with
    no name); a succeeded node's eval_summary is then its verdict, not what it searched."""
    ckpt = build_tree([0], [0, 0])
    node = ckpt.nodes["node_0001"]
    node.status, node.eval_summary = "success", "verdict"
    for direction, name in ((None, "improve: x"), ("", "")):
        node.original_direction, node.name = direction, name
        assert node_query(ckpt, node) == ("verdict", "eval_summary (verdict: direction lost)")


def test_eval_summary_option_uses_todays_summary():
    ckpt = build_tree([0], [0, 0])
    node = ckpt.nodes["node_0001"]
    node.eval_summary = "after success [scientific_score=0.7]"
    assert node_query(ckpt, node, "eval_summary")[1] == "eval_summary"
    assert node_query(ckpt, node)[0] == "direction 1"


def test_top_k_is_overfetch_or_forty_per_hit():
    assert top_k_for(5) == 200
    assert top_k_for(10) == 400
    assert top_k_for(1) == 200
    ckpt = build_tree(PARENTS, [2, 2, 2, 2, 2])
    ranker = FakeRanker(ckpt.entries)
    result = replay(ckpt, "node_0003", ranker, limit=10)
    assert ranker.calls[-1][1] == 400
    assert result.params == {"limit": 10, "overfetch": 200, "top_k": 400}


def test_post_filter_keeps_ancestor_node_scope_rows_of_this_checkpoint_only():
    ckpt = build_tree(PARENTS, [2, 2, 2, 2, 2], react=3)
    e = ckpt.entries
    foreign = make_entry(90, "node_root", "other checkpoint", ari_checkpoint="abcdefabcdef")
    own_react = make_entry(91, "node_root", "react entry of the root", kind="react_step")
    ckpt.entries = [*e, foreign, own_react]
    ckpt.checkpoint_hash = "0123456789ab"
    ckpt.reindex()
    # rank everything hostile first: sibling, self, react, foreign, then the real ancestors
    sibling = [x.id for x in e if x.node_id == "node_0002"]
    own = [x.id for x in e if x.node_id == "node_0003"]
    order = [*sibling, *own, "e00091", "e00090", "e00000", "e00002"]
    result = replay(ckpt, "node_0003", scored(ckpt, order))
    assert [h.entry_id for h in result.hits] == ["e00000", "e00002", "e00001", "e00003"]
    assert {h.node_id for h in result.hits} <= {"node_root", "node_0001"}
    # global rank counts every row of the window, hostile ones included
    assert result.hits[0].global_rank == len(sibling) + len(own) + 2
    assert result.eligible == 4


def test_rank_order_is_kept_not_resorted_by_time():
    ckpt = build_tree([0], [4, 0])
    newest_first = [x.id for x in reversed(ckpt.entries)]
    result = replay(ckpt, "node_0001", scored(ckpt, newest_first))
    assert [h.entry_id for h in result.hits] == newest_first
    assert [h.global_rank for h in result.hits] == [0, 1, 2, 3]


def test_first_limit_and_rank_scores():
    ckpt = build_tree([0], [8, 0], react=2)
    order = ["e00008", "e00000", "e00009", "e00001", "e00002"]
    result = replay(ckpt, "node_0001", scored(ckpt, order), limit=3)
    assert [h.entry_id for h in result.hits] == ["e00000", "e00001", "e00002"]
    assert [h.global_rank for h in result.hits] == [1, 3, 4]
    assert [h.score for h in result.hits] == [1 - 0.01 * 1, 1 - 0.01 * 3, 1 - 0.01 * 4]
    assert [h.rank for h in result.hits] == [1, 2, 3]


def test_score_floors_at_zero_from_rank_100():
    ckpt = build_tree([0, 0], [2, 0, 120])
    sibling = [x.id for x in ckpt.entries if x.node_id == "node_0002"]
    result = replay(ckpt, "node_0001", scored(ckpt, [*sibling, "e00000", "e00001"]))
    assert [h.global_rank for h in result.hits] == [120, 121]
    assert [h.score for h in result.hits] == [0.0, 0.0]


def test_empty_scope_short_circuits_without_ranking():
    ckpt = build_tree([0], [3, 3])
    ranker = FakeRanker(ckpt.entries)
    result = replay(ckpt, "node_root", ranker, query="anything")
    assert result.hits == [] and result.missed == [] and result.exact_scope == []
    assert ranker.calls == []
    assert result.pool["window"] is None


def test_entries_below_the_window_are_missed_but_in_the_exact_scope():
    ckpt = build_tree([0, 0], [3, 0, 250])
    sibling = [x.id for x in ckpt.entries if x.node_id == "node_0002"]
    result = replay(ckpt, "node_0001", scored(ckpt, sibling))
    assert result.hits == []
    assert result.eligible == 3
    assert [(m.entry_id, m.global_rank) for m in result.missed] == [
        ("e00000", 250),
        ("e00001", 251),
        ("e00002", 252),
    ]
    assert [h.entry_id for h in result.exact_scope] == ["e00000", "e00001", "e00002"]
    assert [h.score for h in result.exact_scope] == [1.0, 0.99, 0.98]
    assert result.pool["window"]["other_branches"] == 200


def test_window_composition_counts_lineage_other_branches_and_react():
    ckpt = build_tree(PARENTS, [2, 2, 2, 2, 2], react=3)
    result = replay(ckpt, "node_0003", FakeRanker(ckpt.entries))
    window = result.pool["window"]
    assert window == {
        "size": 13,
        "node_scope": 10,
        "react_step": 3,
        "lineage": 4,
        "self": 2,
        "other_branches": 4,
        "by_branch": {"node_0001": 4, "node_0002": 4, "node_root": 2},
    }
    assert result.pool["size"] == 13


def test_as_of_uses_the_first_startup_read_else_created_at():
    ckpt = build_tree([0], [4, 0])  # entries ts 1000..1003
    node = ckpt.nodes["node_0001"]
    node.created_at = "1970-01-01T00:16:41+00:00"  # 1001.0
    ranker = FakeRanker(ckpt.entries)
    result = replay(ckpt, "node_0001", ranker, as_of=True)
    assert (result.as_of, result.as_of_source) == (1001.0, "created_at")
    assert ranker.calls[-1][2] == 1001.0
    assert [h.entry_id for h in result.hits] == ["e00000"]
    ckpt.access_events = [
        AccessEvent(ts=1002.5, op="read", query="q", reader="node_0001", reader_how="inherit-burst")
    ]
    result = replay(ckpt, "node_0001", ranker, as_of=True)
    assert (result.as_of, result.as_of_source) == (1002.5, "first start-up read")
    assert [h.entry_id for h in result.hits] == ["e00000", "e00001", "e00002"]
    assert result.pool["size"] == 3
    # as of the node's start is the default; today's pool is asked for, and said
    assert replay(ckpt, "node_0001", ranker).as_of == 1002.5
    today = replay(ckpt, "node_0001", ranker, as_of=False)
    assert (today.as_of, today.as_of_source) == (None, "now")
    assert ranker.calls[-1][2] is None
    node.created_at = None
    ckpt.access_events = []
    unknown = replay(ckpt, "node_0001", ranker)
    assert (unknown.as_of, unknown.as_of_source) == (None, "now: start unknown")
    assert any("start time is unknown" in n for n in unknown.notes)


def test_recorded_hits_join_to_entries_and_marks_differences():
    ckpt = build_tree([0], [4, 0])
    for i, entry in enumerate(ckpt.entries):
        entry.letta_id = f"passage-{i}"
    ckpt.reindex()
    ckpt.access_events = [
        AccessEvent(
            ts=2000.0,
            op="read",
            collection="node_scope",
            query="direction 1",
            ancestor_ids=["node_root"],
            limit=5,
            reader="node_0001",
            reader_how="startup-search",
            results=[
                {"entry_id": "passage-1", "src_node_id": "node_root", "score": 1.0},
                {"entry_id": "passage-0", "src_node_id": "node_root", "score": 0.97},
                {"entry_id": "passage-gone", "src_node_id": "node_root", "score": 0.9},
            ],
        )
    ]
    result = replay(ckpt, "node_0001", scored(ckpt, ["e00000", "e00001", "e00003"]), limit=3)
    rec = result.recorded
    assert rec is not None and rec.query == "direction 1"
    assert [(h.entry_id, h.global_rank, h.mark) for h in rec.hits] == [
        ("e00001", 0, "moved"),
        ("e00000", 3, "moved"),
        ("passage-gone", 10, "recorded-only"),
    ]
    assert rec.hits[0].text == ckpt.entries[1].text
    assert [(h.entry_id, h.mark) for h in result.hits] == [
        ("e00000", "moved"),
        ("e00001", "moved"),
        ("e00003", "replay-only"),
    ]


def test_recorded_search_found_by_the_section_4_5_rule_when_unattributed():
    ckpt = build_tree([0, 0], [1, 0, 0])
    ckpt.access_events = [
        AccessEvent(ts=5.0, op="read", query="direction 2", ancestor_ids=["node_root"], limit=5),
        AccessEvent(ts=6.0, op="read", query="direction 1", ancestor_ids=["node_root"], limit=5),
    ]
    result = replay(ckpt, "node_0001", FakeRanker(ckpt.entries))
    assert result.recorded is not None and result.recorded.ts == 6.0
    assert replay(ckpt, "node_root", FakeRanker(ckpt.entries)).recorded is None


# ---------------------------------------------------------------- properties (§7)
@st.composite
def trees(draw):
    n = draw(st.integers(min_value=1, max_value=14))
    parents = [draw(st.integers(min_value=0, max_value=k)) for k in range(n)]
    counts = draw(st.lists(st.integers(0, 30), min_size=n + 1, max_size=n + 1))
    react = draw(st.integers(0, 20))
    ckpt = build_tree(parents, counts, react=react, seed=draw(st.integers(0, 1000)))
    node = draw(st.sampled_from(sorted(ckpt.nodes)))
    return ckpt, node


def check_invariants(ckpt, node_id, result, window, limit):
    node = ckpt.nodes[node_id]
    allowed = set(node.ancestor_ids)
    # no sibling / cousin / self / react ever in the hits
    assert all(h.node_id in allowed and h.kind == "node_scope" for h in result.hits)
    # rank order preserved: the hits are exactly the first eligible rows of the window
    expected = [e.id for e in window if e.kind == "node_scope" and e.node_id in allowed][:limit]
    assert [h.entry_id for h in result.hits] == expected
    ranks = [h.global_rank for h in result.hits]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    scores = [h.score for h in result.hits]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert all(a >= b for a, b in pairwise(scores))
    assert len(result.hits) <= limit
    if not node.ancestor_ids:
        assert result.hits == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.integers(1, 8), st.randoms(use_true_random=False))
def test_invariants_with_a_fake_ranker(tree, limit, rnd):
    ckpt, node_id = tree
    scores = {e.id: rnd.choice([0.0, 0.5, 1.0, rnd.random()]) for e in ckpt.entries}
    ranker = FakeRanker(ckpt.entries, scores)
    result = replay(ckpt, node_id, ranker, limit=limit)
    window = ranker.rank("", top_k_for(limit)).window
    check_invariants(ckpt, node_id, result, window, limit)
    # every eligible entry is a hit, beyond the limit, or missed: nothing disappears
    in_window = {e.id for e in window}
    missed = {m.entry_id for m in result.missed}
    assert all((m in in_window) is False for m in missed)
    assert len(missed) <= result.eligible


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.integers(1, 8), st.sampled_from(["metric loss", "branch idx", "gpu", "zz"]))
def test_invariants_with_the_bm25_ranker(tree, limit, query):
    ckpt, node_id = tree
    ranker = BM25Ranker(Pool(ckpt.entries))
    result = replay(ckpt, node_id, ranker, query=query, limit=limit)
    assert result.embedder == "bm25"
    window = ranker.rank(query, top_k_for(limit)).window
    check_invariants(ckpt, node_id, result, window, limit)


def startup_read(results: list[dict], query: str = "direction 1") -> AccessEvent:
    return AccessEvent(
        ts=2000.0,
        op="read",
        collection="node_scope",
        query=query,
        ancestor_ids=["node_root"],
        limit=5,
        reader="node_0001",
        reader_how="startup-search",
        results=results,
    )


def with_passage_ids(ckpt):
    for i, entry in enumerate(ckpt.entries):
        entry.letta_id = f"passage-{i}"
    ckpt.reindex()
    return ckpt


def test_marks_compare_rank_global_rank_and_score_and_count_entries_not_sides():
    ckpt = with_passage_ids(build_tree([0], [8, 0]))
    # recorded on a Letta server: e0..e4 at window ranks 0, 2, 4, 6, 8
    ckpt.access_events = [
        startup_read(
            [
                {"entry_id": f"passage-{i}", "src_node_id": "node_root", "score": 1 - 0.02 * i}
                for i in range(5)
            ]
        )
    ]
    # the replay: the same five entries in the same order, but each at window rank i
    same_order = replay(ckpt, "node_0001", scored(ckpt, [f"e0000{i}" for i in range(5)]))
    rec = same_order.recorded
    assert rec is not None and rec.backend == "letta"
    assert [h.global_rank for h in rec.hits] == [0, 2, 4, 6, 8]
    assert [h.mark for h in same_order.hits] == ["", "changed", "changed", "changed", "changed"]
    assert same_order.hits[1].differs == ["global_rank", "score"]
    assert same_order.hits[1].counterpart == {"rank": 2, "global_rank": 2, "score": 0.98}
    assert rec.differences == 4  # four entries differ; eight marked rows, four differences
    # five entries, every one at another rank: 5 differences, not 10
    reversed_ = replay(ckpt, "node_0001", scored(ckpt, [f"e0000{i}" for i in (5, 4, 3, 2, 1)]))
    assert reversed_.recorded.differences == 6  # e0 recorded-only, e5 replay-only, 4 moved
    assert {h.mark for h in reversed_.hits} == {"replay-only", "moved"}
    # exactly the recording: nothing marked, nothing counted
    ckpt.access_events = [
        startup_read(
            [
                {"entry_id": f"passage-{i}", "src_node_id": "node_root", "score": 1 - 0.01 * i}
                for i in range(5)
            ]
        )
    ]
    exact = replay(ckpt, "node_0001", scored(ckpt, [f"e0000{i}" for i in range(5)]))
    assert exact.recorded.differences == 0
    assert not any(h.mark or h.differs for h in [*exact.hits, *exact.recorded.hits])


def test_keyword_overlap_scores_of_the_in_memory_backend_are_not_turned_into_ranks():
    """ARI's in-memory backend scores matched query words / query words (§5.2)."""
    ckpt = with_passage_ids(build_tree([0], [6, 0]))
    scores = [0.25, 0.25, 0.25, 0.125]  # the old reading: "glob 75, 75, 75, 88"
    ckpt.access_events = [
        startup_read(
            [
                {"entry_id": f"passage-{i}", "src_node_id": "node_root", "score": score}
                for i, score in enumerate(scores)
            ]
        )
    ]
    order = ["e00000", "e00001", "e00002", "e00003"]
    result = replay(ckpt, "node_0001", scored(ckpt, order), limit=4)
    rec = result.recorded
    assert rec.backend == "in_memory" and "in-memory" in rec.ranker
    assert [(h.global_rank, h.score) for h in rec.hits] == [(-1, s) for s in scores]
    # same entries at the same ranks: the unknown global ranks and the incomparable scores
    # are not differences
    assert rec.differences == 0 and not any(h.mark for h in result.hits)
    assert "in-memory" in result.fidelity.note and "different rankers" in result.fidelity.note
    assert result.fidelity.exact is False
    assert any("keyword overlap" in n for n in result.notes)
    # one in-memory 0.5 on the 0.01 grid does not make the recording Letta's
    from ari_mem_tui.search.replay import recorded_backend

    assert recorded_backend([0.5, 0.5]) == "in_memory"  # ties: no two Letta rows share a rank
    assert recorded_backend([0.444, 0.333]) == "in_memory"
    assert recorded_backend([0.99, 0.97, 0.9, 0.0]) == "letta"
    assert recorded_backend([0.0, 0.0]) == "letta-substring"
    assert recorded_backend([]) == "unknown"


def test_a_replay_with_another_query_is_not_compared_with_the_recording():
    ckpt = with_passage_ids(build_tree([0], [3, 0]))
    ckpt.access_events = [
        startup_read([{"entry_id": "passage-2", "src_node_id": "node_root", "score": 1.0}])
    ]
    result = replay(ckpt, "node_0001", scored(ckpt, ["e00000"]), query="something else")
    assert result.query_source == "custom" and result.recorded is not None
    assert result.recorded.differences == 0 and not any(h.mark for h in result.hits)


def test_the_fidelity_names_the_recordings_embedder_from_settings_json():
    """settings.json's letta_embedding_config (ARI's dashboard keeps it there) names what a
    Letta recording was ranked by: the local ranker's own handle means no difference to excuse;
    another handle is named in the note; none keeps the note real runs have always had."""
    from ari_mem_tui.search.embedder import LETTA_HANDLE

    ckpt = with_passage_ids(build_tree([0], [6, 0]))
    rows = [
        {"entry_id": f"passage-{i}", "src_node_id": "node_root", "score": 1 - 0.01 * i}
        for i in range(5)
    ]
    ckpt.access_events = [startup_read(rows)]
    order = [f"e0000{i}" for i in range(5)]

    class NamedRanker(FakeRanker):
        def __init__(self, name: str):
            super().__init__(scored(ckpt, order).pool.entries, scored(ckpt, order).fixed)
            self.name = name

        def rank(self, query, top_k, before_ts=None):
            ranking = super().rank(query, top_k, before_ts)
            ranking.used = self.name
            return ranking

    unnamed = replay(ckpt, "node_0001", NamedRanker("minilm"))
    assert unnamed.recorded.ranker == "a Letta server's embedder (scores 1 − 0.01·rank)"
    assert unnamed.fidelity.exact is False
    assert unnamed.fidelity.label == "stand-in: local MiniLM"
    assert unnamed.fidelity.note == (
        "recorded by a Letta server's embedder (scores 1 − 0.01·rank), replayed with local "
        "MiniLM: different rankers, so differences are expected; replay with --letta-url on "
        "the same server, or --embedder run with --embed-url and --embed-model naming the run's "
        "embedding model, and they should vanish"
    )
    ckpt.letta_embedding_config = LETTA_HANDLE
    same = replay(ckpt, "node_0001", NamedRanker("minilm"))
    assert same.fidelity.note == "" and same.recorded.differences == 0
    assert same.fidelity.exact is True and same.fidelity.verified is True
    assert same.fidelity.label == (
        f"exact: local MiniLM, the run's embedding model ({LETTA_HANDLE}), its recorded search"
        " reproduced"
    )
    assert f"this tool's minilm ({LETTA_HANDLE}) per settings.json" in same.recorded.ranker
    stand_in = replay(ckpt, "node_0001", NamedRanker("bm25"))
    assert "replayed with local BM25: different rankers" in stand_in.fidelity.note
    assert stand_in.fidelity.note.endswith("; replay with local minilm and they should vanish")
    ckpt.letta_embedding_config = "openai/text-embedding-3-small"
    other = replay(ckpt, "node_0001", NamedRanker("minilm"))
    assert "embedding with openai/text-embedding-3-small per settings.json" in other.fidelity.note
    assert "--embedder run ranks with the run's embedding model" in other.fidelity.note
    assert other.fidelity.note.endswith("--letta-url on the same server, and they should vanish")
    letta = replay(ckpt, "node_0001", NamedRanker("letta:http://x"))
    assert letta.fidelity.note == "" and letta.fidelity.exact is True
    assert letta.fidelity.label == (
        "exact: ranked by the Letta server (http://x), its recorded search reproduced"
    )
    # an in-memory recording is no Letta server's: the handle does not apply to it
    ckpt.letta_embedding_config = LETTA_HANDLE
    ckpt.access_events = [startup_read([{**rows[0], "score": 0.25}, {**rows[1], "score": 0.25}])]
    overlap = replay(ckpt, "node_0001", NamedRanker("minilm"))
    assert overlap.recorded.backend == "in_memory" and "in-memory" in overlap.fidelity.note
    assert overlap.fidelity.exact is False and overlap.fidelity.label.startswith("stand-in")


def test_the_in_memory_rule_is_exact_on_in_memory_runs_only():
    """ARI's in-memory backend rule is the run's own ranking on a run that backend recorded,
    with or without a recording to compare (the run's files decide then): "run's ranker,
    unchecked" until a recording checks it; on a Letta run it is a stand-in, and on a run whose
    backend the files do not show, unverified. No embedder, no server, stands in exactly for
    the in-memory backend."""
    from types import SimpleNamespace

    from ari_mem_tui.search.fidelity import ranker_fidelity

    rule = SimpleNamespace(name="in-memory")
    own = ranker_fidelity(rule, "in-memory", "in_memory")
    assert own.own is True and own.exact is None  # its own, nothing checked yet
    assert own.label == "run's ranker, unchecked: ARI's in-memory backend rule"
    assert own.note == "" and own.short == "unchecked: in-memory"
    unrecorded = ranker_fidelity(rule, "in-memory", "unknown", run="in_memory")
    assert unrecorded.own is True and unrecorded.label == own.label
    on_letta = ranker_fidelity(rule, "in-memory", "letta", recorded="a Letta server's embedder")
    assert on_letta.exact is False and on_letta.label == "stand-in: ARI's in-memory backend rule"
    assert on_letta.note.startswith(
        "recorded by a Letta server's embedder, replayed with ARI's in-memory backend rule:"
        " different rankers"
    )
    unknown = ranker_fidelity(rule, "in-memory")
    assert unknown.exact is None and unknown.kind == "unverified"
    assert "do not show its memory backend" in unknown.note
    for used in ("letta:http://x", "minilm"):
        other = ranker_fidelity(SimpleNamespace(name=used), used, "unknown", run="in_memory")
        assert other.exact is False and "the run recorded with ARI's in-memory" in other.label
        recorded = ranker_fidelity(SimpleNamespace(name=used), used, "in_memory")
        assert recorded.note.endswith("replay with --embedder in-memory (the backend's own rule)"
                                      " and they vanish")  # fmt: skip
