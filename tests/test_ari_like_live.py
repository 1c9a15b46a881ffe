"""The ARI-faithful run (tests/ari_like) recorded against a REAL Letta 0.16.7 (live suite only:
`bash scripts/letta/live-tests.sh`, phase "up"): Letta-mode replays give every recorded
start-up search exactly, so do file-mode replays through the suite's embedding server (the
run's own embedding model, no Letta call), and the audit of its files finds the planted
findings and nothing else. `record_letta_run(url, path)` is the recording (~3 min), made once
per module and reused by every test here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from letta_helpers import embed_url, letta_args, only_the_embedding_endpoint, saw_json

from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.cli import main
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.backends import run_backend
from ari_mem_tui.search.replay import replay
from tests.ari_like import LETTA_EMBEDDING, record_letta_run, second_hand
from tests.ari_like.files import copy_run
from tests.ari_like.run import RUN_ID

pytestmark = pytest.mark.letta_live


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory):
    url = os.environ.get("LETTA_LIVE_URL")
    if not url or os.environ.get("LETTA_LIVE_PHASE", "up") != "up":
        pytest.fail("needs LETTA_LIVE_URL in live phase 'up' (scripts/letta/live-tests.sh)")
    # where ARI runs a checkpoint: <workspace>/checkpoints/<run_id> (its hash is of this path)
    path = tmp_path_factory.mktemp("workspace") / "checkpoints" / RUN_ID
    return url, record_letta_run(url, path, web=True)  # launched from ARI's web UI


def test_live_letta_mode_replays_equal_every_recorded_start_up_search(recorded):
    """GIVEN the run recorded against this server as ARI records it (passages with ARI's
    footer, `passages.search(top_k=200)`, post-filter, `1 − 0.01·r`), WHEN every node is
    replayed with `--letta-url` and default settings, THEN its hits are the recorded ones:
    passages, order and scores, with nothing marked."""
    url, run = recorded
    opened = open_run(RunOptions(checkpoint=run.path, letta=letta_args(url), index=False))
    ckpt = opened.checkpoint
    assert len(run.planted.startup) >= 19
    pool = sum(1 for e in ckpt.entries)
    assert pool > 200  # the window (top_k 200) is smaller than the pool: ranks matter
    for node_id, want in run.planted.startup.items():
        result = replay(ckpt, node_id, opened.ranker)
        got = [(ckpt.entries_by_id[h.entry_id].letta_id, h.node_id, h.score) for h in result.hits]
        assert [g[:2] for g in got] == [w[:2] for w in want], node_id  # passages, order
        assert [g[2] for g in got] == pytest.approx([w[2] for w in want]), node_id
        assert result.recorded is not None and result.recorded.differences == 0, node_id
        assert result.fidelity.note == "" and result.embedder == f"letta:{url}"
        assert result.fidelity.exact is True


def test_live_file_mode_through_the_embed_server_equals_every_recorded_start_up_search(
    recorded, capsys
):
    """GIVEN the same recorded run, its server's agent embedding with the suite's embedding
    server (settings.json names that handle), WHEN every node that searched is replayed from
    the FILES with `--embedder run --embed-url <that server>` (no Letta URL; any connection but
    to the endpoint fails the test), THEN each replay is its recorded start-up search: the same
    passages in the same order with the same scores, nothing marked, labelled exact."""
    url, run = recorded
    ckpt = load_checkpoint(run.path)
    assert ckpt.letta_embedding_config == LETTA_EMBEDDING
    exact = f"exact: the run's embedding model ({LETTA_EMBEDDING}), its recorded search reproduced"
    with only_the_embedding_endpoint() as refused:
        # the guard holds: a Letta-mode saw cannot reach the server inside it
        assert (
            main(["saw", str(run.path), next(iter(run.planted.startup)), "--letta-url", url]) == 2
        )
        assert "cannot reach a Letta server" in capsys.readouterr().err
        refused.clear()
        for node_id, want in run.planted.startup.items():
            argv = [str(run.path), node_id, "--embedder", "run", "--embed-url", embed_url()]
            data = saw_json(capsys, *argv)
            assert data["embedder"] == "run:text-embedding-3-small" and not data["fallback"]
            assert data["as_of_source"] == "start-up search" and data["query_source"] == "start"
            letta_ids = [ckpt.entries_by_id[h["entry_id"]].letta_id for h in data["hits"]]
            got = [(lid, h["node_id"]) for lid, h in zip(letta_ids, data["hits"], strict=True)]
            assert got == [w[:2] for w in want], node_id  # passages, order
            scores = [h["score"] for h in data["hits"]]
            assert scores == pytest.approx([w[2] for w in want], abs=1e-9), node_id
            assert data["recorded"]["backend"] == "letta" and data["recorded"]["differences"] == 0
            assert not any(h["mark"] for h in data["hits"] + data["recorded"]["hits"]), node_id
            assert data["fidelity"]["exact"] is True and data["fidelity"]["label"] == exact
            assert data["fidelity"]["note"] == "", node_id
    assert len(run.planted.startup) >= 19 and any(run.planted.startup.values())


def test_live_saw_json_names_the_server_and_agrees(recorded, capsys):
    url, run = recorded
    node_id = run.planted.nodes["A1a"]
    assert main(["saw", str(run.path), node_id, "--json", "--letta-url", url]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["embedder"] == f"letta:{url}" and data["recorded"]["backend"] == "letta"
    assert data["recorded"]["differences"] == 0
    want = [score for _, _, score in run.planted.startup[node_id]]
    assert [h["score"] for h in data["hits"]] == pytest.approx(want)


def test_live_recorded_run_audits_to_the_planted_findings_only(recorded):
    _url, run = recorded
    ckpt = load_checkpoint(run.path)
    assert run_backend(ckpt).name == "letta"
    report = audit(ckpt)
    found = {
        (f.kind, f.node_id, tuple(f.targets), f.tool)
        for f in [*report.leaks, *report.scope_violations, *report.rejected_writes]
    }
    planted = {(f["kind"], f["node"], tuple(f["targets"]), f["tool"]) for f in run.planted.findings}
    assert found == planted and len(planted) == 6
    assert report.unattributed == []
    assert run.planted.quoting_entries, "the search for a refusal found its passage"
    # the planted second-hand leak: D1's kept search of C, inherited by its descendants
    tainted, readers = second_hand.expected(run.planted)
    assert second_hand.found(report, ckpt) == (tainted, readers) and len(readers) == 3


def test_live_recording_is_reusable_from_its_path(recorded):
    """Another live test can take the recorded run as it is: its files say what the server
    embedded with, and the agent is still there under the run's hash."""
    url, run = recorded
    settings = json.loads((run.path / "settings.json").read_text(encoding="utf-8"))
    assert settings["letta_embedding_config"] == "openai/text-embedding-3-small"
    assert Path(run.path).name == RUN_ID
    opened = open_run(RunOptions(checkpoint=run.path, letta=letta_args(url), index=False))
    assert opened.source_label.endswith(f"agent ari_agent_{checkpoint_hash(run.path)}")


