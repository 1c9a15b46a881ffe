"""The whole-run audit (`audit(ckpt)`) on big runs: its wall time and how much RSS it adds.

Each measurement is a child process that opens the run with `load_checkpoint(path,
use_index=True)` (the first child of a run, with an empty index folder, is a fresh load that
writes the index; the others reopen from it, as the TUI does), collects garbage, then times
`audit(ckpt)` alone, with RSS from /proc/self/statm before and after (and its file-backed part:
a reopened run's trace logs are memory-mapped from the index). The report's digest
(sha256 of its model dump) is printed, so two versions of the code can be checked to agree.
Medians of REPEAT fresh loads and REPEAT reopens; the load average (`uptime`) before and after each run.

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
import ari_mem_tui
from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint.load import load_checkpoint

def rss():  # (resident, its file-backed part) in bytes
    with open("/proc/self/statm") as f:
        fields = f.read().split()
    page = os.sysconf("SC_PAGE_SIZE")
    return int(fields[1]) * page, int(fields[2]) * page

ckpt = load_checkpoint(Path(sys.argv[1]), use_index=True)
gc.collect()
before = rss()
t, cpu = time.perf_counter(), time.process_time()
report = audit(ckpt)
wall, cpu = time.perf_counter() - t, time.process_time() - cpu
after = rss()
dump = json.dumps(report.as_data(), sort_keys=True).encode()
print(json.dumps({"wall": wall, "cpu": cpu, "rss_before": before[0], "rss_added": after[0] - before[0],
                  "file_added": after[1] - before[1],
                  "digest": hashlib.sha256(dump).hexdigest()[:16],
                  "code": str(Path(ari_mem_tui.__file__).parent.parent),
                  "findings": [len(report.problems), len(report.scope_violations),
                               len(report.leaks), len(report.rejected_writes)]}))
"""


def child(path: Path, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        env=env,
        cwd=ROOT,  # `python -c` puts the working directory first on sys.path: ROOT's code
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def uptime() -> str:
    return subprocess.run(["uptime"], check=False, capture_output=True, text=True).stdout.strip()


def bench(path: Path, repeat: int) -> dict:
    before = uptime()
    fresh, reopened = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="bench-audit-index-") as index_root:
            # (the index written inside the fresh figure, as before the write was detached:
            # the reopen then never waits for a writer still at work)
            env = {**os.environ, "PYTHONPATH": str(ROOT), "ARI_MEM_TUI_INDEX": index_root,
                   "ARI_MEM_TUI_DETACH": "0"}  # fmt: skip
            fresh.append(child(path, env))  # an empty index folder: a fresh load writes it
            reopened.append(child(path, env))
    digests = {r["digest"] for r in [*fresh, *reopened]}
    result = {"run": str(path), "code": fresh[0]["code"], "repeat": repeat}
    for label, runs in (("fresh", fresh), ("reopen", reopened)):
        result[f"{label}_audit_s"] = round(statistics.median(r["wall"] for r in runs), 2)
        # CPU seconds of the process: less at the mercy of other load on the machine
        result[f"{label}_audit_cpu_s"] = round(statistics.median(r["cpu"] for r in runs), 2)
        result[f"{label}_added_rss_mb"] = _mb(runs, "rss_added")
        # of which file-backed: pages of the index's memory-mapped trace logs, which the kernel
        # may drop (the rest is the heap)
        result[f"{label}_added_file_mb"] = _mb(runs, "file_added")
    result["rss_before_reopen_mb"] = _mb(reopened, "rss_before")
    result["findings"] = fresh[0]["findings"]  # problems, scope violations, leaks, rejected
    result["digest"] = digests.pop() if len(digests) == 1 else sorted(digests)
    result["uptime_before"], result["uptime_after"] = before, uptime()
    return result


def _mb(runs: list[dict], key: str) -> int:
    return round(statistics.median(r[key] for r in runs) / 2**20)


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
