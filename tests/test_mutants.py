"""Rules of the fidelity core that a mutation run found no test pinning (issue 29 item 6), each
pinned here with the value the rule gives, on hand-built checkpoints (tests/search_helpers.py):
which recorded search is a node's start-up search, the as-of cut in every pool, a mark at
global rank 0, the order of entries without a time, a zero vector's rank, the near-tie note,
why a replay cannot check itself, a recorded hit the backup lacks, Letta's time past its range,
and which passages a leak returned (tests/test_mutants_check.py: the run's verdict).
`python scripts/mutation.py` runs the mutants again."""

from __future__ import annotations

import numpy as np
import pytest
from search_helpers import FakeRanker, build_tree, make_entry

from ari_mem_tui.audit import audit
from ari_mem_tui.model import AccessEvent, Hit, RecordedSearch, TraceCall
from ari_mem_tui.search.embedded import Pool
from ari_mem_tui.search.in_memory import InMemoryRanker
from ari_mem_tui.search.replay import eligible_entries, mark_differences, replay, unchecked_why
from ari_mem_tui.search.run_ranker import NEVER, LettaAsOfPool, RunModelRanker, micros
from ari_mem_tui.search.startup import recorded_startup_search


def read(ts, query, scope, reader=None, how=None, limit=5, results=()):
    return AccessEvent(
        ts=ts,
        op="read",
        collection="node_scope",
        query=query,
        ancestor_ids=list(scope),
        limit=limit,
        reader=reader,
        reader_how=how,
        results=list(results),
        source="memory_access.jsonl",
        source_line=int(ts),
    )


# ---------------------------------------------------------------- the start-up search


def test_a_node_s_own_llm_search_is_never_taken_for_its_start_up_search():
    """A node whose start-up search the log lost, but which searched later itself: it has no
    recorded start-up search (its LLM search is not one, although neither is an inherit)."""
    ckpt = build_tree([0], [2, 0])
    node = ckpt.nodes["node_0001"]
    ckpt.access_events = [
        read(3.0, "inherit:get_node_memory", ["node_root"], "node_0001", "inherit-burst"),
        read(9.0, "its own question", ["node_root"], "node_0001", "trace_log"),
    ]
    assert recorded_startup_search(ckpt, node) == (None, "")
    result = replay(ckpt, "node_0001", FakeRanker(ckpt.entries))
    assert result.recorded is None and result.fidelity.verified is None


def test_the_fallback_match_needs_the_query_the_scope_and_limit_5():
    """Unattributed reads: only the one with the node's query, its scope AND limit 5 is its
    start-up search; the same query under another scope, or with another limit, is not."""
    ckpt = build_tree([0, 0], [1, 0, 0])
    node = ckpt.nodes["node_0001"]
    for wrong in (
        read(4.0, "direction 1", ["node_root", "node_0002"]),  # another scope
        read(4.5, "direction 1", ["node_root"], limit=40),  # another limit (the pipeline's)
    ):
        ckpt.access_events = [wrong, read(6.0, "direction 1", ["node_root"])]
        event, how = recorded_startup_search(ckpt, node)
        assert (event.ts, how) == (6.0, "matched by query, scope and limit (§4.5)")
        ckpt.access_events = [wrong]
        assert recorded_startup_search(ckpt, node) == (None, "")


def test_a_root_never_has_a_recorded_search():
    """ARI returns before searching when the scope is empty: no read a root could have made
    is its start-up search, even one logged with its query and no scope."""
    ckpt = build_tree([0], [1, 0])
    root = ckpt.nodes["node_root"]
    ckpt.access_events = [read(5.0, "root direction", [])]
    assert recorded_startup_search(ckpt, root) == (None, "")


def test_an_empty_direction_is_matched_by_the_goal_it_searched_with():
    """A node the planner gave no direction searched with the experiment goal: its
    unattributed search is found by that query (not ARI's fixed "experiment result")."""
    ckpt = build_tree([0], [1, 0])
    node = ckpt.nodes["node_0001"]
    node.original_direction, node.name = "", "improve"
    ckpt.experiment_goal = "# Goal\n" + "g" * 300
    goal = ckpt.experiment_goal[:200]
    ckpt.access_events = [
        read(5.0, "experiment result", ["node_root"]),
        read(6.0, goal, ["node_root"]),
    ]
    event, how = recorded_startup_search(ckpt, node)
    assert (event.ts, event.query) == (6.0, goal) and how.startswith("matched by query")


