"""The int8 replay path: its bounds hold, and its top_k window is exactly the full exact pass's
(order and ties included) on random vectors, on vectors built to tie, and on the demo's texts
embedded by the real model; the lazy global ranks equal the eager ones. As of a time, only a
prefix of the distinct rows is bounded: that prefix is exactly the rows of the as-of pool, and
the windows still equal the full pass's (ts tied or missing, texts shared across ts)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.model import MemoryEntry
from ari_mem_tui.search import quantized
from ari_mem_tui.search.embedded import DistinctRows, EmbeddingRanker, Pool
from ari_mem_tui.search.quantized import (
    Int8Index,
    IntKernel,
    best_first,
    candidates,
    exact_scores,
    matmul_integer_model,
    quantize_query,
    threshold,
    to_blocks,
)


def reference_window(matrix: np.ndarray, query: np.ndarray, k: int, mask=None) -> list[int]:
    """The definition: every row scored exactly, best first, ties by lower index."""
    scores = exact_scores(matrix, query)
    if mask is not None:
        scores[~mask] = -np.inf
        k = min(k, int(mask.sum()))
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))[:k]]


def fast_window(index: Int8Index, query: np.ndarray, k: int, mask=None) -> list[int]:
    lo, hi = index.bounds(query)
    live = np.arange(len(lo)) if mask is None else np.flatnonzero(mask)
    rows = live[candidates(lo[live], hi[live], k)]
    return [int(i) for i in best_first(rows, index.exact(query, rows), k)]


@pytest.mark.parametrize("n", [50, 8191, 8192, 30_000, 100_003])
def test_threshold_is_reached_by_k_rows_and_close_to_the_kth(n: int):
    rng = np.random.default_rng(n)
    spread = rng.standard_normal(n).astype(np.float32)
    tied = rng.integers(0, 5, size=n).astype(np.float32)  # heavy ties
    clustered = np.sort(spread)  # the best rows all in a run (rows in write order)
    periodic = np.where(np.arange(n) % 4096 == 7, 10.0, spread).astype(np.float32)  # one group
    for lo in (spread, tied, clustered, periodic):
        for k in [k for k in (1, 5, 200, 511, 512, 5000) if k <= n]:
            tau = threshold(lo, k)
            kth = np.sort(lo)[::-1][k - 1]
            assert np.count_nonzero(lo >= tau) >= k and tau <= kth
    if n >= 8192:  # grouped: at random, τ is near the k-th largest (few extra candidates)
        assert np.count_nonzero(spread >= threshold(spread, 200)) < 1.2 * 200


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def rowwise(dots: np.ndarray) -> np.ndarray:
    """The kernel's blocks × parts × rows answer as parts × all rows."""
    return dots.transpose(1, 0, 2).reshape(dots.shape[1], -1)


def test_the_onnx_kernel_gives_numpys_integers():
    rng = np.random.default_rng(3)
    kernel = IntKernel(48, small_rows=0)  # every size through the runtime
    kernel.load()
    assert kernel.session is not None, kernel.note  # the real onnxruntime path, not the fallback
    codes = rng.integers(-127, 128, size=(1000, 48), dtype=np.int8)
    blocks = to_blocks(codes, 32)
    assert blocks.shape == (32, 48, 32)  # 1000 rows: 31 full blocks and one padded
    for parts in (1, 2, 2, 3):
        query = rng.integers(-127, 128, size=(parts, 48), dtype=np.int8)
        expected = query.astype(np.int64) @ codes.astype(np.int64).T
        dots = rowwise(kernel.dots(query, blocks))
        assert np.array_equal(dots[:, :1000], expected) and not dots[:, 1000:].any()
        prefix = blocks[:10]  # the first 320 rows: a view, read in place
        assert prefix.base is blocks
        assert np.array_equal(rowwise(kernel.dots(query, prefix)), expected[:, :320])
    assert kernel.dots(query, blocks[:0]).size == 0
    assert matmul_integer_model(48).startswith(b"\x08\x08")  # ir_version 8, the first field


def test_the_numpy_fallback_gives_the_same_integers(monkeypatch: pytest.MonkeyPatch):
    rng = np.random.default_rng(4)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as when onnxruntime is missing
    kernel = IntKernel(16, small_rows=0)
    codes = rng.integers(-127, 128, size=(70, 16), dtype=np.int8)
    query = rng.integers(-127, 128, size=(2, 16), dtype=np.int8)
    dots = rowwise(kernel.dots(query, to_blocks(codes, 8)))
    assert kernel.session is None and "numpy used" in kernel.note
    assert np.array_equal(dots[:, :70], query.astype(np.int64) @ codes.astype(np.int64).T)


