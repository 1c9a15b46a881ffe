"""The run's own ranking without a Letta server: its embedding model, ordered as Letta orders.

Letta 0.16.7's `passages.search` (services/helpers/agent_manager_helper.py
`build_agent_passage_query`, read in its source) embeds the query through the agent's
`embedding_config`, pads it with zeros to 4096, and returns the passages
`ORDER BY embedding <=> query` (pgvector cosine distance: float32 sums, `1 − dot/√(|a|²·|b|²)`
clamped, NaN for a zero vector, which sorts last), `LIMIT top_k`, with no tie-break; with
`end_datetime`, only passages `created_at <= end_datetime` (a replay cuts strictly before the
search's moment, `LettaAsOfPool`). A blank query returns nothing, and
inserts are never chunked: each passage's vector is of its whole text, footer included.

`RunModelRanker` does exactly that over the checkpoint's entries: each entry's passage text is
rebuilt byte for byte (checkpoint/passages.py, as `letta-restore` writes it) and embedded
through the same endpoint and model; the zero padding changes no cosine, so vectors are kept at
their own dimension. Ties (equal distances) keep pool order, where Postgres keeps none.

Vectors come from the on-disk cache first (keyed by the endpoint's URL without credentials, the
model, the dimension and the exact text, footer included), the rest from
the endpoint in batches, in a background thread, within one deadline. Until they are ready
BM25 answers; if the endpoint fails (offline, rate-limited, wrong dimension, not an embeddings
answer) the failure is one line (`error`) and the local MiniLM ranker answers, labelled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from math import isnan
from pathlib import Path
from typing import Any

import numpy as np

from ari_mem_tui.checkpoint.origin import hash_candidates
from ari_mem_tui.checkpoint.passages import passage_text
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.model import Checkpoint, Entries
from ari_mem_tui.model.origin import AGENT, GIVEN, THIS_PATH, HashFinding
from ari_mem_tui.model.words import plural
from ari_mem_tui.search.check import recorded_searches
from ari_mem_tui.search.embed_client import EmbeddingClient, EndpointFailed
from ari_mem_tui.search.embedded import (
    BM25Ranker,
    EmbeddingRanker,
    Pool,
    ranking_from_scores,
    start_queries,
)
from ari_mem_tui.search.progress import Progress
from ari_mem_tui.search.rankers import ProgressFn, Ranker, Ranking
from ari_mem_tui.search.run_hash import find_hash
from ari_mem_tui.search.run_model import EmbedOptions, EndpointPlan, api_key
from ari_mem_tui.search.vector_cache import (
    VectorCache,
    cache_root,
    endpoint_dims,
    endpoint_folder,
    text_key,
)

SEGMENT = 256  # vectors persisted to the cache every this many
QUERY_DEADLINE = 60.0  # seconds for a query not embedded with the build (a custom one)
MAX_SEND_CHARS = 262_144  # a longer text is not sent: Letta refuses inserts over 8,192 tokens
NEAR_TIE = 1e-6  # distances closer than this may order differently under pgvector's float32 sums
NAN_SCORE = -3.0  # a NaN distance (a zero vector) sorts after every real one (distance <= 2)
NEVER = np.iinfo(np.int64).max  # the creation time of an entry without ts (see LettaAsOfPool)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(ts: float | None) -> int:
    """`ts` as Letta holds it: the microsecond `datetime.fromtimestamp` rounds it to (that is
    how a restore sends `created_at` and a search its `end_datetime`); NEVER when it has none."""
    if ts is None:
        return NEVER
    try:
        return (datetime.fromtimestamp(ts, tz=UTC) - EPOCH) // timedelta(microseconds=1)
    except (OverflowError, OSError, ValueError):
        return NEVER


class LettaAsOfPool(Pool):
    """The pool as of t as a Letta server holds it, in microseconds: `created_at < t`.

    ARI's searches ranked what was inserted before them; an entry stamped at the moment a
    search's read event was stamped (after the search returned) came after it, in ARI's
    backends (ari-skill-memory: the entry's `ts` and the read event's `ts` are both
    `time.time()`, the event's taken once the search is done). So the cut is strict, as the
    plain `Pool`'s and the in-memory rule's are; a Letta-mode replay asks the server for
    `end_datetime` one microsecond earlier (its rule is `created_at <= end_datetime`).

    An entry without ts is restored without `created_at`: the server stamps it with the time of
    the restore, after any moment of the run, so it is outside every as-of pool (the plain
    `Pool` keeps it, unknown ≠ later; here the server's answer is what is reproduced).
    """

    def __init__(self, entries: Sequence) -> None:
        super().__init__(entries)
        # (off the pool's ts, NaN where an entry has none: no entry read for it)
        stamps = self.ts.tolist()
        self.us = np.array([micros(None if isnan(t) else t) for t in stamps], dtype=np.int64)
        self._sorted_us = np.sort(self.us)

    def kept(self, idx: np.ndarray | slice, before_ts: float | None) -> np.ndarray:
        us = self.us[idx]
        if before_ts is None:
            return np.ones(len(us), dtype=bool)
        return (us < micros(before_ts)) & (us != NEVER)

    def size_before(self, before_ts: float | None) -> int:
        if before_ts is None:
            return len(self)
        # a cut Letta cannot hold (NaN, past datetime's range) is NEVER: every timed entry is
        # before it, as `kept` says (the entries without ts are NEVER themselves: not before)
        return int(np.searchsorted(self._sorted_us, micros(before_ts), side="left"))


class RunModelRanker:
    """Ranks as the run's Letta server did, from its embedding model (see module doc)."""

    def __init__(
        self,
        pool: LettaAsOfPool,
        texts: Sequence[str],
        plan: EndpointPlan | None,
        api_key: str | None = None,
        *,
        deadline: float,
        cache_dir: Path | str | None = None,
        checkpoint: Path | None = None,
        background: bool = True,
        progress: ProgressFn | None = None,
        queries: Sequence[str] = (),
        stand_in: Callable[[], Ranker],
        error: str | None = None,
        client: EmbeddingClient | None = None,
        prepare: Callable[[RunModelRanker], None] | None = None,
        hash_finding: HashFinding | None = None,
    ) -> None:
        self.pool, self.texts, self.plan = pool, list(texts), plan
        # the footer hash the texts carry, and what checked it; `prepare` (run before the
        # build, in its thread) finds it and makes the texts when they were not given
        self.hash_finding = hash_finding
        self._prepare = prepare
        self.name = f"run:{plan.model}" if plan else "run"
        self.handle = plan.handle if plan else None
        self.progress_label = (
            f"embedding memory texts through {plan.model} at {plan.shown_url}" if plan else ""
        )
        self.error = error  # one line: why the run's model does not answer
        self.failure, self.failure_kind = "", ""  # the endpoint's reason in it, its kind
        self.notes: list[str] = []
        self._progress = Progress(unit="texts")  # the texts to send, n of N
        self._deadline = deadline
        self._cache_dir = cache_root(cache_dir)
        self._checkpoint = checkpoint  # a cache dir inside it is neither read nor written
        self._queries = [q for q in dict.fromkeys(queries) if q.strip()]
        self._vectors: dict[str, np.ndarray] = {}  # start-up query -> vector (with the build)
        self._asked: dict[str, np.ndarray] = {}  # any other query -> vector (asked on demand)
        self._rows: np.ndarray | None = None  # distinct passage vectors (float32)
        self._norms: np.ndarray | None = None  # their squared norms (float64)
        self._row_of = np.zeros(0, dtype=np.int64)  # entry index -> row
        self._cache: VectorCache | None = None
        self._make_stand_in = stand_in
        self._stand_in: Ranker | None = None
        self._bm25: BM25Ranker | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._built = threading.Event()
        self._client = client
        if plan is not None and client is None:
            self._client = EmbeddingClient(plan.url, plan.model, api_key, plan.dim)
        self._thread: threading.Thread | None = None
        if self.error is not None or plan is None:
            self._fail(self.error or "no endpoint")
        elif background:
            self._thread = threading.Thread(
                target=self._build, args=(progress,), daemon=True, name="ari-mem-tui-run-model"
            )
            self._thread.start()
        else:
            self._build(progress)

    # ---- state -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once the run's vectors are in, or its failure's stand-in is ready."""
        if not self._built.is_set():
            return False
        return self.error is None or getattr(self._stand_in, "ready", True)

    @property
    def usable(self) -> bool:
        """True when rank() answers with the run's model, or with its ready stand-in."""
        if not self._built.is_set():
            return False
        if self.error is None:
            return True
        return self.ready and getattr(self._stand_in, "usable", True)

    @property
    def progress(self) -> Progress:
        """How far the vectors are: the run's own, or once it failed its stand-in's."""
        stand_in = getattr(self._stand_in, "progress", None) if self.error else None
        return stand_in if isinstance(stand_in, Progress) else self._progress

    @property
    def done(self) -> int:
        return self.progress.done

    @property
    def total(self) -> int:
        return self.progress.total

    def wait(self, timeout: float | None = None) -> bool:
        start = time.monotonic()
        if not self._built.wait(timeout):
            return False
        wait = getattr(self._stand_in, "wait", None)
        if self.error is None or wait is None:
            return True
        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - start))
        return bool(wait(left))

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)
        stop = getattr(self._stand_in, "stop", None)
        if stop is not None:
            stop()
        if self._client is not None:
            self._client.close()

    # ---- building ----------------------------------------------------------------------------

    def _build(self, progress: ProgressFn | None) -> None:
        try:
            if self._prepare is not None:
                self._prepare(self)
            self._fill(progress)
        except EndpointFailed as exc:
            self.failure_kind = exc.kind
            self._fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - a failing endpoint must not take the app down
            self._fail(f"{type(exc).__name__}: {exc}")
        finally:
            self._built.set()

    def _fail(self, why: str) -> None:
        plan = self.plan
        where = f" ({plan.model} at {plan.shown_url})" if plan else ""
        self.failure = why  # (the endpoint's reason alone)
        self.error = f"the run's embedding model{where} is unavailable: {why}"
        self._stand_in = self._make_stand_in()
        self._built.set()

    def _fill(self, progress: ProgressFn | None) -> None:
        """Passage and start-up query vectors: the cache's, then the endpoint's (see doc)."""
        assert self.plan is not None and self._client is not None
        keys = [text_key(t) for t in self.texts]
        distinct = list(dict.fromkeys(keys))
        row_of = {k: r for r, k in enumerate(distinct)}
        self._row_of = np.array([row_of[k] for k in keys], dtype=np.int64)
        text_of = dict(zip(keys, self.texts, strict=True))
        wanted = dict.fromkeys(distinct)
        for query in self._queries:
            wanted.setdefault(text_key(query), None)
            text_of.setdefault(text_key(query), query)
        found = self._cached(list(wanted))
        missing = self._sendable([k for k in wanted if k not in found], text_of)
        self._embed(missing, text_of, found, progress)
        self._keep(distinct, found)
        self._progress.update(len(missing))

    def _sendable(self, keys: list[str], text_of: dict[str, str]) -> list[str]:
        """The keys whose texts may be sent to the endpoint, and a note for those too long to
        send (Letta refuses to insert them: they are never embedded and rank last)."""
        long = [k for k in keys if len(text_of[k]) > MAX_SEND_CHARS]
        if long:
            self.notes.append(
                f"not sent: {plural(len(long), 'text')} longer than {MAX_SEND_CHARS:,} characters"
                " (Letta refuses such inserts): they rank last"
            )
        return [k for k in keys if len(text_of[k]) <= MAX_SEND_CHARS]

    def _embed(
        self,
        missing: list[str],
        text_of: dict[str, str],
        found: dict[str, np.ndarray],
        progress: ProgressFn | None,
    ) -> None:
        """The endpoint's vectors of the `missing` texts into `found` and the cache, SEGMENT
        texts at a time under one deadline, progress counted over them all."""
        assert self._client is not None
        self._progress.update(0, len(missing))
        started = time.monotonic()
        deadline_at = started + self._deadline
        for start in range(0, len(missing), SEGMENT):
            chunk = missing[start : start + SEGMENT]

            def report(done: int, _total: int, base: int = start) -> None:
                self._progress.update(base + done)
                if progress is not None:
                    progress(base + done, len(missing))

            vecs = self._client.embed(
                [text_of[k] for k in chunk], deadline_at, report, self._stop.is_set
            )
            self._remember(chunk, vecs)
            found.update(zip(chunk, vecs, strict=True))

    def _keep(self, distinct: list[str], found: dict[str, np.ndarray]) -> None:
        """The passages' vectors as one row per distinct text (zeros where none was had: its
        scores are NaN, ranked last), their norms, and the start-up queries' vectors."""
        assert self._client is not None
        dim = self._client.dim or next((len(v) for v in found.values()), 1)
        rows = np.zeros((len(distinct), dim), dtype=np.float32)
        for r, key in enumerate(distinct):
            if key in found:
                rows[r] = found[key]
        self._vectors = {q: found[text_key(q)] for q in self._queries if text_key(q) in found}
        self._norms = np.einsum("ij,ij->i", rows, rows, dtype=np.float64)
        self._rows = rows

    def _cached(self, keys: list[str]) -> dict[str, np.ndarray]:
        """What the cache holds of `keys`, for the plan's model at its dimension (or the one
        dimension the cache has for it when the plan cannot say)."""
        plan = self.plan
        assert plan is not None and self._client is not None
        dim = plan.dim
        if dim is None:
            dims = endpoint_dims(self._cache_dir, plan.url, plan.model)
            dim = dims[0] if len(dims) == 1 else None
        if dim is None:
            return {}
        self._client.dim = dim  # an endpoint answering another dimension is then an error
        self._open_cache(dim)
        assert self._cache is not None
        wanted = set(keys)
        cached_keys, vecs = self._cache.load(wanted)  # not every run's vectors of this model
        self.notes.extend(self._cache.notes)
        return {k: vecs[i] for i, k in enumerate(cached_keys) if k in wanted}

    def _open_cache(self, dim: int) -> None:
        if self._cache is None:
            assert self.plan is not None
            plan = self.plan
            folder = endpoint_folder(plan.url, plan.model, dim)  # (another endpoint: another)
            cost = f"the texts not in it are sent to {plan.shown_url} again on every run"
            self._cache = VectorCache(self._cache_dir, folder, dim, self._checkpoint, cost)

    def _remember(self, keys: list[str], vecs: np.ndarray) -> None:
        if len(keys):
            self._open_cache(vecs.shape[1])
            assert self._cache is not None
            self._cache.add(keys, vecs)

    # ---- ranking -----------------------------------------------------------------------------

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        if not self._built.is_set():
            note = f"the run's vectors {self.done:,} of {self.total:,} ready; ranked with BM25 meanwhile"
            return self._answer_instead(self._bm25_ranker(), query, top_k, before_ts, note)
        if self.error is not None:
            assert self._stand_in is not None
            return self._answer_instead(self._stand_in, query, top_k, before_ts, self.error)
        if not query.strip():  # Letta answers a blank query with nothing, before embedding it
            size = self.pool.size_before(before_ts)
            note = "a blank query: Letta searches nothing"
            return Ranking(window=[], pool_size=size, ranks={}, used=self.name, note=note)
        try:
            vec = self.query_vector(query)
        except EndpointFailed as exc:
            stand_in = self._stand_in or self._bm25_ranker()
            why = f"the run's embedding model could not embed the query: {exc}"
            return self._answer_instead(stand_in, query, top_k, before_ts, why)
        scores = self.scores_of(vec)
        ranking = ranking_from_scores(self.pool, scores, top_k, before_ts, self.name)
        ranking.note = "; ".join(self.notes + self._tie_notes(scores, ranking, before_ts))
        return ranking

    def scores_of(self, vec: np.ndarray) -> np.ndarray:
        """Every entry's score: minus pgvector's cosine distance (NaN: ranked last)."""
        assert self._rows is not None and self._norms is not None
        dot = (self._rows @ vec.astype(np.float32)).astype(np.float64)
        query_norm = float(np.dot(vec.astype(np.float64), vec.astype(np.float64)))
        with np.errstate(divide="ignore", invalid="ignore"):
            similarity = np.clip(dot / np.sqrt(self._norms * query_norm), -1.0, 1.0)
        score = similarity - 1.0  # = −(1 − similarity), the distance negated
        score[np.isnan(score)] = NAN_SCORE
        return score[self._row_of]

    def query_vector(self, query: str) -> np.ndarray:
        """The query's vector: prefetched with the build, else asked now (and cached)."""
        vec = self._vectors.get(query)
        if vec is None:
            vec = self._asked.get(query)
        if vec is None:
            assert self._client is not None
            vec = self._client.embed([query], time.monotonic() + QUERY_DEADLINE)[0]
            self._remember([text_key(query)], vec[None, :])
            with self._lock:
                if len(self._asked) > 256:
                    self._asked.clear()
                self._asked[query] = vec
        return vec

    def _tie_notes(self, scores: np.ndarray, ranking: Ranking, before_ts: float | None) -> list:
        """Say where two window neighbours (or the window's last and the first outside) are so
        close that pgvector's float32 sums may order them otherwise (measured: our distances
        are within 1e-7 of Postgres's)."""
        picked = [self.pool.index[e.id] for e in ranking.window]
        if len(picked) < 1:
            return []
        values = list(scores[picked])
        outside = np.ones(len(scores), dtype=bool)
        outside[picked] = False
        outside &= self.pool.kept(slice(None), before_ts)
        if outside.any():
            values.append(float(scores[outside].max()))
        gaps = -np.diff(np.asarray(values))
        close = int(np.count_nonzero(gaps < NEAR_TIE))
        if not close:
            return []
        note = (
            f"{plural(close, 'near-tie')} at the window's ranks (cosine distances within"
            f" {NEAR_TIE:g}): Letta's float32 sums may order them otherwise"
        )
        return [note]

    def _bm25_ranker(self) -> BM25Ranker:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = BM25Ranker(Pool(self.pool.entries), self._cache_dir, self._checkpoint)
            return self._bm25

    @staticmethod
    def _answer_instead(
        ranker: Ranker, query: str, top_k: int, before_ts: float | None, why: str
    ) -> Ranking:
        ranking = ranker.rank(query, top_k, before_ts)
        ranking.used = ranking.used or ranker.name
        ranking.note = "; ".join(part for part in (why, ranking.note) if part)
        return ranking


