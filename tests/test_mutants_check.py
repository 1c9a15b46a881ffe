"""The run's verdict and how it is reached, pinned where a mutation run found nothing pinning it
(issue 29 item 6; tests/test_mutants.py holds the replay's rules): the words of a node's and a
run's verdict and their counts (search/fidelity.py), which recorded searches a run check
replays and what it counts, stops on or leaves unchecked (search/check.py), which footer-hash
candidate wins and why (search/run_hash.py), and the likely cause named (search/causes.py).
Hand-built checkpoints (tests/search_helpers.py) recorded by a fake ranker: a recording is what
that ranker's replay gives, or it with its first two rows swapped (a search that differs)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from search_helpers import FakeRanker, build_tree, make_entry

from ari_mem_tui.model import AccessEvent
from ari_mem_tui.model.origin import Candidate, HashFinding
from ari_mem_tui.search.causes import late_inserts, likely_cause
from ari_mem_tui.search.check import check_run, check_search, recorded_searches
from ari_mem_tui.search.embed_client import EndpointFailed
from ari_mem_tui.search.embedded import ranking_from_scores
from ari_mem_tui.search.fidelity import (
    EXACT,
    NOT_REPRODUCED,
    STAND_IN,
    UNCHECKED,
    UNVERIFIED,
    node_verdict,
    ranker_fidelity,
    run_verdict,
)
from ari_mem_tui.search.in_memory import InMemoryRanker
from ari_mem_tui.search.replay import ari_score, post_filter, top_k_for
from ari_mem_tui.search.run_hash import find_hash, probe_events

LETTA = "letta:http://letta.test"
BY_LETTA = "ranked by the Letta server (http://letta.test)"
SERVER = "the server's memory: an agent restored with another footer hash, or changed since the run"
LATE = (
    "1 entry stamped before the search reached the memory after it (a late insert): the search"
    " could not rank it, the replay does"
)


# ---------------------------------------------------------------- the verdict's words


def own():
    """The run's own ranker, nothing checked yet (a Letta server)."""
    return ranker_fidelity(SimpleNamespace(name=LETTA), LETTA)


def unverified():
    """A ranker the files cannot tell the run's own or not (the in-memory rule, the run's
    backend unknown)."""
    return ranker_fidelity(SimpleNamespace(name="in-memory"), "in-memory")


def stand_in():
    return ranker_fidelity(SimpleNamespace(name="bm25"), "bm25")


def said(fidelity):
    return fidelity.word, fidelity.exact, fidelity.verified, fidelity.label


def test_a_node_s_verdict_says_why_nothing_was_checked_and_only_then():
    why = "no recorded start-up search for this node"
    unchecked = f"run's ranker, unchecked: {BY_LETTA}"
    assert said(node_verdict(own(), None, why=why)) == (
        UNCHECKED,
        None,
        None,
        f"{unchecked} (no recorded start-up search for this node)",
    )
    assert node_verdict(own(), None).label == unchecked  # nothing to say: as it was
    assert said(node_verdict(own(), True)) == (
        EXACT,
        True,
        True,
        f"exact: {BY_LETTA}, its recorded search reproduced",
    )
    late = node_verdict(own(), False, cause="a late insert")
    assert (late.cause, late.label) == (
        "a late insert",
        f"not reproduced: {BY_LETTA} differs from the recording (likely cause: a late insert)",
    )


def test_an_unverified_ranker_says_what_its_recording_showed_and_stays_unverified():
    base = "unverified: ARI's in-memory backend rule (the run's memory backend is unknown)"
    assert said(node_verdict(unverified(), True)) == (
        UNVERIFIED,
        None,
        True,
        f"{base}; reproduced its recorded search",
    )
    assert node_verdict(unverified(), False).label == f"{base}; differs from the recording"
    assert node_verdict(unverified(), None).label == base
    assert said(node_verdict(stand_in(), False)) == (STAND_IN, False, False, "stand-in: local BM25")


