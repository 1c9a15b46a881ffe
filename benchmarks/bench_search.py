"""Benchmark of the search replay: open, vector build, per-node replay latency, peak memory.

    python benchmarks/bench_search.py                 # default demo (40 nodes) only
    python benchmarks/bench_search.py --big           # + 10k nodes / 200k entries
    python benchmarks/bench_search.py --big --no-demo # only the big case

The default demo embeds its texts with the real MiniLM model into a fresh cache (cold), then
reopens with the cache (warm). The big run (10k nodes / 200k entries) is built in memory from
the models (random tree, random distinct texts), and since embedding 200k texts would take
~25 min its vectors are SYNTHETIC: random unit vectors written into a fresh cache for every
distinct text, then loaded exactly as real cached vectors are; queries are embedded by the model.
Prints a Markdown table. Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.demo import write_demo
from ari_mem_tui.model import Checkpoint, MemoryEntry, Node
from ari_mem_tui.search.embedded import make_ranker, ranking_from_scores
from ari_mem_tui.search.embedder import DIM, MODEL_NAME
from ari_mem_tui.search.replay import replay
from ari_mem_tui.search.startup import node_query
from ari_mem_tui.search.vector_cache import VectorCache, text_key

ROWS: list[tuple[str, str, str, str]] = []


def row(case: str, what: str, value: str, note: str = "") -> None:
    ROWS.append((case, what, value, note))
    print(f"  {case}: {what} = {value} {note}", file=sys.stderr, flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def replay_latency(ckpt, ranker, nodes: list[str], exact_ranks: bool = True) -> tuple[float, float]:
    times = []
    for node_id in nodes:
        start = time.perf_counter()
        replay(ckpt, node_id, ranker, with_tiers=True, exact_ranks=exact_ranks)
        times.append(time.perf_counter() - start)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def bench_demo(work: Path) -> None:
    case = "demo 40 nodes"
    path = write_demo(work / "demo")
    cache = work / "cache-demo"
    t0 = time.perf_counter()
    ckpt = load_checkpoint(path)
    t_load = time.perf_counter() - t0
    ranker = make_ranker(ckpt, "minilm", cache_dir=cache, background=True)
    first_node = next(n for n in ckpt.nodes.values() if n.ancestor_ids).id
    first = replay(ckpt, first_node, ranker)
    t_first = time.perf_counter() - t0
    row(case, "cold: load checkpoint", ms(t_load))
    row(case, "cold: first replay shown", ms(t_first), f"(ranked with {first.embedder})")
    t1 = time.perf_counter()
    ranker.wait()
    build = time.perf_counter() - t1 + (t1 - t0 - t_load)
    row(case, "entries / distinct texts embedded", f"{len(ckpt.entries)} / {ranker.total}")
    row(
        case,
        "vector build (MiniLM, background)",
        f"{build:.1f} s",
        f"({ranker.total / build:.0f} texts/s)",
    )
    t0 = time.perf_counter()
    ckpt = load_checkpoint(path)
    ranker = make_ranker(ckpt, "minilm", cache_dir=cache, background=True)
    ranker.wait()
    ranker.queries_ready.wait()  # node queries: cached on disk by the cold run's prefetch
    first = replay(ckpt, first_node, ranker)
    row(
        case,
        "warm: open + first replay (cached vectors)",
        ms(time.perf_counter() - t0),
        f"(ranked with {first.embedder})",
    )
    nodes = list(ckpt.nodes)
    med, p95 = replay_latency(ckpt, ranker, nodes)
    row(
        case,
        "replay per node, MiniLM (median / p95)",
        f"{ms(med)} / {ms(p95)}",
        f"({len(nodes)} nodes; node queries prefetched)",
    )
    bm25 = make_ranker(ckpt, "bm25")
    med, p95 = replay_latency(ckpt, bm25, nodes)
    row(case, "replay per node, BM25 (median / p95)", f"{ms(med)} / {ms(p95)}")


def synthetic_cache(ckpt, cache: Path) -> int:
    keys = list(dict.fromkeys(text_key(e.text) for e in ckpt.entries))
    rng = np.random.default_rng(0)
    store = VectorCache(cache, MODEL_NAME, DIM)
    for start in range(0, len(keys), 50_000):
        chunk = keys[start : start + 50_000]
        vecs = rng.standard_normal((len(chunk), DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.add(chunk, vecs)
    return len(keys)


def synthetic_run(nodes: int, entries: int, seed: int = 0) -> Checkpoint:
    """A run built directly from the models: random tree, `entries` distinct random texts."""
    rng = random.Random(seed)
    words = [
        f"{a}{b}"
        for a in ("gemm", "spmv", "tile", "cache", "numa", "loss", "lr", "batch")
        for b in ("", "_a", "_b", "_c", "_d", "_e", "_f", "_g", "_h", "_i", "_j", "_k")
    ]
    made: dict[str, Node] = {}
    ids: list[str] = []
    for k in range(nodes):
        parent = made[ids[rng.randrange(len(ids))]] if ids else None
        ancestors = [*parent.ancestor_ids, parent.id] if parent else []
        node_id = f"node_{k:08x}"
        direction = " ".join(rng.choice(words) for _ in range(12))
        made[node_id] = Node(
            id=node_id,
            parent_id=parent.id if parent else None,
            depth=len(ancestors),
            ancestor_ids=ancestors,
            original_direction=direction,
        )
        ids.append(node_id)
    rows = []
    for i in range(entries):
        owner = ids[i * nodes // entries]
        text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 30))) + f" #{i}"
        rows.append(
            MemoryEntry(
                id=f"e{i:07d}",
                kind="node_scope",
                node_id=owner,
                text=text,
                ts=float(i),
                source="synthetic",
            )
        )
    ckpt = Checkpoint(path=Path("/nonexistent-synthetic"), nodes=made, entries=rows)
    ckpt.roots = [ids[0]]
    return ckpt


class ExactRanker:
    """The reference: every pool entry scored exactly (a full pass), then sorted."""

    name = "minilm"

    def __init__(self, ranker) -> None:
        self.ranker = ranker

    def rank(self, query: str, top_k: int, before_ts: float | None = None):
        scores = self.ranker.scores(query)
        return ranking_from_scores(self.ranker.pool, scores, top_k, before_ts, "minilm")


def replay_on_checkpoint(ckpt, work: Path, sample_size: int = 200, bm25_nodes: int = 50) -> dict:
    """Replay medians on a loaded run, as the TUI does: MiniLM over a pre-warmed cache of
    SYNTHETIC vectors (one per distinct text; queries embedded by the model beforehand, as the
    app's prefetch does), int8 bounds + exact rescoring, missed ranks deferred; each window and
    hit list checked against an exact full pass. Then BM25 (index build + replay median)."""
    out: dict = {"entries": len(ckpt.entries)}
    t0 = time.perf_counter()
    out["distinct"] = synthetic_cache(ckpt, work / "cache")
    out["cache_write_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranker = make_ranker(ckpt, "minilm", cache_dir=work / "cache", background=False)
    out["vectors_open_s"] = time.perf_counter() - t0
    if not ranker.usable:
        raise RuntimeError(f"MiniLM ranker unusable: {ranker.error}")
    rng = np.random.default_rng(1)
    inner = [n for n, node in ckpt.nodes.items() if node.ancestor_ids]  # roots rank nothing
    sample = [str(n) for n in rng.choice(inner, size=min(sample_size, len(inner)), replace=False)]
    for node_id in sample:  # what the background prefetch does for every node
        ranker.query_vector(node_query(ckpt, ckpt.nodes[node_id])[0])
    out["minilm_median_s"], out["minilm_p95_s"] = replay_latency(
        ckpt, ranker, sample, exact_ranks=False
    )
    exact = ExactRanker(ranker)
    same = 0
    for node_id in sample:
        fast = replay(ckpt, node_id, ranker, with_tiers=False, exact_ranks=False)
        ref = replay(ckpt, node_id, exact, with_tiers=False)
        top_k = fast.params["top_k"]
        windows = [
            [e.id for e in r.rank(fast.query, top_k, fast.as_of).window] for r in (ranker, exact)
        ]
        hits = [[(h.entry_id, h.global_rank) for h in r.hits] for r in (fast, ref)]
        same += windows[0] == windows[1] and hits[0] == hits[1]
    out["identical_windows"] = f"{same}/{len(sample)}"
    t0 = time.perf_counter()
    bm25 = make_ranker(ckpt, "bm25")
    out["bm25_build_s"] = time.perf_counter() - t0
    out["bm25_median_s"], out["bm25_p95_s"] = replay_latency(ckpt, bm25, sample[:bm25_nodes])
    out["nodes_sampled"] = len(sample)
    return out


def bench_big(work: Path, nodes: int, entries: int) -> None:
    case = f"{nodes // 1000}k nodes / {entries // 1000}k entries"
    t0 = time.perf_counter()
    ckpt = synthetic_run(nodes, entries)
    row(
        case,
        "build synthetic run in memory",
        f"{time.perf_counter() - t0:.1f} s",
        "(models built directly, so the vectors can be synthetic and the run needs no files)",
    )
    t0 = time.perf_counter()
    bm25 = make_ranker(ckpt, "bm25")
    row(case, "BM25 index build", f"{time.perf_counter() - t0:.1f} s")
    cache = work / "cache-big"
    distinct = synthetic_cache(ckpt, cache)
    t0 = time.perf_counter()
    ranker = make_ranker(ckpt, "minilm", cache_dir=cache, background=False)
    row(
        case,
        "open: vectors from the cache",
        f"{time.perf_counter() - t0:.1f} s",
        f"({distinct} distinct texts, SYNTHETIC cached vectors)",
    )
    rng = np.random.default_rng(1)
    sample = [str(n) for n in rng.choice(list(ckpt.nodes), size=200, replace=False)]
    deep = sorted(ckpt.nodes, key=lambda n: -len(ckpt.nodes[n].ancestor_ids))[:50]
    med, p95 = replay_latency(ckpt, ranker, sample)
    row(
        case,
        "replay per node, MiniLM, cold query (median / p95)",
        f"{ms(med)} / {ms(p95)}",
        "(200 random nodes; each query embedded at replay)",
    )
    for node_id in sample:  # what the background prefetch does for every node
        ranker.query_vector(node_query(ckpt, ckpt.nodes[node_id])[0])
    med, p95 = replay_latency(ckpt, ranker, sample, exact_ranks=False)
    row(
        case,
        "replay per node, MiniLM, prefetched query, as the TUI (median / p95)",
        f"{ms(med)} / {ms(p95)}",
        "(int8 bounds + exact rescoring + post-filter + diagnostics + tiers; missed ranks deferred)",
    )
    med, p95 = replay_latency(ckpt, ranker, sample)
    row(
        case,
        "replay per node, MiniLM, prefetched query, missed ranks too (median / p95)",
        f"{ms(med)} / {ms(p95)}",
        "(as `saw`: + one exact pass over the pool for the missed entries' global ranks)",
    )
    vec = ranker.query_vector(node_query(ckpt, ckpt.nodes[sample[0]])[0])
    unique = ranker._int8.matrix
    times = []
    for _ in range(30):
        start = time.perf_counter()
        unique @ vec
        times.append(time.perf_counter() - start)
    row(
        case,
        "float32 mat-vec over the pool alone (median)",
        ms(statistics.median(times)),
        "(the old replay's floor, for comparison)",
    )
    med, p95 = replay_latency(ckpt, ranker, deep)
    row(
        case,
        "replay, 50 deepest nodes, MiniLM (median / p95)",
        f"{ms(med)} / {ms(p95)}",
        f"(depth {len(ckpt.nodes[deep[0]].ancestor_ids)})",
    )
    med, p95 = replay_latency(ckpt, bm25, sample[:50])
    row(case, "replay per node, BM25 (median / p95)", f"{ms(med)} / {ms(p95)}", "(50 nodes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="also 10k nodes / 200k entries")
    parser.add_argument("--no-demo", action="store_true", help="skip the default demo")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        work = Path(tmp)
        if not args.no_demo:
            bench_demo(work)
        if args.big:
            bench_big(work, 10_000, 200_000)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row("all", "peak memory (max RSS)", f"{peak:.0f} MB")
    print("| case | measure | value | note |")
    print("|---|---|---|---|")
    for case, what, value, note in ROWS:
        print(f"| {case} | {what} | {value} | {note} |")


if __name__ == "__main__":
    main()