def make_run_ranker(
    ckpt: object,
    options: EmbedOptions,
    plan: EndpointPlan | None,
    error: str | None = None,
    cache_dir: Path | str | None = None,
    background: bool = True,
    progress: ProgressFn | None = None,
    prefetch: bool = True,
) -> RunModelRanker:
    """The run ranker over `ckpt.entries` (a plan from `plan_endpoint`, or the `error` that
    kept it from being made: then the local MiniLM answers from the start). `prefetch`: every
    node's start-up query, and every recorded search's, is sent with the pool; without it
    (`saw`'s one node) only the query asked for is, when it is asked for.

    The footers carry `--checkpoint-hash` when given, else a Letta agent's (its memory was
    read from the server), else the hash the run's files and recorded searches show
    (search/run_hash.py), found in the build's thread before the texts are made."""
    entries = getattr(ckpt, "entries", [])
    if not isinstance(entries, Entries):  # (a run's columns are read as they are)
        entries = list(entries)
    queries = _queries(ckpt) if prefetch else []
    path = getattr(ckpt, "path", None)

    def stand_in() -> Ranker:
        return EmbeddingRanker(Pool(entries), cache_dir=cache_dir, queries=queries, checkpoint=path)

    def build(
        texts: Sequence[str], pool: Sequence, wanted: Sequence[str], **kwargs
    ) -> RunModelRanker:
        kwargs.setdefault("stand_in", stand_in)  # (a probe fails without one: None)
        if kwargs["stand_in"] is None:
            kwargs["stand_in"] = lambda: None
        return RunModelRanker(
            LettaAsOfPool(pool),
            texts,
            plan,
            key,
            deadline=options.deadline,
            cache_dir=cache_dir,
            checkpoint=path,
            queries=wanted,
            **kwargs,
        )

    key = api_key()
    finding = _known_hash(ckpt, options)
    texts: list[str] = []
    prepare = None
    if finding is not None:
        texts = [passage_text(entry, finding.hash) for entry in entries]
    elif plan is not None and error is None:
        prepare = _hash_search(ckpt, entries, build)
    ranker = build(
        texts,
        entries,
        queries,
        background=background,
        progress=progress,
        error=error,
        prepare=prepare,
        hash_finding=finding,
    )
    partial = (
        entries.partial_count()
        if isinstance(entries, Entries)
        else sum(1 for entry in entries if entry.partial)
    )
    if partial:
        ranker.notes.append(
            f"previews stand in for {plural(partial, 'memory text')}, not the text Letta"
            " embedded: their vectors, and so their ranks, can differ from the run's"
        )
    return ranker


