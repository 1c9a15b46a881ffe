"""The demo's recorded start-up searches come from the ranker a replay uses by default (MiniLM,
as of each read), so a replay agrees with every recording but where something really moved:
the one planted late insert (a write stamped before a node's start that landed on the server
after its search)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from ari_mem_tui import demo, run_summary
from ari_mem_tui.checkpoint import index
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main
from ari_mem_tui.demo import write_demo
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.embedder import LETTA_HANDLE
from ari_mem_tui.search.record import MiniLMRecorder
from ari_mem_tui.search.replay import recorded_backend, replay
from ari_mem_tui.search.startup import recorded_startup_search


def startup_searches(path: Path) -> list[dict]:
    """The start-up searches in the raw access log: limit 5, scope = the reader's ancestors,
    query = its direction (§4.5)."""
    nodes = json.loads((path / "tree.json").read_text(encoding="utf-8"))["nodes"]
    asked = {(n["original_direction"] or "")[:200]: n for n in nodes if n["ancestor_ids"]}
    found = []
    for line in (path / "memory_access.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        node = asked.get(event.get("query"))
        wanted = node is not None and event["ancestor_ids"] == node["ancestor_ids"]
        if event["op"] == "read" and event["limit"] == 5 and wanted:
            found.append(event)
    return found


def late_inserts(ckpt: Checkpoint, at: float) -> list[str]:
    """Entries stamped before `at` whose write event (taken once the insert returned) is after
    it: written, but not yet on the server when a search ran at `at`."""
    return [
        event.joined_entry
        for event in ckpt.access_events
        if event.op == "write"
        and event.joined_entry
        and ckpt.entries_by_id[event.joined_entry].ts < at < event.ts
    ]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Checkpoint, Any]:
    """The default demo as `ari-mem-tui demo` writes it, and a MiniLM ranker over it."""
    path = write_demo(tmp_path_factory.mktemp("recorded") / "ckpt", record=MiniLMRecorder())
    ckpt = load_checkpoint(path)
    ranker = make_ranker(ckpt, "minilm")
    ranker.wait()
    yield path, ckpt, ranker
    ranker.stop()


def test_every_replay_agrees_with_its_recording_except_the_planted_late_insert(recorded):
    """GIVEN the default demo, WHEN every node's start-up search is replayed as the TUI does
    (as of its start, MiniLM), THEN it equals its recording (entries, order, window ranks,
    scores) except for the readers of a late insert, which differ."""
    path, ckpt, ranker = recorded
    assert ckpt.letta_embedding_config == LETTA_HANDLE
    agree, differ, expected = [], [], []
    for node_id in ckpt.nodes:
        result = replay(ckpt, node_id, ranker, with_tiers=False)
        if result.recorded is None:
            continue
        assert result.embedder == "minilm" and result.as_of_source == "start-up search"
        if result.recorded.hits:
            assert result.recorded.backend == "letta" and LETTA_HANDLE in result.recorded.ranker
        else:  # (the tool storm's reader got nothing: no score to tell the backend by)
            assert result.recorded.backend == "unknown"
        assert result.fidelity.note == ""  # recorded and replayed by the same embedder
        assert result.fidelity.own is True  # the run's own ranker: exact only where checked
        event, _ = recorded_startup_search(ckpt, ckpt.nodes[node_id])
        if late_inserts(ckpt, event.ts):
            expected.append(node_id)
        marks = [h.mark for h in [*result.hits, *result.recorded.hits]]
        if result.recorded.differences:
            differ.append(node_id)
            assert any(marks)
            fidelity = result.fidelity
            assert (fidelity.word, fidelity.exact, fidelity.verified) == (
                "not reproduced",
                False,
                False,
            )
            assert fidelity.cause.startswith("1 entry stamped before the search reached the")
            assert "(likely cause: 1 entry stamped before" in fidelity.label
        else:
            assert (result.fidelity.word, result.fidelity.exact) == ("exact", True)
            agree.append(node_id)
            assert not any(marks), node_id
            assert [(h.entry_id, h.global_rank) for h in result.hits] == [
                (h.entry_id, h.global_rank) for h in result.recorded.hits
            ]
            assert [h.score for h in result.hits] == pytest.approx(
                [h.score for h in result.recorded.hits]
            )
    assert len(agree) >= 30  # nearly every started node was compared
    assert differ == expected and len(differ) == 1  # exactly the one planted case
    marker = json.loads((path / demo.MARKER).read_text(encoding="utf-8"))
    assert marker["recorded_with"] == LETTA_HANDLE and marker["recordings_differ"] == differ


def test_the_late_insert_outranks_the_planted_readers_recorded_hits(recorded):
    """The replay's window holds the late entry above the recorded hits, which the recording's
    window never saw: each hit sits one window rank lower in the replay."""
    _path, ckpt, ranker = recorded
    (reader,) = json.loads((_path / demo.MARKER).read_text(encoding="utf-8"))["recordings_differ"]
    result = replay(ckpt, reader, ranker, with_tiers=False)
    event, _ = recorded_startup_search(ckpt, ckpt.nodes[reader])
    (late,) = late_inserts(ckpt, event.ts)
    entry = ckpt.entries_by_id[late]
    assert entry.ts < result.as_of <= event.ts  # stamped before the reader's start
    assert entry.node_id not in ckpt.nodes[reader].ancestor_ids  # another branch's finding
    ranking = ranker.rank(result.query, result.params["top_k"], before_ts=result.as_of)
    late_rank = ranking.global_rank(late)
    assert late_rank is not None and late_rank < max(h.global_rank for h in result.hits)
    recorded_ranks = {h.entry_id: h.global_rank for h in result.recorded.hits}
    for hit in result.hits:
        if hit.global_rank > late_rank and hit.entry_id in recorded_ranks:
            assert recorded_ranks[hit.entry_id] == hit.global_rank - 1
            assert "global_rank" in hit.differs


def test_recorded_results_are_in_aris_format(recorded):
    """§4.2 / §5.2: rows {entry_id, src_node_id, score}, passage ids of logged writes, the
    reader's ancestors only, at most `limit`, scores 1 − 0.01·r in ARI's own float arithmetic."""
    path, _ckpt, _ranker = recorded
    events = [json.loads(x) for x in (path / "memory_access.jsonl").read_text().splitlines()]
    written = {e["entry_id"]: e for e in events if e["op"] == "write"}
    searches = startup_searches(path)
    assert len(searches) >= 30
    with_hits = 0
    for event in searches:
        rows = event["results"]
        assert len(rows) <= event["limit"]
        with_hits += bool(rows)
        for row in rows:
            assert list(row) == ["entry_id", "src_node_id", "score"]
            assert row["entry_id"] in written
            assert written[row["entry_id"]]["node_id"] == row["src_node_id"]
            assert row["src_node_id"] in event["ancestor_ids"]
            rank = round((1 - row["score"]) * 100)
            assert row["score"] == max(0.0, 1.0 - 0.01 * rank)  # bit for bit, as ARI computes
        assert recorded_backend([r["score"] for r in rows]) in ("letta", "unknown")
    assert with_hits >= 30


def test_recording_is_deterministic(recorded, tmp_path: Path):
    path, _ckpt, _ranker = recorded
    again = write_demo(tmp_path / "again", record=MiniLMRecorder())  # vectors cached: quick
    for name in ("memory_access.jsonl", "settings.json", demo.MARKER, "tree.json"):
        assert (again / name).read_bytes() == (path / name).read_bytes(), name


def test_saw_on_the_demo_names_the_recordings_embedder(recorded, capsys):
    """`saw` agrees with the recording with nothing to excuse; a BM25 replay of the same node
    says the rankers differ and which one to use."""
    path, ckpt, _ranker = recorded
    (planted,) = json.loads((path / demo.MARKER).read_text(encoding="utf-8"))["recordings_differ"]
    node = next(n for n in ckpt.nodes.values() if len(n.ancestor_ids) >= 3 and n.id != planted)
    assert main(["saw", str(path), node.id, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["recorded"]["differences"] == 0 and data["fidelity"]["note"] == ""
    assert data["fidelity"]["exact"] is True and data["fidelity"]["label"].startswith("exact: ")
    assert "this tool's minilm" in data["recorded"]["ranker"]
    # the planted node differs, and nothing excuses it: the same embedder ranked both
    assert main(["saw", str(path), planted, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["recorded"]["differences"] > 0 and data["fidelity"]["note"] == ""
    assert main(["saw", str(path), node.id, "--json", "--embedder", "bm25"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "different rankers" in data["fidelity"]["note"]
    assert "replay with local minilm" in data["fidelity"]["note"]
    assert data["fidelity"]["exact"] is False
    assert data["fidelity"]["label"] == "stand-in: local BM25"


# ---------------------------------------------------------------- the recorder's contract


class Canned:
    """A recorder that answers every search with one fixed row and remembers what it was asked."""

    embedding_config = "test/canned-embedder"

    def __init__(self) -> None:
        self.asked: list[dict] = []

    def __call__(self, checkpoint: Path, searches: list[dict]) -> list[list[dict]]:
        assert (checkpoint / "memory_access.jsonl").is_file()  # the run is written before
        self.asked = searches
        return [
            [{"entry_id": f"canned-{i}", "src_node_id": s["ancestor_ids"][-1], "score": 1.0}]
            for i, s in enumerate(searches)
        ]


def test_write_demo_puts_the_recorders_answers_in_the_access_log(tmp_path: Path):
    record = Canned()
    path = write_demo(tmp_path / "canned", record=record)
    searches = startup_searches(path)
    assert len(searches) == len(record.asked) >= 30
    by_query = {s["query"]: i for i, s in enumerate(record.asked)}
    for event in searches:
        i = by_query[event["query"]]
        assert event["results"] == [
            {"entry_id": f"canned-{i}", "src_node_id": event["ancestor_ids"][-1], "score": 1.0}
        ]
        assert record.asked[i]["ts"] == event["ts"]
        assert record.asked[i]["ancestor_ids"] == event["ancestor_ids"]
    # only the planted reader's search is told of an entry that had not landed yet
    unseen = [s for s in record.asked if s["unseen"]]
    assert len(unseen) == 1 and len(unseen[0]["unseen"]) == 1
    raw = (path / "settings.json").read_text(encoding="utf-8")
    assert raw == json.dumps(
        {
            "letta_base_url": "http://localhost:8283",
            "letta_embedding_config": record.embedding_config,
        },
        indent=2,
    )
    ckpt = load_checkpoint(path)
    assert ckpt.problems == [] and ckpt.letta_embedding_config == record.embedding_config
    # everything but the recorded searches is the keyword demo's
    plain = write_demo(tmp_path / "plain")
    assert not (plain / "settings.json").exists()
    for name in ("tree.json", "memory_backup.jsonl.gz"):
        assert (plain / name).read_bytes() == (path / name).read_bytes()
    with gzip.open(path / "memory_backup.jsonl.gz", "rt", encoding="utf-8") as fh:
        texts = [json.loads(line).get("text", "") for line in fh]
    assert any(t.startswith("Tried the same idea on this branch (") for t in texts)


def test_cached_demo_is_regenerated_for_another_recorder(_isolated_cache: Path):
    keyword = demo.demo_checkpoint(nodes=6, seed=5)
    assert not (keyword / "settings.json").exists()
    canned = demo.demo_checkpoint(nodes=6, seed=5, record=Canned())
    assert canned == keyword  # the same place, rewritten
    assert json.loads((canned / "settings.json").read_text())["letta_embedding_config"] == (
        Canned.embedding_config
    )
    stamp = (canned / "tree.json").stat().st_mtime_ns
    assert demo.demo_checkpoint(nodes=6, seed=5, record=Canned()) == canned
    assert (canned / "tree.json").stat().st_mtime_ns == stamp  # reused


def test_a_failing_recorder_leaves_no_half_written_cached_demo(_isolated_cache: Path):
    class Broken(Canned):
        def __call__(self, checkpoint: Path, searches: list[dict]) -> list[list[dict]]:
            raise RuntimeError("no model")

    with pytest.raises(RuntimeError):
        demo.demo_checkpoint(nodes=5, seed=9, record=Broken())
    root = demo.cache_root()
    assert not (root / "demo-n5-s9").exists()
    assert not list(root.glob(".demo-n5-s9.tmp-*"))


def summary_json(capsys, path: str, *more: str) -> dict:
    assert main(["summary", path, "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_demo_s_check_names_its_one_late_insert(recorded, tmp_path, capsys, index_root):
    """The demo's handle is this tool's MiniLM: its own ranker. `summary` does not make
    MiniLM's vectors unasked (it says how to check); asked, every recorded search is replayed,
    and the one node whose recording a late insert changed is the one that differs, with
    that cause; the check is kept, and a plain `summary` reads it back."""
    import shutil

    run = tmp_path / "demo"
    shutil.copytree(recorded[0], run)
    unasked = summary_json(capsys, str(run))["replay_check"]
    first_summary = run_summary.kept(run)
    assert unasked["word"] == "run's ranker, unchecked" and unasked["checked"] == 0
    assert unasked["note"].startswith("not checked: summary --embedder minilm checks")
    # (none was tried: not "no recorded search it could rebuild", which a check would say)
    assert unasked["label"] == (
        "run's ranker, unchecked: local MiniLM, the run's embedding model"
        " (ari-mem-tui/all-MiniLM-L6-v2-int8)"
    )
    asked = summary_json(capsys, str(run), "--embedder", "minilm")
    check = asked["replay_check"]
    marker = json.loads((run / demo.MARKER).read_text(encoding="utf-8"))
    # the demo re-records its start-up searches with MiniLM; its LLM's own searches keep the
    # generator's keyword ranking, which MiniLM does not reproduce: said apart
    startup = check["by_kind"]["start-up"]
    assert check["word"] == "not reproduced" and startup["checked"] >= 30
    assert startup["reproduced"] == startup["checked"] - 1
    assert set(marker["recordings_differ"]) <= set(check["differs"])
    assert check["by_kind"]["other"]["checked"] > 0
    assert check["by_kind"]["other"]["reproduced"] == 0
    other = check["by_kind"]["other"]["checked"]
    # each cause with its count: the others' ranker, and the late insert (the start-up search
    # it changed, and an LLM search after it that the same late entry changed too)
    assert check["label"].endswith(
        f"differ (likely causes: {other - 1} searches: the other searches were recorded by another"
        f" ranker: {startup['reproduced']} of {startup['checked']} start-up searches reproduce,"
        f" none of the {other} others does; 2 searches: 1 entry stamped before the search"
        " reached the memory after it (a late insert): the search could not rank it, the"
        " replay does)"
    )
    again = summary_json(capsys, str(run))["replay_check"]
    assert again == check
    # the run's summary (`runs`): its first open's said unchecked; a check kept later is told
    # to it, and a summary made again (`runs --scan`) reads the kept check
    assert first_summary is not None and first_summary.replay_checked is None
    told = run_summary.kept(run)
    assert told is not None and told.made == first_summary.made
    wanted = (check["checked"], check["reproduced"], check["word"], check["ranker"])
    assert _replay_fields(told) == wanted and check["checked"] > 0
    (index.index_dir(run) / run_summary.SUMMARY_FILE).unlink()
    assert main(["runs", str(run), "--scan", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["runs"]
    remade = run_summary.kept(run)
    assert remade is not None and remade.made > told.made and _replay_fields(remade) == wanted
    assert listed["summary"]["replay_ranker"] == check["ranker"] == "minilm"


def _replay_fields(summary) -> tuple:
    return (
        summary.replay_checked,
        summary.replay_reproduced,
        summary.replay_word,
        summary.replay_ranker,
    )


def test_the_planted_tool_storm_starves_a_node_and_leaving_tool_entries_out_feeds_it(recorded):
    """GIVEN the demo as `demo` writes it: another branch's node swept the reader's idea with
    240 tool calls before the reader started, their automatic `Tool …` entries quoting its
    direction, THEN the reader's recorded start-up search returned nothing (starved, its
    window all Tool entries); the Health view's suggestion is to leave those entries out, and
    that what-if feeds it its five hits, all from its ancestors, and starves nobody."""
    from ari_mem_tui.health import compute_health
    from ari_mem_tui.what_if import parse_settings, suggest, what_if

    path, ckpt, ranker = recorded
    storm = demo.read_marker(path)["tool_storm"]
    reader, writer = storm["reader"], storm["writer"]
    assert (storm["entries"], storm["what_if"]) == (240, "drop=tool-auto")
    start = ckpt.nodes[reader]
    swept = [e for e in ckpt.entries_by_node.get(writer, []) if "sweep point" in e.text]
    assert len(swept) == 240 and all(e.text.startswith("Tool run_bash: ") for e in swept)
    assert writer not in start.ancestor_ids and reader not in ckpt.nodes[writer].ancestor_ids
    assert all((start.original_direction or "")[:160] in e.text for e in swept)
    health = compute_health(ckpt, ranker)
    row = next(n for n in health.nodes if n.node_id == reader)
    assert row.starved and (row.hits, row.hits_source, row.share_tool) == (0, "recorded", 1.0)
    settings, why = suggest(health)
    assert settings.drop == ("tool-auto",) and "automatic Tool entries fill" in why
    result = what_if(ckpt, ranker, parse_settings(storm["what_if"]))
    changes = result.changes
    assert reader in changes.no_longer_starved
    assert changes.newly_starved == [] and changes.starved_what_if == 0
    fed = next(n for n in changes.nodes if n.node_id == reader)
    assert (fed.hits_own, fed.hits_what_if, fed.lost) == (0, 5, [])
    assert {ckpt.entries_by_id[e].node_id for e in fed.gained} <= set(start.ancestor_ids)


async def test_the_health_view_suggests_the_planted_fix_and_shows_it(recorded):
    """The Health view of the same demo comes with "leave out Tool entries" checked and says
    why; w, Enter: the starved reader shows no longer starved."""
    from textual.widgets import Checkbox, Static

    from ari_mem_tui.run import RunOptions, open_run
    from ari_mem_tui.tui.screens.health import HealthScreen
    from tests.tui_app_helpers import app_with, idle, press, settle, wait_for

    path, _ckpt, _ranker = recorded
    reader = demo.read_marker(path)["tool_storm"]["reader"]
    app = app_with(lambda _progress: open_run(RunOptions(checkpoint=path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("H")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, HealthScreen) and app.screen.result is not None,
            "the health result",
        )
        await idle(pilot)
        screen = app.screen
        assert screen.query_one("#wi-tool", Checkbox).value is True
        said = screen.query_one("#wi-said", Static).content.plain
        assert said.startswith("suggested: drop=tool-auto, as ARI's automatic Tool entries fill")
        await press(pilot, "w", "enter")
        await wait_for(pilot, lambda: screen.what_if_result is not None, "the what-if")
        await idle(pilot)
        assert reader in screen.what_if_result.changes.no_longer_starved
        summary = screen.query_one("#wi-summary", Static).content.plain
        assert "left out: ARI's automatic `Tool …` entries" in summary
        assert "newly starved" in summary and screen.what_if_result.changes.starved_what_if == 0