# ---------------------------------------------------------------- as of the node's start


def test_entries_written_from_the_node_s_start_on_are_neither_eligible_nor_missed():
    """Eligible (and missed) entries are the ancestors' entries written before the node's
    search: one stamped at its very moment or after was not there. 200 react steps fill the
    window, so every eligible entry is missed."""
    ckpt = build_tree([0], [0, 0])
    steps = [make_entry(i, "", f"step {i}", kind="react_step", ts=1.0 + i) for i in range(200)]
    ckpt.entries = steps + [
        make_entry(200 + i, "node_root", f"r{i}", ts=1000.0 + i) for i in range(6)
    ]
    ckpt.reindex()
    own = ckpt.entries_by_node["node_root"]  # the root's entries, in time
    start = own[3].ts  # entries 0, 1, 2 were there
    found = eligible_entries(ckpt, ["node_root"], None, start)
    assert [e.id for e in found] == [e.id for e in own[:3]]
    ckpt.access_events = [read(start, "direction 1", ["node_root"], "node_0001", "startup-search")]
    react = {e.id: 1.0 for e in ckpt.entries if e.kind == "react_step"}
    result = replay(ckpt, "node_0001", FakeRanker(ckpt.entries, react), limit=1)
    assert result.eligible == 3 and result.hits == []
    assert [m.entry_id for m in result.missed] == [e.id for e in own[:3]]


@pytest.mark.parametrize("make", ["in-memory", "letta", "plain"])
def test_the_as_of_cut_is_strict_in_every_pool(make):
    """ARI stamps a search's read event once the search returned: an entry stamped at that
    moment came after it. The in-memory rule, the plain pool and Letta's as-of pool agree."""
    entries = [make_entry(i, "node_root", f"kernel {i}", ts=10.0 + i) for i in range(4)]
    cut = 12.0  # entry 2's own moment
    if make == "in-memory":
        window = InMemoryRanker(entries).rank("kernel", 200, before_ts=cut).window
        assert [e.id for e in window] == ["e00000", "e00001"]
    elif make == "letta":
        pool = LettaAsOfPool(entries)
        assert list(pool.kept(slice(None), cut)) == [True, True, False, False]
        assert pool.size_before(cut) == 2 and pool.size_before(cut + 1e-6) == 3
    else:
        pool = Pool(entries)
        assert list(pool.kept(slice(None), cut)) == [True, True, False, False]
        assert pool.size_before(cut) == 2


def test_in_memory_entries_without_a_time_come_first_and_are_always_in_the_pool():
    """The in-memory store keeps insertion order; an entry without ts has no place in time:
    it is read as written first (ties of score keep that order), and no as-of cut drops it."""
    timed = make_entry(0, "node_root", "kernel tile", ts=5.0)
    untimed = make_entry(1, "node_root", "kernel tile", ts=None)
    ranking = InMemoryRanker([timed, untimed]).rank("kernel", 200, before_ts=6.0)
    assert [e.id for e in ranking.window] == ["e00001", "e00000"]
    assert ranking.pool_size == 2
    late = InMemoryRanker([timed, untimed]).rank("kernel", 200, before_ts=1.0)
    assert [e.id for e in late.window] == ["e00001"]


# ---------------------------------------------------------------- marks


def hit(entry, rank, glob, score):
    return Hit(
        rank=rank,
        global_rank=glob,
        score=score,
        entry_id=entry,
        node_id="n",
        kind="node_scope",
        text="t",
    )


