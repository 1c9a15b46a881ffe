"""The first run as a new user has it: a fresh clone, `pip install` into a fresh venv, then the
first `demo` until the TUI is usable with MiniLM ready (issue 21 §1: ≤ 15 s after pip).

Steps, each timed:
1. `git clone` of this checkout's HEAD into a temp folder (what is committed, nothing else);
2. `python -m venv` and `pip install -e CLONE` (with the machine's pip cache, or an empty one
   with `--cold-pip`: every wheel downloaded from PyPI);
3. in the venv, with an empty tool cache (vectors, BM25, run index) and config dir: the first
   `demo` as `ari-mem-tui demo` runs it (the demo generated, its start-up searches recorded
   with MiniLM), then the real app (Textual's headless driver, 120×40) until the opening node's
   Hits are MiniLM's (not a BM25 stand-in); also `demo --out` alone from the command line.

    python benchmarks/bench_first_run.py [--cold-pip] [--keep DIR]
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

ROOT = Path(__file__).resolve().parents[1]

# run by the venv's python in the clone: the demo as `cmd_demo` makes it, then the app until
# the node it opens on shows MiniLM's hits
CHILD = """
import argparse, asyncio, json, sys, time
t0 = time.perf_counter()
from ari_mem_tui.cli.commands import demo_recorder, run_openers
from ari_mem_tui.demo import ENTRIES_PER_NODE, demo_checkpoint
from ari_mem_tui.tui.app import AriMemApp
imported = time.perf_counter() - t0
args = argparse.Namespace(nodes=40, seed=7, entries=None, out=None, embedder="minilm",
                          recordings="auto", export_dir=None)
path = demo_checkpoint(nodes=40, seed=7, record=demo_recorder(args, ENTRIES_PER_NODE * 40))
written = time.perf_counter() - t0
args.checkpoint = path

async def main():
    app = AriMemApp(run_openers(args)(path), theme="textual-dark", remember_theme=False,
                    blink=False, open_useful=True)
    async with app.run_test(size=(120, 40)) as pilot:
        painted = time.perf_counter() - t0
        hits = app.query_one("#hits-pane")
        while True:
            replay = hits.replay
            if replay is not None and replay.embedder == "minilm" and not replay.fallback:
                break
            if time.perf_counter() - t0 > 600:
                raise SystemExit("no MiniLM hits after 600 s")
            await asyncio.sleep(0.02)
        ready = time.perf_counter() - t0
        node = app.current_id
    return painted, ready, node

painted, ready, node = asyncio.run(main())
print(json.dumps({"imports": imported, "demo_written": written, "first_paint": painted,
                  "minilm_hits": ready, "node": node}))
"""


def timed(cmd: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, **kwargs)
    return time.perf_counter() - start


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-pip", action="store_true", help="an empty pip cache")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    clone, venv = work / "clone", work / "venv"
    for old in (clone, venv, work / "cache", work / "config"):
        shutil.rmtree(old, ignore_errors=True)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    print(f"load average before: {load_average()}", flush=True)
    try:
        took_clone = timed(["git", "clone", "--quiet", str(ROOT), str(clone)])
        env = {**os.environ}
        env.pop("PYTHONPATH", None)
        if args.cold_pip:
            env["PIP_CACHE_DIR"] = str(work / "pip-cache")
        took_venv = timed([sys.executable, "-m", "venv", str(venv)])
        python = str(venv / "bin" / "python")
        took_pip = timed(
            [python, "-m", "pip", "install", "--quiet", "-e", str(clone)], env=env, **quiet
        )
        env.update(
            ARI_MEM_TUI_CACHE=str(work / "cache"),
            ARI_MEM_TUI_CONFIG_DIR=str(work / "config"),
            ARI_MEM_TUI_EXPORT_DIR=str(work / "exports"),
        )
        start = time.perf_counter()
        out = subprocess.run(
            [python, "-c", CHILD], cwd=clone, env=env, capture_output=True, text=True, check=False
        )
        if out.returncode:
            raise SystemExit(f"the first demo failed:\n{out.stderr[-3000:]}")
        took_tui = time.perf_counter() - start
        tui = json.loads(out.stdout.strip().splitlines()[-1])
        shutil.rmtree(work / "cache", ignore_errors=True)
        took_cli = timed(
            [python, "-m", "ari_mem_tui", "demo", "--out", str(work / "demo-out")],
            cwd=clone,
            env=env,
            **quiet,
        )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"clone {took_clone:.1f} s, venv {took_venv:.1f} s, pip install -e {took_pip:.1f} s"
          f" ({'empty' if args.cold_pip else 'the machine'}'s pip cache)")  # fmt: skip
    print(
        f"first demo to a usable TUI with MiniLM hits: {took_tui:.1f} s after pip (whole"
        f" process; inside it: imports {tui['imports']:.1f} s, demo written and recorded"
        f" {tui['demo_written']:.1f} s, first paint {tui['first_paint']:.1f} s, MiniLM hits"
        f" on {tui['node']} at {tui['minilm_hits']:.1f} s); goal 15 s:"
        f" {'met' if took_tui <= 15 else 'NOT met'}"
    )
    print(f"`demo --out DIR` alone, empty cache: {took_cli:.1f} s")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
