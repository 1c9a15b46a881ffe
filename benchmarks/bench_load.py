"""Load-time and peak-memory benchmark of `load_checkpoint`.

Either on a checkpoint you name (`--ckpt DIR`, e.g. a generated demo), or on a synthetic one
this script writes quickly (`--nodes/--entries/--events`): a 5-level tree with short trace logs,
a gzip backup with one node_scope entry per write, and an access log with a write event per
entry plus start-up reads. Prints wall time of the load and tracemalloc's peak.

    python benchmarks/bench_load.py --nodes 10000 --entries 200000 --events 300000
    python benchmarks/bench_load.py --ckpt /tmp/demo
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import resource
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from ari_mem_tui.checkpoint.load import load_checkpoint

T0 = 1_780_000_000.0


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def synthetic(out: Path, nodes: int, entries: int, events: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    tree, scopes = [], {}
    for i in range(nodes):
        nid = f"node_{i:08x}"
        if i == 0:
            parent, anc = None, []
        else:
            parent = tree[rng.randrange(max(1, i - 50), i) if i > 1 else 0]["id"]
            anc = scopes[parent] + [parent]
            if len(anc) > 5:
                parent, anc = tree[0]["id"], [tree[0]["id"]]
        scopes[nid] = anc
        created = T0 + i * 10
        tree.append(
            {
                "id": nid,
                "parent_id": parent,
                "depth": len(anc),
                "status": "success",
                "children": [],
                "created_at": _iso(created),
                "completed_at": _iso(created + 9),
                "metrics": {"_scientific_score": rng.random()},
                "label": "improve",
                "eval_summary": f"direction {i}",
                "original_direction": f"direction {i}",
                "ancestor_ids": anc,
                "trace_log": [
                    f'→ search_memory({{"query": "q{i}", "ancestor_ids": {json.dumps(anc)}, "limit": 5}})',
                    "  ← {'result': '{\"results\": []}'}",
                    f'→ add_memory({{"node_id": "{nid}", "text": "finding {i}"}})',
                    '  ← {\'result\': \'{"ok": true, "id": "p"}\'}',
                ],
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "tree.json").write_text(json.dumps({"run_id": "20260101000000_bench", "nodes": tree}))
    lines, access = [], []
    for k in range(entries):
        owner = tree[k * nodes // entries]
        ts = T0 + (k * nodes // entries) * 10 + 1 + (k % 7) * 0.5
        text = f"Tool run_code: entry {k} " + "lorem ipsum " * rng.randrange(5, 40)
        meta = {"step": k % 80, "tool": "run_code"}
        lines.append(
            json.dumps(
                {
                    "kind": "node_scope",
                    "node_id": owner["id"],
                    "text": text,
                    "metadata": meta,
                    "ts": ts,
                }
            )
        )
        access.append(
            json.dumps(
                {
                    "ts": ts + 0.2,
                    "node_id": owner["id"],
                    "op": "write",
                    "collection": "node_scope",
                    "entry_id": f"p{k}",
                    "text_preview": text[:200],
                    "metadata": meta,
                }
            )
        )
    for k in range(max(0, events - entries)):
        reader = tree[1 + k % max(1, nodes - 1)] if nodes > 1 else tree[0]
        access.append(
            json.dumps(
                {
                    "ts": T0 + k,
                    "node_id": "",
                    "op": "read",
                    "collection": "node_scope",
                    "query": reader["original_direction"],
                    "ancestor_ids": reader["ancestor_ids"],
                    "limit": 5,
                    "results": [
                        {"entry_id": f"p{k % max(1, entries)}", "src_node_id": "", "score": 0.9}
                    ],
                }
            )
        )
    with gzip.open(out / "memory_backup.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    (out / "memory_access.jsonl").write_text("\n".join(access) + "\n")
    return out


def json_baseline(path: Path) -> float:
    """Seconds to just json.loads every backup and access-log line: this machine's floor."""
    started = time.perf_counter()
    backup = path / "memory_backup.jsonl.gz"
    if backup.is_file():
        with gzip.open(backup, "rt", encoding="utf-8") as handle:
            for line in handle:
                json.loads(line)
    for log in path.glob("memory_access*.jsonl"):
        with log.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    json.loads(line)
    return time.perf_counter() - started


def measure(path: Path) -> None:
    print(f"baseline (json.loads of every jsonl line only): {json_baseline(path):.2f} s")
    started, cpu = time.perf_counter(), time.process_time()
    ckpt = load_checkpoint(path)
    plain, cpu = time.perf_counter() - started, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    load_checkpoint(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"checkpoint: {path}")
    print(
        f"nodes {len(ckpt.nodes)}, entries {len(ckpt.entries)}, events "
        f"{len(ckpt.access_events)}, writes {len(ckpt.writes)}, problems {len(ckpt.problems)}"
    )
    print(
        f"load: {plain:.2f} s wall, {cpu:.2f} s CPU; max RSS after it {rss:.0f} MiB; "
        f"tracemalloc peak of a second load: {peak / 2**20:.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", type=Path, help="load this checkpoint instead of a synthetic one")
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--events", type=int, default=300_000)
    args = parser.parse_args()
    if args.ckpt:
        measure(args.ckpt)
        return
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path = synthetic(Path(tmp) / "ckpt", args.nodes, args.entries, args.events)
        print(f"wrote the synthetic checkpoint in {time.perf_counter() - started:.1f} s")
        measure(path)


if __name__ == "__main__":
    main()