def test_a_global_rank_of_0_is_compared_like_any_other():
    """Recorded at window rank 0 (score 1.0), replayed at rank 1: the global rank and the
    score differ, and the entry counts once."""
    recorded, replayed = [hit("a", 1, 0, 1.0)], [hit("a", 1, 1, 0.99)]
    assert mark_differences(replayed, recorded) == 1
    assert (replayed[0].mark, replayed[0].differs) == ("changed", ["global_rank", "score"])
    assert recorded[0].counterpart == {"rank": 1, "global_rank": 1, "score": 0.99}
    same = [hit("a", 1, 0, 1.0)]
    assert mark_differences(same, [hit("a", 1, 0, 1.0)]) == 0 and same[0].mark == ""
    unknown = [hit("a", 1, -1, 0.25)]  # a rank the recording does not know: not compared
    assert mark_differences([hit("a", 1, 0, 1.0)], unknown) == 0


def test_a_recorded_score_of_0_has_no_global_rank():
    """Letta's score `1 − 0.01·r` reaches 0 at rank 100: past it the rank is unknown (-1),
    while a score of 1.0 is rank 0."""
    result = replay_recorded([("p0", 1.0), ("p1", 0.5), ("p2", 0.0)])
    assert [h.global_rank for h in result.recorded.hits] == [0, 50, -1]


def replay_recorded(recorded: list[tuple[str, float]]):
    """Node 1's replay (fake ranker) where the root's 3 entries are passages p0, p1, p2 and its
    start-up search recorded `recorded` (passage id, score) from the root."""
    ckpt = build_tree([0], [3, 0])
    for i, entry in enumerate(ckpt.entries):
        entry.letta_id = f"p{i}"
    ckpt.reindex()
    rows = [{"entry_id": p, "src_node_id": "node_root", "score": s} for p, s in recorded]
    ckpt.access_events = [
        read(9e9, "direction 1", ["node_root"], "node_0001", "startup-search", results=rows)
    ]
    return replay(ckpt, "node_0001", FakeRanker(ckpt.entries))


# ---------------------------------------------------------------- the run's model


def ranker_with(vectors: np.ndarray, query: np.ndarray, entries=None) -> RunModelRanker:
    """A run ranker over `entries` (default: len(vectors) of the root's) whose vectors are set
    by hand (no endpoint)."""
    if entries is None:
        entries = [make_entry(i, "node_root", f"t{i}", ts=float(i)) for i in range(len(vectors))]
    ranker = RunModelRanker(
        LettaAsOfPool(entries), [], None, deadline=1, error="none", stand_in=lambda: None
    )
    ranker.error = None  # (built without an endpoint: the vectors below are its own)
    ranker._rows = vectors.astype(np.float32)
    ranker._norms = np.einsum("ij,ij->i", ranker._rows, ranker._rows, dtype=np.float64)
    ranker._row_of = np.arange(len(vectors))
    ranker._vectors["q"] = query.astype(np.float32)
    return ranker


def test_a_zero_vector_ranks_last_with_a_rank_of_its_own():
    vectors = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    ranker = ranker_with(vectors, np.array([1.0, 0.2]))
    scores = ranker.scores_of(ranker._vectors["q"])
    assert scores[0] == -3.0 and np.isfinite(scores).all()  # NaN: below every real distance
    ranking = ranker.rank("q", top_k=3)
    assert [e.id for e in ranking.window] == ["e00001", "e00002", "e00000"]


def test_near_ties_are_counted_in_the_window_and_at_its_edge():
    """Neighbours closer than 1e-6 in cosine distance are said; so is the window's last
    against the best outside it; a clear gap is not."""
    a = np.array([1.0, 0.0])
    close = np.array([1.0, 1e-4])  # distance ~5e-9 from a's
    far = np.array([0.0, 1.0])
    ranker = ranker_with(np.array([a, close, far]), a)
    assert "1 near-tie" in ranker.rank("q", top_k=3).note
    edge = ranker.rank("q", top_k=1).note  # the tie is between the window and outside it
    assert "1 near-tie at the window's ranks" in edge
    apart = ranker_with(np.array([a, far]), a)
    assert "near-tie" not in apart.rank("q", top_k=2).note


# ---------------------------------------------------------------- what a leak returned