def test_a_run_s_verdict_counts_its_recorded_searches():
    assert said(run_verdict(own(), 4, 4)) == (
        EXACT,
        True,
        True,
        f"exact: {BY_LETTA}, 4 of 4 recorded searches reproduced",
    )
    assert run_verdict(own(), 4, 4).short == f"exact: {LETTA}"
    differs = run_verdict(own(), 4, 3, cause="a late insert")
    assert said(differs) == (
        NOT_REPRODUCED,
        False,
        False,
        f"not reproduced: {BY_LETTA}: 1 of 4 recorded searches differ (likely cause: a late insert)",
    )
    assert differs.cause == "a late insert"
    plain = run_verdict(own(), 4, 3)
    assert (plain.cause, plain.label) == (
        "",
        f"not reproduced: {BY_LETTA}: 1 of 4 recorded searches differ",
    )
    assert said(run_verdict(own(), 0, 0)) == (
        UNCHECKED,
        None,
        None,
        f"run's ranker, unchecked: {BY_LETTA} (no recorded search it could rebuild)",
    )


def test_a_stand_in_s_run_verdict_only_counts():
    assert said(run_verdict(stand_in(), 3, 1)) == (
        STAND_IN,
        False,
        None,
        "stand-in: local BM25; 1 of 3 recorded searches reproduced",
    )
    assert run_verdict(stand_in(), 0, 0).label == "stand-in: local BM25"


def test_the_run_s_model_with_no_handle_to_match_is_unverified_not_a_stand_in():
    plan = SimpleNamespace(shown_url="http://embed.test/v1", matches_handle=None)
    ranker = SimpleNamespace(name="run:small", plan=plan, handle=None, hash_finding=None)
    fidelity = ranker_fidelity(ranker, "run:small", "letta", None, "", "letta")
    assert (fidelity.own, fidelity.word, fidelity.label) == (
        None,
        UNVERIFIED,
        "unverified: small (the run's embedding handle is unknown)",
    )


def test_a_handle_holding_a_colon_stays_whole_in_the_verdict():
    """The run's handle (settings.json's, data) is said as it is, whatever it holds; the
    ranker's own handle is used when settings.json names none."""
    plan = SimpleNamespace(shown_url="http://embed.test/v1", matches_handle=True)
    ranker = SimpleNamespace(name="run:m", plan=plan, handle="odd: handle", hash_finding=None)

    def fidelity():
        return ranker_fidelity(ranker, "run:m", "letta", None, "", "letta")

    model = "the run's embedding model (odd: handle)"
    assert fidelity().label == f"run's ranker, unchecked: {model}"
    assert node_verdict(fidelity(), True).label == f"exact: {model}, its recorded search reproduced"
    assert (
        run_verdict(fidelity(), 2, 2).label
        == f"exact: {model}, 2 of 2 recorded searches reproduced"
    )


# ---------------------------------------------------------------- a run's recorded searches


class OwnRanker(FakeRanker):
    """The fake ranker standing for the run's own (its name a Letta server's); `answers`: the
    name its rankings say ranked them (another: a stand-in answered)."""

    name = LETTA

    def __init__(self, entries, scores=None, answers=LETTA):
        super().__init__(entries, scores)
        self.answers = answers

    def rank(self, query, top_k, before_ts=None):
        scores = [self.fixed.get(e.id, 0.0) for e in self.pool.entries]
        return ranking_from_scores(self.pool, scores, top_k, before_ts, self.answers)


