"""The embedded rankers: the real MiniLM model (on a handful of texts), its vector cache, and
BM25 (deterministic ties, the fallback while vectors are not ready)."""

from __future__ import annotations

import threading
from array import array
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from search_helpers import make_entry

from ari_mem_tui.checkpoint import cachefile, index
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.model import MemoryEntry, StringTable
from ari_mem_tui.model.columns import Texts, entries_of, take_entries
from ari_mem_tui.search.bm25_cache import pool_key
from ari_mem_tui.search.embedded import (
    BM25Ranker,
    EmbeddingRanker,
    Pool,
    make_ranker,
    ranking_from_scores,
    top_window,
)
from ari_mem_tui.search.embedder import EmbedderUnavailable, MiniLMEmbedder, sha256_of
from ari_mem_tui.search.rankers import Ranker
from ari_mem_tui.search.vector_cache import CACHE_ENV, VectorCache, cache_root

TEXTS = [
    "The learning rate warmup stabilised training and accuracy rose to 91 percent.",
    "Cache tiling of the GEMM kernel doubled throughput on the A100.",
    "Slow start of the optimiser schedule kept the loss from diverging early.",
    "The dataset loader crashed on a malformed JSON line.",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


class Entries:
    def __init__(self, texts: list[str]):
        self.entries = [make_entry(i, "node_root", t, ts=float(i)) for i, t in enumerate(texts)]


class CountingEmbedder:
    """Wraps the real embedder and records how many texts it was asked to embed."""

    def __init__(self, inner: MiniLMEmbedder, gate: threading.Event | None = None):
        self.inner, self.dim, self.texts, self.gate = inner, inner.dim, 0, gate

    def embed(self, texts, batch_size=32, progress=None):
        if self.gate is not None:
            self.gate.wait(30)
        self.texts += len(texts)
        return self.inner.embed(texts, batch_size=batch_size, progress=progress)


def test_model_hash_is_checked_at_load(tmp_path: Path):
    from ari_mem_tui.search.embedder import MODEL_SHA256, model_path

    assert sha256_of(model_path()) == MODEL_SHA256
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbedderUnavailable, match="sha256"):
        MiniLMEmbedder(path=fake)


def test_vectors_are_unit_rows_and_a_paraphrase_ranks_above_an_unrelated_text(embedder):
    vecs = embedder.embed(TEXTS)
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # input order is kept although batches are length-sorted
    assert np.allclose(embedder.embed([TEXTS[2]])[0], vecs[2], atol=1e-5)
    sims = vecs @ vecs[0]
    assert sims[2] > sims[1] and sims[2] > sims[3]  # warmup ≈ slow start of the schedule


def test_ranker_reuses_the_cache_across_runs_and_rebuilds_a_corrupt_one(embedder, tmp_path):
    ckpt = Entries([*TEXTS, TEXTS[0]])  # a duplicate text is embedded once
    first = CountingEmbedder(embedder)
    ranker = EmbeddingRanker(Pool(ckpt.entries), tmp_path, background=False, embedder=first)
    assert first.texts == 4 and ranker.usable
    ranking = ranker.rank("slow start of the schedule prevented divergence", 3)
    assert ranking.used == "minilm"
    assert ranking.window[0].id in {"e00000", "e00002"}
    second = CountingEmbedder(embedder)
    again = EmbeddingRanker(Pool(ckpt.entries), tmp_path, background=False, embedder=second)
    assert second.texts == 0 and again.usable
    assert np.allclose(again.scores("gemm"), ranker.scores("gemm"), atol=1e-6)
    segments = list((tmp_path / "vectors" / "minilm").glob("seg-*.vec"))
    assert segments
    for seg in segments:
        seg.write_bytes(b"\x00garbage" * 10)
    third = CountingEmbedder(embedder)
    rebuilt = EmbeddingRanker(Pool(ckpt.entries), tmp_path, background=False, embedder=third)
    assert third.texts == 4 and rebuilt.usable
    notes = cachefile.take_notes()
    assert any("vector cache segment" in n and "not a sealed file" in n for n in notes)
    assert np.allclose(rebuilt.scores("gemm"), ranker.scores("gemm"), atol=1e-6)