def test_small_blocks_get_the_kernels_integers_without_the_runtime():
    """Up to `small_rows` rows numpy's float64 product answers, exactly the kernel's integers,
    and onnxruntime is not loaded for it; more rows load the session."""
    rng = np.random.default_rng(6)
    codes = rng.integers(-127, 128, size=(300, 384), dtype=np.int8)
    codes[:3] = 127  # the largest sums a row can make (and -127 · -127 below)
    query = rng.integers(-127, 128, size=(2, 384), dtype=np.int8)
    query[0] = -127
    blocks = to_blocks(codes, 32)
    small, runtime = IntKernel(384, small_rows=320), IntKernel(384, small_rows=0)
    dots = small.dots(query, blocks)
    assert small.session is None and not small._tried  # nothing was loaded
    assert dots.dtype == np.int32
    assert np.array_equal(dots, runtime.dots(query, blocks))
    assert np.array_equal(rowwise(dots)[:, :300], query.astype(np.int64) @ codes.astype(np.int64).T)
    small.dots(query, to_blocks(np.vstack([codes, codes]), 32))  # 600 rows: past small_rows
    assert small.session is not None, small.note


def test_a_two_part_query_is_much_closer_than_one_part():
    rng = np.random.default_rng(5)
    query = unit_rows(rng, 1, 384)[0]
    codes, scales, err, norm = quantize_query(query)
    rebuilt = (codes.astype(np.float64) * scales[:, None]).sum(axis=0)
    assert err == pytest.approx(float(np.linalg.norm(query.astype(np.float64) - rebuilt)))
    one_part_err = float(np.linalg.norm(query - codes[0] * scales[0]))
    assert err < one_part_err / 100 and norm == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
def test_bounds_hold_for_every_row(seed: int):
    rng = np.random.default_rng(seed)
    matrix = unit_rows(rng, 3000, 64)
    matrix[0] = 0.0  # a zero row
    matrix[1] = 1e-30  # tiny values
    matrix[2, :] = 0.0
    matrix[2, 5] = 7.5  # one large component
    index = Int8Index(matrix)
    for query in (unit_rows(rng, 1, 64)[0], 3.0 * rng.standard_normal(64).astype(np.float32)):
        lo, hi = index.bounds(query)
        exact = index.exact(query)
        assert np.all(lo <= exact) and np.all(exact <= hi)
        assert float(np.median(hi - lo)) < 0.2 * float(np.std(exact))  # and they are tight


@pytest.mark.parametrize("seed", range(6))
def test_window_equals_the_full_exact_pass_on_random_vectors(seed: int):
    rng = np.random.default_rng(100 + seed)
    matrix = unit_rows(rng, 20_000, 96)
    index = Int8Index(matrix)
    for k in (1, 5, 200, 1000):
        query = unit_rows(rng, 1, 96)[0]
        assert fast_window(index, query, k) == reference_window(matrix, query, k)
    mask = rng.random(len(matrix)) < 0.3  # an as-of pool
    query = matrix[17] + 0.05 * unit_rows(rng, 1, 96)[0]
    assert fast_window(index, query, 200, mask) == reference_window(matrix, query, 200, mask)
    assert fast_window(index, query, 50_000) == reference_window(matrix, query, 50_000)


def test_window_keeps_exact_ties_in_pool_order():
    rng = np.random.default_rng(7)
    # small multiples of 1/16: every product and sum is exact, so equal multisets tie exactly
    base = rng.integers(-8, 9, size=(300, 32)).astype(np.float32) / 16
    copies = np.concatenate([base, base[:, ::-1], base])  # reversed rows tie for a symmetric q
    order = rng.permutation(len(copies))
    matrix = copies[order]
    query = np.concatenate([np.arange(16), np.arange(16)[::-1]]).astype(np.float32) / 16
    exact = exact_scores(matrix, query)
    assert len(np.unique(exact)) < len(exact) / 2  # many exact ties really are there
    index = Int8Index(matrix)
    for k in (1, 3, 50, 299, 900):
        assert fast_window(index, query, k) == reference_window(matrix, query, k)


def test_float32_blas_order_agrees_where_it_is_not_a_near_tie():
    rng = np.random.default_rng(11)
    matrix = unit_rows(rng, 20_000, 96)
    index = Int8Index(matrix)
    query = unit_rows(rng, 1, 96)[0]
    window = fast_window(index, query, 200)
    blas = matrix @ query
    blas_window = [int(i) for i in np.lexsort((np.arange(len(blas)), -blas))[:200]]
    gaps = np.diff(np.sort(blas)[::-1][:201])
    if np.all(np.abs(gaps) > 1e-6):  # no two of the first 201 float32 scores within rounding
        assert window == blas_window


class _Vectors:
    """An embedder stand-in that returns fixed vectors (the cache is the real one)."""

    dim = 384

    def __init__(self, by_text: dict[str, np.ndarray]):
        self.by_text = by_text

    def embed(self, texts, batch_size=32, progress=None):
        return np.stack([self.by_text[t] for t in texts]).astype(np.float32)


