"""The BM25 index built ahead on another core while a first open loads (search/bm25_warm.py):
taken only when its pool's key is the ranker's own, then the very index the ranker would have
built; any other case builds here as before, and no process is left behind."""

from __future__ import annotations

import gzip
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ari_mem_tui.checkpoint.load import backup_entries, load_checkpoint
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search import bm25_warm
from ari_mem_tui.search.embedded import BM25Ranker, Pool, bm25_key
from ari_mem_tui.search.in_memory import InMemoryRanker
from tests.ari_like import generate_in_memory

QUERIES = ["kernel tiling speedup", "roofline memory bound", "GFlops_per_s threads", "zzz none"]


@pytest.fixture
def run(tmp_path: Path, demo_ckpt: Path) -> Path:
    return Path(shutil.copytree(demo_ckpt, tmp_path / "run"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ARI_MEM_TUI_CACHE", str(folder))
    monkeypatch.delenv(bm25_warm.WARM_ENV, raising=False)
    monkeypatch.setattr(bm25_warm, "_cores", lambda: 2)  # (the suite may run on one core)
    return folder


@pytest.fixture
def ahead(cache: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """Any backup is big enough; each process started or stopped is kept, with how it ended."""
    monkeypatch.setattr(bm25_warm, "MIN_BACKUP_BYTES", 1)
    ended: list = []
    stop = bm25_warm._stop
    monkeypatch.setattr(bm25_warm, "_stop", lambda p: (stop(p), ended.append(p.returncode)))
    return ended


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many texts each BM25 build in this process indexed."""
    built: list[int] = []
    build = BM25Ranker._build
    monkeypatch.setattr(
        BM25Ranker, "_build", lambda self, texts: (built.append(len(texts)), build(self, texts))[1]
    )
    return built


def scores_built_here(ckpt_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """Every query's scores from a ranker that built its index here, in a cache of its own."""
    monkeypatch.setenv(bm25_warm.WARM_ENV, "0")
    ranker = BM25Ranker(Pool(load_checkpoint(ckpt_path).entries), tmp_path / "own", ckpt_path)
    monkeypatch.delenv(bm25_warm.WARM_ENV)
    return [ranker.scores(q) for q in QUERIES]


def test_a_first_open_takes_the_index_built_ahead(run, cache, ahead, builds, tmp_path, monkeypatch):
    opened = open_run(RunOptions(checkpoint=run, embedder="bm25", index=False))
    assert builds == []  # the process's index was taken: none built here
    assert ahead == [0]  # its process ended of itself, once its index was stored
    assert bm25_warm._started == {}
    stored = list((cache / "bm25").glob("*.idx"))
    assert [p.stem for p in stored] == [bm25_key(Pool(opened.checkpoint.entries))]
    expected = scores_built_here(run, tmp_path, monkeypatch)
    for query, want in zip(QUERIES, expected, strict=True):
        got = opened.ranker.scores(query)
        assert got.dtype == want.dtype and np.array_equal(got, want), query


def test_the_process_reads_the_pool_a_load_gives(run):
    """(when the load adds no entry): the same texts in the same order, so the same key; here
    from a backup whose kinds are interleaved (the load puts node_scope entries first)."""
    backup = run / "memory_backup.jsonl.gz"
    lines = gzip.decompress(backup.read_bytes()).splitlines(keepends=True)
    react = [line for line in lines if b'"kind": "react' in line or b'"kind":"react' in line]
    assert react and react[0] != lines[0]
    backup.write_bytes(gzip.compress(b"".join([react[0]] + [x for x in lines if x != react[0]])))
    entries = backup_entries(run)
    loaded = load_checkpoint(run).entries
    assert entries is not None and entries.texts() == loaded.texts()
    assert bm25_key(Pool(entries)) == bm25_key(Pool(loaded))


def add_unbacked_write(run: Path) -> None:
    """A node-scope write in the access log that the backup lacks: the load makes an entry of
    it, so the run's pool is not the backup's."""
    root = json.loads((run / "tree.json").read_text())["nodes"][0]["id"]
    line = {
        "ts": 1780009999.0,
        "node_id": root,
        "op": "write",
        "collection": "node_scope",
        "entry_id": "passage-00000000-0000-0000-0000-00000000beef",
        "text_preview": "an unbacked write about kernel tiling",
        "metadata": {"step": 99},
    }
    with (run / "memory_access.jsonl").open("a") as log:
        log.write(json.dumps(line) + "\n")


def test_another_pool_is_built_here_and_its_process_stopped(
    run, cache, ahead, builds, tmp_path, monkeypatch
):
    add_unbacked_write(run)
    opened = open_run(RunOptions(checkpoint=run, embedder="bm25", index=False))
    entries = opened.checkpoint.entries
    assert "an unbacked write about kernel tiling" in entries.texts()
    assert builds == [len(entries)]  # built here, over the load's pool
    assert len(ahead) == 1 and bm25_warm._started == {}  # its process stopped (or ended)
    expected = scores_built_here(run, tmp_path, monkeypatch)
    for query, want in zip(QUERIES, expected, strict=True):
        assert np.array_equal(opened.ranker.scores(query), want), query


def test_a_process_that_says_no_key_leaves_the_build_here(run, cache, ahead, builds):
    (run / "memory_backup.jsonl.gz").write_bytes(b"not a gzip file, no record either\n")
    opened = open_run(RunOptions(checkpoint=run, embedder="bm25", index=False))
    assert ahead == [1]  # it read no entry: said nothing, ended
    assert builds == ([len(opened.checkpoint.entries)] if len(opened.checkpoint.entries) else [])


def test_no_process_where_it_cannot_pay_or_store(run, cache, monkeypatch, tmp_path):
    assert not bm25_warm.start(run, cache)  # the demo's backup is small: built sooner here
    monkeypatch.setattr(bm25_warm, "MIN_BACKUP_BYTES", 1)
    assert not bm25_warm.start(run, run / "cache")  # a cache inside the run is never written
    assert not bm25_warm.start(tmp_path / "none", cache)  # no backup
    monkeypatch.setenv(bm25_warm.WARM_ENV, "0")
    assert not bm25_warm.start(run, cache)
    monkeypatch.delenv(bm25_warm.WARM_ENV)
    monkeypatch.setattr(bm25_warm, "_cores", lambda: 1)  # one core: it would only compete
    assert not bm25_warm.start(run, cache)
    assert bm25_warm._started == {}


def test_a_reopen_starts_none(run, cache, ahead, monkeypatch):
    started: list[Path] = []
    start = bm25_warm.start
    monkeypatch.setattr(bm25_warm, "start", lambda p, c: (started.append(p), start(p, c))[1])
    open_run(RunOptions(checkpoint=run, embedder="bm25"))  # writes the run index
    open_run(RunOptions(checkpoint=run, embedder="bm25"))
    open_run(RunOptions(checkpoint=run, embedder="in-memory", index=False))
    open_run(RunOptions(checkpoint=run, rank=False, index=False))
    assert started == [run]  # the first open only


def test_stop_and_exit_leave_no_process(run, cache, ahead):
    assert bm25_warm.start(run, cache)
    assert not bm25_warm.start(run, cache)  # one per run
    bm25_warm.stop(run)
    assert len(ahead) == 1 and ahead[0] is not None and bm25_warm._started == {}
    assert bm25_warm.start(run, cache)
    bm25_warm._stop_all()  # (at exit)
    assert len(ahead) == 2 and ahead[1] is not None and bm25_warm._started == {}


def stand_in(run: Path, key: str, seconds: float, before: float = 0, cache: str = "c") -> None:
    """A process standing in for the builder: it says `key` after `before` seconds, then takes
    `seconds` to end."""
    code = f"import time; time.sleep({before}); print({key!r}, flush=True); time.sleep({seconds})"
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    bm25_warm._started[bm25_warm._name(run)] = (process, bm25_warm._name(Path(cache)))


def test_a_process_of_another_key_is_stopped_at_once(run, ahead):
    stand_in(run, "key-of-the-backup", 5)  # (it would end of itself, code 0, if waited for)
    bm25_warm.wait(run, "key-of-the-pool", Path("c"))
    assert ahead == [-signal.SIGKILL]


def test_a_process_of_the_same_key_is_waited_for(run, ahead):
    stand_in(run, "key-of-the-pool", 0.5)
    bm25_warm.wait(run, "key-of-the-pool", Path("c"))
    assert ahead == [0]  # it ended of itself: waited for, not stopped


def test_a_process_that_does_not_say_its_key_in_time_is_stopped(run, ahead, monkeypatch):
    monkeypatch.setattr(bm25_warm, "KEY_PATIENCE", 0.5)
    stand_in(run, "key-of-the-pool", 0, before=3)  # (it says the very key, too late, then ends)
    bm25_warm.wait(run, "key-of-the-pool", Path("c"))
    assert ahead == [-signal.SIGKILL]


def test_a_process_storing_into_another_cache_is_stopped(run, ahead):
    stand_in(run, "key-of-the-pool", 5, cache="elsewhere")  # (the very key, another cache)
    bm25_warm.wait(run, "key-of-the-pool", Path("c"))
    assert ahead == [-signal.SIGKILL]


def test_auto_on_an_in_memory_run_stops_the_process(tmp_path, cache, ahead, builds):
    """`auto` learns the run's rule only once the files are read: ARI's in-memory backend
    ranks by its own rule, so the process started meanwhile is stopped, no index built."""
    run = generate_in_memory(tmp_path / "in-memory").path
    opened = open_run(RunOptions(checkpoint=run, index=False))  # (embedder "auto")
    assert isinstance(opened.ranker, InMemoryRanker)
    assert len(ahead) == 1 and bm25_warm._started == {} and builds == []