def test_background_vectors_answer_with_bm25_until_ready(embedder, tmp_path):
    ckpt = Entries(TEXTS)
    gate = threading.Event()
    seen: list[tuple[int, int]] = []
    ranker = EmbeddingRanker(
        Pool(ckpt.entries),
        tmp_path,
        background=True,
        progress=lambda d, t: seen.append((d, t)),
        embedder=CountingEmbedder(embedder, gate),
    )
    for _ in range(600):  # the thread loads the model and plans, then waits at the gate
        if ranker.total:
            break
        threading.Event().wait(0.05)
    early = ranker.rank("dataset loader crash", 2)
    assert early.used == "bm25" and "0/4" in early.note
    assert early.window[0].id == "e00003"
    gate.set()
    assert ranker.wait(60)
    assert ranker.rank("dataset loader crash", 2).used == "minilm"
    assert seen[-1] == (4, 4)


def test_unloadable_model_falls_back_to_bm25(monkeypatch, tmp_path):
    import ari_mem_tui.search.embedder as emb

    def broken(*_a, **_k):
        raise EmbedderUnavailable("model file not found")

    monkeypatch.setattr(emb, "MiniLMEmbedder", broken)
    ranker = make_ranker(Entries(TEXTS), "minilm", cache_dir=tmp_path)
    assert isinstance(ranker, Ranker)
    assert ranker.wait(30) and ranker.error
    ranking = ranker.rank("tiling kernel throughput", 2)
    assert ranking.used == "bm25" and "model file not found" in ranking.note
    assert ranking.window[0].id == "e00001"


def test_cache_dir_parameter_env_and_xdg_default(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert cache_root(tmp_path / "param") == tmp_path / "param"
    assert cache_root() == tmp_path / "env"
    monkeypatch.delenv(CACHE_ENV)
    assert "ari-mem-tui" in str(cache_root())


def test_cache_segment_of_wrong_shape_is_set_aside(tmp_path):
    cache = VectorCache(tmp_path, "minilm", 4)
    cache.add(["a" * 40], np.ones((1, 4), np.float32))
    np.savez(cache.dir / "seg-bad.npz", keys=np.array(["b" * 40]), vecs=np.ones((1, 3)))
    keys, matrix = cache.load()
    assert keys == ["a" * 40] and matrix.shape == (1, 4)
    assert (cache.dir / "seg-bad.npz.corrupt").exists()


def test_bm25_ties_follow_pool_order_and_empty_queries_rank_by_pool_order():
    entries = Entries(["alpha beta", "gamma", "alpha beta", "delta", "alpha"]).entries
    ranker = BM25Ranker(Pool(entries))
    ranking = ranker.rank("beta", 5)
    ids = [e.id for e in ranking.window]
    assert ids[:2] == ["e00000", "e00002"]
    assert ids[2:] == ["e00001", "e00003", "e00004"]  # zero scores: pool order
    assert [ranking.global_rank(i) for i in ids] == [0, 1, 2, 3, 4]
    assert [e.id for e in ranker.rank("the of and", 3).window] == ["e00000", "e00001", "e00002"]
    assert ranker.rank("beta", 10, before_ts=2.0).pool_size == 2
    assert ranker.rank("beta", 10, before_ts=2.0).global_rank("e00002") is None


def test_bm25_on_an_empty_pool_and_a_tokenless_pool():
    assert BM25Ranker(Pool([])).rank("x", 5).window == []
    ranking = BM25Ranker(Pool(Entries(["", "  "]).entries)).rank("x", 5)
    assert [e.id for e in ranking.window] == ["e00000", "e00001"]


def test_a_bm25_index_is_stored_once_and_read_back_with_the_same_scores(tmp_path):
    texts = [f"alpha beta {i} gamma" if i % 3 else f"delta {i} epsilon beta" for i in range(60)]
    pool = Pool(Entries(texts).entries)
    built = BM25Ranker(pool, tmp_path)
    [stored] = (tmp_path / "bm25").iterdir()
    stamp = stored.stat().st_mtime_ns
    loaded = BM25Ranker(pool, tmp_path)  # from the file: nothing new is written
    assert [p.name for p in (tmp_path / "bm25").iterdir()] == [stored.name]
    assert stored.stat().st_mtime_ns >= stamp
    for query in ("beta", "delta epsilon", "gamma 7", "nothing here"):
        assert np.array_equal(built.scores(query), loaded.scores(query))
    # another pool (one character differs) gets its own index; a damaged one is rebuilt
    other = Pool(Entries([*texts[:-1], texts[-1] + "!"]).entries)
    BM25Ranker(other, tmp_path)
    assert len(list((tmp_path / "bm25").iterdir())) == 2
    stored.write_bytes(b"garbage")
    again = BM25Ranker(pool, tmp_path)
    assert np.array_equal(again.scores("beta"), built.scores("beta"))


@given(
    st.lists(st.sampled_from([0.0, 0.0, 0.0, 1.5, 2.0, -1.0, float("-inf")]), max_size=60),
    st.integers(0, 70),
)
def test_top_window_of_mostly_zero_scores_matches_a_stable_full_sort(values, k):
    """BM25's pools are mostly zeros: the fast path (positives, then zeros in pool order) and
    the selection agree with a full stable sort, with negatives and -inf (out of the pool)."""
    scores = np.array(values, dtype=np.float64)
    full = [int(i) for i in np.argsort(-scores, kind="stable")]
    assert top_window(scores, min(k, len(scores))) == full[: min(k, len(scores))]


def test_top_window_matches_a_stable_full_sort():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, size=300).astype(float)
    full = list(np.argsort(-scores, kind="stable"))
    for k in (0, 1, 7, 100, 300, 400):
        assert top_window(scores, k) == [int(i) for i in full[:k]]
    entries = Entries([str(i) for i in range(300)]).entries
    ranking = ranking_from_scores(Pool(entries), scores, 10, None, "test")
    assert [ranking.global_rank(entries[int(i)].id) for i in full] == list(range(300))
    assert ranking.global_ranks([entries[int(i)].id for i in full]) == list(range(300))
    # as-of: entries 0..149 only (ts = index); the others have no rank, the rest re-rank
    early = ranking_from_scores(Pool(entries), scores, 10, 150.0, "test")
    kept = [int(i) for i in full if i < 150]
    ids = [e.id for e in entries]
    assert early.global_ranks([ids[i] for i in kept]) == list(range(150))
    assert early.global_ranks(["e00200", "missing", ids[kept[0]]]) == [None, None, 0]