def test_a_logged_bulk_leak_lists_the_outside_node_s_entries_written_before_it():
    """`inherit:bulk_get_node_memory` logs counts only: the passages are that node's entries
    written before the read, each marked outside the reader's lineage or not."""
    ckpt = build_tree([0, 0], [1, 2, 2])  # root; 1 and 2 its children (entries at 1000 …)
    late = ckpt.entries_by_node["node_0002"][-1].ts
    event = read(
        late, "inherit:bulk_get_node_memory", ["node_root", "node_0002"], "node_0001", "trace_log"
    )
    event.results = [
        {"src_node_id": "node_root", "count": 1},
        {"src_node_id": "node_0002", "count": 2},
    ]
    ckpt.access_events = [event]
    [leak] = audit(ckpt).leaks
    passages = [(p.node_id, p.entry_id, p.outside) for p in leak.passages]
    first = ckpt.entries_by_node["node_0002"][0].id
    assert passages == [("node_root", "e00000", False), ("node_0002", first, True)]


def test_a_traced_search_leak_lists_what_its_result_line_returned():
    ckpt = build_tree([0, 0], [1, 1, 1])
    other = ckpt.entries_by_node["node_0002"][0]
    other.letta_id = "p-other"
    ckpt.reindex()
    ckpt.trace_calls = {
        "node_0001": [
            TraceCall(
                node_id="node_0001",
                index=3,
                tool="search_memory",
                args_raw="",
                args={"query": "q", "ancestor_ids": ["node_root"]},
                result={
                    "results": [
                        {"node_id": "node_0002", "entry_id": "p-other", "text": "x"},
                        {"node_id": "node_root", "text": "the root's own"},
                    ]
                },
            )
        ]
    }
    [leak] = audit(ckpt).leaks
    got = [(p.node_id, p.entry_id, p.text, p.outside) for p in leak.passages]
    assert got == [
        ("node_0002", other.id, other.text, True),
        ("node_root", None, "the root's own", False),
    ]


# ---------------------------------------------------------------- what a replay says


class NotedRanker(FakeRanker):
    """A fake ranker whose ranking carries a note, and which says why the run's backend is
    unknown (as `run.local_ranker` makes MiniLM say on a run whose signals disagree)."""

    backend_note = "the run's files disagree on its memory backend"

    def rank(self, query, top_k, before_ts=None):
        ranking = super().rank(query, top_k, before_ts)
        ranking.note = "ranked with BM25 meanwhile"
        return ranking


def test_a_replay_says_its_ranker_s_notes_and_a_root_says_it_searches_nothing():
    ckpt = build_tree([0], [2, 0])
    result = replay(ckpt, "node_0001", NotedRanker(ckpt.entries))
    at = result.notes.index("ranked with BM25 meanwhile")
    assert result.notes[at + 1] == "the run's files disagree on its memory backend"
    plain = replay(ckpt, "node_0001", FakeRanker(ckpt.entries))
    assert "" not in plain.notes and not any("BM25" in n for n in plain.notes)
    root = replay(ckpt, "node_root", FakeRanker(ckpt.entries))
    assert "empty ancestor_ids (a root): ARI returns no results without searching" in root.notes
    assert root.hits == [] and root.fidelity.verified is None


def test_the_in_memory_rule_compares_recorded_scores_as_they_are():
    """Both sides scored by ARI's keyword rule: a score that differs is marked, although
    neither side has a global rank."""
    ckpt = build_tree([0], [0, 0])
    ckpt.entries = [make_entry(0, "node_root", "kernel tile cache", ts=1.0, letta_id="u0")]
    ckpt.reindex()
    rows = [{"entry_id": "u0", "src_node_id": "node_root", "score": 1 / 3}]  # the rule gives 1.0
    ckpt.access_events = [
        read(5.0, "kernel", ["node_root"], "node_0001", "startup-search", results=rows)
    ]
    result = replay(ckpt, "node_0001", InMemoryRanker(ckpt.entries), query="kernel")
    assert result.windowless and result.recorded.differences == 1
    assert result.hits[0].differs == ["score"] and result.hits[0].score == 1.0