# ---------------------------------------------------------------- a copy of the run (issue 29)


def live_summary(capsys, path: Path, *more: str) -> dict:
    assert main(["summary", str(path), "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def test_live_a_moved_copy_finds_its_hash_in_its_files_and_reproduces_every_search(
    recorded, tmp_path, capsys
):
    """(a) GIVEN the run copied elsewhere, keeping its stdout log (which names where it ran),
    WHEN it is summarised from its files with the run's model through the embedding server,
    THEN the hash of that path is found there and checked, and every recorded search the
    replay can rebuild is reproduced: exact; in Letta mode (no --checkpoint-hash) the run's
    agent is found the same way and every search reproduced through the server."""
    _url, run = recorded
    copy = copy_run(run.path, tmp_path / "copy", keep=("run_log",))
    with only_the_embedding_endpoint():
        data = live_summary(capsys, copy, "--embedder", "run", "--embed-url", embed_url())
    found = data["checkpoint_hash_source"]
    assert found["found"] is True and found["source"].startswith("ari_run_")
    assert found["hash"] == checkpoint_hash(run.path) and found["reproduced"] == found["probes"]
    check = data["replay_check"]
    assert check["word"] == "exact" and check["checked"] == check["reproduced"]
    assert check["checked"] >= len(run.planted.startup) and check["differs"] == []


def test_live_a_copy_naming_nowhere_is_a_stand_in_that_counts_what_differs(
    recorded, tmp_path, capsys
):
    """(b) GIVEN a copy that names nowhere, THEN no view calls its replays exact: the run's
    model is a stand-in (footer hash unknown), and `replay_check` counts the nodes that
    differ; `saw` says the same of a node, with the candidates tried said once."""
    _url, run = recorded
    copy = copy_run(run.path, tmp_path / "copy")
    with only_the_embedding_endpoint():
        data = live_summary(capsys, copy, "--embedder", "run", "--embed-url", embed_url())
        node_id = run.planted.nodes["A1a"]
        argv = [str(copy), node_id, "--embedder", "run", "--embed-url", embed_url()]
        saw = saw_json(capsys, *argv)
    assert data["checkpoint_hash_source"]["found"] is False
    check = data["replay_check"]
    assert check["word"] == "stand-in" and check["reproduced"] < check["checked"]
    assert set(check["differs"]) & set(run.planted.startup)
    assert saw["fidelity"]["exact"] is False and saw["fidelity"]["word"] == "stand-in"


def test_live_letta_mode_finds_a_moved_run_s_agent_by_reproducing_its_searches(
    recorded, tmp_path, capsys
):
    url, run = recorded
    copy = copy_run(run.path, tmp_path / "copy")  # names nowhere: the server's agents are tried
    data = live_summary(capsys, copy, "--letta-url", url)
    found = data["checkpoint_hash_source"]
    assert found["hash"] == checkpoint_hash(run.path) and found["found"] is True
    assert found["source"].startswith("the server's agent ari_agent_")
    check = data["replay_check"]
    assert check["word"] == "exact" and check["checked"] == check["reproduced"]


def test_live_why_is_the_server_s_full_ranking_step_by_step(recorded):
    """GIVEN the run recorded against this server, WHEN every searched node is asked why about
    every entry (Letta mode: the server ranks), THEN each verdict and its numbers are those of
    a brute-force replay made here from the server's whole ranking (`passages.search` with a
    top_k as big as the pool, as of the node's search) and the format doc's post-filter: the
    window (global rank below top_k, and what filled it above), the limit (rank among the
    kept rows, ARI's score of its global rank), Tier 1b's dedupe (the planted echo), the
    times and scopes; every reason of a Letta run is met."""
    from collections import Counter
    from datetime import UTC, datetime

    from letta_client import Letta

    from ari_mem_tui.search.why import NodeSearch

    url, run = recorded
    opened = open_run(RunOptions(checkpoint=run.path, letta=letta_args(url), index=False))
    ckpt = opened.checkpoint
    client = Letta(base_url=url, timeout=120, max_retries=0)
    agent = next(iter(client.agents.list(name=f"ari_agent_{checkpoint_hash(run.path)}")))
    together = {
        n for p in run.planted.same_direction if p["order"] == "together" for n in p.values()
    }
    by_letta = {e.letta_id: e for e in ckpt.entries if e.letta_id}
    found: Counter[tuple[str, str]] = Counter()
    for node_id in (n for n in run.planted.startup if n not in together):
        search = NodeSearch(ckpt, node_id, opened.ranker)
        start, query = run.planted.startup_ts[node_id], search.result.query
        assert search.before == start
        full = client.agents.passages.search(
            agent.id,
            query=query,
            top_k=len(ckpt.entries) + 10,
            end_datetime=datetime.fromtimestamp(start, tz=UTC),
        ).results
        order = [by_letta[row.id] for row in full]
        glob = {e.id: g for g, e in enumerate(order)}
        scope = set(ckpt.nodes[node_id].ancestor_ids)
        window = order[:200]
        kept = [e for e in window if e.kind == "node_scope" and e.node_id in scope]
        writers = Counter(e.node_id or "" for e in window)
        for entry in ckpt.entries:
            got = search.why(entry)
            verdict = got.verdict
            found[(verdict, got.step(verdict).reason if verdict != "seen" else "")] += 1
            if entry.ts >= start:
                assert verdict == "time", (node_id, entry.id)
                continue
            if entry.kind != "node_scope":
                assert (verdict, got.step("searchable").reason) == ("searchable", "react-kind")
            elif entry.node_id not in scope:
                assert verdict == "scope", (node_id, entry.id)
            elif glob[entry.id] >= 200:
                step = got.step("window")
                assert verdict == "window" and step.numbers["global_rank"] == glob[entry.id]
                by_node = Counter()
                for row in step.numbers["filled_by"]:
                    by_node[row["node_id"]] += row["rows"]
                assert by_node == writers and step.numbers["pool"] == len(order)
            else:
                rank = [e.id for e in kept].index(entry.id) + 1
                score = round(max(0.0, 1 - 0.01 * glob[entry.id]), 2)
                if rank > 5:
                    assert verdict == "limit" and got.step("limit").numbers["rank"] == rank
                    assert got.step("limit").numbers["score"] == score
                else:
                    assert verdict in ("seen", "context") and got.hit["rank"] == rank
                    assert got.hit["score"] == score and got.hit["global_rank"] == glob[entry.id]
    assert {
        ("time", "after-start"),
        ("time", "own-after-search"),
        ("searchable", "react-kind"),
        ("scope", "other-branch"),
        ("window", "below-window"),
        ("limit", "past-limit"),
        ("context", "in-tier-1b"),
        ("seen", ""),
    } <= set(found), found
