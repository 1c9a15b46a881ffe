"""TUI latency: time to first paint and keypress-to-hits, on the default demo and on 10,000 nodes.

    python benchmarks/bench_tui.py [--runs 5] [--big-nodes 10000] [--big-entries 20000]
                                   [--embedder bm25|minilm]

Headless (Textual's test driver, 120×40). "first paint" = app start until the first frame;
"tree shown" = until the run is loaded and the tree drawn; "key→hits" = from pressing `j` in the
tree until the Hits tab shows the new node's replayed search. Medians over `--runs` app starts
(and over every keypress). The 10,000-node run is generated once into a temp dir.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from ari_mem_tui.sources import Run, open_run
from ari_mem_tui.tui.app import AriMemApp


async def one_run(path: Path, embedder: str, presses: int) -> tuple[float, float, list[float]]:
    args = argparse.Namespace(checkpoint=path, embedder=embedder, no_letta=True)

    def opener(_progress) -> Run:
        return open_run(args)

    start = time.perf_counter()
    app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)
    first_paint = tree_shown = 0.0
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        first_paint = time.perf_counter() - start
        while app.loaded_count == 0:
            await pilot.pause(0.005)
        await pilot.pause()
        tree_shown = time.perf_counter() - start
        hits = app.query_one("#hits-pane")
        while hits.replay is None or any(w.is_running for w in app.workers):
            await pilot.pause(0.005)
        tree = app.tree_widget
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
    return first_paint, tree_shown, latencies


def bench(name: str, path: Path, embedder: str, runs: int, presses: int) -> None:
    paints, trees, keys = [], [], []
    for _ in range(runs):
        paint, tree, lat = asyncio.run(one_run(path, embedder, presses))
        paints.append(paint)
        trees.append(tree)
        keys.extend(lat)
    ms = lambda xs: f"{1000 * statistics.median(xs):7.0f} ms"
    print(
        f"{name:<28} first paint {ms(paints)}   tree shown {ms(trees)}   "
        f"key→hits {ms(keys)} (max {1000 * max(keys):.0f} ms, n={len(keys)})"
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
    args = parser.parse_args()
    os.environ.setdefault("ARI_MEM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="ari-bench-cfg-"))
    from ari_mem_tui.demo import demo_checkpoint, write_demo

    if not args.skip_demo:
        bench("demo (40 nodes)", demo_checkpoint(), args.embedder, args.runs, args.presses)
    if args.big_path:
        bench(f"{args.big_path.name}", args.big_path, args.embedder, args.runs, args.presses)
        return 0
    with tempfile.TemporaryDirectory(prefix="ari-bench-") as tmp:
        t0 = time.perf_counter()
        big = write_demo(Path(tmp) / "big", nodes=args.big_nodes, seed=7, entries=args.big_entries)
        print(f"(generated {args.big_nodes} nodes in {time.perf_counter() - t0:.1f} s)")
        bench(f"{args.big_nodes} nodes", big, args.embedder, args.runs, args.presses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
