"""Every replay checks itself, and a moved run's hash is found: judged on the ARI-faithful run
recorded against a SIMULATED Letta (tests/ari_like/simulated_letta.py: Letta's cosine ranking
over the suite's deterministic embeddings) and replayed from its files with `--embedder run`
through the FAKE OpenAI-compatible endpoint (tests/fake_embeddings.py), which serves the very
vectors the simulated server ranked with. The run is launched from ARI's web UI in a
workspace, then copied elsewhere, as a run copied off a cluster is: (a) keeping one place that
names the path it ran at, (b) keeping none. The live suite does the same against a real Letta
(tests/test_ari_like_live.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_embeddings import FakeEmbeddings

from ari_mem_tui.cli import main
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.fidelity import HASH_UNKNOWN, WORDS
from ari_mem_tui.search.replay import replay
from ari_mem_tui.search.run_model import EmbedOptions
from tests.ari_like import SIMULATED_DIM, generate_simulated_letta, second_hand
from tests.ari_like.files import RECORDS, copy_run

SOURCES = {
    "tree": "tree.json experiment_file",
    "run_log": "ari_run_1781946000.log",
    "meta": "meta.json checkpoint_dir",
    "ari_log": "ari.log checkpoint=",
    "trace": "trace_log of node_",
}


@pytest.fixture(scope="module")
def fake():
    endpoint = FakeEmbeddings(dim=SIMULATED_DIM).start()
    yield endpoint
    endpoint.stop()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return generate_simulated_letta(tmp_path_factory.mktemp("ws"))


@pytest.fixture(scope="module")
def copies(recorded, tmp_path_factory):
    """The run copied elsewhere: keeping each place that names where it ran, and none."""
    root = tmp_path_factory.mktemp("copies")
    made = {place: copy_run(recorded.path, root / place, keep=(place,)) for place in RECORDS}
    made["none"] = copy_run(recorded.path, root / "none")
    return made


def recorded_searches(recorded) -> int:
    """The run's recorded searches: every start-up search, the LLM's own four of the plan and
    the planted second-hand leak's two (tests/ari_like/second_hand.py)."""
    return len(recorded.planted.startup) + 4 + len(second_hand.CALLS)


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def summary(capsys, path: Path, fake, *more: str) -> dict:
    return run_json(
        capsys, "summary", str(path), "--json", "--embedder", "run", "--embed-url", fake.url, *more
    )


def test_where_it_ran_every_recorded_search_is_reproduced(recorded, fake, capsys):
    """The run where it ran: its own path's hash reproduces every recorded search."""
    data = summary(capsys, recorded.path, fake)
    check = data["replay_check"]
    searches = recorded_searches(recorded)
    assert (check["checked"], check["reproduced"], check["differs"]) == (searches, searches, [])
    assert check["word"] == "exact" and check["ranker"] == "run:nomic-embed-text"
    assert data["checkpoint_hash_source"]["source"] == "this path"
    assert data["checkpoint_hash_source"]["found"] is True


@pytest.mark.parametrize("place", RECORDS)
def test_a_copy_finds_the_hash_where_its_files_name_the_path(copies, recorded, fake, capsys, place):
    """(a) GIVEN the copy keeps one place naming where the run ran, WHEN it is summarised and a
    node replayed with the run's model, THEN the hash of that path is used, said with where it
    came from and what checked it, and every recorded search is reproduced: exact."""
    path = copies[place]
    data = summary(capsys, path, fake)
    found = data["checkpoint_hash_source"]
    assert found["found"] is True and found["source"].startswith(SOURCES[place])
    assert found["path"] == str(recorded.path.resolve())
    assert found["reproduced"] == found["probes"] == 5
    first = found["tried"][0]  # this path's hash, tried first and rejected
    assert first["source"] == "this path" and first["hash"] != found["hash"]
    check = data["replay_check"]
    assert check["word"] == "exact" and check["differs"] == []
    assert check["checked"] == check["reproduced"] > len(recorded.planted.startup)
    said = capsys.readouterr().err  # (summary's own lines were read above; this is saw's)
    node_id = recorded.planted.nodes["A1a"]
    argv = ["saw", str(path), node_id, "--embedder", "run", "--embed-url", fake.url, "--json"]
    saw = run_json(capsys, *argv)
    assert saw["fidelity"]["exact"] is True and saw["fidelity"]["verified"] is True
    assert saw["fidelity"]["hash"]["source"].startswith(SOURCES[place])
    del said


def test_every_node_of_a_copy_is_exact_with_the_found_hash(copies, recorded, fake):
    opened = open_run(
        RunOptions(checkpoint=copies["tree"], embedder="run", embed=EmbedOptions(url=fake.url))
    )
    opened.ranker.wait()
    for node_id in recorded.planted.startup:
        result = replay(opened.checkpoint, node_id, opened.ranker, with_tiers=False)
        assert result.fidelity.word == "exact" and result.recorded.differences == 0, node_id
    opened.ranker.stop()