def test_today_s_pool_says_why_ranks_moved_and_as_of_says_nothing_of_it():
    ckpt = build_tree([0], [3, 0])
    for i, entry in enumerate(ckpt.entries):
        entry.letta_id = f"p{i}"
    ckpt.reindex()
    first = ckpt.entries_by_node["node_root"][0]
    rows = [{"entry_id": first.letta_id, "src_node_id": "node_root", "score": 1.0}]
    start = ckpt.entries_by_node["node_root"][1].ts
    ckpt.access_events = [
        read(start, "direction 1", ["node_root"], "node_0001", "startup-search", results=rows)
    ]
    later = {e.id: 2.0 for e in ckpt.entries_by_node["node_root"][1:]}  # written after it: first
    today = replay(ckpt, "node_0001", FakeRanker(ckpt.entries, later), as_of=False)
    said = "today's pool was ranked: entries written after the node started take window ranks"
    assert today.recorded.differences > 0 and any(n.startswith(said) for n in today.notes)
    as_of = replay(ckpt, "node_0001", FakeRanker(ckpt.entries, later))
    assert as_of.recorded.differences == 0 and not any(n.startswith(said) for n in as_of.notes)


def test_ranks_left_for_later_are_filled_when_asked():
    """`exact_ranks=False` (the TUI): the missed entries' global ranks wait until the missed
    list is shown; `resolve_ranks` fills them in."""
    ckpt = build_tree([0], [0, 0])
    steps = [make_entry(i, "", f"s{i}", kind="react_step", ts=1.0 + i) for i in range(200)]
    mine = [make_entry(200 + i, "node_root", f"r{i}", ts=500.0 + i) for i in range(2)]
    ckpt.entries = steps + mine
    ckpt.reindex()
    scores = {e.id: 1.0 for e in steps}
    result = replay(ckpt, "node_0001", FakeRanker(ckpt.entries, scores), exact_ranks=False)
    assert result.ranks_pending and [m.global_rank for m in result.missed] == [None, None]
    result.resolve_ranks()
    assert not result.ranks_pending and [m.global_rank for m in result.missed] == [200, 201]


# ---------------------------------------------------------------- deferred global ranks


class LazyRanker:
    """A ranker whose global ranks beyond the window are deferred (embedded.lazy_ranking, as
    MiniLM's are): fixed, distinct scores per entry."""

    name = "lazy-fake"

    def __init__(self, entries, seed: int = 3, crowd: tuple[str, ...] = ()):
        self.pool = Pool(entries)
        self.scores = np.random.default_rng(seed).permutation(len(entries)).astype(np.float64)
        self.scores += [len(entries) if e.node_id in crowd else 0 for e in entries]

    def rank(self, query, top_k, before_ts=None):
        from ari_mem_tui.search.embedded import lazy_ranking, top_window

        scores = np.where(self.pool.kept(slice(None), before_ts), self.scores, -np.inf)
        window = [i for i in top_window(scores, top_k) if np.isfinite(scores[i])]
        size = self.pool.size_before(before_ts)
        return lazy_ranking(self.pool, window, size, lambda: scores, before_ts, self.name)


def rows(result):
    missed = [(m.entry_id, m.global_rank) for m in result.missed]
    hits = [(h.entry_id, h.rank, h.global_rank, h.score) for h in result.hits]
    scope = [(h.entry_id, h.rank, h.global_rank, h.score) for h in result.exact_scope]
    return missed, hits, scope