@pytest.fixture(scope="module")
def demo_vectors(demo_ckpt):
    """The demo's first 400 distinct texts and their start-up queries, with MiniLM's vectors:
    those the package ships for the default demo (search/shipped.py; tests/test_shipped_vectors
    recomputes a sample with the model), so no minute of MiniLM runs here."""
    from ari_mem_tui.search.embedded import start_queries
    from ari_mem_tui.search.shipped import shipped_vectors
    from ari_mem_tui.search.vector_cache import text_key

    ckpt = load_checkpoint(demo_ckpt)
    texts = list(dict.fromkeys(e.text for e in ckpt.entries))[:400]
    queries = list(dict.fromkeys(start_queries(ckpt)))[:20]
    shipped = shipped_vectors()
    vectors = np.stack([shipped[text_key(t)] for t in texts + queries])
    return ckpt, texts, queries, vectors


@pytest.fixture(params=["exact pass", "int8 bounds"])
def bounded(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A small pool ranks by a full exact pass; with SMALL_ROWS 0 the same pool takes the int8
    bounds (as a big one does): both must give the full pass's answer."""
    if request.param == "int8 bounds":
        monkeypatch.setattr(quantized, "SMALL_ROWS", 0)
    return request.param


def test_window_equals_the_full_exact_pass_on_the_demo(demo_vectors, tmp_path, bounded):
    ckpt, texts, queries, vectors = demo_vectors
    keep = set(texts)
    entries = [e for e in ckpt.entries if e.text in keep]  # duplicates of a text included
    assert len(entries) > len(texts)  # the pool really has repeated texts (exact ties)
    fake = _Vectors(dict(zip(texts + queries, vectors, strict=True)))
    ranker = EmbeddingRanker(Pool(entries), cache_dir=tmp_path, background=False, embedder=fake)
    assert ranker.usable
    assert ranker._int8.small(len(ranker._int8)) == (bounded == "exact pass")
    stamps = sorted(e.ts for e in entries if e.ts is not None)
    for query in queries:
        full = ranker.scores(query)
        for k in (5, 200):
            expect = np.lexsort((np.arange(len(full)), -full))[:k]
            got = ranker.rank(query, k)
            assert [e.id for e in got.window] == [entries[int(i)].id for i in expect]
        before = stamps[len(stamps) // 2]
        masked = np.where(np.array([e.ts is None or e.ts < before for e in entries]), full, -np.inf)
        expect = np.lexsort((np.arange(len(full)), -masked))[
            : min(200, int(np.isfinite(masked).sum()))
        ]
        got = ranker.rank(query, 200, before_ts=before)
        assert [e.id for e in got.window] == [entries[int(i)].id for i in expect]
        # lazy global ranks: exactly the position in the full ordering
        order = np.lexsort((np.arange(len(full)), -full))
        probe = [entries[int(i)].id for i in order[::37]]
        plain = ranker.rank(query, 10)
        assert plain.global_ranks(probe) == list(range(0, len(order), 37))


def test_lazy_replay_ranks_equal_the_eager_ones():
    from search_helpers import FakeRanker, build_tree

    from ari_mem_tui.search.replay import replay

    ckpt = build_tree([0, 0, 1, 1, 2, 3], [120] * 7, react=20, seed=4)
    scores = {e.id: float((i * 7919) % 101) for i, e in enumerate(ckpt.entries)}
    ranker = FakeRanker(ckpt.entries, scores)
    seen_missed = 0
    for node_id in ckpt.nodes:
        for limit in (1, 5):
            eager = replay(ckpt, node_id, ranker, limit=limit)
            lazy = replay(ckpt, node_id, ranker, limit=limit, exact_ranks=False)
            assert [m.entry_id for m in lazy.missed] == [m.entry_id for m in eager.missed]
            assert [h.entry_id for h in lazy.exact_scope] == [h.entry_id for h in eager.exact_scope]
            if eager.missed:
                seen_missed += 1
                assert lazy.ranks_pending
                assert all(m.global_rank is None for m in lazy.missed)
            lazy.resolve_ranks()
            assert not lazy.ranks_pending
            assert lazy.as_data() == eager.as_data()
    assert seen_missed > 4


# ---- the as-of prefix: distinct rows ordered by first write, only the live ones bounded ----


def random_stamps(rng: np.random.Generator, n: int) -> list[float | None]:
    """Few distinct values (many ties), about one in eight missing."""
    return [None if rng.random() < 0.125 else float(rng.integers(0, 12)) for _ in range(n)]


def as_of_times(stamps: list[float | None]) -> list[float | None]:
    """None, before all, at every stamp (ties), between stamps, after all, and the odd floats."""
    known = sorted({s for s in stamps if s is not None})
    between = [s + 0.5 for s in known]
    return [None, -1.0, *known, *between, 99.0, np.nan, -np.inf, np.inf]


def kept_mask(stamps: list[float | None], before: float | None) -> np.ndarray:
    """The rule, written out: in the pool unless its ts is known and not before `before`."""
    return np.array([before is None or s is None or not s >= before for s in stamps])


def make_stamped(i: int, text: str, ts: float | None) -> MemoryEntry:
    return MemoryEntry(id=f"e{i:05d}", kind="node_scope", node_id="n", text=text, ts=ts, source="t")


@pytest.mark.parametrize("seed", range(4))
def test_distinct_rows_live_prefix_is_the_as_of_pool(seed: int):
    rng = np.random.default_rng(seed)
    n = 300
    keys = [f"k{int(i)}" for i in rng.integers(0, 90, size=n)]  # shared by entries of any ts
    stamps = random_stamps(rng, n)
    ts = np.array([np.nan if s is None else s for s in stamps])
    rows = DistinctRows(keys, ts)
    assert [rows.keys[r] for r in rows.of_entry] == keys
    for before in as_of_times(stamps):
        kept = kept_mask(stamps, before)
        live = set(rows.of_entry[kept].tolist())
        assert live == set(range(rows.live(before)))  # the live rows are exactly a prefix
        pool = Pool([make_stamped(i, "x", s) for i, s in enumerate(stamps)])
        assert pool.size_before(before) == int(kept.sum())
        assert np.array_equal(pool.kept(np.arange(n), before), kept)
    picked = rng.permutation(len(rows))[:25]
    entries, which = rows.entries(picked)
    assert np.array_equal(rows.of_entry[entries], picked[which])  # each entry's own row
    expect = [i for r in picked for i in range(n) if rows.of_entry[i] == r]  # pool order
    assert entries.tolist() == expect


def tying_vectors(rng: np.random.Generator, count: int, dim: int = 384) -> np.ndarray:
    """Vectors on a 1/16 grid (exact float64 scores), half the mirror images of the others: a
    mirror-symmetric query scores a vector and its mirror exactly alike."""
    base = rng.integers(-8, 9, size=(count // 2, dim)).astype(np.float32) / 16
    return np.concatenate([base, base[:, ::-1]])


def symmetric_query(rng: np.random.Generator, dim: int = 384) -> np.ndarray:
    half = rng.integers(-8, 9, size=dim // 2).astype(np.float32) / 16
    return np.concatenate([half, half[::-1]])


@pytest.mark.parametrize("seed", range(3))
def test_as_of_windows_equal_the_full_exact_pass(seed: int, tmp_path, bounded):
    """The ranker's prefix path against the definition, on a pool whose texts repeat across
    entries of different (tied, missing) ts, whose vectors tie exactly, for as-of times before,
    at, between and after the stamps."""
    rng = np.random.default_rng(50 + seed)
    vectors = np.concatenate([tying_vectors(rng, 160), unit_rows(rng, 75, 384)])  # 235 rows
    texts = [f"text {i}" for i in range(len(vectors))]
    n = 700
    picks = rng.integers(0, len(texts), size=n)
    stamps = random_stamps(rng, n)
    entries = [make_stamped(i, texts[p], s) for i, (p, s) in enumerate(zip(picks, stamps))]
    queries = {f"query {j}": symmetric_query(rng) for j in range(3)}
    queries["random query"] = unit_rows(rng, 1, 384)[0]
    fake = _Vectors({**dict(zip(texts, vectors)), **queries})
    ranker = EmbeddingRanker(Pool(entries), cache_dir=tmp_path, background=False, embedder=fake)
    assert ranker.usable
    assert ranker._int8.small(len(ranker._int8)) == (bounded == "exact pass")
    ties = 0
    for query in queries:
        full = ranker.scores(query)
        ties += len(full) - len(np.unique(full))
        for before in as_of_times(stamps):
            kept = kept_mask(stamps, before)
            masked = np.where(kept, full, -np.inf)
            order = np.lexsort((np.arange(n), -masked))[: int(kept.sum())]
            for k in (1, 7, 64, 200, 1000):
                got = ranker.rank(query, k, before_ts=before)
                assert got.pool_size == int(kept.sum())
                assert [e.id for e in got.window] == [entries[i].id for i in order[:k]]
            window = [e.id for e in got.window]  # the scores behind that order, exactly
            assert got.order_fn(window) == [(-full[i], int(i)) for i in order[:k]]
            probe = [entries[i].id for i in range(0, n, 23)]
            expect = [
                int(np.flatnonzero(order == i)[0]) if kept[i] else None for i in range(0, n, 23)
            ]
            assert got.global_ranks(probe) == expect
    assert ties > n  # exact ties between entries (shared texts and mirrored vectors) were there