def test_stopping_ends_the_background_thread_and_keeps_bm25(embedder, tmp_path):
    gate = threading.Event()
    ranker = EmbeddingRanker(
        Pool(Entries(TEXTS * 20).entries),
        tmp_path,
        background=True,
        embedder=CountingEmbedder(embedder, gate),
    )
    ranker._stop.set()  # what stop() does first; the thread is parked at the gate
    gate.set()
    ranker.stop()
    assert ranker.ready and not ranker.usable
    assert "stopped" in (ranker.error or "")
    assert ranker.rank("kernel tiling", 1).used == "bm25"


def test_node_queries_are_embedded_ahead_and_cached(embedder, tmp_path):
    ckpt = Entries(TEXTS)
    queries = ["learning rate warmup", "kernel tiling"]
    first = CountingEmbedder(embedder)
    ranker = EmbeddingRanker(
        Pool(ckpt.entries), tmp_path, background=True, embedder=first, queries=queries
    )
    assert ranker.wait(60) and ranker.queries_ready.wait(60)
    assert first.texts == 6  # 4 entries + 2 queries
    before = first.texts
    ranker.rank("learning rate warmup", 2)
    assert first.texts == before  # no model call at replay time
    again = CountingEmbedder(embedder)
    second = EmbeddingRanker(
        Pool(ckpt.entries), tmp_path, background=True, embedder=again, queries=queries
    )
    assert second.wait(60) and second.queries_ready.wait(60)
    assert again.texts == 0  # both entries and queries came from the cache
    assert np.allclose(second.scores("kernel tiling"), ranker.scores("kernel tiling"), atol=1e-6)