@pytest.mark.parametrize(("seed", "crowded"), [(3, False), (4, False), (5, True), (6, True)])
def test_deferred_global_ranks_resolve_to_the_exact_replay_s(seed, crowded):
    """The TUI's fast replay (exact_ranks=False) leaves the global ranks outside the window
    unknown until `resolve_ranks()`; then every missed entry, hit and exact-scope row is the
    exact replay's, in the same order (a chain of 120-entry nodes beside a sibling branch: the
    window of 200 holds part of the lineage, or, crowded, none of it: the branch beside it
    outranks all, and the exact scope's rows are all beyond the window)."""
    ckpt = build_tree([0, 1, 2, 0, 4], [120, 120, 120, 0, 120, 120], seed=seed)
    crowd = ("node_0004", "node_0005") if crowded else ()
    ranker = LazyRanker(ckpt.entries, seed, crowd)
    exact = replay(ckpt, "node_0003", ranker, query="q", with_tiers=False)
    fast = replay(ckpt, "node_0003", ranker, query="q", with_tiers=False, exact_ranks=False)
    assert len(exact.missed) > 20 and all(m.global_rank >= 200 for m in exact.missed)
    assert len(exact.exact_scope) == 5
    beyond = [h.global_rank >= 200 for h in exact.exact_scope]
    if crowded:  # (the window is the other branch's: no hit, every scope row beyond it)
        assert all(beyond) and exact.hits == []
    else:
        assert not any(beyond) and len(exact.hits) == 5
    assert fast.ranks_pending and any(m.global_rank is None for m in fast.missed)
    fast.resolve_ranks()
    assert not fast.ranks_pending
    assert rows(fast) == rows(exact)


# ---------------------------------------------------------------- what a replay cannot check


class OwnRanker(FakeRanker):
    """The fake ranker standing for the run's own (its name, and its rankings', a Letta
    server's)."""

    name = "letta:http://letta.test"

    def rank(self, query, top_k, before_ts=None):
        ranking = super().rank(query, top_k, before_ts)
        ranking.used = self.name
        return ranking


RECORDED_40 = RecordedSearch(ts=5.0, query="q", limit=40, hits=[], backend="letta")


@pytest.mark.parametrize(
    ("scope", "recorded", "compared", "before", "limit", "why"),
    [
        (set(), RECORDED_40, True, 5.0, 5, "a root: ARI searches nothing"),
        ({"r"}, None, True, 5.0, 5, "no recorded start-up search for this node"),
        ({"r"}, RECORDED_40, False, 5.0, 5, "its recorded search had another query"),
        ({"r"}, RECORDED_40, True, None, 5, "today's pool, not the one its recorded search ranked"),
        ({"r"}, RECORDED_40, True, 5.0, 5, "limit 5, its recorded search's 40"),
        ({"r"}, RECORDED_40, True, 5.0, 40, ""),
    ],
)
def test_why_a_replay_cannot_check_itself(scope, recorded, compared, before, limit, why):
    """Each reason in turn (each case would fall through to the next reason without its own)."""
    assert unchecked_why(scope, recorded, compared, before, limit) == why


def test_the_run_s_ranker_on_a_root_says_why_it_is_unchecked():
    ckpt = build_tree([0], [2, 0])
    result = replay(ckpt, "node_root", OwnRanker(ckpt.entries))
    assert result.fidelity.label == (
        "run's ranker, unchecked: ranked by the Letta server (http://letta.test)"
        " (a root: ARI searches nothing)"
    )


def test_a_recorded_hit_that_joins_no_entry_keeps_its_rank_id_and_node_and_is_counted():
    """A recorded passage id the backup lacks: shown at its recorded rank with its id, node and
    global rank, no text; the notes say how the recording was found and that one hit is
    unjoined."""
    result = replay_recorded([("p0", 1.0), ("p-gone", 0.99), ("p1", 0.98)])
    got = [(h.rank, h.entry_id, h.node_id, h.global_rank, h.text) for h in result.recorded.hits]
    assert got[1] == (2, "p-gone", "node_root", 1, "")
    assert [h.rank for h in result.recorded.hits] == [1, 2, 3]
    assert "recorded start-up search: attributed by the loader (startup-search)" in result.notes
    assert "1 recorded hit could not be joined to an entry's text" in result.notes
    # (p1 moved, p-gone and e00002 on one side only; the node's own pool was ranked: no word
    # of today's)
    assert result.recorded.differences == 3
    assert not any(n.startswith("today's pool was ranked") for n in result.notes)


def test_a_hit_marked_again_against_another_recording_forgets_its_old_marks():
    replayed = [hit("a", 1, 0, 1.0)]
    mark_differences(replayed, [hit("a", 1, 1, 0.99)])
    assert replayed[0].differs == ["global_rank", "score"] and replayed[0].counterpart
    mark_differences(replayed, [hit("b", 1, 0, 1.0)])  # a recording without it
    assert (replayed[0].mark, replayed[0].differs, replayed[0].counterpart) == (
        "replay-only",
        [],
        None,
    )