def recording(ckpt, ranker, ts, query, reader, how, differ=False):
    """A read event recording what `ranker` ranks for `query` over the root's pool at `ts`
    (Letta's scores); `differ`: its first two rows swapped."""
    ranking = ranker.rank(query, top_k_for(5), before_ts=ts)
    hits = post_filter(ranking.window, {"node_root"}, None, 5)
    rows = [
        {
            "entry_id": ckpt.entries_by_id[h.entry_id].letta_id,
            "src_node_id": h.node_id,
            "score": ari_score(h.global_rank),
        }
        for h in hits
    ]
    if differ:
        rows[0]["entry_id"], rows[1]["entry_id"] = rows[1]["entry_id"], rows[0]["entry_id"]
    return AccessEvent(
        ts=ts,
        op="read",
        collection="node_scope",
        query=query,
        ancestor_ids=["node_root"],
        limit=5,
        reader=reader,
        reader_how=how,
        results=rows,
    )


def write(ts, passage):
    return AccessEvent(ts=ts, op="write", collection="node_scope", entry_id=passage)


def letta_run(root_entries=6):
    """A root with `root_entries` entries (ts 1000 …, passage ids p0 …) and three children;
    a fixed ranking of the root's entries, first written first."""
    ckpt = build_tree([0, 0, 0], [root_entries, 0, 0, 0])
    for i, entry in enumerate(ckpt.entries):
        entry.letta_id = f"p{i}"
    ckpt.reindex()
    scores = {e.id: 100.0 - i for i, e in enumerate(ckpt.entries)}
    return ckpt, scores


@pytest.fixture
def four_searches():
    """Four recorded searches, one reproduced: node 1's start-up search; node 2's, which
    differs and had a late insert (p5, stamped at 1005, its write logged after the search);
    two later ones that differ (node 1's own, one nobody's), the server's memory their cause."""
    ckpt, scores = letta_run()
    ranker = OwnRanker(ckpt.entries, scores)
    ckpt.access_events = [
        recording(ckpt, ranker, 2000.0, "direction 1", "node_0001", "startup-search"),
        recording(ckpt, ranker, 2100.0, "direction 2", "node_0002", "startup-search", True),
        write(2150.0, "p5"),
        recording(ckpt, ranker, 2200.0, "its question", "node_0001", "trace_log", True),
        recording(ckpt, ranker, 2300.0, "nobody's", None, "unattributed", True),
    ]
    ckpt.access_events[2].joined_entry = "e00005"
    return ckpt, scores


def test_a_run_check_counts_each_kind_names_the_nodes_and_each_cause_with_its_count(four_searches):
    ckpt, scores = four_searches
    steps = []
    check = check_run(ckpt, OwnRanker(ckpt.entries, scores), progress=lambda *a: steps.append(a))
    assert (check.checked, check.reproduced, check.complete) == (4, 1, True)
    assert check.differs == ["node_0002", "node_0001", "unattributed"]
    assert check.by_kind == {
        "start-up": {"checked": 2, "reproduced": 1},
        "other": {"checked": 2, "reproduced": 0},
    }
    assert [(s.node_id, s.kind, s.reproduced, s.cause) for s in check.searches] == [
        ("node_0001", "start-up", True, ""),
        ("node_0002", "start-up", False, LATE),
        ("node_0001", "other", False, SERVER),
        ("", "other", False, SERVER),
    ]
    assert (check.word, check.label) == (
        NOT_REPRODUCED,
        (
            f"not reproduced: {BY_LETTA}: 3 of 4 recorded searches differ (likely causes:"
            f" 2 searches: {SERVER}; 1 search: {LATE})"
        ),
    )
    assert steps == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_where_only_the_start_up_searches_reproduce_another_ranker_is_the_cause():
    """An in-memory run whose start-up search reproduces and whose one other search does not:
    the likely cause is another ranker, not the run's files (the count of each cause, not
    just which were seen, decides)."""
    ckpt = build_tree([0], [0, 0])
    ckpt.entries = [
        make_entry(0, "node_root", "kernel tile cache", ts=1000.0, letta_id="p0"),
        make_entry(1, "node_root", "kernel gpu tile", ts=1001.0, letta_id="p1"),
    ]
    ckpt.reindex()
    rows = [{"entry_id": p, "src_node_id": "node_root", "score": 2 / 3} for p in ("p0", "p1")]
    searched = {"op": "read", "collection": "node_scope", "query": "kernel tile idx", "limit": 5,
                "ancestor_ids": ["node_root"], "reader": "node_0001"}  # fmt: skip
    ckpt.access_events = [
        AccessEvent(ts=2000.0, **searched, reader_how="startup-search", results=rows),
        AccessEvent(ts=2100.0, **searched, reader_how="trace_log", results=rows[::-1]),
    ]
    check = check_run(ckpt, InMemoryRanker(ckpt.entries))
    assert [(s.kind, s.reproduced) for s in check.searches] == [
        ("start-up", True),
        ("other", False),
    ]
    other = (
        "the other searches were recorded by another ranker: 1 of 1 start-up searches"
        " reproduce, none of the 1 others does"
    )
    assert check.searches[1].cause == other
    assert check.label.endswith(f"1 of 2 recorded searches differ (likely cause: {other})")