def test_a_copy_naming_nowhere_says_stand_in_everywhere_and_counts_what_differs(
    copies, recorded, fake, capsys
):
    """(b) GIVEN the copy names nowhere, WHEN summarised, THEN no candidate reproduces: said
    once with what was tried; `replay_check` counts the nodes that differ, and no view calls
    a differing node exact: it is a stand-in, "footer hash unknown"."""
    path = copies["none"]
    data = summary(capsys, path, fake)
    found = data["checkpoint_hash_source"]
    assert found["found"] is False and [c["source"] for c in found["tried"]] == ["this path"]
    check = data["replay_check"]
    assert check["word"] == "stand-in" and check["label"].startswith(f"stand-in: {HASH_UNKNOWN}")
    assert check["checked"] == recorded_searches(recorded) and check["reproduced"] == 0
    assert set(recorded.planted.startup) <= set(check["differs"])
    for node_id in list(recorded.planted.startup)[:1]:
        argv = ["saw", str(path), node_id, "--embedder", "run", "--embed-url", fake.url]
        saw = run_json(capsys, *argv, "--json")
        fidelity = saw["fidelity"]
        assert saw["recorded"]["differences"] > 0
        assert fidelity["exact"] is False and fidelity["verified"] is False
        assert fidelity["word"] == "stand-in" and fidelity["label"] == f"stand-in: {HASH_UNKNOWN}"
        assert main([*argv]) == 0
        text = capsys.readouterr()
        assert "exact" not in text.out.replace("exact scope", "")  # (the pre-filter's table)
        assert "footer hash unknown" in text.err and text.err.count("no candidate") == 1
    assert main(["summary", str(path), "--embedder", "run", "--embed-url", fake.url]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # (as one line: the table wraps)
    assert "exact" not in shown and re.search(r"differs on \d+ nodes", shown)


def test_the_hash_given_wins(copies, recorded, fake, capsys):
    here = recorded.path.resolve()
    import hashlib

    given = hashlib.sha1(str(here).encode()).hexdigest()[:12]
    data = summary(capsys, copies["none"], fake, "--checkpoint-hash", given)
    assert data["checkpoint_hash_source"] == {
        "hash": given,
        "source": "--checkpoint-hash",
        "path": "",
        "found": None,
        "reproduced": 0,
        "probes": 0,
        "tried": [],
        "note": "",
    }
    assert data["replay_check"]["word"] == "exact"


def test_the_kept_check_answers_a_reopen_without_sending_anything(copies, fake, capsys, tmp_path):
    import shutil

    path = Path(shutil.copytree(copies["meta"], tmp_path / "run"))  # (changed below: a copy)
    first = summary(capsys, path, fake)
    sent = len(fake.requests)
    again = summary(capsys, path, fake)
    assert len(fake.requests) == sent  # read back: no ranker built, nothing embedded
    assert again == first
    (path / "meta.json").write_text("{}", encoding="utf-8")  # another file: checked again
    changed = summary(capsys, path, fake)
    assert len(fake.requests) > sent and changed["checkpoint_hash_source"]["found"] is False


def test_a_stand_in_s_check_never_replaces_a_kept_one(copies, fake, capsys, tmp_path):
    """The run has one kept check: `summary --embedder bm25` (a stand-in, which compares
    nothing) after an exact check leaves the exact one for the next open to read."""
    import shutil

    path = Path(shutil.copytree(copies["trace"], tmp_path / "run"))
    first = summary(capsys, path, fake)["replay_check"]
    assert first["word"] == "exact" and first["checked"] > 0
    stand_in = run_json(capsys, "summary", str(path), "--json", "--embedder", "bm25")
    assert stand_in["replay_check"]["word"] == "stand-in"
    run = open_run(RunOptions(checkpoint=path, embedder="bm25"))
    kept = run.check_store.latest(run.checkpoint)
    assert (kept.word, kept.checked) == ("exact", first["checked"])
    assert summary(capsys, path, fake)["replay_check"] == first


def test_the_words_are_the_five_and_only_those(copies, recorded, fake, capsys):
    """Every verdict a view shows is one of search/fidelity.py's words."""
    for path in (recorded.path, copies["none"]):
        data = summary(capsys, path, fake)
        assert data["replay_check"]["word"] in WORDS


async def _shown(opener, node_id: str) -> tuple[str, str, str]:
    """(the Hits title, the status line's check, the Hits header) once the node's hits and the
    run's check are on screen."""
    from tests.tui_app_helpers import app_with, settle, wait_for

    app = app_with(opener, initial_node=node_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        hits = app.query_one("#hits-pane")
        await wait_for(pilot, lambda: getattr(hits, "replay", None) is not None, "the hits")
        # the stand-in's hits come first while the run's vectors build: wait for the last ones
        await wait_for(pilot, lambda: "not ready" not in str(hits.border_title), "the run's ranker")
        bar = app.main.status_bar
        await wait_for(pilot, lambda: bar.check is not None, "the run's replay check")
        check = str(app.query_one("#status-check").render())
        return str(hits.border_title), check, str(app.query_one("#hits-query").render())


async def test_the_tui_says_stand_in_for_a_copy_naming_nowhere(copies, recorded, fake) -> None:
    """(b) in the TUI: the Hits title and header name the stand-in and why, the status line
    says the run's check counted what differs; "exact" nowhere."""

    def opener(_progress):
        options = RunOptions(
            checkpoint=copies["none"], embedder="run", embed=EmbedOptions(url=fake.url)
        )
        return open_run(options)

    node_id = recorded.planted.nodes["A1a"]
    title, check, header = await _shown(opener, node_id)
    assert "stand-in: run:nomic-embed-text, hash unknown" in title
    assert check == f"stand-in 0/{recorded_searches(recorded)}"
    assert HASH_UNKNOWN in header
    assert "exact" not in title + check + header


async def test_the_tui_says_exact_where_the_check_reproduced(copies, recorded, fake) -> None:
    def opener(_progress):
        options = RunOptions(
            checkpoint=copies["trace"], embedder="run", embed=EmbedOptions(url=fake.url)
        )
        return open_run(options)

    searches = recorded_searches(recorded)
    title, check, _header = await _shown(opener, recorded.planted.nodes["A1a"])
    assert "exact: run:nomic-embed-text" in title and check == f"exact {searches}/{searches}"