def test_a_window_entry_of_a_node_the_tree_lacks_counts_under_an_unknown_branch():
    ckpt = build_tree([0], [0, 0])
    ckpt.entries = [
        make_entry(0, "node_root", "kernel", ts=1000.0),
        make_entry(1, "node_root", "tile", ts=1001.0),
        make_entry(2, "node_gone", "an orphan", ts=1500.0),
    ]
    ckpt.reindex()
    result = replay(ckpt, "node_0001", FakeRanker(ckpt.entries), query="q", as_of=False)
    assert result.pool["window"]["by_branch"] == {"node_root": 2, "?": 1}
    assert result.pool["window"]["other_branches"] == 1


# ---------------------------------------------------------------- Letta's time, the near-tie edge


def test_a_time_letta_cannot_hold_is_never_and_a_pool_cut_there_keeps_every_timed_entry():
    """No time, NaN or a year past datetime's range: NEVER. A cut at such a time keeps every
    entry with a time (as `kept` says), and the pool's size says the same."""
    assert micros(1.5) == 1_500_000
    assert micros(None) == NEVER and micros(1e20) == NEVER and micros(float("nan")) == NEVER
    entries = [make_entry(i, "node_root", f"t{i}", ts=ts) for i, ts in enumerate([1.0, 2.0, None])]
    pool = LettaAsOfPool(entries)
    for cut in (1e20, float("nan")):
        assert list(pool.kept(slice(None), cut)) == [True, True, False]
        assert pool.size_before(cut) == 2


def test_a_gap_of_exactly_the_near_tie_bound_is_not_a_near_tie():
    """Neighbours closer than NEAR_TIE (1e-6) are said; a gap of exactly 1e-6 is not."""
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    ranker = ranker_with(vectors, vectors[0])
    ranking = ranker.rank("q", top_k=3)
    assert ranker._tie_notes(np.array([0.0, -1e-6, -0.5]), ranking, None) == []
    [note] = ranker._tie_notes(np.array([0.0, -0.9e-6, -0.5]), ranking, None)
    assert note.startswith("1 near-tie at the window's ranks")


# ---------------------------------------------------------------- what a leak returned (2)


def test_a_logged_search_leak_lists_each_returned_row_joined_or_not():
    """A logged search's rows: a passage id the backup has is joined to its entry; one it
    lacks keeps its id and the node the log names."""
    ckpt = build_tree([0, 0], [1, 1, 1])
    other = ckpt.entries_by_node["node_0002"][0]
    other.letta_id = "p-other"
    ckpt.reindex()
    rows = [
        {"entry_id": "p-other", "src_node_id": "node_0002", "score": 1.0},
        {"entry_id": "p-gone", "src_node_id": "node_0002", "score": 0.99},
    ]
    ckpt.access_events = [
        read(9e9, "direction 1", ["node_root"], "node_0001", "trace_log", results=rows)
    ]
    [leak] = audit(ckpt).leaks
    got = [(p.node_id, p.entry_id, p.letta_id, p.outside) for p in leak.passages]
    assert got == [("node_0002", other.id, "p-other", True), ("node_0002", None, "p-gone", True)]


def call(tool, args, result):
    return TraceCall(node_id="node_0001", index=4, tool=tool, args_raw="", args=args, result=result)


def leaked(ckpt, *calls):
    ckpt.trace_calls = {"node_0001": list(calls)}
    [leak] = audit(ckpt).leaks
    return [(p.node_id, p.entry_id, p.text, p.outside) for p in leak.passages]


def test_a_traced_get_node_memory_leak_lists_the_named_node_s_entries():
    """The result's entries carry no node: they are the node the call named (anything in
    the list that is not an entry gives nothing)."""
    ckpt = build_tree([0, 0], [1, 1, 1])
    result = {"entries": [{"text": "the sibling's finding"}, "not an entry"]}
    got = leaked(ckpt, call("get_node_memory", {"node_id": "node_0002"}, result))
    assert got == [("node_0002", None, "the sibling's finding", True)]