def test_a_cancelled_check_checks_nothing_more_and_says_interrupted(four_searches):
    ckpt, scores = four_searches
    check = check_run(ckpt, OwnRanker(ckpt.entries, scores), cancelled=lambda: True)
    assert (check.checked, check.complete, check.searches) == (0, False, [])
    assert check.line().endswith(" (interrupted)")


def test_a_check_stops_where_a_stand_in_answered_for_the_run_s_ranker(four_searches):
    ckpt, scores = four_searches
    check = check_run(ckpt, OwnRanker(ckpt.entries, scores, answers="bm25"))
    assert (check.checked, check.complete) == (0, False)
    assert check.note == f"stopped: bm25 answered in place of {LETTA}"


def test_a_recorded_search_is_replayed_with_its_own_limit_else_ari_s_5():
    """A search logged with limit 1 is replayed with 1; one whose limit is missing or not a
    positive count, with ARI's default 5: each reproduces its recording."""
    ckpt, scores = letta_run()
    ranker = OwnRanker(ckpt.entries, scores)
    one = recording(ckpt, ranker, 2000.0, "direction 1", "node_0001", "startup-search")
    one.limit, one.results = 1, one.results[:1]
    zero = recording(ckpt, ranker, 2100.0, "direction 2", "node_0002", "startup-search")
    zero.limit = 0
    unset = recording(ckpt, ranker, 2200.0, "direction 3", "node_0003", "startup-search")
    unset.limit = None
    ckpt.access_events = [one, zero, unset]
    assert [len(e.results) for e in ckpt.access_events] == [1, 5, 5]
    assert [check_search(ckpt, ranker, e) for e in ckpt.access_events] == [(0, LETTA)] * 3


def test_scores_are_compared_as_they_are_only_when_both_sides_are_the_in_memory_rule():
    """The in-memory rule's replay of an in-memory recording: a score that differs counts. Of
    a Letta recording (scores that encode ranks), the same entries in the same order do."""
    for score, differs in ((1 / 3, 1), (0.99, 0)):  # (the rule gives "kernel" 1.0 here)
        ckpt = build_tree([0], [0, 0])
        ckpt.entries = [make_entry(0, "node_root", "kernel tile cache", ts=1000.0, letta_id="p0")]
        ckpt.reindex()
        rows = [{"entry_id": "p0", "src_node_id": "node_root", "score": score}]
        ckpt.access_events = [
            AccessEvent(ts=2000.0, op="read", collection="node_scope", query="kernel", limit=5,
                        ancestor_ids=["node_root"], results=rows),
        ]  # fmt: skip
        event = ckpt.access_events[0]
        assert check_search(ckpt, InMemoryRanker(ckpt.entries), event) == (differs, "in-memory")


