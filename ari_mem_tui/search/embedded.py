"""The embedded rankers: MiniLM cosine ranking (default) and BM25, over a checkpoint's pool.

Both rank the WHOLE pool (node-scope and react entries, as Letta's `passages.search` does) and
break ties by pool order, so results are deterministic. Ranks are computed lazily: the window by
argpartition, any other entry's global rank by counting the entries that beat it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ari_mem_tui.checkpoint.bulk import without_gc
from ari_mem_tui.checkpoint.limits import current
from ari_mem_tui.model import Entries, MemoryEntry
from ari_mem_tui.model.columns import Texts, entry_row_of_id
from ari_mem_tui.search import bm25_cache, bm25_index, bm25_warm
from ari_mem_tui.search import embedder as minilm
from ari_mem_tui.search.progress import Progress
from ari_mem_tui.search.quantized import Int8Index, best_first, candidates, threshold
from ari_mem_tui.search.rankers import ProgressFn, Ranker, Ranking
from ari_mem_tui.search.shipped import shipped_vectors
from ari_mem_tui.search.startup import node_query
from ari_mem_tui.search.vector_cache import VectorCache, cache_root, text_key

SEGMENT_ROWS = 1024  # persist background progress every this many new vectors
PREFIX_ROWS = 256  # embed at most this many rows at a time: each finished batch may complete pools
FIRST_ROWS = 32  # ...and fewer at first (doubling up to PREFIX_ROWS): the earliest pools are small
_LIVE: weakref.WeakSet = weakref.WeakSet()  # rankers whose thread may still be embedding


class _Stopped(Exception):
    """Raised inside the embedding loop when the ranker is asked to stop."""


@atexit.register
def _stop_all() -> None:
    for ranker in list(_LIVE):
        ranker.stop()


class Pool:
    """The entries a ranker ranks, in pool order (the checkpoint's entry order).

    As of a time t, the pool is the entries written before t; entries without ts are kept at
    every t (unknown ≠ later). Every as-of question below answers by that one rule.
    """

    def __init__(self, entries: Sequence[MemoryEntry] | Entries) -> None:
        if isinstance(entries, Entries):  # the run's columns: rows are views, ids looked up
            self.entries: Sequence[Any] = entries
            self.index: Any = _RowOfId(entries)
            self.ts = np.frombuffer(entries.ts, dtype=np.float64)  # NaN: no ts, as below
        else:
            self.entries = list(entries)
            self.index = {e.id: i for i, e in enumerate(self.entries)}
            self.ts = np.array(
                [e.ts if e.ts is not None else np.nan for e in self.entries], dtype=np.float64
            )
        self._sorted_ts = np.sort(self.ts)  # NaN (no ts) sorts last
        self._no_ts = int(np.isnan(self.ts).sum())

    def texts(self) -> list[str]:
        """Every entry's text, in pool order."""
        if isinstance(self.entries, Entries):
            return self.entries.texts()
        return [e.text for e in self.entries]

    def stored_texts(self) -> Texts | list[str]:
        """The texts as they are held: a run's column undecoded, else the strings."""
        return self.entries.text if isinstance(self.entries, Entries) else self.texts()

    def __len__(self) -> int:
        return len(self.entries)

    def kept(self, idx: np.ndarray | slice, before_ts: float | None) -> np.ndarray:
        """Which of the entries `idx` are in the pool as of `before_ts`."""
        ts = self.ts[idx]
        return np.ones(len(ts), dtype=bool) if before_ts is None else ~(ts >= before_ts)

    def size_before(self, before_ts: float | None) -> int:
        """How many entries are in the pool as of `before_ts`, without a pass over them."""
        if before_ts is None:
            return len(self)
        # NaN sorts last and searchsorted orders alike: a NaN before_ts counts all, as `kept`
        return int(np.searchsorted(self._sorted_ts, before_ts)) + self._no_ts

    def cut(self, scores: np.ndarray, before_ts: float | None) -> np.ndarray:
        """`scores` (one per entry, changed in place) with −inf for entries out of the pool."""
        if before_ts is not None:
            scores[~self.kept(slice(None), before_ts)] = -np.inf
        return scores


class _RowOfId:
    """`Pool.index` of a run's columns: an entry id's row (its ids computed on first use)."""

    def __init__(self, entries: Entries) -> None:
        self._entries = entries

    def get(self, entry_id: str, default: int = -1) -> int:
        row = entry_row_of_id(self._entries, entry_id)
        return default if row < 0 else row

    def __getitem__(self, entry_id: str) -> int:
        row = entry_row_of_id(self._entries, entry_id)
        if row < 0:
            raise KeyError(entry_id)
        return row


class DistinctRows:
    """The distinct vectors of a pool, ordered by first write, and the entries using each.

    Rows used by an entry without ts come first (in every as-of pool), then the others by
    their first write, the earliest ts among their entries. So the rows with an entry in the
    pool as of t are the first `live(t)`, and a replay reads only that prefix of the int8 index.
    """

    def __init__(self, keys: Sequence[str], ts: np.ndarray) -> None:
        ids = {key: i for i, key in enumerate(dict.fromkeys(keys))}  # in order of first use
        rows = np.array([ids[key] for key in keys], dtype=np.int64)
        first = np.full(len(ids), np.inf)
        np.fmin.at(first, rows, ts)  # fmin: an entry without ts (NaN) does not count here...
        always = np.zeros(len(ids), dtype=bool)
        always[rows[np.isnan(ts)]] = True  # ...but puts its row in front
        order = np.lexsort((first, ~always))  # stable: ties keep pool order
        relabel = np.empty_like(order)
        relabel[order] = np.arange(len(order))
        listed = list(ids)
        self.keys = [listed[i] for i in order]  # row -> text key
        self.of_entry = relabel[rows]  # pool index -> row
        self._always = int(always.sum())
        self._first = first[order][self._always :]  # ascending
        self._by_row = np.argsort(self.of_entry, kind="stable")  # entries grouped by row
        self._starts = np.searchsorted(self.of_entry[self._by_row], np.arange(len(order) + 1))

    def __len__(self) -> int:
        return len(self.keys)

    def live(self, before_ts: float | None) -> int:
        """How many rows have an entry in the pool as of `before_ts` (the first ones)."""
        if before_ts is None:
            return len(self)
        return self._always + int(np.searchsorted(self._first, before_ts))  # NaN: all

    def entries(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pool indices of the entries using `rows`, and for each the position in `rows`
        of its row."""
        starts, ends = self._starts[rows], self._starts[rows + 1]
        counts = ends - starts
        which = np.repeat(np.arange(len(rows)), counts)
        within = np.arange(len(which)) - np.repeat(np.cumsum(counts) - counts, counts)
        return self._by_row[starts[which] + within], which


def ranking_from_scores(
    pool: Pool, scores: np.ndarray, top_k: int, before_ts: float | None, used: str, note: str = ""
) -> Ranking:
    """Rank by score descending, ties in pool order; out-of-pool (as-of) entries get no rank."""
    scores = np.asarray(scores)
    dtype = np.result_type(scores.dtype, np.float32)
    size = pool.size_before(before_ts)
    k = min(top_k, size)
    # the window from the positive scores alone where they fill it (BM25: most of a big pool
    # scores 0), without a pass over every entry; else from the whole cut array
    positive = np.flatnonzero(scores > 0)
    if before_ts is not None:
        positive = positive[pool.kept(positive, before_ts)]
    cut: list[np.ndarray] = []

    def every() -> np.ndarray:
        if not cut:
            cut.append(pool.cut(np.array(scores, dtype=dtype), before_ts))
        return cut[0]

    if len(positive) >= k:
        window_idx = top_window(scores[positive].astype(dtype, copy=False), k, positive)
    else:
        window_idx = top_window(every(), k)
    return lazy_ranking(pool, window_idx, size, every, before_ts, used, note)


def lazy_ranking(
    pool: Pool,
    window_idx: Sequence[int],
    size: int,
    all_scores: Callable[[], np.ndarray],
    before_ts: float | None,
    used: str,
    note: str = "",
    some_scores: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Ranking:
    """A Ranking whose global ranks beyond the window cost nothing until asked for.

    `all_scores()` gives every pool entry's score (−inf outside the as-of pool); it is called
    at most once, by the first rank query. `some_scores(indices)` gives a few entries' scores
    without that pass (the order of missed entries needs only theirs).
    """
    cache: dict[str, np.ndarray] = {}

    def full() -> np.ndarray:
        if "scores" not in cache:
            cache["scores"] = all_scores()
        return cache["scores"]

    def known(entry_ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        idx = np.array([pool.index.get(e, -1) for e in entry_ids], dtype=np.int64)
        ok = idx >= 0
        ok[ok] = pool.kept(idx[ok], before_ts)  # entries outside the as-of pool have no rank
        return idx, ok

    def ranks_of(entry_ids: list[str]) -> list[int | None]:
        """rank = entries scoring higher + equal-scoring entries earlier in the pool."""
        idx, ok = known(entry_ids)
        if not ok.any():
            return [None] * len(entry_ids)
        scores = full()
        if "ascending" not in cache:
            cache["ascending"] = np.sort(scores)
        ascending = cache["ascending"]
        values = scores[idx[ok]]
        lo = np.searchsorted(ascending, values, "left")
        hi = np.searchsorted(ascending, values, "right")
        ranks = len(scores) - hi
        for k in np.flatnonzero(hi - lo > 1):  # ties: pool order decides (rare but exact)
            i = idx[ok][k]
            ranks[k] += int(np.count_nonzero(scores[:i] == scores[i]))
        out: list[int | None] = [None] * len(entry_ids)
        for slot, rank in zip(np.flatnonzero(ok), ranks, strict=True):
            out[int(slot)] = int(rank)
        return out

    def order_of(entry_ids: list[str]) -> list[tuple[float, int] | None]:
        """A sort key per entry that orders like its global rank (None: not in the pool)."""
        idx, ok = known(entry_ids)
        if not ok.any():
            return [None] * len(entry_ids)
        picked = idx[ok]
        values = some_scores(picked) if some_scores is not None else full()[picked]
        out: list[tuple[float, int] | None] = [None] * len(entry_ids)
        for slot, value, i in zip(np.flatnonzero(ok), values, picked, strict=True):
            out[int(slot)] = (-float(value), int(i))
        return out

    def rank_of(entry_id: str) -> int | None:
        return ranks_of([entry_id])[0]

    table = pool.entries if isinstance(pool.entries, Entries) else None
    return Ranking(
        # a run's columns: the window as rows, its views made only if read (see Ranking)
        window=[pool.entries[i] for i in window_idx] if table is None else None,
        pool_size=size,
        rows=None if table is None else np.asarray(window_idx, dtype=np.int64),
        table=table,
        rank_fn=rank_of,
        ranks_fn=ranks_of,
        order_fn=order_of,
        used=used,
        note=note,
    )


def top_window(scores: np.ndarray, k: int, ids: np.ndarray | None = None) -> list[int]:
    """Indices of the k best scores, best first, ties by lower index (stable); with `ids`
    (ascending), `scores[j]` is the score of entry `ids[j]` and entries are returned."""
    n = len(scores)
    if k <= 0 or n == 0:
        return []
    if k < n:
        # BM25 scores most of a big pool 0 (no query word): the window is then its positive
        # scores, then zeros in pool order, found without selecting among 200k values
        positive = np.flatnonzero(scores > 0)
        if len(positive) < k:
            zeros = np.flatnonzero(scores == 0)
            if len(positive) + len(zeros) >= k:
                order = positive[np.argsort(-scores[positive], kind="stable")]
                picked = np.concatenate([order, zeros[: k - len(positive)]])
                return [int(i) for i in (picked if ids is None else ids[picked])]
        # τ: a value k scores reach, from the maxima of strided groups (search.quantized):
        # a selection among 4,096 values instead of all of them
        pool = positive if len(positive) >= k else np.arange(n)
        values = scores[pool]
        candidates = pool[values >= threshold(values, k)]
    else:
        candidates = np.arange(n)
    picked = candidates[np.argsort(-scores[candidates], kind="stable")][:k]
    return [int(i) for i in (picked if ids is None else ids[picked])]


def bm25_version() -> str:
    """bm25s's installed version, read off its METADATA beside the package: importing bm25s to
    ask costs ~0.2 s (scipy), `importlib.metadata` ~0.02 s. That one answers when the layout
    is another (not exactly one `bm25s-*.dist-info` beside it)."""
    spec = importlib.util.find_spec("bm25s")
    if spec is not None and spec.origin:
        found = list(Path(spec.origin).parent.parent.glob("bm25s-*.dist-info"))
        if len(found) == 1:
            with (
                contextlib.suppress(OSError, UnicodeDecodeError),
                (found[0] / "METADATA").open(encoding="utf-8") as head,
            ):
                for line in head:
                    if line.startswith("Version:"):
                        return line.removeprefix("Version:").strip()
                    if not line.strip():  # the headers end here
                        break
    from importlib.metadata import version  # noqa: PLC0415 - another layout: the slow way

    return version("bm25s")


def english_stopwords() -> list[str]:
    """bm25s's English stop words ("en"), the ones its tokenizer removes."""
    from bm25s.tokenization import _infer_stopwords  # noqa: PLC0415 - with bm25s

    return list(_infer_stopwords("en"))


def bm25_key(pool: Pool) -> str:
    """The key of the pool's BM25 index in the cache: every text, in pool order, and the
    settings the index is built with (the cut included)."""
    settings = (
        f"bm25s {bm25_version()} stopwords=en stemmer=english cut={current().embed_chars}"
        f" format={bm25_cache.FORMAT}"
    )
    return bm25_cache.pool_key(pool.stored_texts(), settings)  # (no text decoded for it)


class BM25Ranker:
    """Lexical ranking (bm25s, English stop words, Snowball stemmer). Tiny, instant, exact ties."""

    name = "bm25"

    def __init__(
        self, pool: Pool, cache_dir: Path | str | None = None, checkpoint: Path | None = None
    ) -> None:
        import Stemmer  # noqa: PLC0415 - lazy: only a BM25 ranker needs it

        self.pool = pool
        self._stemmer = Stemmer.Stemmer("english")
        self._postings: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._time_order: np.ndarray | None = None  # pool indices, as-of pools first (below)
        self._time_pos: np.ndarray | None = None  # pool index -> position in that order
        self._by_time: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # token -> its postings
        cut = self._cut = current().embed_chars  # a text's prefix only (checkpoint/limits.py)
        key, root = bm25_key(pool), cache_root(cache_dir)
        if checkpoint is not None:  # (its index may be being built ahead: take it when it is)
            bm25_warm.wait(checkpoint, key, root)
        build = lambda: self._build([t if len(t) <= cut else t[:cut] for t in pool.texts()])
        # a stored index is read without bm25s (bm25_cache.StoredIndex): only a build imports it
        self._retriever, stops = bm25_cache.cached_index(root, key, build, len(pool), checkpoint)
        self._stops = frozenset(stops)

    def _build(self, texts: list[str]) -> tuple[Any, list[str]]:
        """bm25s's index of the texts (search/bm25_index.py builds it as bm25s does, in
        columns), in a bm25s retriever: what it stores is bm25s's own format."""
        import bm25s  # noqa: PLC0415 - lazy: only building an index needs it (~0.2 s)

        stopwords = english_stopwords()
        built = without_gc(bm25_index.build, texts, frozenset(stopwords), self._stemmer.stemWords)
        if built is None:  # bm25s cannot index a corpus without a single token
            return None, stopwords
        retriever = bm25s.BM25()
        retriever.scores, retriever.vocab_dict = built
        retriever.unique_token_ids_set = set(retriever.vocab_dict.values())
        retriever.nonoccurrence_array = None  # (Lucene's scores need none)
        return retriever, stopwords

    def scores(self, query: str) -> np.ndarray:
        return np.asarray(self._scores(query), dtype=np.float64)

    def _scores(self, query: str) -> np.ndarray:
        """Every pool entry's score, in bm25s's own dtype (float32: widening it changes no
        order, and a replay of every node of a big run would pay a copy per node)."""
        if self._retriever is None or not len(self.pool):
            return np.zeros(len(self.pool))
        tokens = self.query_tokens(query[: self._cut])
        if not tokens:
            return np.zeros(len(self.pool))
        return self._relevance(tokens)

    def _token_ids(self, query: str) -> list[int] | None:
        """The query's token ids where `_relevance` adds posting lists itself, else None."""
        retriever = self._retriever
        if retriever is None or not len(self.pool):
            return None
        if getattr(retriever, "nonoccurrence_array", None) is not None:
            return None
        tokens = self.query_tokens(query[: self._cut])
        return list(retriever.get_tokens_ids(tokens)) if tokens else None

    def query_tokens(self, query: str) -> list[str]:
        """`bm25s.tokenize` of one text as the index was tokenised (lower case, its token
        pattern, English stop words, the stemmer), without its per-call progress bars and
        vocabulary (~1 ms a query: a health pass over 10,000 nodes makes 10,000)."""
        words = [w for w in bm25_index.query_words(query) if w not in self._stops]
        return list(self._stemmer.stemWords(words)) if words else []

    def _relevance(self, tokens: list[str]) -> np.ndarray:
        """bm25s's `get_scores`, token by token as it adds, but with a fancy-indexed `+=`
        instead of its `np.add.at` (~10x slower): a token's posting list names each document
        once, so both add the same float32 values in the same order, bit for bit."""
        retriever = self._retriever
        if getattr(retriever, "nonoccurrence_array", None) is not None:
            return retriever.get_scores(tokens)  # BM25L/BM25+: bm25s's own arithmetic
        data, indices, indptr = self._posting_arrays()
        scores = np.zeros(retriever.scores["num_docs"], dtype=np.dtype(retriever.dtype))
        for token in retriever.get_tokens_ids(tokens):
            start, end = indptr[token], indptr[token + 1]
            scores[indices[start:end]] += data[start:end]
        return scores

    def _posting_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The index's data, indices and indptr (a posting list per token, by pool index)."""
        if self._postings is None:
            index = self._retriever.scores
            # plain arrays (a memmap's slice would cost ~10 µs of Python, 24 of them a query);
            # a stored index's are numpy's own dtype and aligned (cachefile.array), or
            # np.add.at below leaves its fast loop (14× slower at 2k nodes)
            self._postings = tuple(
                np.asarray(index[name]).view(np.ndarray) for name in ("data", "indices", "indptr")
            )
        return self._postings

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        """`ranking_from_scores` of `_scores`, computed over the as-of pool only.

        The pool is renumbered in time order (entries without ts first: they are in every
        as-of pool), so the pool as of t is a prefix and each posting list is cut where it
        leaves it. Each entry still gets its tokens' values added in query order from 0, so its
        score is `_relevance`'s bit for bit; the window is the same selection among the same
        positive scores, ties by pool order (`best_first`), as `top_window`'s.
        """
        ids = self._token_ids(query)
        if ids is None:
            return ranking_from_scores(self.pool, self._scores(query), top_k, before_ts, "bm25")
        size = self.pool.size_before(before_ts)
        prefix = self._prefix_relevance(ids, size)
        order = self._time_order
        assert order is not None  # set by _prefix_relevance
        k = min(top_k, size)
        # τ: a score k entries reach (search.quantized), taken over the whole prefix; when it
        # is positive, the window is among the entries reaching it, all of them positive
        tau = threshold(prefix, k) if 0 < k < size else 0.0
        if tau > 0:
            picked = np.flatnonzero(prefix >= tau)
        else:
            picked = np.flatnonzero(prefix > 0)
            if k == 0 or len(picked) < k:  # zeros join the window: the pool-order path
                dense = np.zeros(len(self.pool), dtype=prefix.dtype)
                dense[order[:size]] = prefix
                return ranking_from_scores(self.pool, dense, top_k, before_ts, "bm25")
        window_idx = best_first(order[picked], prefix[picked], k)
        dtype = np.result_type(prefix.dtype, np.float32)

        def every() -> np.ndarray:  # in pool order, −inf outside the as-of pool, as `cut`
            full = np.full(len(self.pool), -np.inf, dtype=dtype)
            full[order[:size]] = prefix
            return full

        return lazy_ranking(self.pool, window_idx, size, every, before_ts, "bm25")

    def _prefix_relevance(self, ids: list[int], size: int) -> np.ndarray:
        """`_relevance` of the first `size` entries in time order, indexed in that order."""
        if self._time_order is None:
            ts = self.pool.ts
            # entries without ts first (every as-of pool has them), then by ts: the pool as
            # of t is the first `Pool.size_before(t)` of this order
            self._time_order = np.lexsort((ts, ~np.isnan(ts)))
            self._time_pos = np.empty_like(self._time_order)
            self._time_pos[self._time_order] = np.arange(len(ts))
        retriever = self._retriever
        scores = np.zeros(size, dtype=np.dtype(retriever.dtype))
        for token in ids:
            rows, values = self._postings_by_time(token)
            end = int(np.searchsorted(rows, size))
            # `np.add.at` adds element by element in the array's dtype, as the fancy `+=`
            # does for rows named once (a posting list), in one pass instead of three
            np.add.at(scores, rows[:end], values[:end])
        return scores

    def _postings_by_time(self, token: int) -> tuple[np.ndarray, np.ndarray]:
        """One token's posting list renumbered in time order and sorted by it (once a token)."""
        found = self._by_time.get(token)
        if found is None:
            data, indices, indptr = self._posting_arrays()
            start, end = indptr[token], indptr[token + 1]
            rows = self._time_pos[indices[start:end]]
            sort = np.argsort(rows, kind="stable")
            found = self._by_time[token] = (rows[sort], data[start:end][sort])
        return found


class EmbeddingRanker:
    """MiniLM cosine ranking over cached vectors; answers with BM25 where they are not ready.

    Vectors of texts not in the cache are computed at construction, in a background thread when
    `background`, in the order of `DistinctRows`: by first write. ARI ranks a node's WHOLE pool
    as of its start, so a node's replay needs the vector of every entry written before it, and
    those are exactly the first `live(start)` rows: each node's pool is a prefix. Computing in
    this order readies every node's pool as early as it can be, the earliest-started first, and
    a replay ranks with MiniLM as soon as ITS pool is complete (`ready_for`). Until then it is
    ranked with BM25 and says so: a ranking over a partial vector set is never MiniLM's, since
    any entry without a vector could belong in the window. The model itself is loaded only when
    a text or a query must be embedded: with a warm cache, `saw` never loads onnxruntime.
    """

    name = "minilm"

    def __init__(
        self,
        pool: Pool,
        cache_dir: Path | str | None = None,
        background: bool = True,
        progress: ProgressFn | None = None,
        embedder: object | None = None,
        queries: Sequence[str] = (),
        checkpoint: Path | None = None,
    ) -> None:
        self.pool = pool
        self._checkpoint = checkpoint  # a cache dir inside it is not used (cachefile)
        self._queries = list(dict.fromkeys(q for q in queries if q))  # embedded after the pool
        self._prefetched: dict[str, np.ndarray] = {}  # query vectors from the cache/prefetch
        self.queries_ready = threading.Event()
        self.error: str | None = None
        self.notes: list[str] = []
        self.progress = Progress(unit="texts")  # the missing distinct texts, n of N
        self._bm25: BM25Ranker | None = None
        self._bm25_lock = threading.Lock()
        self._ready = threading.Event()
        self._unique: np.ndarray | None = None  # distinct-text vectors once all are computed
        self._distinct = DistinctRows([], np.zeros(0))
        self._have = np.zeros(0, dtype=bool)  # which distinct rows have their vector
        self.prefix = 0  # rows [0, prefix) all have vectors: the pools that are complete
        self._int8: Int8Index | None = None  # over the first len(_int8) rows
        self._int8_lock = threading.Lock()
        self._query_cache: dict[str, np.ndarray] = {}
        self._thread: threading.Thread | None = None
        self.embedder = embedder
        self._model_lock = threading.Lock()
        self._cache_dir = cache_dir
        self._stop = threading.Event()
        if background:  # even loading the cache takes a second on a big run: off the caller
            self._thread = threading.Thread(
                target=self._background, args=(progress,), daemon=True, name="ari-mem-tui-vectors"
            )
            _LIVE.add(self)
            self._thread.start()
        else:
            self._build(progress)  # no query prefetch: a caller that blocks wants the pool only
            self.queries_ready.set()

    @property
    def done(self) -> int:
        return self.progress.done

    @property
    def total(self) -> int:
        return self.progress.total

    def stop(self, timeout: float = 10.0) -> None:
        """Stop computing vectors (at the next batch) and wait for the thread to end.

        onnxruntime aborts the process if the interpreter exits while a session runs in a
        daemon thread, so this runs at exit for every live ranker.
        """
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)

    def _model(self) -> Any:
        """The embedder, loaded on first use (~0.5 s: onnxruntime, the tokenizer, the hash)."""
        with self._model_lock:
            if self.embedder is None:
                self.embedder = minilm.MiniLMEmbedder()  # looked up now: tests replace it
            return self.embedder

    # ---- vectors ----
    def _background(self, progress: ProgressFn | None) -> None:
        """The cache first; BM25 next when vectors are missing (the answer until a pool is
        complete), then the vectors; then the nodes' start-up queries: on two shared cores,
        loading all at once would delay the first answer."""

        def bm25_meanwhile() -> None:
            with contextlib.suppress(Exception):  # rank() retries and reports it in the foreground
                self._fallback()

        self._build(progress, before_compute=bm25_meanwhile)
        try:
            # only a speed-up: a failure here just means queries get embedded on demand
            with contextlib.suppress(Exception):
                if self.usable:
                    self._prefetch_queries()
        finally:
            self.queries_ready.set()

    def _prefetch_queries(self) -> None:
        """Embed the nodes' start-up queries too, so switching nodes costs a matmul only."""
        missing = [q for q in self._queries if q not in self._prefetched]
        for start in range(0, len(missing), SEGMENT_ROWS):
            if self._stop.is_set():
                return
            chunk = missing[start : start + SEGMENT_ROWS]

            def check(_done: int, _total: int) -> None:
                if self._stop.is_set():
                    raise _Stopped

            vecs = self._model().embed(chunk, progress=check)
            self.cache.add([text_key(q) for q in chunk], vecs)
            for query, vec in zip(chunk, vecs, strict=True):
                self._prefetched[query] = vec

    def _build(
        self, progress: ProgressFn | None, before_compute: Callable[[], None] | None = None
    ) -> None:
        try:
            self.cache = VectorCache(
                cache_root(self._cache_dir),
                minilm.MODEL_NAME,
                minilm.DIM,
                self._checkpoint,
                "MiniLM embeds the texts not in it again on every run",
            )
            missing, texts = self._plan()
            if missing and before_compute is not None:
                before_compute()
            self._compute(missing, texts, progress)
        except _Stopped:
            self.error = "MiniLM stopped before its vectors were ready"
        except minilm.EmbedderUnavailable as exc:
            self.error = f"MiniLM unavailable: {exc}"
        except Exception as exc:  # noqa: BLE001 - a failing model must not take the app down
            self.error = f"MiniLM failed: {type(exc).__name__}: {exc}"
        finally:
            self._ready.set()

    def _plan(self) -> tuple[list[int], list[str]]:
        """Load what the cache has; return the distinct-text rows still missing, and their texts."""
        texts = self.pool.texts()
        keys = [text_key(text) for text in texts]
        distinct = DistinctRows(keys, self.pool.ts)
        row_of = {k: r for r, k in enumerate(distinct.keys)}
        dim = self.embedder.dim if self.embedder is not None else minilm.DIM
        self._unique_buf = np.zeros((len(distinct), dim), dtype=np.float32)
        have = np.zeros(len(distinct), dtype=bool)
        needed = {*keys, *(text_key(q) for q in self._queries)}
        cached_keys, cached = self.cache.load(needed)  # not every run's vectors ever cached
        for pos, key in enumerate(cached_keys):
            r = row_of.get(key)
            if r is not None and not have[r]:
                self._unique_buf[r] = cached[pos]
                have[r] = True
        self.notes.extend(self.cache.notes)
        if self._queries:
            wanted = {text_key(q): q for q in self._queries}
            for pos, key in enumerate(cached_keys):
                query = wanted.get(key)
                if query is not None:
                    self._prefetched[query] = cached[pos].copy()
        self._from_shipped(distinct, have)
        self._distinct, self._have = distinct, have
        self._advance_prefix()
        missing = [int(r) for r in np.flatnonzero(~have)]
        self.progress.update(0, len(missing))
        text_of: dict[str, str] = {}
        for text, key in zip(texts, keys, strict=True):
            text_of.setdefault(key, text)
        return missing, [text_of[distinct.keys[r]] for r in missing]

    def _from_shipped(self, distinct: DistinctRows, have: np.ndarray) -> None:
        """Rows and queries the cache lacks but the package ships (search/shipped.py: the
        default demo's), copied into the cache so the next run finds them there."""
        missing = np.flatnonzero(~have)
        queries = [q for q in self._queries if q not in self._prefetched]
        if not len(missing) and not queries:
            return
        shipped = shipped_vectors()
        found = [int(r) for r in missing if distinct.keys[r] in shipped]
        for r in found:
            self._unique_buf[r] = shipped[distinct.keys[r]]
        have[found] = True
        known = {q: shipped[k] for q in queries if (k := text_key(q)) in shipped}
        self._prefetched.update(known)
        keys = [distinct.keys[r] for r in found] + [text_key(q) for q in known]
        if keys:
            self.cache.add(keys, np.stack([shipped[k] for k in keys]))

    def _compute(self, missing: list[int], texts: list[str], progress: ProgressFn | None) -> None:
        """Embed the missing rows in row order, a pool prefix at a time; persist every
        SEGMENT_ROWS new vectors."""
        unsaved: list[int] = []
        for start, stop in _growing(len(missing)):
            rows = missing[start:stop]

            def report(done: int, _total: int, base: int = start) -> None:
                if self._stop.is_set():
                    raise _Stopped
                self.progress.update(base + done)
                if progress is not None:
                    progress(self.done, self.total)

            vecs = self._model().embed(texts[start:stop], progress=report)
            self._unique_buf[rows] = vecs
            self._have[rows] = True
            self._advance_prefix()
            unsaved += rows
            if len(unsaved) >= SEGMENT_ROWS or stop >= len(missing):
                self.cache.add([self._distinct.keys[r] for r in unsaved], self._unique_buf[unsaved])
                unsaved = []
        self._finish()

    def _advance_prefix(self) -> None:
        """Rows [0, prefix) all have vectors (set after their rows are written: readers of
        `prefix` find them in place)."""
        gaps = np.flatnonzero(~self._have[self.prefix :])
        self.prefix = self.prefix + int(gaps[0]) if len(gaps) else len(self._have)

    def _finish(self) -> None:
        self._index(len(self._distinct))
        self._unique = self._unique_buf
        self.progress.update(self.total)

    def _index(self, rows: int) -> Int8Index:
        """The int8 index over at least the first `rows` rows (built again when too short)."""
        with self._int8_lock:
            index = self._int8
            if index is None or len(index) < rows:
                kernel = index.kernel if index is not None else None
                index = Int8Index(self._unique_buf[: self.prefix], kernel)
                if index.kernel.note and index.kernel.note not in self.notes:
                    self.notes.append(index.kernel.note)
                self._int8 = index
            return index

    # ---- state ----
    @property
    def ready(self) -> bool:
        """True once rank() answers with MiniLM for every pool (or never will: see `error`)."""
        return self._ready.is_set()

    @property
    def usable(self) -> bool:
        return self._unique is not None and self.error is None

    def ready_for(self, before_ts: float | None) -> bool:
        """Whether a replay as of `before_ts` (None: today's pool) ranks with MiniLM now: every
        row of its pool has its vector."""
        if self.error is not None or not self._ready_rows():
            return self.usable
        return self._distinct.live(before_ts) <= self.prefix

    def _ready_rows(self) -> bool:
        return len(self._have) == len(self._distinct) and len(self._have) > 0

    def pool_progress(self, before_ts: float | None) -> tuple[int, int]:
        """(vectors ready, distinct texts) of the pool as of `before_ts`."""
        if not self._ready_rows():
            return 0, 0
        need = self._distinct.live(before_ts)
        return int(np.count_nonzero(self._have[:need])), need

    def wait(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    # ---- ranking ----
    def _rank_int8(self, vec: np.ndarray, top_k: int, before_ts: float | None) -> Ranking:
        """The exact top_k from int8 bounds and a few exact rescores (see search.quantized).

        Only the distinct rows in the as-of pool are bounded: a prefix (`DistinctRows`). τ is
        taken over rows, not entries: each of these rows has an entry in the pool, so k rows
        whose lo reaches τ still beat, by k entries, every entry of a row whose hi is below it.
        The candidate rows' entries in the pool are then sorted by exact score, ties by pool
        order. A small pool's candidates are all its rows (`Int8Index.small`).
        """
        distinct = self._distinct
        live = distinct.live(before_ts)
        index = self._index(live)
        size = self.pool.size_before(before_ts)
        if index.small(live):  # every row a candidate: the exact pass the bounds stand for
            rows = np.arange(live)
        else:
            lo, hi = index.bounds(vec, live)
            rows = candidates(lo, hi, min(top_k, size))
        entries, which = distinct.entries(rows)
        kept = self.pool.kept(entries, before_ts)
        scores = index.exact(vec, rows)[which[kept]]
        window = best_first(entries[kept], scores, top_k)

        def some(picked: np.ndarray) -> np.ndarray:
            return index.exact(vec, distinct.of_entry[picked])

        def every() -> np.ndarray:
            by_row = np.full(len(distinct), -np.inf, dtype=np.float64)
            by_row[: len(index)] = index.exact(vec)  # rows past it have no entry in this pool
            return self.pool.cut(by_row[distinct.of_entry], before_ts)

        return lazy_ranking(self.pool, window, size, every, before_ts, "minilm", some_scores=some)

    def _fallback(self) -> BM25Ranker:
        with self._bm25_lock:
            if self._bm25 is None:
                self._bm25 = BM25Ranker(self.pool, self._cache_dir, self._checkpoint)
            return self._bm25

    def query_vector(self, query: str) -> np.ndarray:
        vec = self._prefetched.get(query)
        if vec is not None:
            return vec
        vec = self._query_cache.get(query)
        if vec is not None:
            return vec
        key = text_key(query)
        cache = getattr(self, "cache", None)
        # the cache first: the package's vectors are copied there on first use (`_from_shipped`)
        vec = cache.find({key}).get(key) if cache is not None else None  # an earlier run's
        if vec is None:
            vec = shipped_vectors().get(key)
        if vec is None:
            vec = self._model().embed([query])[0]
            if cache is not None:
                cache.add([key], vec[None, :])
        if len(self._query_cache) > 256:
            self._query_cache.clear()
        self._query_cache[query] = vec
        return vec

    def scores(self, query: str) -> np.ndarray:
        """The exact score of every pool entry (a full pass; `rank` avoids it)."""
        assert self._unique is not None
        if not len(self.pool):
            return np.zeros(0)
        index = self._index(len(self._distinct))
        return index.exact(self.query_vector(query))[self._distinct.of_entry]

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        if self.ready_for(before_ts):
            try:
                vec = self.query_vector(query)
            except minilm.EmbedderUnavailable as exc:  # every vector cached, but no model
                note = f"MiniLM unavailable for this query: {exc}; ranked with BM25"
            else:
                return self._rank_int8(vec, top_k, before_ts)
        elif self.error:
            note = f"{self.error}; ranked with BM25"
        elif self.total:
            have, need = self.pool_progress(before_ts)
            note = (
                f"MiniLM vectors of this pool {have:,}/{need:,} ready (all: {self.done:,}/"
                f"{self.total:,} missing texts); ranked with BM25 meanwhile"
            )
        else:
            note = "MiniLM loading; ranked with BM25 meanwhile"
        scores = self._fallback()._scores(query)
        return ranking_from_scores(self.pool, scores, top_k, before_ts, "bm25", note)


def _growing(total: int) -> list[tuple[int, int]]:
    """(start, stop) of the batches that embed `total` rows: FIRST_ROWS, then twice as many each
    time up to PREFIX_ROWS, so the earliest nodes' pools are complete within a few seconds."""
    spans, start, size = [], 0, min(FIRST_ROWS, PREFIX_ROWS)
    while start < total:
        spans.append((start, min(total, start + size)))
        start, size = start + size, min(PREFIX_ROWS, size * 2)
    return spans


def make_ranker(
    ckpt: object,
    name: str = "minilm",
    cache_dir: Path | str | None = None,
    background: bool = True,
    progress: ProgressFn | None = None,
    prefetch: bool = True,
) -> Ranker:
    """A ranker over `ckpt.entries`: "minilm" (with BM25 until vectors are ready) or "bm25".
    `prefetch`: embed every node's start-up query ahead (those the cache lacks)."""
    pool = Pool(getattr(ckpt, "entries", []))
    path = getattr(ckpt, "path", None)
    if name == "bm25":
        return BM25Ranker(pool, cache_dir, path)
    if name == "minilm":
        return EmbeddingRanker(
            pool,
            cache_dir=cache_dir,
            background=background,
            progress=progress,
            queries=start_queries(ckpt) if prefetch else (),
            checkpoint=path,
        )
    raise ValueError(f"unknown ranker {name!r} (choose minilm or bm25)")


def start_queries(ckpt: object) -> list[str]:
    """Every node's start-up query (what a replay asks by default), to embed ahead of time."""
    nodes = getattr(ckpt, "nodes", None)
    if not isinstance(nodes, dict):
        return []
    return [node_query(ckpt, node)[0] for node in nodes.values()]  # type: ignore[arg-type]