def test_a_traced_bulk_leak_lists_each_node_s_rows_joined_by_passage_id():
    ckpt = build_tree([0, 0], [1, 1, 1])
    root = ckpt.entries_by_node["node_root"][0]
    root.letta_id = "p-root"
    ckpt.reindex()
    by_node = {
        "node_root": [{"entry_id": "p-root", "text": "(the backup's text wins)"}],
        "node_0002": [{"text": "the sibling's finding"}, 7],
        "node_0003": "not a list",
    }
    args = {"node_ids": ["node_root", "node_0002"]}
    got = leaked(ckpt, call("bulk_get_node_memory", args, {"by_node": by_node}))
    assert got == [
        ("node_root", root.id, root.text, False),
        ("node_0002", None, "the sibling's finding", True),
    ]


def test_an_entry_outside_letta_s_as_of_pool_is_missed_last_in_a_fast_replay_too():
    """The run's model ranks Letta's as-of pool, which holds no entry without ts: such an
    ancestor entry is eligible but has no rank, and is missed after every ranked one, in the
    TUI's fast replay (no global ranks yet) as in the exact one. 200 react steps fill the
    window; the untimed entry is nearer the query than the timed one."""
    steps = [make_entry(i, "", f"s{i}", kind="react_step", ts=1.0 + i) for i in range(200)]
    timed = make_entry(200, "node_root", "far", ts=300.0)
    untimed = make_entry(201, "node_root", "near", ts=None)
    entries = [*steps, untimed, timed]
    vectors = np.array([[1.0, 0.0]] * 200 + [[0.7, 0.7], [0.0, 1.0]])
    ranker = ranker_with(vectors, np.array([1.0, 0.0]), entries)
    ckpt = build_tree([0], [0, 0])
    ckpt.entries = entries
    ckpt.reindex()
    ckpt.access_events = [read(1000.0, "q", ["node_root"], "node_0001", "startup-search")]
    exact = replay(ckpt, "node_0001", ranker, query="q", with_tiers=False)
    fast = replay(ckpt, "node_0001", ranker, query="q", with_tiers=False, exact_ranks=False)
    assert [(m.entry_id, m.global_rank) for m in exact.missed] == [
        ("e00200", 200),
        ("e00201", None),
    ]
    assert [m.entry_id for m in fast.missed] == ["e00200", "e00201"]
    # the pre-filter's answer: the one ranked entry, its global rank unknown until resolved
    assert [(h.entry_id, h.rank, h.global_rank) for h in exact.exact_scope] == [("e00200", 1, 200)]
    assert [(h.entry_id, h.rank, h.global_rank) for h in fast.exact_scope] == [("e00200", 1, -1)]


def test_the_exact_scope_in_the_window_is_in_window_order_not_ancestor_order():
    """The pre-filter's answer keeps the window's order: the parent's entry, ranked above the
    root's, comes first, numbered from 1 with its global rank and score."""
    ckpt = build_tree([0, 1], [1, 1, 0])  # root (e00000) → node 1 (e00001) → node 2
    scores = {"e00001": 2.0, "e00000": 1.0}
    result = replay(ckpt, "node_0002", FakeRanker(ckpt.entries, scores), query="q", as_of=False)
    scope = [(h.entry_id, h.rank, h.global_rank, h.score) for h in result.exact_scope]
    assert scope == [("e00001", 1, 0, 1.0), ("e00000", 2, 1, 0.99)]
    assert scope == [(h.entry_id, h.rank, h.global_rank, h.score) for h in result.hits]


def test_an_entry_written_after_the_search_is_no_near_tie_of_its_window():
    """Only the as-of pool's entries outside the window are its neighbours: one written after
    the cut (e2), however near the window's last, is not a near-tie."""
    a = np.array([1.0, 0.0])
    ranker = ranker_with(np.array([a, [0.0, 1.0], [1.0, 1e-4]]), a)  # e2 is near a, at ts 2
    assert "near-tie" not in ranker.rank("q", top_k=1, before_ts=1.5).note
    assert "1 near-tie" in ranker.rank("q", top_k=1).note