def test_only_node_scope_searches_with_a_query_a_scope_and_a_time_are_replayed():
    ckpt, _ = letta_run()
    base = {"ts": 2000.0, "op": "read", "collection": "node_scope", "limit": 5}
    ckpt.access_events = [
        AccessEvent(**base, query="kept", ancestor_ids=["node_root"]),
        AccessEvent(**{**base, "collection": "react_step"}, query="q", ancestor_ids=["r"]),
        AccessEvent(**base, query="inherit:get_node_memory", ancestor_ids=["node_root"]),
        AccessEvent(**base, query="inherit:bulk_get_node_memory", ancestor_ids=["node_root"]),
        AccessEvent(**base, query="no scope", ancestor_ids=[]),
        AccessEvent(**base, query=None, ancestor_ids=["node_root"]),
    ]
    assert [e.query for e in recorded_searches(ckpt)] == ["kept"]


class MovedRunModel(OwnRanker):
    """The run's embedding model on a run moved from where it ran: its footer hash is found
    unknown while its vectors are made (`wait`)."""

    name = "run:small"
    handle = "openai/small"
    plan = SimpleNamespace(shown_url="http://embed.test/v1", matches_handle=True)
    hash_finding = None
    error = None

    def wait(self):
        self.hash_finding = HashFinding(hash="aaaaaaaaaaaa", source="this path", found=False)


def test_a_hash_found_unknown_while_waiting_makes_the_check_a_stand_in_s(four_searches):
    """The verdict is made after the wait, with the footer hash it found: a stand-in, its
    recorded searches counted all the same, no note added."""
    ckpt, scores = four_searches
    check = check_run(ckpt, MovedRunModel(ckpt.entries, scores, answers="run:small"))
    assert (check.word, check.checked, check.reproduced, check.note) == (STAND_IN, 4, 1, "")
    assert check.label == (
        "stand-in: footer hash unknown (the run was moved from where it ran?); --checkpoint-hash"
        " H; 1 of 4 recorded searches reproduced"
    )
    assert check.hash.found is False


class RunModel:
    """The run's embedding model as check_run sees it (its endpoint plan, its wait for
    vectors), on a run it may not have ranked; ranking it fails the test."""

    name = "run:small"
    handle = "openai/small"
    hash_finding = None
    error = None

    def __init__(self, matches: bool):
        self.plan = SimpleNamespace(shown_url="http://embed.test/v1", matches_handle=matches)
        self.waited = 0

    def wait(self):
        self.waited += 1

    def rank(self, *args, **kwargs):
        raise AssertionError("a stand-in is never checked")


@pytest.mark.parametrize(("in_memory", "matches", "waited"), [(False, False, 0), (True, True, 1)])
def test_a_stand_in_is_not_checked_nor_waited_for_unless_it_is_the_run_s_model(
    in_memory, matches, waited
):
    """Another model than the run's: not waited for; the run's model on an in-memory run
    (no embedder ranked it): its vectors waited for, then left unchecked all the same."""
    ckpt, _ = letta_run()
    score = 1 / 3 if in_memory else 1.0  # (keyword overlap: the in-memory backend's)
    rows = [{"entry_id": "p0", "src_node_id": "node_root", "score": score}]
    ckpt.access_events = [
        AccessEvent(ts=2000.0, op="read", collection="node_scope", query="q", limit=5,
                    ancestor_ids=["node_root"], results=rows),
    ]  # fmt: skip
    ranker = RunModel(matches)
    check = check_run(ckpt, ranker)
    assert (check.word, check.checked, ranker.waited) == (STAND_IN, 0, waited)
    assert check.note.startswith("not checked: a stand-in ranks otherwise than the run did")


def test_a_check_by_an_unverified_ranker_says_what_would_make_it_exact():
    """The in-memory rule on a run whose files show no backend: checked, counted, and the
    note says when these replays are exact."""
    ckpt, _ = letta_run()
    ckpt.access_events = [
        AccessEvent(ts=2000.0, op="read", collection="node_scope", query="zzz", limit=5,
                    ancestor_ids=["node_root"], results=[]),
    ]  # fmt: skip
    check = check_run(ckpt, InMemoryRanker(ckpt.entries))
    assert (check.word, check.checked, check.reproduced) == (UNVERIFIED, 1, 1)
    assert check.note == (
        "the run's files do not show its memory backend: if it was ARI's in-memory backend,"
        " these replays are exact"
    )


