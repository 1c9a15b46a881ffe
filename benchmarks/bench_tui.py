"""TUI latency: time to first paint and keypress-to-hits, on the default demo and on 10,000 nodes.

    python benchmarks/bench_tui.py [--runs 5] [--big-nodes 10000] [--big-entries 20000]
                                   [--embedder bm25|minilm] [--no-tree-first]

Headless (Textual's test driver, 120×40). "first paint" = app start until the first frame;
"tree shown" = until the tree is drawn and takes keys (with `cmd_open`'s tree-first opener, before
the memory has loaded); "memory ready" = until the whole run is loaded and the first node's hits
are shown; "key→hits" = from pressing `j` in the tree until the Hits tab shows the new node's
replayed search. Medians over `--runs` app starts (and over every keypress). `--no-tree-first`
measures the old way (no tree until the whole run is loaded). The 10,000-node run is generated
once into a temp dir.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from textual import events

from ari_mem_tui.run import Run, RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp

Timings = tuple[float, float, float, list[float], list[float]]


async def one_run(path: Path, embedder: str, presses: int, tree_first: bool) -> Timings:
    def opener(progress) -> Run:  # as `cmd_open` builds it (RunOptions is frozen)
        options = RunOptions(checkpoint=path, embedder=embedder, index_behind=True)
        return open_run(options, progress.step, progress, progress.tree if tree_first else None)

    start = time.perf_counter()
    app = AriMemApp(
        opener,
        theme="textual-dark",
        remember_theme=False,
        blink=False,
        open_useful=True,  # as `ari-mem-tui CKPT` opens: on the first node with a finding
    )
    first_paint = tree_shown = memory_ready = 0.0
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        first_paint = time.perf_counter() - start
        # the waits for the app poll with asyncio.sleep, not pilot.pause: a pause
        # forces a screen update each time (every 5 ms), work a terminal never asks for, which
        # took the GIL from the loader (memory ready at 10k: 20.5 s with pauses, 14.5 s without)
        while app.ckpt is None or app.current_id is None:
            await asyncio.sleep(0.005)
        drawn = asyncio.Event()  # (not pilot.pause(): it waits for an idle process)
        app.call_after_refresh(drawn.set)
        await drawn.wait()
        tree_shown = time.perf_counter() - start
        early: list[float] = []  # keypresses while the memory still loads
        tree = app.tree_widget
        while app.run_data is None and len(early) < presses:
            before = app.current_id
            key = "k" if tree.cursor_line >= tree.last_line else "j"
            t0 = time.perf_counter()
            # what Pilot.press sends, without its wait for an idle process: the loader
            # thread keeps the process busy, so that wait alone would take 2 s per key
            app._driver.send_message(events.Key(key, key))
            while app.current_id == before and app.run_data is None:
                await asyncio.sleep(0.002)
            if app.run_data is None:
                early.append(time.perf_counter() - t0)
        hits = app.query_one("#hits-pane")
        while hits.replay is None:
            if app.run_data is None and not any(w.is_running for w in app.workers):
                raise RuntimeError(f"the run did not load: {app.ui_problems[-1:] or '?'}")
            await asyncio.sleep(0.005)
        memory_ready = time.perf_counter() - start
        while any(w.is_running for w in app.workers):
            await pilot.pause(0.005)
        for _ in range(presses):
            before = app.current_id
            key = "k" if tree.cursor_line >= tree.last_line else "j"
            t0 = time.perf_counter()
            await pilot.press(key)
            while (
                app.current_id == before
                or hits.replay is None
                or (hits.replay.node_id != app.current_id)
            ):
                await pilot.pause(0.002)
            latencies.append(time.perf_counter() - t0)
            while any(w.is_running for w in app.workers):
                await pilot.pause(0.005)
    return first_paint, tree_shown, memory_ready, early, latencies


def measure(path: Path, embedder: str, runs: int, presses: int, tree_first: bool) -> dict:
    """Medians over `runs` app starts (and over every keypress), in seconds; None: no sample."""
    paints, trees, memories, early_keys, keys = [], [], [], [], []
    for _ in range(runs):
        paint, tree, memory, early, lat = asyncio.run(one_run(path, embedder, presses, tree_first))
        paints.append(paint)
        trees.append(tree)
        memories.append(memory)
        early_keys.extend(early)
        keys.extend(lat)
    med = lambda xs: statistics.median(xs) if xs else None
    return {
        "first_paint": med(paints),
        "tree_shown": med(trees),
        "memory_ready": med(memories),
        "key_cursor_loading": med(early_keys),
        "key_cursor_loading_max": max(early_keys) if early_keys else None,
        "key_cursor_loading_n": len(early_keys),
        "key_hits": med(keys),
        "key_hits_max": max(keys) if keys else None,
        "key_hits_n": len(keys),
    }


def bench(name: str, path: Path, embedder: str, runs: int, presses: int, tree_first: bool) -> None:
    m = measure(path, embedder, runs, presses, tree_first)
    ms = lambda x: f"{1000 * x:6.0f} ms" if x is not None else "     - ms"

    def top(key: str) -> str:
        return f"max {1000 * m[key + '_max']:.0f} ms, n={m[key + '_n']}" if m[key + "_n"] else "n=0"

    print(
        f"{name}: first paint {ms(m['first_paint'])} | tree shown {ms(m['tree_shown'])} | "
        f"memory ready {ms(m['memory_ready'])}\n    key→cursor while loading "
        f"{ms(m['key_cursor_loading'])} ({top('key_cursor_loading')}) | key→hits after "
        f"{ms(m['key_hits'])} ({top('key_hits')})",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--presses", type=int, default=8)
    parser.add_argument("--big-nodes", type=int, default=10_000)
    parser.add_argument("--big-entries", type=int, default=20_000)
    parser.add_argument("--embedder", choices=["bm25", "minilm"], default="bm25")
    parser.add_argument("--big-path", type=Path, help="reuse this big checkpoint (not generated)")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--no-tree-first", action="store_true", help="no tree before memory")
    args = parser.parse_args()
    tree_first = not args.no_tree_first
    os.environ.setdefault("ARI_MEM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="ari-bench-cfg-"))
    from ari_mem_tui.demo import demo_checkpoint, write_demo
    from ari_mem_tui.search.record import MiniLMRecorder

    if not args.skip_demo:
        demo = demo_checkpoint(record=MiniLMRecorder())  # the cached demo `demo` opens
        bench("demo (40 nodes)", demo, args.embedder, args.runs, args.presses, tree_first)
    if args.big_path:
        name = args.big_path.name
        bench(name, args.big_path, args.embedder, args.runs, args.presses, tree_first)
        return 0
    with tempfile.TemporaryDirectory(prefix="ari-bench-") as tmp:
        t0 = time.perf_counter()
        big = write_demo(Path(tmp) / "big", nodes=args.big_nodes, seed=7, entries=args.big_entries)
        print(f"(generated {args.big_nodes} nodes in {time.perf_counter() - t0:.1f} s)")
        name = f"{args.big_nodes} nodes"
        bench(name, big, args.embedder, args.runs, args.presses, tree_first)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
