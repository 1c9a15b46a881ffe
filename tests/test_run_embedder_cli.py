"""`--embedder run` from the command line, against the FAKE endpoint of tests/fake_embeddings.py:
the endpoint and model said before anything is sent, the fidelity every output carries, one
line and the local ranker's answer when the endpoint fails, the key never shown, and nothing
sent anywhere unless the run ranker was asked for (flag or config file)."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from fake_embeddings import error, fake_embeddings

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main
from ari_mem_tui.render.dossier import dossier_markdown
from ari_mem_tui.run import EmbedOptions, run_model_ranker
from ari_mem_tui.search.embedded import start_queries
from ari_mem_tui.search.fidelity import HASH_UNKNOWN
from ari_mem_tui.search.replay import replay
from ari_mem_tui.search.run_model import KEY_ENV

KEY = "sk-cli-SECRET-9876543210"


@pytest.fixture
def run_dir(small_ckpt: Path, tmp_path: Path) -> Path:
    """A copy of the small demo whose settings.json names OpenAI's handle, as a real run's."""
    path = tmp_path / "run"
    shutil.copytree(small_ckpt, path)
    settings = {"letta_embedding_config": "openai/text-embedding-3-small"}
    (path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return path


def a_node(path: Path) -> str:
    ckpt = load_checkpoint(path)
    return next(n.id for n in ckpt.nodes.values() if len(n.ancestor_ids) >= 2)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_saw_names_endpoint_and_model_before_sending_and_carries_the_fidelity(run_dir, capsys):
    node = a_node(run_dir)
    with fake_embeddings(dim=1536) as fake:
        argv = ["saw", str(run_dir), node, "--json", "--embedder", "run", "--embed-url", fake.url]
        assert main(argv) == 0
        sent = fake.texts()
    out, err = capsys.readouterr()
    data = json.loads(out)
    first = err.splitlines()[0]
    assert "text-embedding-3-small at " in first and fake.url in first  # the handle's model
    assert "the run's handle openai/text-embedding-3-small" in first
    assert data["embedder"] == "run:text-embedding-3-small" and not data["fallback"]
    # the demo's searches were recorded by MiniLM, not by this endpoint: no hash reproduces
    # them, so the run's model is not the run's ranking here, and says why
    fidelity = data["fidelity"]
    assert fidelity["exact"] is False and fidelity["own"] is False
    assert fidelity["label"] == f"stand-in: {HASH_UNKNOWN}"
    assert fidelity["hash"]["found"] is False and fidelity["hash"]["probes"] == 5
    assert "footer hash unknown: no candidate reproduced" in err
    assert fake.url in fidelity["ranker"]
    assert data["query"] in sent  # the query went too, with the passages
    assert any(data["hits"][0]["text"] in text for text in sent)
    # one node asked for: no other node's start-up query is sent but the few searches the
    # hash was checked on (every one would be if prefetched)
    others = set(start_queries(load_checkpoint(run_dir))) - {data["query"]}
    assert len(others) > 5 and 0 < len(others & set(sent)) <= 5


def test_the_plan_is_said_before_the_ranker_sends_anything(run_dir):
    ckpt = load_checkpoint(run_dir)
    with fake_embeddings(dim=1536) as fake:
        when: list[int] = []
        ranker = run_model_ranker(
            ckpt,
            EmbedOptions(url=fake.url),
            on_step=lambda _n, _m, part: when.append(len(fake.requests)),
        )
        assert ranker.wait(60)
        assert when == [0] and fake.requests  # said with nothing sent; sent afterwards
        ranker.stop()


def test_text_output_and_dossier_name_the_ranker_and_whether_it_is_the_run_s(run_dir, capsys):
    node = a_node(run_dir)
    with fake_embeddings(dim=1536) as fake:
        argv = ["saw", str(run_dir), node, "--embedder", "run", "--embed-url", fake.url]
        assert main(argv) == 0
        text = capsys.readouterr().out
        ckpt = load_checkpoint(run_dir)
        ranker = run_model_ranker(ckpt, EmbedOptions(url=fake.url))
        ranker.wait(60)
        result = replay(ckpt, node, ranker)
        ranker.stop()
    said = f"ranker stand-in: {HASH_UNKNOWN}"
    assert said in " ".join(text.split()) and "ranker exact" not in text
    dossier = dossier_markdown(result, ckpt)
    assert f"- ranker: stand-in: {HASH_UNKNOWN}" in dossier and "exact:" not in dossier
    assert "- checkpoint footer hash unknown: no candidate reproduced" in dossier


def test_an_offline_endpoint_is_one_line_and_minilm_answers_labelled(run_dir, capsys):
    node = a_node(run_dir)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    argv = ["saw", str(run_dir), node, "--json", "--embedder", "run", "--embed-url", url]
    assert main([*argv, "--embed-deadline", "2"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    failures = [line for line in err.splitlines() if "unavailable" in line]
    assert len(failures) == 1 and "connection refused" in failures[0]
    assert "the local MiniLM ranker answers instead" in failures[0]
    assert data["embedder"] == "minilm" and data["fallback"] is True
    assert data["fidelity"]["exact"] is False
    assert data["fidelity"]["label"] == (
        "stand-in: local MiniLM in place of run:text-embedding-3-small (unavailable)"
    )
    assert any("unavailable" in note for note in data["notes"])


def test_the_key_is_sent_but_never_shown(run_dir, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    node = a_node(run_dir)
    outputs = []
    with fake_embeddings(dim=1536) as fake:
        fake.script = [error(401, f"Incorrect API key provided: {KEY}")]
        argv = ["saw", str(run_dir), node, "--json", "--embedder", "run"]
        assert main([*argv, "--embed-url", fake.url + "?api_key=querykey"]) == 0
        assert fake.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
        outputs.append(capsys.readouterr())
        # credentials in the URL: httpx sends them as Basic auth, and no message shows them
        fake.script = [error(403, "forbidden for user:urlpass")]
        assert main([*argv, "--embed-url", fake.url.replace("//", "//user:urlpass@")]) == 0
        outputs.append(capsys.readouterr())
    for out, err in outputs:
        for secret in (KEY, "urlpass", "querykey"):
            assert secret not in out and secret not in err
        assert f"key from ${KEY_ENV}" in err and "unavailable" in err
    assert "Incorrect API key provided: ***" in outputs[0].err
    # "user:urlpass" is what Basic auth encodes: masked whole (model/secrets.py)
    assert "(HTTP 403: forbidden for ***)" in outputs[1].err


def test_nothing_leaves_the_machine_unless_the_run_ranker_is_asked_for(
    run_dir, capsys, monkeypatch, tmp_path
):
    """Default and BM25 replays open no socket, though settings.json names OpenAI's handle;
    the config file's "embedder": "run" is asking, and then texts go to its endpoint."""
    node = a_node(run_dir)
    connects: list[object] = []
    real_connect = socket.socket.connect

    def guard(self, address):
        connects.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guard)
    for extra in ([], ["--embedder", "bm25"], ["--embedder", "minilm"]):
        assert main(["saw", str(run_dir), node, "--json", *extra]) == 0
        assert json.loads(capsys.readouterr().out)["embedder"] in ("minilm", "bm25")
    assert connects == []
    with fake_embeddings(dim=1536) as fake:
        config = tmp_path / "config"  # conftest points ARI_MEM_TUI_CONFIG_DIR here
        config.mkdir(exist_ok=True)
        settings = {"embedder": "run", "embed_url": fake.url, "embed_model": "cfg-model"}
        (config / "config.json").write_text(json.dumps(settings), encoding="utf-8")
        assert main(["saw", str(run_dir), node, "--json"]) == 0
        assert fake.requests and {r["body"]["model"] for r in fake.requests} == {"cfg-model"}
    data = json.loads(capsys.readouterr().out)
    assert data["embedder"] == "run:cfg-model"
    assert data["fidelity"]["label"] == (
        "stand-in: cfg-model (the run embedded with openai/text-embedding-3-small)"
    )


def test_health_names_the_ranker_and_its_fidelity(run_dir, capsys):
    with fake_embeddings(dim=1536) as fake:
        argv = ["health", str(run_dir), "--json", "--embedder", "run", "--embed-url", fake.url]
        main(argv)
    data = json.loads(capsys.readouterr().out)
    assert data["ranker"] == "run:text-embedding-3-small"
    assert data["fidelity"]["label"] == f"stand-in: {HASH_UNKNOWN}"  # (as saw's, above)


def test_a_run_without_a_handle_needs_the_endpoint_named(small_ckpt, tmp_path, capsys):
    path = tmp_path / "bare"
    shutil.copytree(small_ckpt, path)
    (path / "settings.json").unlink(missing_ok=True)
    assert main(["saw", str(path), a_node(path), "--json", "--embedder", "run"]) == 0
    out, err = capsys.readouterr()
    assert "give --embed-url URL and --embed-model NAME" in err
    assert json.loads(out)["fidelity"]["exact"] is False