# ---------------------------------------------------------------- the footer hash


A, B, C = (
    Candidate(hash="aaaaaaaaaaaa", source="this path", path="/here"),
    Candidate(hash="bbbbbbbbbbbb", source="tree.json experiment_file", path="/there"),
    Candidate(hash="cccccccccccc", source="meta.json checkpoint_dir", path="/elsewhere"),
)


@pytest.fixture(scope="module")
def probed():
    """Three start-up searches over a root of 12 entries (a pool of at least MIN_POOL)."""
    ckpt, scores = letta_run(12)
    ranker = OwnRanker(ckpt.entries, scores)
    ckpt.access_events = [
        recording(ckpt, ranker, 2000.0 + k, f"direction {k}", f"node_000{k}", "startup-search")
        for k in (1, 2, 3)
    ]
    return ckpt, scores


def prober(ckpt, scores, good: dict[str, set[str]], made: list[str]):
    """`make_ranker` of find_hash: the candidate's ranker reproduces the queries `good` names
    for its hash, and ranks the others upside down."""
    upside_down = {k: -v for k, v in scores.items()}

    class Probe(FakeRanker):
        error = None

        def __init__(self, hash_):
            super().__init__(ckpt.entries)
            self.good = good.get(hash_, set())

        def rank(self, query, top_k, before_ts=None):
            chosen = scores if query in self.good else upside_down
            fixed = [chosen.get(e.id, 0.0) for e in self.pool.entries]
            return ranking_from_scores(self.pool, fixed, top_k, before_ts, "probe")

    def make(hash_, pool, queries):
        made.append(hash_)
        return Probe(hash_)

    return make


ALL = {"direction 1", "direction 2", "direction 3"}


def found(finding):
    return finding.found, finding.hash, finding.reproduced, finding.probes, finding.tried


def test_the_first_candidate_that_reproduces_every_probe_wins_and_ends_the_search(probed):
    ckpt, scores = probed
    made = []
    finding = find_hash(ckpt, [A, B, C], prober(ckpt, scores, {A.hash: ALL, B.hash: ALL}, made))
    assert found(finding) == (True, A.hash, 3, 3, [A])
    assert made == [A.hash]


def test_else_the_one_reproducing_most_wins_when_that_is_more_than_half(probed):
    ckpt, scores = probed
    good = {A.hash: {"direction 1"}, B.hash: {"direction 1", "direction 2"}}
    finding = find_hash(ckpt, [A, B, C], prober(ckpt, scores, good, []))
    assert found(finding) == (True, B.hash, 2, 3, [A, B, C])
    assert finding.line() == (
        f"hash {B.hash} from tree.json experiment_file, verified on 2 of 3 recorded searches"
    )


def test_of_candidates_reproducing_as_many_the_first_wins(probed):
    ckpt, scores = probed
    good = {A.hash: {"direction 1", "direction 2"}, B.hash: {"direction 2", "direction 3"}}
    finding = find_hash(ckpt, [A, B], prober(ckpt, scores, good, []))
    assert found(finding) == (True, A.hash, 2, 3, [A, B])


def test_probes_are_the_earliest_searches_over_at_least_ten_entries_and_their_pool():
    """A search over 5 entries proves little: the one over exactly 10 (MIN_POOL) is probed
    instead; the probes' pool is every entry stamped up to 1 s after the last of them."""
    ckpt = build_tree([0, 0], [0, 0, 0])
    stamps = [1000.0 + i for i in range(10)] + [1010.5, 1011.0, None]
    ckpt.entries = [make_entry(i, "node_root", f"t{i}", ts=ts) for i, ts in enumerate(stamps)]
    ckpt.reindex()
    rows = [{"entry_id": "p", "src_node_id": "node_root", "score": 1.0}]
    ckpt.access_events = [
        AccessEvent(ts=ts, op="read", collection="node_scope", query=f"at {ts}", limit=5,
                    ancestor_ids=["node_root"], results=rows)
        for ts in (1004.5, 1009.5)
    ]  # fmt: skip
    events, pool = probe_events(ckpt)
    assert [e.query for e in events] == ["at 1009.5"]  # (its pool: 1000 … 1009, ten)
    assert [e.id for e in pool] == [f"e{i:05d}" for i in range(11)]  # (1010.5 in, 1011 not)


