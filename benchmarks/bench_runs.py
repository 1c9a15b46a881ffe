"""Time to list a workspace of 100 runs (`ari-mem-tui runs DIR`, the run picker's rows).

Writes a workspace of `--runs` demo runs (small ones, copies of one generated demo with their
own run ids), then times: the picker's first listing without counts (what shows at once), the
full listing with node and entry counts from a cold cache, and again from the warm cache.

    python benchmarks/bench_runs.py --runs 100 --nodes 40
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_workspace(root: Path, runs: int, nodes: int) -> Path:
    seed = root / "seed"
    subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "demo", "--nodes", str(nodes), "--out", str(seed)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    ckpts = root / "ws" / "checkpoints"
    ckpts.mkdir(parents=True)
    for i in range(runs):
        run_id = f"2026{1 + i % 12:02d}{1 + i % 28:02d}{i % 24:02d}0000_run{i:03d}"
        target = ckpts / run_id
        shutil.copytree(seed, target)
        tree = json.loads((target / "tree.json").read_text())
        tree["run_id"] = run_id
        (target / "tree.json").write_text(json.dumps(tree))
    return root / "ws"


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["ARI_MEM_TUI_CACHE"] = str(root / "cache")  # a cold count cache
        os.environ["ARI_MEM_TUI_CONFIG_DIR"] = str(root / "config")
        ws = make_workspace(root, args.runs, args.nodes)
        from ari_mem_tui.workspace import scan

        quick, listed = timed(lambda: scan(ws, counts=False))
        cold, full = timed(lambda: scan(ws))
        warm, _ = timed(lambda: scan(ws))
        print(
            f"{len(listed.runs)} runs of {args.nodes} nodes "
            f"({full.runs[0].entries} entries each): first listing without counts "
            f"{quick * 1000:.0f} ms, with counts cold {cold * 1000:.0f} ms, "
            f"warm {warm * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
