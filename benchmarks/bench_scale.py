"""Big runs: the checkpoint loader's first open, reopen from the index, and the JSON parse floor.

For each run (`--ckpt DIR`, repeatable, or demo runs written with `--demo N[:ENTRIES]`), in one
go: the `summary`-equivalent full load (`load_checkpoint` + the summary counts) in a child
process with no index (wall time and the child's max RSS from getrusage), the same with the
index (the first open that writes it, then reopens of unchanged files), and the floor: msgspec
parsing the same bytes (tree.json, every access-log file, the decompressed backup) in this
process. Medians of `--repeat` runs; the machine's load average (`uptime`) before and after.

    python benchmarks/bench_scale.py --ckpt /tmp/bigrun10k-200k --repeat 3
    python benchmarks/bench_scale.py --demo 50 --demo 500 --demo 2000 --demo 10000:200000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent

# the child: one load, timed from inside (no interpreter start-up), max RSS of the whole child
CHILD = """
import json, resource, sys, time
from pathlib import Path
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.summary import counts
t = time.perf_counter()
ckpt = load_checkpoint(Path(sys.argv[1]), use_index=sys.argv[2] == "index")
numbers = counts(ckpt)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"wall": wall, "rss": rss, "entries": numbers["entries"],
                  "events": numbers["events"], "nodes": numbers["nodes"]}))
"""


def child(path: Path, mode: str, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def parse_floor(path: Path) -> tuple[float, int]:
    """Seconds msgspec takes to parse tree.json, every access log and the decompressed backup
    (read and decompressed beforehand: only the parse is timed), and the bytes parsed."""
    docs: list[bytes] = []
    lines: list[bytes] = []
    for name in ("tree.json", "nodes_tree.json"):
        if (path / name).is_file():
            docs.append((path / name).read_bytes())
            break
    for log in sorted(path.glob("memory_access*.jsonl")):
        lines += log.read_bytes().splitlines()
    backup = path / "memory_backup.jsonl.gz"
    if backup.is_file():
        lines += gzip.decompress(backup.read_bytes()).splitlines()
    decode = msgspec.json.Decoder().decode
    start = time.perf_counter()
    for doc in docs:
        decode(doc)
    for line in lines:
        if line.strip():
            decode(line)
    return time.perf_counter() - start, sum(map(len, docs)) + sum(map(len, lines))


def uptime() -> str:
    try:
        return subprocess.run(
            ["uptime"], check=False, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def median(values: list[float]) -> float:
    return statistics.median(values)


def bench(path: Path, repeat: int, index_root: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARI_MEM_TUI_INDEX": str(index_root)}
    cold = [child(path, "plain", env) for _ in range(repeat)]
    floors = [parse_floor(path)[0] for _ in range(repeat)]
    first, reopen = [], []
    for _ in range(repeat):
        subprocess.run(["rm", "-rf", str(index_root)], check=True)
        first.append(child(path, "index", env))
        reopen.append(child(path, "index", env))
    load = median([r["wall"] for r in cold])
    floor = median(floors)
    return {
        "run": str(path),
        "nodes": cold[0]["nodes"],
        "entries": cold[0]["entries"],
        "events": cold[0]["events"],
        "load_s": load,
        "load_rss_mb": median([r["rss"] for r in cold]) / 2**20,
        "first_open_with_index_s": median([r["wall"] for r in first]),
        "reopen_s": median([r["wall"] for r in reopen]),
        "reopen_rss_mb": median([r["rss"] for r in reopen]) / 2**20,
        "parse_floor_s": floor,
        "parsed_mb": parse_floor(path)[1] / 2**20,
        "ratio_to_floor": load / floor if floor else None,
    }


def demo_run(spec: str, out: Path) -> Path:
    nodes, _, entries = spec.partition(":")
    target = out / f"demo-{nodes}-{entries or 'default'}"
    cmd = [sys.executable, "-m", "ari_mem_tui", "demo", "--out", str(target), "--nodes", nodes]
    if entries:
        cmd += ["--entries", entries]
    subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", type=Path, action="append", default=[])
    parser.add_argument("--demo", action="append", default=[], help="N or N:ENTRIES")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch:
        runs = list(args.ckpt) + [demo_run(spec, Path(scratch)) for spec in args.demo]
        if not runs:
            parser.error("give --ckpt DIR or --demo N")
        print(f"before: {uptime()}")
        results = [bench(run, args.repeat, Path(scratch) / "index") for run in runs]
        print(f"after:  {uptime()}")
    for r in results:
        if args.json:
            print(json.dumps(r))
            continue
        print(
            f"{r['nodes']:>6} nodes {r['entries']:>7} entries {r['events']:>7} events | "
            f"load {r['load_s']:6.2f} s {r['load_rss_mb']:6.0f} MB | "
            f"first open + index {r['first_open_with_index_s']:6.2f} s | "
            f"reopen {r['reopen_s']:6.2f} s {r['reopen_rss_mb']:6.0f} MB | "
            f"parse floor {r['parse_floor_s']:5.2f} s ({r['parsed_mb']:.0f} MB) | "
            f"ratio {r['ratio_to_floor']:.1f}x"
        )
    print(f"medians of {args.repeat}; wall inside the child, max RSS of the child")


if __name__ == "__main__":
    main()
