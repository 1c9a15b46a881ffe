"""The tool judged on a run made the way ARI makes one (tests/ari_like), recorded by ARI's
in-memory backend: every start-up search replays exactly by default, every read goes to its
real reader (or says it cannot), and the audit reports the planted findings and nothing else."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import pytest

from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.tool_entries import stored_read
from ari_mem_tui.cli import main
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.backends import run_backend
from ari_mem_tui.search.in_memory import InMemoryRanker, keyword_score
from ari_mem_tui.search.replay import replay
from tests.ari_like import generate_in_memory, second_hand, texts
from tests.ari_like.run import PLAN
from tests.tui_app_helpers import app_with, settle, wait_for


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    return generate_in_memory(tmp_path_factory.mktemp("ari_like") / "ckpt")


@pytest.fixture(scope="module")
def run(generated):
    return open_run(RunOptions(checkpoint=generated.path, index=False))


def started(generated) -> list[str]:
    return list(generated.planted.startup)


def test_the_run_is_recognised_as_in_memory_and_replayed_with_its_rule(generated, run):
    found = run_backend(run.checkpoint)
    assert found.name == "in_memory"
    assert found.signals == {
        "core seed": "in_memory",
        "entry ids": "in_memory",
        "recorded scores": "in_memory",
    }
    assert isinstance(run.ranker, InMemoryRanker)


def test_every_start_up_search_replays_exactly_by_default(generated, run):
    """GIVEN the run ARI's in-memory backend recorded, WHEN each node is replayed with the
    default settings, THEN its hits are the recorded ones: entries, order and scores, all
    equal, nothing marked, no window, nothing missed, and no ranker excuse."""
    ckpt = run.checkpoint
    assert len(started(generated)) == sum(
        1
        for p in PLAN
        if p.parent is not None and p.outcome != "pending"  # (LATE ran too)
    )
    together = next(p for p in generated.planted.same_direction if p["order"] == "together")
    pair = (together["elder"], together["younger"])
    for node_id, want in generated.planted.startup.items():
        result = replay(ckpt, node_id, run.ranker)
        got = [(ckpt.entries_by_id[h.entry_id].letta_id, h.node_id, h.score) for h in result.hits]
        assert got == want, node_id  # exact floats: 0.4444444444444444 is 0.4444444444444444
        assert result.embedder == "in-memory" and result.windowless
        if node_id in pair:  # which of the two searches was whose is assumed (and said)
            assert result.as_of in {generated.planted.startup_ts[n] for n in pair}
        else:
            assert result.as_of == generated.planted.startup_ts[node_id]
        assert result.as_of_source == "start-up search"
        assert result.recorded is not None and result.recorded.backend == "in_memory"
        assert result.recorded.differences == 0 and result.fidelity.note == ""
        assert result.fidelity.exact is True and result.fidelity.verified is True
        assert result.fidelity.label == (
            "exact: ARI's in-memory backend rule, its recorded search reproduced"
        )
        assert not any(h.mark for h in [*result.hits, *result.recorded.hits])
        assert result.missed == [] and result.pool["window"] is None
        assert all(h.global_rank == -1 for h in result.hits)  # no global rank: none exists
    # the keyword scores are not all Letta-shaped: the fixture really tells the rules apart
    scores = {s for hits in generated.planted.startup.values() for _, _, s in hits}
    assert any(round(s * 100) != s * 100 for s in scores)


def test_saw_json_by_default_is_the_recording(generated, capsys):
    node_id = generated.planted.nodes["A1a"]
    assert main(["saw", str(generated.path), node_id, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["embedder"] == "in-memory" and data["windowless"] is True
    assert data["recorded"]["differences"] == 0 and data["fidelity"]["note"] == ""
    assert data["fidelity"]["exact"] is True and data["fidelity"]["verified"] is True
    assert data["fidelity"]["label"] == (
        "exact: ARI's in-memory backend rule, its recorded search reproduced"
    )
    assert data["params"] == {"limit": 5, "overfetch": None, "top_k": None}  # no window
    assert any("no ranking of the whole pool" in note for note in data["notes"])
    assert not any("window" in note for note in data["notes"])
    want = [score for _, _, score in generated.planted.startup[node_id]]
    assert [h["score"] for h in data["hits"]] == want


def test_another_ranker_is_told_apart_and_pointed_at_the_rule(generated, run):
    """MiniLM/BM25 on an in-memory run are stand-ins: the replay says so and how to fix it."""
    from ari_mem_tui.search.embedded import make_ranker

    node_id = generated.planted.nodes["B2a"]
    result = replay(run.checkpoint, node_id, make_ranker(run.checkpoint, "bm25"))
    assert "different rankers" in result.fidelity.note
    assert "--embedder in-memory" in result.fidelity.note
    assert not result.windowless
    assert result.fidelity.exact is False
    assert result.fidelity.label == (
        "stand-in: local BM25 (the run recorded with ARI's in-memory backend (keyword-overlap"
        " scores, no global ranks))"
    )


def test_an_empty_direction_is_replayed_with_the_goal(generated, run):
    node_id = generated.planted.empty_direction
    node = run.checkpoint.nodes[node_id]
    assert node.original_direction == "" and node.status == "success"  # a verdict today
    result = replay(run.checkpoint, node_id, run.ranker)
    assert (result.query, result.query_field) == (texts.GOAL[:200], "goal")
    assert result.recorded is not None and result.recorded.query == result.query
    assert result.recorded.differences == 0


def test_every_read_goes_to_its_real_reader_or_says_it_cannot(generated, run):
    """The generator knows who made every read: the loader's reader is that node, or, for the
    one pair of same-direction siblings that searched before either wrote, one of the two
    with a note saying the files cannot tell."""
    truth = {(ts, query): who for ts, query, who in generated.planted.readers}
    together = next(p for p in generated.planted.same_direction if p["order"] == "together")
    pair = {together["elder"], together["younger"]}
    noted = 0
    for event in run.checkpoint.access_events:
        if event.op != "read":
            continue
        real = truth[(event.ts, event.query or "")]
        real = {"select": "bfts-select"}.get(real, real)
        if event.reader_note:
            noted += 1
            assert real in pair and event.reader in pair
        else:
            assert event.reader == real, (event.source_line, event.query, event.reader_how)
        assert event.reader_how != "unattributed"
    assert noted == 2 * (1 + 3 + 1)  # both searches, each with its burst of 4 ancestors


def test_same_direction_siblings_get_their_own_searches(generated, run):
    """Elder first, younger first: each node is replayed as of its own search."""
    planted = generated.planted
    orders = {p["order"] for p in planted.same_direction}
    assert orders == {"elder first", "younger first", "together"}
    for pair in planted.same_direction:
        if pair["order"] == "together":
            continue
        for node_id in (pair["elder"], pair["younger"]):
            result = replay(run.checkpoint, node_id, run.ranker, with_tiers=False)
            assert result.as_of == planted.startup_ts[node_id], pair


def test_siblings_the_files_cannot_tell_apart_say_so_everywhere(generated, capsys):
    pair = next(p for p in generated.planted.same_direction if p["order"] == "together")
    ckpt = load_checkpoint(generated.path)
    [problem] = [p for p in ckpt.problems if "told apart by assumption" in p.what]
    assert pair["elder"] in problem.what and pair["younger"] in problem.what
    for node_id in (pair["elder"], pair["younger"]):
        assert main(["saw", str(generated.path), node_id, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert any("files cannot tell" in note for note in data["notes"]), node_id
    assert main(["summary", str(generated.path)]) == 0
    assert "told apart by assumption" in capsys.readouterr().out


def test_audit_finds_every_planted_finding_and_nothing_else(generated, run):
    report = audit(run.checkpoint)
    found = {
        (f.kind, f.node_id, tuple(f.targets), f.tool)
        for f in [*report.leaks, *report.scope_violations, *report.rejected_writes]
    }
    planted = {
        (f["kind"], f["node"], tuple(f["targets"]), f["tool"]) for f in generated.planted.findings
    }
    assert found == planted  # both directions: every planted one found, no other one
    assert len(planted) == 6 and {k for k, *_ in planted} == {
        "leak",
        "scope_violation",
        "rejected_write",
    }
    assert report.unattributed == []


def test_the_planted_second_hand_leak_is_found_and_a_quoted_ancestor_is_not(generated, run):
    """GIVEN D1's kept search of C's memory (a branch beside its parent's) and its kept search
    of its own lineage, and D1's descendants inheriting both at their start WHEN audited THEN
    the first is tainted (origin C) and every descendant received C's memory second-hand, the
    chain timed in order; the second quotes D1's ancestors only and is not flagged."""
    ckpt = run.checkpoint
    report = audit(ckpt)
    tainted, readers = second_hand.expected(generated.planted)
    assert second_hand.found(report, ckpt) == (tainted, readers) and len(readers) == 3
    for f in report.second_hand:
        assert f.leak_ts is not None and f.leak_ts <= f.entry_ts < f.ts, f
        assert f.ref.endswith("(inherit-burst)") and f.tool == "get_node_memory"
    writer = ckpt.nodes[generated.planted.second_hand["writer"]]
    lineage = generated.planted.second_hand["lineage_text"]
    quoted = stored_read(lineage, {"tool": "search_memory"}).quoted
    assert quoted and all(q.node_id in writer.ancestor_ids for q in quoted)
    assert all(ckpt.entries_by_id[t.entry_id].text != lineage for t in report.tainted)


def test_an_auto_entry_quoting_a_refusal_is_not_a_rejected_write(generated, run):
    [(writer, text)] = generated.planted.quoting_entries
    ckpt = run.checkpoint
    assert any(e.text == text for e in ckpt.entries_by_node[writer])
    assert "CoW violation" in text and text.startswith("Tool search_memory: ")
    assert all(w.current_node != writer for w in ckpt.rejected_writes())
    rows = [w for w in ckpt.node_writes(writer) if w.text == text]
    assert len(rows) == 1 and rows[0].accepted


def test_a_rejected_write_names_the_entry_that_logs_it(generated, run):
    """ARI keeps a refused call's result as an ordinary entry of the refused node ("Tool
    add_memory: {"result": ... CoW violation"}"): the rejected row names it (`logged_by`), and
    an entry that only quotes a refusal's words is nobody's log."""
    ckpt = run.checkpoint
    rejected = ckpt.rejected_writes()
    assert len(rejected) == 2
    for write in rejected:
        entry = ckpt.entries_by_id[write.logged_by]
        assert entry.node_id == write.current_node
        assert entry.text.startswith(f"Tool {write.tool}: ") and write.reason in entry.text
    [(_writer, quoting)] = generated.planted.quoting_entries
    assert all(ckpt.entries_by_id[w.logged_by].text != quoting for w in rejected)


async def test_the_writes_tab_marks_the_entry_that_logs_a_refusal(generated, run) -> None:
    """In the Writes tab the accepted entry that records a refused call reads `✓ log of ✗`
    (it read as any accepted write beside the `✗` row), and Enter says which call it logs."""
    from ari_mem_tui.tui.tables import VimTable
    from ari_mem_tui.tui.widgets.detail import WritesPane
    from tests.test_tui_tables import open_row

    [write] = [w for w in run.checkpoint.rejected_writes() if w.tool == "add_memory"]

    def opener(_progress):
        return open_run(RunOptions(checkpoint=generated.path, index=False))

    app = app_with(opener, initial_node=write.current_node)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        pane = app.query_one(WritesPane)
        await wait_for(pilot, lambda: pane.rows, "the node's writes")
        [row] = [i for i, w in enumerate(pane.rows) if w.entry_id == write.logged_by]
        table = app.query_one("#writes-table", VimTable)
        cells = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert cells[row] == "✓ log of ✗"
        assert sum("log of" in cell for cell in cells) == 1
        shown = await open_row(pilot, "writes-table", row)
        assert "the node's own record of a rejected call's result" in shown
        assert re.search(r"\nlog of +the rejected add_memory → \w+ at ", shown), shown


def test_summary_counts_the_rejected_writes_by_the_same_rule(generated, capsys):
    assert main(["summary", str(generated.path), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    planted = [f for f in generated.planted.findings if f["kind"] == "rejected_write"]
    assert counts["rejected_writes"] == len(planted) == 2
    assert "unattributed" not in counts["reads_by_attribution"]


def test_health_uses_the_runs_rule_by_default(generated, capsys):
    main(["health", str(generated.path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["ranker"] == "in-memory"
    assert any("in-memory rule" in note for note in data["notes"])
    searched = [n for n in data["nodes"] if n["searched"]]
    assert searched and all(n["window"] == 0 and n["other_branches"] == 0 for n in searched)
    assert all(n["hits_source"] == "recorded" for n in searched)


def test_signals_that_disagree_decide_nothing(generated, tmp_path):
    copy = tmp_path / "ckpt"
    shutil.copytree(generated.path, copy)
    backup = copy / "memory_backup.jsonl.gz"
    with gzip.open(backup, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    for record in records:  # a core seed as Letta writes it
        if record["kind"] == "core_seed":
            record["context"].pop("seeded_at")
            record["seeded_at"] = 0.0
    with gzip.open(backup, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    found = run_backend(load_checkpoint(copy))
    assert found.name == "unknown" and found.signals["core seed"] == "letta"
    assert "disagree" in found.note and "entry ids: in_memory" in found.note


def test_keyword_rule_edges():
    assert keyword_score("スレッド数を変えて測定する", "スレッド数を変えて") == 1.0  # one word
    assert keyword_score("スレッド数を変えて", "スレッド数を変えて測定する") == 0.0
    assert keyword_score("GFlops per S", "gflops MISSING s x") == 0.5  # lower-cased substrings
    assert keyword_score("anything", "   ") == 0.0


def test_a_blank_query_keeps_every_entry_in_insertion_order(run):
    ranking = InMemoryRanker(run.checkpoint.entries).rank("  ", 200)
    assert ranking.windowless and len(ranking.window) == len(
        [e for e in run.checkpoint.entries if e.kind == "node_scope"]
    )
    assert set(ranking.scores.values()) == {0.0}
    stamps = [e.ts for e in ranking.window]
    assert stamps == sorted(stamps)


async def test_the_tui_replays_an_in_memory_run_with_its_rule(generated) -> None:
    """The TUI opens the run with the default options, as `ari-mem-tui CKPT` does."""

    def opener(_progress):
        return open_run(RunOptions(checkpoint=generated.path, index=False))

    node_id = generated.planted.nodes["A1a"]
    app = app_with(opener, open_useful=True, initial_node=node_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        hits = app.query_one("#hits-pane")
        await wait_for(pilot, lambda: getattr(hits, "replay", None) is not None, "the hits")
        replay_shown = hits.replay
        assert replay_shown.node_id == node_id
        assert replay_shown.embedder == "in-memory" and replay_shown.windowless
        assert replay_shown.recorded.differences == 0
        text = str(app.query_one("#status-embedder").render())
        assert "in-memory" in text


async def test_the_hits_table_leaves_out_global_ranks_the_backend_has_not(generated) -> None:
    """ARI's in-memory rule has no global window, so every `glob` cell would read "?": the
    narrow table leaves the column out (the notes say why) and `z` shows it again."""
    from ari_mem_tui.tui.tables import VimTable

    def opener(_progress):
        return open_run(RunOptions(checkpoint=generated.path, index=False))

    app = app_with(opener, initial_node=generated.planted.nodes["A1a"])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        hits = app.query_one("#hits-pane")
        await wait_for(pilot, lambda: getattr(hits, "replay", None) is not None, "the hits")
        table = app.query_one("#hits-table", VimTable)

        def headers() -> list[str]:
            return [str(column.label) for column in table.ordered_columns]

        assert hits.replay.windowless and "glob" not in headers()
        assert headers()[:3] == ["#", "score", "node"]
        await pilot.press("z")
        await wait_for(pilot, lambda: "glob" in headers(), "the wide table")


def test_reads_are_logged_under_the_last_writer_and_bursts_precede_searches(generated, run):
    """The run is as ARI logs it: a read names whoever wrote last ("" before the first
    write), and every start-up search follows one inheritance read per ancestor, root first."""
    events = [e for e in run.checkpoint.access_events if e.op == "read"]
    first = min(run.checkpoint.access_events, key=lambda e: e.ts)
    assert first.op == "read" and first.node_id == "" and first.reader_how == "trace_log"
    assert first.reader == generated.planted.nodes["R"]
    stale = [e for e in events if e.reader in run.checkpoint.nodes and e.node_id != e.reader]
    assert len(stale) > len(events) // 2
    for event in events:
        if event.reader_how != "startup-search":
            continue
        node = run.checkpoint.nodes[event.reader]
        burst = [
            e.ancestor_ids[0]
            for e in events
            if e.reader == event.reader and e.reader_how == "inherit-burst"
        ]
        assert burst == list(node.ancestor_ids), event.reader


@pytest.mark.parametrize(
    "lost", [{"original_direction": None}, {"original_direction": "", "name": ""}]
)
def test_a_lost_direction_is_found_from_the_search_it_made(generated, tmp_path, lost):
    """§2.6: an old tree lacks original_direction; `ari resume` writes it back empty (with an
    empty name). A succeeded node's eval_summary is then its verdict: its start-up search is
    found by its scope and time, and replays as recorded, saying how it was found."""
    copy = tmp_path / "ckpt"
    shutil.copytree(generated.path, copy)
    node_id = generated.planted.nodes["A1a"]
    tree = json.loads((copy / "tree.json").read_text(encoding="utf-8"))
    for raw in tree["nodes"]:
        if raw["id"] == node_id:
            assert raw["status"] == "success"
            raw.update(lost)
    (copy / "tree.json").write_text(json.dumps(tree, ensure_ascii=False), encoding="utf-8")
    opened = open_run(RunOptions(checkpoint=copy, index=False))
    result = replay(opened.checkpoint, node_id, opened.ranker)
    assert result.query_field == "recorded search (direction lost)"
    assert result.recorded is not None and result.recorded.differences == 0
    assert [h.score for h in result.hits] == [s for _, _, s in generated.planted.startup[node_id]]
    assert any("direction is lost" in note for note in result.notes)


def test_no_signal_decides_nothing_and_says_nothing(tmp_path):
    from ari_mem_tui.model import Checkpoint

    found = run_backend(Checkpoint(path=tmp_path))
    assert (found.name, found.signals, found.note) == ("unknown", {}, "")


def test_the_node_tab_says_what_the_files_cannot_tell(generated, run):
    from ari_mem_tui.tui.widgets.detail import node_text

    pair = next(p for p in generated.planted.same_direction if p["order"] == "together")
    for node_id in (pair["elder"], pair["younger"]):
        shown = node_text(run.checkpoint.nodes[node_id], run.checkpoint).plain
        assert "files cannot tell" in shown
    empty = node_text(run.checkpoint.nodes[generated.planted.empty_direction], run.checkpoint)
    assert "(empty: ARI searched with the experiment goal)" in empty.plain


def test_the_pool_line_adds_up_when_the_backend_searches_node_scope_only(generated, run, capsys):
    """The in-memory backend holds no react steps: the pool line says the files' react steps
    were not searched, instead of listing them in a pool they are not part of."""
    from ari_mem_tui.render.words import pool_parts
    from ari_mem_tui.search.embedded import make_ranker

    node_id = max(generated.planted.startup, key=lambda n: generated.planted.startup_ts[n])
    mine = replay(run.checkpoint, node_id, run.ranker).pool
    assert mine["react_step"] > 0 and mine["size"] == mine["node_scope"]
    said = f"node-scope only, {mine['react_step']} react not searched"
    assert pool_parts(mine).startswith(said)
    assert main(["saw", str(generated.path), node_id]) == 0
    assert said in " ".join(capsys.readouterr().out.split())
    bm25 = replay(run.checkpoint, node_id, make_ranker(run.checkpoint, "bm25")).pool
    assert bm25["size"] == bm25["node_scope"] + bm25["react_step"]
    assert pool_parts(bm25) == f"{bm25['node_scope']} node-scope, {bm25['react_step']} react"


def test_an_in_memory_run_is_said_in_its_own_words(generated, run, capsys):
    """ARI's in-memory rule has no window and no top_k: no view of such a run speaks of one.
    Compare shows an unknown global rank as `?` and the keyword scores to three places, as
    Hits does; the empty direction's query is named for what it is; Tier 2 says what ARI
    dropped and why."""
    from ari_mem_tui.health import compute_health
    from ari_mem_tui.render.dossier import dossier_markdown
    from ari_mem_tui.render.health import headline
    from ari_mem_tui.render.words import query_words
    from ari_mem_tui.tui.screens.compare import side_text
    from ari_mem_tui.tui.widgets.hits import diagnostics_text, no_hits_words

    node_id = generated.planted.nodes["A1a"]
    result = replay(run.checkpoint, node_id, run.ranker)
    assert main(["saw", str(generated.path), node_id]) == 0
    said = capsys.readouterr().out
    dossier = dossier_markdown(result, run.checkpoint)
    diagnostics = diagnostics_text(result).plain
    for text in (said, dossier, diagnostics, *result.notes):
        assert "window" not in text and "top_k" not in text, text
    assert '- params: {"limit": 5}' in dossier
    assert diagnostics.endswith("every ancestor entry scored (ARI's in-memory rule) · eligible"
                                f" {result.eligible}")  # fmt: skip
    health = compute_health(run.checkpoint, run.ranker)
    assert "top_k" not in headline(health).plain and "window" not in headline(health).plain
    side = side_text(result, result, "A").plain
    [first] = [line for line in side.splitlines() if line.strip().startswith("1 g")]
    want = result.hits[0]
    score = (
        f"{want.score:.3f}" if round(want.score * 100) != want.score * 100 else f"{want.score:.2f}"
    )
    assert first.split()[:3] == ["1", "g?", score]
    empty = replay(run.checkpoint, generated.planted.empty_direction, run.ranker)
    assert (
        query_words(empty) == "the experiment goal (the node's eval_summary was empty at its start)"
    )
    unmatched = replay(run.checkpoint, node_id, run.ranker, query="zzz-nothing-shares-this")
    assert unmatched.hits == [] and no_hits_words(unmatched).startswith(
        "no hits: no ancestor entry shares a whitespace-separated word with the query"
    )
    tier_2 = next(t for t in result.tiers if t.key == "2")  # A1a: 2 of its 5 hits were in 1b
    assert len(result.recorded.hits) == 5 and len(tier_2.lines) == 3
    assert tier_2.note.endswith(
        "dropped 2 hits: their first 120 characters are already in Tier 1b (ARI skips those)"
    )