def _queries(ckpt: object) -> list[str]:
    """Every node's start-up query and every recorded search's: what the check replays."""
    queries = start_queries(ckpt)
    if isinstance(ckpt, Checkpoint):
        queries += [event.query for event in recorded_searches(ckpt)]
    return list(dict.fromkeys(queries))


def _known_hash(ckpt: object, options: EmbedOptions) -> HashFinding | None:
    """The hash given (--checkpoint-hash), or the Letta agent's; None: to be found."""
    if options.checkpoint_hash:
        return HashFinding(hash=options.checkpoint_hash, source=GIVEN)
    agent_hash = getattr(ckpt, "checkpoint_hash", None)
    if agent_hash:
        return HashFinding(hash=agent_hash, source=AGENT)
    if not isinstance(ckpt, Checkpoint):
        here = checkpoint_hash(getattr(ckpt, "path", "."))
        return HashFinding(hash=here, source=THIS_PATH, note="no run files to check it with")
    return None


def _hash_search(ckpt: Any, entries: Sequence, build: Callable[..., RunModelRanker]):
    """What the build runs first: the run's hash found (search/run_hash.py), the texts made
    with it."""

    def prepare(ranker: RunModelRanker) -> None:
        said = ranker.progress_label
        ranker.progress_label = f"checking the run's footer hash ({said})"

        def probe(candidate: str, pool: Sequence, queries: list[str]) -> RunModelRanker:
            texts = [passage_text(entry, candidate) for entry in pool]
            return build(
                texts, pool, queries, background=False, client=ranker._client, stand_in=None
            )

        try:
            ranker.hash_finding = find_hash(ckpt, hash_candidates(ckpt), probe)
        finally:
            ranker.progress_label = said
        ranker.texts = [passage_text(entry, ranker.hash_finding.hash) for entry in entries]

    return prepare