def test_a_runs_bm25_key_is_its_texts_however_their_buffer_lies() -> None:
    texts = ["alpha", "", "日本語の方向", "beta \ud800 lone", "gamma"]
    records = [
        MemoryEntry(id=f"e{i}", kind="node_scope", node_id="n", text=text, source="x")
        for i, text in enumerate(texts)
    ]
    column = entries_of(records, StringTable())
    key = pool_key(column.text, "s")
    assert key == pool_key(texts, "s")  # the column hashed undecoded, the strings encoded
    backwards = take_entries(column, [4, 3, 2, 1, 0])  # the same buffer, rows reordered
    assert pool_key(backwards.text, "s") == pool_key(texts[::-1], "s") != key
    assert pool_key([*texts[:-1], "gammb"], "s") != key and pool_key(texts, "t") != key
    assert pool_key(["ab", ""], "s") != pool_key(["a", "b"], "s")
    # the keys of indexes stored by earlier versions: still found (the same bytes hashed)
    assert key == "9f4c7a85e670b53c30177bb7f4b809285ba63453"
    gaps = Texts(b"xxalphaYYbeta", array("q", [2, -1, 9]), array("q", [7, -1, 13]))
    assert pool_key(gaps, "s") == pool_key(["alpha", "", "beta"], "s")
    assert pool_key(gaps, "s") == "7707e49a2c2e1ef44ca81f645299a7da342400ec"