def test_half_is_not_enough_and_the_path_s_own_count_is_said(probed):
    """1 of 2 probes is no majority: the hash is unknown; this path's hash is kept with what it
    reproduced (when it was the best), another candidate's count is not."""
    ckpt, scores = probed
    mine = find_hash(ckpt, [A, B], prober(ckpt, scores, {A.hash: {"direction 1"}}, []), count=2)
    assert found(mine) == (False, A.hash, 1, 2, [A, B])
    theirs = find_hash(ckpt, [A, B], prober(ckpt, scores, {B.hash: {"direction 1"}}, []))
    assert found(theirs) == (False, A.hash, 0, 3, [A, B])


def test_with_nothing_recorded_to_reproduce_no_candidate_is_tried():
    ckpt, scores = letta_run()
    assert probe_events(ckpt) == ([], [])
    made = []
    finding = find_hash(ckpt, [A, B], prober(ckpt, scores, {A.hash: ALL}, made))
    assert (finding.found, finding.hash, finding.tried, made) == (None, A.hash, [A, B], [])
    assert finding.note == "no recorded search returned anything to reproduce"


@pytest.mark.parametrize(
    ("failure", "words"),
    [("", "connection refused"), ("timed out after 60 s", "timed out after 60 s")],
)
def test_a_failing_endpoint_ends_the_search_with_its_own_words(probed, failure, words):
    ckpt, _ = probed
    broken = SimpleNamespace(error="connection refused", failure=failure, failure_kind="offline")
    with pytest.raises(EndpointFailed) as raised:
        find_hash(ckpt, [A, B], lambda *a: broken)
    assert (str(raised.value), raised.value.kind) == (words, "offline")


# ---------------------------------------------------------------- the likely cause


def late_run():
    """Three root entries (1000, 1001, 1002); p0's write logged at 1500, p2's at once, and a
    write joined to no entry logged at 2000."""
    ckpt, _ = letta_run(3)
    ckpt.access_events = [write(1002.5, "p2"), write(1500.0, "p0"), write(2000.0, "p-gone")]
    ckpt.access_events[0].joined_entry = "e00002"
    ckpt.access_events[1].joined_entry = "e00000"
    return ckpt


def test_a_late_insert_is_an_entry_stamped_before_the_search_and_written_after_it():
    """p0 (the run's first entry) was stamped before a search at 1200 and written after it;
    a write joined to no entry proves nothing; one logged at the search's own moment is not
    after it; an unknown time counts nothing."""
    ckpt = late_run()
    assert late_inserts(ckpt, 1200.0, 1200.0) == 1
    assert likely_cause(ckpt, None, LETTA, 1200.0, 1200.0) == LATE
    assert late_inserts(ckpt, 1200.0, 1500.0) == 0
    assert late_inserts(ckpt, None, 1200.0) == 0 and late_inserts(ckpt, 1200.0, None) == 0
    assert likely_cause(ckpt, None, LETTA, None, 1200.0) == SERVER


def test_late_inserts_follow_the_run_s_events_when_they_change():
    ckpt = late_run()
    assert late_inserts(ckpt, 1200.0, 1200.0) == 1
    ckpt.access_events = [write(1002.5, "p2")]  # (p0's write gone)
    ckpt.access_events[0].joined_entry = "e00002"
    assert late_inserts(ckpt, 1200.0, 1200.0) == 0
