"""The whole-run audit (`audit(ckpt)`) on big runs: its wall time and how much RSS it adds.

Each measurement is a child process that opens the run with `load_checkpoint(path,
use_index=True)` (the first child of a run, with an empty index folder, is a fresh load that
writes the index; the others reopen from it, as the TUI does), collects garbage, then times
`audit(ckpt)` alone, with RSS from /proc/self/statm before and after. The report's digest
(sha256 of its model dump) is printed, so two versions of the code can be checked to agree.
Medians of REPEAT reopens, one fresh load; the load average (`uptime`) before and after each run.

    python benchmarks/bench_audit.py --ckpt /tmp/bench12-demos/demo-10000-200000 --repeat 3
    python benchmarks/bench_audit.py --demo 2000 --demo-dir /tmp/bench-audit-demos
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import gc, hashlib, json, os, sys, time
from pathlib import Path
from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint.load import load_checkpoint

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

ckpt = load_checkpoint(Path(sys.argv[1]), use_index=True)
gc.collect()
before = rss()
t = time.perf_counter()
report = audit(ckpt)
wall = time.perf_counter() - t
after = rss()
dump = json.dumps(report.model_dump(), sort_keys=True).encode()
print(json.dumps({"wall": wall, "rss_before": before, "rss_added": after - before,
                  "digest": hashlib.sha256(dump).hexdigest()[:16],
                  "findings": [len(report.problems), len(report.scope_violations),
                               len(report.leaks), len(report.rejected_writes)]}))
"""


def child(path: Path, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def uptime() -> str:
    return subprocess.run(["uptime"], check=False, capture_output=True, text=True).stdout.strip()


def bench(path: Path, repeat: int) -> dict:
    before = uptime()
    with tempfile.TemporaryDirectory(prefix="bench-audit-index-") as index_root:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "ARI_MEM_TUI_INDEX": index_root}
        fresh = child(path, env)  # an empty index folder: a fresh load, which writes the index
        reopened = [child(path, env) for _ in range(repeat)]
    digests = {r["digest"] for r in [fresh, *reopened]}
    return {
        "run": str(path),
        "fresh_audit_s": round(fresh["wall"], 2),
        "fresh_added_rss_mb": round(fresh["rss_added"] / 2**20),
        "reopen_audit_s": round(statistics.median(r["wall"] for r in reopened), 2),
        "reopen_added_rss_mb": round(statistics.median(r["rss_added"] for r in reopened) / 2**20),
        "reopen_rss_before_mb": round(statistics.median(r["rss_before"] for r in reopened) / 2**20),
        "findings": fresh["findings"],  # problems, scope violations, leaks, rejected writes
        "digest": digests.pop() if len(digests) == 1 else sorted(digests),
        "uptime_before": before,
        "uptime_after": uptime(),
    }


def demo_run(nodes: str, out: Path) -> Path:
    """Write (or reuse from `out`) the demo run of `nodes` nodes."""
    target = out / f"demo-{nodes}-default"
    if not (target / ".ari_mem_tui_demo.json").is_file():
        cmd = [sys.executable, "-m", "ari_mem_tui", "demo", "--out", str(target), "--nodes", nodes]
        subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ckpt", type=Path, action="append", default=[])
    parser.add_argument("--demo", action="append", default=[], help="a demo run of N nodes")
    parser.add_argument("--demo-dir", type=Path, default=Path("/tmp/bench-audit-demos"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [*args.ckpt, *(demo_run(n, args.demo_dir) for n in args.demo)]
    for path in runs:
        started = time.perf_counter()
        result = bench(path, args.repeat)
        result["bench_s"] = round(time.perf_counter() - started)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
