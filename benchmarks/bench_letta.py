"""Benchmark: ARI's node search through a live Letta server vs the embedded replay, same data.

Needs a running Letta server (scripts/letta/start.sh). Without --checkpoint it writes a small
demo checkpoint and restores it into the server first (this WRITES to the server).

    bash scripts/letta/start.sh
    python benchmarks/bench_letta.py --letta-url http://127.0.0.1:58283 [--checkpoint CKPT]
    bash scripts/letta/stop.sh

Reports, as medians over --repeat runs:
- node replay latency (same nodes, same queries, limit 5 / top_k 200) via the server's
  `passages.search` vs the embedded MiniLM and BM25 rankers, and their ratio, both for a
  node's first replay (MiniLM embeds the query) and for repeats (query vector cached);
- reading the whole memory from the server (health, agent, every passage page, core blocks)
  vs opening the checkpoint's files (`load_checkpoint`, which reads the backup).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.letta.options import LettaOptions
from ari_mem_tui.letta.source import open_letta_run
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.replay import replay


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def letta_args(url: str, ckpt: Path) -> LettaOptions:
    del ckpt  # the agent is found by the checkpoint's hash, from the Checkpoint itself
    return LettaOptions(url=url)


def prepare(url: str, nodes: int, entries: int, where: Path) -> Path:
    ckpt = where / "ckpt"
    run = [sys.executable, "-m", "ari_mem_tui"]
    demo = [*run, "demo", "--out", str(ckpt), "--nodes", str(nodes), "--entries", str(entries)]
    subprocess.run(demo, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*run, "letta-restore", str(ckpt), "--letta-url", url], check=True)
    return ckpt


def bench(url: str, ckpt: Path, repeat: int) -> dict:
    files_open = median_time(lambda: load_checkpoint(ckpt), repeat)
    letta_open = median_time(
        lambda: open_letta_run(load_checkpoint(ckpt), letta_args(url, ckpt)), repeat
    )
    ckpt_obj = load_checkpoint(ckpt)
    letta_run = open_letta_run(ckpt_obj, letta_args(url, ckpt))
    nodes = [nid for nid, node in ckpt_obj.nodes.items() if node.ancestor_ids]
    result: dict = {
        "checkpoint": str(ckpt),
        "entries": len(ckpt_obj.entries),
        "nodes_replayed": len(nodes),
        "repeat": repeat,
        "open_files_s": files_open,
        "open_letta_full_read_s": letta_open - files_open,
        "open_letta_total_s": letta_open,
    }
    rankers = {"letta": letta_run.ranker}
    for name in ("minilm", "bm25"):
        # same data: the entries read from the server, ranked locally
        ranker = make_ranker(ckpt_obj, name, cache_dir=Path(tempfile.mkdtemp()), background=False)
        wait = getattr(ranker, "wait", None)
        if wait is not None:
            wait(None)
        rankers[name] = ranker
    for name, ranker in rankers.items():
        replay(ckpt_obj, nodes[0], ranker, with_tiers=False)  # warm-up (model load)
        # first replay of each node: the embedded rankers embed its query once, then cache it
        first = [
            median_time(lambda n=n, r=ranker: replay(ckpt_obj, n, r, with_tiers=False), 1)
            for n in nodes[1:]
        ]
        result[f"replay_{name}_first_median_s"] = statistics.median(first)
        per_node = [
            median_time(lambda n=n, r=ranker: replay(ckpt_obj, n, r, with_tiers=False), repeat)
            for n in nodes
        ]
        result[f"replay_{name}_median_s"] = statistics.median(per_node)
    for name in ("minilm", "bm25"):
        result[f"ratio_letta_over_{name}"] = (
            result["replay_letta_median_s"] / result[f"replay_{name}_median_s"]
        )
        result[f"ratio_letta_over_{name}_first"] = (
            result["replay_letta_first_median_s"] / result[f"replay_{name}_first_median_s"]
        )
    result["ratio_letta_read_over_files"] = letta_open / files_open
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--letta-url", required=True)
    parser.add_argument("--checkpoint", type=Path, help="already restored into the server")
    parser.add_argument("--nodes", type=int, default=12)
    parser.add_argument("--entries", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = args.checkpoint or prepare(args.letta_url, args.nodes, args.entries, Path(tmp))
        result = bench(args.letta_url, ckpt, args.repeat)
    print(json.dumps(result, indent=2))
    print(
        f"node replay median: letta {result['replay_letta_median_s'] * 1000:.0f} ms,"
        f" minilm {result['replay_minilm_median_s'] * 1000:.1f} ms"
        f" ({result['ratio_letta_over_minilm']:.1f}x),"
        f" bm25 {result['replay_bm25_median_s'] * 1000:.1f} ms"
        f" ({result['ratio_letta_over_bm25']:.1f}x); first replay of a node: minilm"
        f" {result['replay_minilm_first_median_s'] * 1000:.1f} ms"
        f" ({result['ratio_letta_over_minilm_first']:.1f}x);"
        f" full read from letta {result['open_letta_total_s']:.2f} s"
        f" vs files {result['open_files_s']:.3f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
