"""Memory health of the 2,000- and 10,000-node demos: wall time and peak RSS, and whether the
TUI keeps answering keys while the Health view computes.

Each size runs in a fresh process (peak RSS is per process): it generates the demo if the
folder is missing (`python -m ari_mem_tui demo --nodes N --out DIR`), loads it, builds the
ranker, then times `compute_health` alone. BM25 is the ranker: MiniLM would first embed every
entry (~140 texts/s: over an hour for the 10k demo's 524k entries), and until then the embedded
ranker answers with BM25 anyway. With `--tui`, the app is opened on the run, H pressed, and the
time for a key (`n`, switching plots/numbers) to take effect is measured while the worker runs.

    python benchmarks/bench_health.py --nodes 2000 10000 --dir /tmp/bench-demos
    python benchmarks/bench_health.py --nodes 2000 --tui
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def ensure_demo(nodes: int, root: Path) -> Path:
    out = root / f"demo{nodes}"
    if not (out / "tree.json").exists():
        subprocess.run(
            [sys.executable, "-m", "ari_mem_tui", "demo", "--nodes", str(nodes), "--out", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def headless(path: Path) -> dict:
    from ari_mem_tui.health import compute_health
    from ari_mem_tui.run import RunOptions, open_run

    started = time.perf_counter()
    run = open_run(RunOptions(checkpoint=path, embedder="bm25"))
    opened = time.perf_counter() - started
    rss_open = rss_mb()
    started = time.perf_counter()
    report = compute_health(run.checkpoint, run.ranker)
    took = time.perf_counter() - started
    return {
        "nodes": len(run.checkpoint.nodes),
        "entries": len(run.checkpoint.entries),
        "open_s": round(opened, 1),
        "health_s": round(took, 1),
        "ms_per_node": round(took / max(1, len(run.checkpoint.nodes)) * 1000, 2),
        "starved": report.starved,
        "searched": report.searched,
        "peak_rss_mb_after_open": round(rss_open),
        "peak_rss_mb": round(rss_mb()),
    }


async def tui(path: Path) -> dict:
    """Key latency while the Health worker computes (the UI must not freeze)."""
    from textual.widgets import ContentSwitcher

    from ari_mem_tui.run import RunOptions, open_run
    from ari_mem_tui.tui.app import AriMemApp
    from ari_mem_tui.tui.screens.health import HealthScreen

    def opener(_progress):
        return open_run(RunOptions(checkpoint=path, embedder="bm25"))

    app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.loaded_count < 1:
            await pilot.pause(0.1)
        await pilot.press("H")
        await pilot.pause(0.5)
        screen = app.screen
        assert isinstance(screen, HealthScreen)
        switcher = screen.query_one("#health-views", ContentSwitcher)
        while screen.computing and len(latencies) < 20:
            before = switcher.current
            started = time.perf_counter()
            # the key as a terminal sends it; pilot.press would also wait for the whole screen
            # to go idle, which it never is while progress arrives (that read ~2 s a key)
            app.simulate_key("n")
            while switcher.current == before:
                await asyncio.sleep(0.002)
            latencies.append(time.perf_counter() - started)
            await pilot.pause(0.5)
        done, total = screen.progress_seen
        screen._cancel.set()
        while screen.computing:
            await pilot.pause(0.05)
    latencies.sort()
    return {
        "keys_while_computing": len(latencies),
        "key_ms_median": round(latencies[len(latencies) // 2] * 1000) if latencies else None,
        "key_ms_max": round(latencies[-1] * 1000) if latencies else None,
        "progress_when_stopped": f"{done}/{total}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/ari-mem-tui-bench"))
    parser.add_argument("--tui", action="store_true", help="also measure key latency in the TUI")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.one is not None:
        result = asyncio.run(tui(args.one)) if args.tui else headless(args.one)
        print(json.dumps(result))
        return
    args.dir.mkdir(parents=True, exist_ok=True)
    for nodes in args.nodes:
        path = ensure_demo(nodes, args.dir)
        modes = [False, True] if args.tui else [False]
        for with_tui in modes:
            command = [sys.executable, __file__, "--one", str(path)] + (
                ["--tui"] if with_tui else []
            )
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            label = "tui" if with_tui else "headless"
            print(f"{nodes:>6} nodes {label:>8}: {out.strip().splitlines()[-1]}", flush=True)


if __name__ == "__main__":
    main()
