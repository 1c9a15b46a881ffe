"""A lab's workspace at a glance (issue 33, item 3): `runs` over a thousand runs, and the scan
that summarizes them, each beside its floor measured in the same run, with the load average.

The workspace: `--runs` demo runs of `--nodes` nodes (`demo --out DIR --seed S --recordings
keywords`, distinct seeds), generated once into `--dir` (in parallel) and reused. Then, whole
processes, as a user meets them:

- cold scan: `runs DIR --scan --jobs J` with an empty cache and index folder: every run read
  once, summarized, kept (goal: ≤ 2 min for 1,000 runs of 50 nodes on two cores); its floor:
  msgspec parsing every run's files (tree.json, the access log, the decompressed backup),
  keeping nothing, in J processes;
- warm listing: `runs DIR` and `runs DIR --json` once every summary is kept (goal: ≤ 1 s for
  1,000 runs); its floor: a process that reads each run's kept summary file and stats the run's
  files (what a listing cannot do without);
- the first listing without counts (what the picker shows at once), in-process.

    python benchmarks/bench_runs.py --runs 1000 --nodes 50 --dir /tmp/bench-runs --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCAN_GOAL_S = 120.0  # 1,000 runs of 50 nodes on two cores
WARM_GOAL_S = 1.0

# the scan's floor: every run's files parsed by msgspec, nothing kept, in J processes
PARSE_FLOOR = """
import gzip, sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
import msgspec

def parse(run):
    decode = msgspec.json.Decoder().decode
    run = Path(run)
    for name in ("tree.json", "nodes_tree.json"):
        if (run / name).is_file():
            decode((run / name).read_bytes())
            break
    for log in run.glob("memory_access*.jsonl"):
        for line in log.read_bytes().splitlines():
            if line.strip():
                decode(line)
    backup = run / "memory_backup.jsonl.gz"
    if backup.is_file():
        for line in gzip.decompress(backup.read_bytes()).splitlines():
            if line.strip():
                decode(line)
    return 1

runs = [p for p in Path(sys.argv[1]).iterdir() if p.is_dir()]
with ProcessPoolExecutor(int(sys.argv[2])) as pool:
    print(sum(pool.map(parse, runs, chunksize=8)))
"""

# the warm listing's floor: each run's kept summary read, each run's files stat'ed
LIST_FLOOR = """
import hashlib, os, sys
from pathlib import Path
index = Path(sys.argv[2])
found = 0
for run in sorted(Path(sys.argv[1]).iterdir()):
    for entry in os.scandir(run):
        entry.stat()
    folder = index / hashlib.sha1(os.path.realpath(run).encode()).hexdigest()
    try:
        found += len((folder / "run-summary.bin").read_bytes()) > 0
    except OSError:
        pass
print(found)
"""


def generate(root: Path, runs: int, nodes: int, jobs: int) -> Path:
    """`runs` demo runs of distinct seeds in root/ws/checkpoints (the missing ones made)."""
    ckpts = root / "ws" / "checkpoints"
    ckpts.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def one(seed: int) -> None:
        target = ckpts / f"run-{nodes}-{seed:05d}"
        if (target / ".ari_mem_tui_demo.json").is_file():
            return
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(
            [sys.executable, "-m", "ari_mem_tui", "demo", "--out", str(target)]
            + ["--nodes", str(nodes), "--seed", str(seed), "--recordings", "keywords"],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )

    missing = [s for s in range(1, runs + 1) if not (ckpts / f"run-{nodes}-{s:05d}").is_dir()]
    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, range(1, runs + 1)))
    if missing:
        print(f"generated {len(missing)} runs in {time.perf_counter() - started:.0f} s", flush=True)
    for extra in ckpts.iterdir():  # a smaller --runs than the folder holds: only these
        number = extra.name.rpartition("-")[2]
        if not (
            number.isdigit() and int(number) <= runs and extra.name.startswith(f"run-{nodes}-")
        ):
            raise SystemExit(f"{extra}: not one of this benchmark's runs; use another --dir")
    return root / "ws"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--dir", type=Path, help="keep the generated runs here and reuse them")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3, help="warm listings (median)")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-runs-"))
    ws = generate(root, args.runs, args.nodes, args.jobs)
    before = load_average()
    scratch = Path(tempfile.mkdtemp(prefix="bench-runs-cache-"))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ARI_MEM_TUI_CACHE": str(scratch / "cache"),
        "ARI_MEM_TUI_INDEX": str(scratch / "index"),
        "ARI_MEM_TUI_CONFIG_DIR": str(scratch / "config"),
    }
    cli = [sys.executable, "-m", "ari_mem_tui", "runs", str(ws)]
    try:
        floor_scan, parsed = timed(
            [sys.executable, "-c", PARSE_FLOOR, str(ws / "checkpoints"), str(args.jobs)], env
        )
        scan, done = timed([*cli, "--scan", "--jobs", str(args.jobs)], env)
        made = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        warm = [timed(cli, env)[0] for _ in range(args.repeat)]
        warm_json = [timed([*cli, "--json"], env)[0] for _ in range(args.repeat)]
        listing = json.loads(timed([*cli, "--json"], env)[1].stdout)
        floor_list = [
            timed(
                [sys.executable, "-c", LIST_FLOOR, str(ws / "checkpoints"), str(scratch / "index")],
                env,
            )[0]
            for _ in range(args.repeat)
        ]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    after = load_average()
    summarized = sum(1 for run in listing["runs"] if run["summary"] is not None)
    rows = [
        ("cold `runs --scan`", scan, floor_scan, SCAN_GOAL_S, "parse every run's files"),
        (
            "warm `runs`",
            statistics.median(warm),
            statistics.median(floor_list),
            WARM_GOAL_S,
            "read each kept summary, stat each run's files",
        ),
        (
            "warm `runs --json`",
            statistics.median(warm_json),
            statistics.median(floor_list),
            WARM_GOAL_S,
            "as above",
        ),
    ]
    print(
        f"{len(listing['runs'])} runs of {args.nodes} nodes, {summarized} summarized "
        f"({made}); parse floor: {parsed.stdout.strip()} runs; {args.jobs} processes; "
        f"load average {before} → {after}\n"
    )
    print("| figure | value | floor (same run) | ratio | goal | |")
    print("|---|---|---|---|---|---|")
    for name, value, floor, goal, what in rows:
        met = "met" if value <= goal else "NOT met"
        print(
            f"| {name} | {value:.2f} s | {floor:.2f} s ({what}) | {value / floor:.1f}× "
            f"| ≤ {goal:g} s | {met} |"
        )


if __name__ == "__main__":
    main()
