"""Memory health on a run built for it (tests/health_helpers.py has the numbers by hand)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from health_helpers import A1, A2, ROOT, B, C, write_fed_run, write_starved_run

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main
from ari_mem_tui.health import Lineages, compute_health
from ari_mem_tui.render.health import spark
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.in_memory import InMemoryRanker
from ari_mem_tui.search.rankers import Ranking
from ari_mem_tui.search.replay import eligible_entry
from ari_mem_tui.search.startup import start_time


@pytest.fixture(scope="module")
def starved_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_starved_run(tmp_path_factory.mktemp("health") / "20260101000000_starved")


@pytest.fixture(scope="module")
def report(starved_dir: Path):
    ckpt = load_checkpoint(starved_dir)
    return compute_health(ckpt, make_ranker(ckpt, "bm25"))


def by_id(report, node_id):
    return next(n for n in report.nodes if n.node_id == node_id)


def test_a_root_is_not_searched_and_says_why(report):
    root = by_id(report, ROOT)
    assert not root.searched and "root" in root.why_not


def test_a_node_whose_window_is_other_branches_is_starved(report):
    a1 = by_id(report, A1)
    assert (a1.eligible, a1.reached, a1.hits, a1.hits_source) == (3, 0, 0, "replayed")
    assert (a1.window, a1.other_branches, a1.react) == (200, 198, 2)
    assert (a1.share_other, a1.share_react) == (0.99, 0.01)
    assert a1.starved and a1.shortfall == 3


def test_a_node_whose_lineage_ranks_first_is_fed(report):
    c = by_id(report, C)
    assert (c.eligible, c.reached, c.hits, c.other_branches, c.share_other) == (3, 3, 3, 197, 0.985)
    assert not c.starved and c.shortfall == 0
    b = by_id(report, B)
    assert (b.window, b.eligible, b.reached, b.hits, b.starved) == (3, 3, 3, 3, False)


def test_logged_hits_win_over_the_replay_and_say_so(report):
    a2 = by_id(report, A2)
    assert a2.started_source == "start-up search"
    assert (a2.eligible, a2.hits, a2.hits_source, a2.hits_recorded) == (5, 1, "recorded", 1)
    assert (a2.hits_replayed, a2.reached) == (3, 3)
    assert a2.starved and a2.shortfall == 4
    assert (report.recorded, report.replayed) == (1, 3)
    assert any("1 node from the access log (recorded), 3 from replays" in n for n in report.notes)


def test_run_totals_by_depth_and_over_time(report):
    assert (report.searched, report.starved) == (4, 2)
    depths = {b.label: b for b in report.by_depth}
    assert (depths["depth 1"].nodes, depths["depth 1"].starved) == (3, 1)
    assert (depths["depth 2"].nodes, depths["depth 2"].starved) == (1, 1)
    assert depths["depth 1"].mean_share_other == round((0.0 + 0.99 + 0.985) / 3, 4)
    assert sum(b.nodes for b in report.over_time) == 4
    assert sum(b.starved for b in report.over_time) == 2
    assert report.over_time[0].nodes == 1  # B, the first to start, alone in the first slice


def test_entry_retrievals_by_category_and_never_retrieved(report):
    e = report.entries
    assert (e.total, e.leaf_entries, e.retrieved, e.by_descendants) == (256, 250, 5, 5)
    assert (e.never_by_descendant, e.never_searched, e.from_trace_log) == (1, 4, 1)
    assert e.reads == {"inherit": 5, "startup": 1, "llm": 1}
    assert [u.text for u in report.never_retrieved] == ["beta finding late"]
    assert [sum((u.startup, u.inherit, u.llm)) for u in report.top_entries] == [2, 2, 1, 1, 1]
    top = next(u for u in report.top_entries if u.text == "alpha result one")
    assert (top.node_id, top.inherit, top.llm, top.descendant_readers) == (ROOT, 1, 1, 2)
    assert set(top.readers) == {A2, C}
    first = next(u for u in report.top_entries if u.text == "beta finding first")
    assert (first.node_id, first.startup, first.inherit, first.readers) == (A1, 1, 1, [A2])


def test_cancel_returns_what_was_done(starved_dir):
    ckpt = load_checkpoint(starved_dir)
    seen: list[tuple[int, int]] = []
    calls = iter([False, False, True])
    result = compute_health(
        ckpt,
        make_ranker(ckpt, "bm25"),
        progress=lambda d, t: seen.append((d, t)),
        cancelled=lambda: next(calls),
    )
    assert not result.complete and len(result.nodes) == 2
    assert result.entries.total == 0 and "interrupted after 2 of 5 nodes" in result.notes
    assert seen[-1] == (2, 6)


def test_cli_health_exits_1_with_starved_nodes_and_json_has_the_numbers(capsys, starved_dir):
    code = main(["health", str(starved_dir), "--json", "--embedder", "bm25"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (data["searched"], data["starved"], data["limit"], data["top_k"]) == (4, 2, 5, 200)
    assert data["ranker"] == "bm25"
    starved = sorted(n["node_id"] for n in data["nodes"] if n["starved"])
    assert starved == sorted([A1, A2])
    assert data["entries"]["never_by_descendant"] == 1
    assert data["all_entries"] is None


def test_cli_health_all_entries(capsys, starved_dir):
    main(["health", str(starved_dir), "--json", "--embedder", "bm25", "--all-entries"])
    data = json.loads(capsys.readouterr().out)
    assert len(data["all_entries"]) == 256


def test_cli_health_text_names_the_starved_and_exits_0_when_none(capsys, starved_dir, tmp_path):
    code = main(["health", str(starved_dir), "--embedder", "bm25"])
    out = " ".join(capsys.readouterr().out.split())  # rich wraps at 80 columns
    assert code == 1
    assert "4 nodes searched, 2 starved (50%)" in out
    assert "a1a1a1a1" in out and "starved" in out
    assert "never retrieved by any descendant" in out
    fed = write_fed_run(tmp_path / "20260102000000_fed")
    code = main(["health", str(fed), "--embedder", "bm25"])
    assert code == 0
    assert "1 node searched, 0 starved (0%)" in " ".join(capsys.readouterr().out.split())


def test_cli_health_of_a_folder_that_is_no_run_exits_2(capsys, tmp_path):
    assert main(["health", str(tmp_path / "nothing"), "--embedder", "bm25"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_spark_scales_to_the_top():
    assert spark([0.0, 0.5, 1.0], 1.0) == "▁▅█"
    assert spark([]) == "" and spark([0, 0]) == "▁▁"


def _without_ancestor_ids(ckpt: Path, copy: Path) -> Path:
    """A copy of `ckpt` whose tree.json has no ancestor_ids (scopes rebuilt from parent_id)."""
    shutil.copytree(ckpt, copy)
    tree = json.loads((copy / "tree.json").read_text())
    for node in tree["nodes"]:
        node.pop("ancestor_ids", None)
    (copy / "tree.json").write_text(json.dumps(tree))
    return copy


def test_scopes_from_parent_links_count_as_the_written_lists_do(small_ckpt, tmp_path):
    """GIVEN the same run with its ancestor_ids written, and without them (rebuilt from
    parent_id: the linear path for deep chains), THEN every node and entry number is the same."""
    bare = _without_ancestor_ids(small_ckpt, tmp_path / "bare")
    written, rebuilt = load_checkpoint(small_ckpt), load_checkpoint(bare)
    assert not any(type(n.ancestor_ids) is list for n in rebuilt.nodes.values() if n.parent_id)
    a = compute_health(written, make_ranker(written, "bm25"), all_entries=True)
    b = compute_health(rebuilt, make_ranker(rebuilt, "bm25"), all_entries=True)
    assert sum(n.eligible for n in a.nodes) > 0 and a.entries.by_descendants > 0
    assert [n.as_data() for n in a.nodes] == [n.as_data() for n in b.nodes]
    assert a.all_entries == b.all_entries and a.entries == b.entries


def test_a_deep_chain_shows_its_depths_in_ranges(capsys, tmp_path):
    """A 100-deep chain: the text groups its 99 searched depths into at most 30 rows; --json
    keeps every depth."""
    path = tmp_path / "chain"
    path.mkdir()
    nodes = [
        {"id": f"n{i}", "parent_id": f"n{i - 1}" if i else None, "status": "success"}
        for i in range(100)
    ]
    (path / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    assert main(["health", str(path), "--embedder", "bm25", "--no-letta"]) == 0
    out = capsys.readouterr().out
    assert "99 depths in 25 ranges" in out and "96–99" in out
    assert main(["health", str(path), "--embedder", "bm25", "--no-letta", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["by_depth"]) == 99


@pytest.mark.parametrize("scopes", ["written", "parent links"])
def test_eligible_counts_are_the_post_filter_entry_by_entry(small_ckpt, tmp_path, scopes):
    """GIVEN entries of this checkpoint, of another and of none (as a Letta server's footers
    may say), some without ts, THEN each node's eligible count (read off the columns) is ARI's
    post-filter and the as-of rule applied to one entry at a time."""
    path = small_ckpt
    if scopes == "parent links":
        path = _without_ancestor_ids(small_ckpt, tmp_path / "bare")
    ckpt = load_checkpoint(path)
    records = [entry.as_record() for entry in ckpt.entries]
    for i, record in enumerate(records):
        record.ari_checkpoint = ("aaaaaaaaaaaa", "bbbbbbbbbbbb", None, "")[i % 4]
        if i % 7 == 0:
            record.ts = None
    ckpt.entries = records
    ckpt.reindex()
    lineages = Lineages(ckpt, "aaaaaaaaaaaa")
    counted = 0
    for node in ckpt.nodes.values():
        started, _ = start_time(ckpt, node)
        scope = set(node.ancestor_ids)
        expected = sum(
            1
            for entry in ckpt.entries
            if eligible_entry(entry, scope, "aaaaaaaaaaaa")
            and (started is None or entry.ts is None or entry.ts < started)
        )
        assert lineages.eligible(node, started) == expected
        counted += expected
    assert counted > 0


class _GivenWindows:
    """A fake ranker, named as one: the BM25 ranking of the run, its window handed over as
    rows of the run's columns ("rows"), as records the table does not hold ("records"), or
    every other entry so ("mixed": a Letta server's window holding passages added since the
    run was read); or ARI's in-memory rule ("in-memory": no window). It ranks today's whole
    pool, so that windows hold entries written after a node's start (the as-of test then
    counts too). Keeps what it gave."""

    def __init__(self, ckpt, how: str) -> None:
        self.how, self.given = how, []
        self.inner = (
            InMemoryRanker(ckpt.entries) if how == "in-memory" else make_ranker(ckpt, "bm25")
        )
        self.name = self.inner.name

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        ranking = self.inner.rank(query, top_k, None)
        if self.how in ("records", "mixed"):
            window = [
                e.as_record() if self.how == "records" or i % 2 else e
                for i, e in enumerate(ranking.window)
            ]
            ranking = Ranking(window=window, pool_size=ranking.pool_size, used=ranking.used)
        self.given.append(ranking)
        return ranking


@pytest.mark.parametrize("scopes", ["written", "parent links"])
@pytest.mark.parametrize("how", ["rows", "records", "mixed", "in-memory"])
def test_window_counts_are_the_post_filter_row_by_row(small_ckpt, tmp_path, scopes, how):
    """GIVEN entries of this checkpoint, of another and of none, some without ts, and each
    node's window as rows of the run's columns, as records, mixed, or no window at all, THEN
    every node's window numbers (one count off the columns for all of them) are ARI's
    post-filter and the as-of rule applied to one window entry at a time."""
    path = small_ckpt
    if scopes == "parent links":
        path = _without_ancestor_ids(small_ckpt, tmp_path / "bare")
    ckpt = load_checkpoint(path)
    ckpt.checkpoint_hash = own = "aaaaaaaaaaaa"  # (as ARI's footers name a run's)
    records = [entry.as_record() for entry in ckpt.entries]
    for i, record in enumerate(records):
        record.ari_checkpoint = (own, "bbbbbbbbbbbb", None, "")[i % 4]
        if i % 7 == 0:
            record.ts = None
        elif i % 5 == 0:  # written long after: after its owner's descendants started
            record.ts += 10**6
    ckpt.entries = records
    ckpt.reindex()
    ranker = _GivenWindows(ckpt, how)
    report = compute_health(ckpt, ranker)
    searched = [row for row in report.nodes if row.searched]
    assert len(searched) == len(ranker.given) > 0
    seen: Counter[str] = Counter()
    for row, ranking in zip(searched, ranker.given, strict=True):
        node, started = ckpt.nodes[row.node_id], row.started
        scope = set(node.ancestor_ids)
        found: Counter[str] = Counter()
        for entry in ranking.window:
            eligible = eligible_entry(entry, scope, own)
            found["kept"] += eligible
            found["another checkpoint's"] += entry.ari_checkpoint not in (own, None)
            found["tool"] += (  # ARI's automatic tool-call entry (§3.9)
                entry.kind == "node_scope"
                and entry.text.startswith("Tool ")
                and "tool" in entry.metadata
            )
            if entry.kind != "node_scope":
                found["react"] += 1
            elif eligible and (started is None or entry.ts is None or entry.ts < started):
                found["lineage"] += 1
            elif entry.node_id == node.id:
                found["own"] += 1
            else:
                found["other"] += 1
        assert row.reached == found["lineage"]
        assert row.hits_replayed == min(row.limit, found["kept"])
        if ranking.windowless:
            assert (row.window, row.react, row.lineage, row.own, row.other_branches) == (0,) * 5
            assert (row.tool, row.share_tool) == (0, 0.0)
        else:
            shown = (row.window, row.react, row.lineage, row.own, row.other_branches)
            assert shown == (
                len(ranking.window),
                found["react"],
                found["lineage"],
                found["own"],
                found["other"],
            )
            assert row.tool == found["tool"]
            assert row.share_tool == (round(found["tool"] / row.window, 4) if row.window else 0)
        seen.update(found)
    assert seen["lineage"] > 0 and seen["another checkpoint's"] > 0
    assert seen["kept"] > seen["lineage"]  # (the lineage's entries written after the start)
    assert how == "in-memory" or (seen["react"] > 0 and seen["other"] > 0 and seen["tool"] > 0)