def test_a_reopened_run_reads_the_bm25_index_its_fresh_load_stored(
    demo_ckpt, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(index.INDEX_ENV, str(tmp_path / "index"))
    fresh = load_checkpoint(demo_ckpt, use_index=True)  # (writes the run index)
    built = BM25Ranker(Pool(fresh.entries), tmp_path)
    again = load_checkpoint(demo_ckpt, use_index=True)
    assert index.is_current(demo_ckpt) and isinstance(again.entries.kind, memoryview)  # mapped
    monkeypatch.setattr(BM25Ranker, "_build", lambda *_: pytest.fail("built again"))
    loaded = BM25Ranker(Pool(again.entries), tmp_path)
    assert len(list((tmp_path / "bm25").iterdir())) == 1
    assert np.array_equal(loaded.scores("learning rate"), built.scores("learning rate"))


def test_only_the_most_recently_used_bm25_indexes_are_kept(tmp_path, monkeypatch):
    from ari_mem_tui.search import bm25_cache

    monkeypatch.setattr(bm25_cache, "KEEP", 2)
    for word in ("one", "two", "three"):
        BM25Ranker(Pool(Entries([f"{word} alpha", "beta"]).entries), tmp_path)
    assert len(list((tmp_path / "bm25").iterdir())) == 2


class StepEmbedder:
    """Deterministic unit vectors per text; each `embed` call waits for one `step()` of the
    test, so the test decides how many rows are embedded when it ranks."""

    dim = 384

    def __init__(self) -> None:
        self.calls = threading.Semaphore(0)
        self.finished = threading.Semaphore(0)

    def step(self) -> None:
        self.calls.release()
        assert self.finished.acquire(timeout=30)

    def embed(self, texts, batch_size=32, progress=None):
        assert self.calls.acquire(timeout=30)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            vec = np.random.default_rng(sum(text.encode()) % 2**32).standard_normal(self.dim)
            out[row] = vec / np.linalg.norm(vec)
        if progress is not None:
            progress(len(texts), len(texts))
        self.finished.release()
        return out


def test_a_replay_ranks_with_minilm_once_its_pool_is_embedded_and_not_before(tmp_path, monkeypatch):
    """GIVEN vectors computed in first-write order, a few rows at a time, WHEN the rows of the
    pool as of t are all embedded, THEN a replay as of t ranks with MiniLM, exactly as with
    every vector; a replay of a later pool (or today's) is BM25 and says how far its pool is."""
    from ari_mem_tui.search import embedded

    monkeypatch.setattr(embedded, "PREFIX_ROWS", 4)
    texts = [f"{TEXTS[i % 4]} variant {i}" for i in range(12)]  # ts = index: rows in this order
    entries = Entries(texts).entries
    step = StepEmbedder()
    ranker = EmbeddingRanker(Pool(entries), tmp_path / "a", background=True, embedder=step)
    query = TEXTS[1]
    ranker._prefetched[query] = step_vector(query)  # as the start-up queries are
    for _ in range(600):
        if ranker.total:
            break
        threading.Event().wait(0.05)
    assert ranker.total == 12 and not ranker.ready_for(4.0)
    assert ranker.rank(query, 3, before_ts=4.0).used == "bm25"
    step.step()  # rows 0-3: the pool as of ts 4 (entries 0..3)
    until(lambda: ranker.prefix >= 4)
    assert ranker.prefix == 4 and ranker.ready_for(4.0) and not ranker.ready_for(5.0)
    early = ranker.rank(query, 3, before_ts=4.0)
    later = ranker.rank(query, 3, before_ts=9.0)
    today = ranker.rank(query, 3)
    assert early.used == "minilm"
    assert later.used == "bm25" and "of this pool 4/9 ready" in later.note
    assert today.used == "bm25" and "4/12" in today.note
    step.step()
    step.step()
    assert ranker.wait(30) and ranker.ready_for(None)
    full = EmbeddingRanker(Pool(entries), tmp_path / "b", background=False, embedder=OneShot())
    full._prefetched[query] = step_vector(query)
    exact = full.rank(query, 3, before_ts=4.0)
    assert [e.id for e in early.window] == [e.id for e in exact.window]
    assert early.global_ranks([e.id for e in entries]) == exact.global_ranks(
        [e.id for e in entries]
    )
    assert ranker.rank(query, 3).used == "minilm"


def until(condition, seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("condition never held")


def step_vector(text: str) -> np.ndarray:
    vec = np.random.default_rng(sum(text.encode()) % 2**32).standard_normal(384)
    return (vec / np.linalg.norm(vec)).astype(np.float32)


class OneShot(StepEmbedder):
    """StepEmbedder without the steps."""

    def embed(self, texts, batch_size=32, progress=None):
        return np.stack([step_vector(t) for t in texts])


def test_a_warm_cache_ranks_without_loading_the_model(tmp_path, monkeypatch):
    """Every vector and the query in the cache: MiniLM answers, and the model (onnxruntime,
    ~0.5 s to load) is never loaded."""
    import ari_mem_tui.search.embedder as emb

    entries = Entries(TEXTS).entries
    queries = ["kernel tiling"]
    warm = EmbeddingRanker(
        Pool(entries), tmp_path, background=True, embedder=OneShot(), queries=queries
    )
    assert warm.wait(30) and warm.queries_ready.wait(30)

    def no_model(*_a, **_k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(emb, "MiniLMEmbedder", no_model)
    again = EmbeddingRanker(Pool(entries), tmp_path, background=True, queries=queries)
    assert again.wait(30) and again.queries_ready.wait(30)
    assert again.embedder is None and again.error is None
    assert again.rank("kernel tiling", 2).used == "minilm"
    assert again._bm25 is None  # nothing was missing: no BM25 index was built meanwhile


def test_bm25_scores_equal_bm25s_own_bit_for_bit(demo_ckpt, tmp_path):
    """The BM25 scores are added as bm25s adds them (without its slow np.add.at): equal to its
    get_scores, bit for bit, on the demo's pool for every node's query; and the index read
    back from the cache without bm25s (`StoredIndex`) scores as bm25s's own retriever."""
    import bm25s

    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.search.bm25_cache import StoredIndex
    from ari_mem_tui.search.embedded import start_queries

    ckpt = load_checkpoint(demo_ckpt)
    built = BM25Ranker(Pool(ckpt.entries), tmp_path)  # an empty cache: bm25s builds it
    stored = BM25Ranker(Pool(ckpt.entries), tmp_path)  # read back from the cache
    assert isinstance(built._retriever, bm25s.BM25)
    assert isinstance(stored._retriever, StoredIndex)
    assert stored._stops == built._stops == frozenset(bm25s.stopwords.STOPWORDS_EN)
    loaded = built._retriever
    compared = 0
    odd = ["kernel tiling kernel", "the of and", "", "x", "Ünïcode wörds, CAPS and_under 42"]
    for query in [*start_queries(ckpt), *odd]:
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=built._stemmer, return_ids=False, show_progress=False
        )[0]
        assert built.query_tokens(query) == tokens  # bm25s's tokens, without bm25s.tokenize
        assert stored.query_tokens(query) == tokens
        if not tokens:
            continue
        theirs = built._retriever.get_scores(tokens)
        assert np.array_equal(loaded.get_scores(tokens), theirs)
        assert stored._retriever.get_tokens_ids(tokens) == loaded.get_tokens_ids(tokens)
        for ranker in (built, stored):
            ours = ranker._relevance(tokens)
            assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
        compared += int(np.count_nonzero(theirs) > 0)
    assert compared > 30


@pytest.mark.parametrize("shuffled", [False, True])
def test_bm25_as_of_scores_and_windows_equal_the_whole_pools(demo_ckpt, shuffled):
    """`BM25Ranker.rank` scores only the as-of pool, renumbered in time order: every score is
    the whole pool's, bit for bit, and the window and global ranks are those ranked from the
    whole pool's scores, for every node's query as of its start, in a pool in write order and
    in one shuffled out of it."""
    from ari_mem_tui.search.embedded import start_queries
    from ari_mem_tui.search.startup import start_time

    ckpt = load_checkpoint(demo_ckpt)
    entries = list(ckpt.entries)
    if shuffled:
        order = np.random.default_rng(7).permutation(len(entries))
        entries = [entries[i] for i in order]
    pool = Pool(entries)
    ranker = BM25Ranker(pool, None)
    starts = [start_time(ckpt, node)[0] for node in ckpt.nodes.values()]
    stamps = sorted(t for t in pool.ts if not np.isnan(t))
    cuts = [None, float("nan"), stamps[0], stamps[len(stamps) // 2], *starts]
    compared = 0
    for query in [*start_queries(ckpt), "kernel tiling kernel", "the of and"]:
        for before in cuts:
            for k in (5, 200):
                fast = ranker.rank(query, k, before_ts=before)
                whole = ranking_from_scores(pool, ranker._scores(query), k, before, "bm25")
                assert [e.id for e in fast.window] == [e.id for e in whole.window]
                assert fast.pool_size == whole.pool_size
                ids = [e.id for e in entries[::7]]
                assert fast.global_ranks(ids) == whole.global_ranks(ids)
            ids = ranker._token_ids(query)
            if ids:
                size = pool.size_before(before)
                prefix = ranker._prefix_relevance(ids, size)
                dense = ranker._scores(query)[ranker._time_order[:size]]
                assert prefix.dtype == dense.dtype and np.array_equal(
                    prefix.view(np.uint32), dense.view(np.uint32)
                )
                compared += int(np.count_nonzero(prefix) > 0)
    assert compared > 30


@pytest.mark.parametrize("matches", ["in few groups", "everywhere"])
def test_bm25_as_of_windows_of_a_pool_of_threshold_groups(matches):
    """GIVEN a pool big enough that the window's threshold comes from the maxima of strided
    groups (search.quantized.threshold), its matching entries either in so few groups that
    the threshold finds no positive score k groups reach, or spread over every group, THEN
    each as-of window and its global ranks are those ranked from the whole pool's scores."""
    size = 3 * 4096 + 100
    if matches == "in few groups":  # rows g, g + 4096, g + 8192 of groups 0-2: 9 matches
        hits = {g + 4096 * j: 1 + (g + j) % 2 for g in range(3) for j in range(3)}
    else:
        hits = {i: 1 + i % 3 for i in range(0, size, 37)}
    texts = [
        ("alpha " * hits[i] + f"w{i % 11}").strip() if i in hits else f"w{i % 11}"
        for i in range(size)
    ]
    pool = Pool(Entries(texts).entries)
    ranker = BM25Ranker(pool, None)
    checked = 0
    for before in (None, 5000.5, 9000.5, float(size)):
        for k in (5, 200):
            fast = ranker.rank("alpha", k, before_ts=before)
            whole = ranking_from_scores(pool, ranker._scores("alpha"), k, before, "bm25")
            assert [e.id for e in fast.window] == [e.id for e in whole.window]
            ids = [e.id for e in pool.entries[::101]]
            assert fast.global_ranks(ids) == whole.global_ranks(ids)
            checked += sum(1 for e in fast.window if "alpha" in e.text)
    assert checked > 0
