"""TUI latency: time to first paint and keypress-to-hits, on the default demo and on 10,000 nodes;
with `--keys`, every key of the help's table from press to paint.

    python benchmarks/bench_tui.py [--runs 5] [--big-nodes 10000] [--big-entries 20000]
                                   [--embedder bm25|minilm] [--no-tree-first]
    python benchmarks/bench_tui.py --keys [--repeat 5] [--size 120x40] [--ckpt DIR] [--only ID]

`--keys` opens the demo (or DIR) as `ari-mem-tui CKPT` does, waits until its memory, vectors and
first hits are in, then presses each key of the help's key table (tui/keys.py, and Textual's own
keys it lists) in the pane it belongs to, `--repeat` times, and reports per key the median and
the largest time from the key's arrival until the screen has been redrawn after it (every
message it caused processed, then one refresh), with the load average before and after. A key
that starts background work (a search, the health worker) is timed to its first paint, which
says the work has begun; the work's end is `key→hits`. Budget (issue 21): 100 ms at load ≤ 1,
300 ms at load 4.

Headless (Textual's test driver, 120×40). "first paint" = app start until the first frame;
"tree shown" = until the tree is drawn and takes keys (with `cmd_open`'s tree-first opener, before
the memory has loaded; not waiting for the node the run opens on, which waits for the audit); "memory ready" = until the whole run is loaded and the first node's hits
are shown; "key→hits" = from pressing `j` in the tree until the Hits tab shows the new node's
replayed search and the screen is painted (the key sent as the driver sends a terminal's, as
`--keys` does). Medians over `--runs` app starts (and over every keypress). `--no-tree-first`
measures the old way (no tree until the whole run is loaded). The 10,000-node run is generated
once into a temp dir.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# this checkout's code, not an installed copy (`python benchmarks/…` puts benchmarks/ first)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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
    async with app.run_test(size=(120, 40)):
        first_paint = time.perf_counter() - start
        # the waits for the app poll with asyncio.sleep, not pilot.pause: a pause
        # forces a screen update each time (every 5 ms), work a terminal never asks for, which
        # took the GIL from the loader (memory ready at 10k: 20.5 s with pauses, 14.5 s without)
        while app.ckpt is None:  # the tree (alone, on a first open) is in the app
            await asyncio.sleep(0.005)
        drawn = asyncio.Event()  # (not pilot.pause(): it waits for an idle process)
        app.call_after_refresh(drawn.set)
        await drawn.wait()
        tree_shown = time.perf_counter() - start
        early: list[float] = []  # keypresses while the memory still loads
        tree = app.main.tree_widget
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
                raise RuntimeError(
                    f"the run did not load: {app.main.audit_pane.ui_problems[-1:] or '?'}"
                )
            await asyncio.sleep(0.005)
        memory_ready = time.perf_counter() - start
        await quiet(app)
        for _ in range(presses):
            before = app.current_id
            key = "k" if tree.cursor_line >= tree.last_line else "j"
            t0 = time.perf_counter()
            # the key as a terminal's arrives, until the new node's hits are painted; not
            # pilot.press / pilot.pause: press waits for an idle process in 20 ms sleeps (twice),
            # and each pause forces a screen update of its own, which timed Pilot, not the app
            app._driver.send_message(events.Key(key, key))
            while (
                app.current_id == before
                or hits.replay is None
                or (hits.replay.node_id != app.current_id)
            ):
                await asyncio.sleep(0.001)
            await painted(app)
            latencies.append(time.perf_counter() - t0)
            await quiet(app)
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


# ---------------------------------------------------------------- every key, press to paint

SKIPPED = {"quit": "leaves the app: nothing left to paint"}
# keys that switch something on and off: timed twice as often, so each state is timed and the
# app is left as it was for the keys after (whole-run writes left on would slow every one)
TOGGLES = {"writes_scope", "wide", "tree", "dim", "missed", "as_of", "follow", "maximise"}
NAMED_CHARS = {
    "question_mark": "?",
    "slash": "/",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "enter": "\r",
    "tab": "\t",
    "escape": "\x1b",
    "plus": "+",
    "up": None,
    "down": None,
}


async def drained(app: AriMemApp, rounds: int = 3) -> None:
    """Until the app and every widget of the screen shown have handled what was queued (a few
    rounds: a handled message may post the next one), as Pilot's own wait does."""
    for _ in range(rounds):
        done = []
        for node in (app, *app.screen.walk_children(with_self=True)):
            event = asyncio.Event()
            if node.call_later(event.set):
                done.append(event.wait())
        await asyncio.gather(*done)


async def painted(app: AriMemApp) -> None:
    """Until the screen has been redrawn once more."""
    event = asyncio.Event()
    app.call_after_refresh(event.set)
    await event.wait()


async def quiet(app: AriMemApp) -> None:
    """Until no worker runs and the screen is drawn: the state a person presses keys in."""
    while any(w.is_running for w in app.workers):
        await asyncio.sleep(0.01)
    await drained(app)
    await painted(app)


async def press_timed(app: AriMemApp, key: str) -> tuple[float, float]:
    """Seconds from `key`'s arrival (as the driver posts a terminal's key) to the next paint
    after everything it caused was handled: wall time, and the process's CPU time meanwhile
    (steadier on a shared machine)."""
    char = key if len(key) == 1 else NAMED_CHARS.get(key)
    app.typing_guard.typeahead.forget()  # a person's pause before a key of its own
    start, cpu = time.perf_counter(), time.process_time()
    app.post_message(events.Key(key, char))
    await drained(app)
    await painted(app)
    return time.perf_counter() - start, time.process_time() - cpu


async def close_views(app: AriMemApp) -> None:
    """Back to the main screen (Esc on each view; the Health worker interrupted first)."""
    while len(app.screen_stack) > 1:
        screen = app.screen
        if hasattr(screen, "computing") and screen.computing:
            screen.action_back()
            while screen.computing:
                await asyncio.sleep(0.02)
        app.pop_screen()
        await drained(app)
    await quiet(app)


def key_plan(app: AriMemApp) -> list[tuple[str, str, str]]:
    """(key id, key to press, where): every key of the help's table with its first key, and the
    Textual keys the help lists."""
    from ari_mem_tui.tui import keys

    plan = []
    for key_id, _, _ in keys.help_rows(app.keymap):
        key = keys.BY_ID[key_id]
        first = keys.keys_of(key, app.keymap).split(",")[0].strip()
        where = (
            "table"
            if keys.TABLE in key.scopes and keys.TREE not in key.scopes
            else "text"
            if keys.TEXT in key.scopes
            else "query"
            if keys.QUERY in key.scopes
            else "table"
            if key_id in ("focus_tree", "back")
            else "tree"
        )
        plan.append((key_id, first, where))
    plan += [
        ("palette", "ctrl+p", "tree"),
        ("next widget", "tab", "tree"),
        ("enter (tree)", "enter", "tree"),
        ("arrow down", "down", "tree"),
    ]
    return plan


async def place(app: AriMemApp, where: str) -> None:
    """Focus the pane a key belongs to."""
    if where == "tree":
        app.main.action_focus_tree()
    elif where == "table":
        app.main.action_tab("hits")
        table = app.query_one("#hits-table")
        for _ in range(200):  # until it has the focus (a refill can leave it no stop a moment)
            table.focus()
            await quiet(app)
            if app.focused is table:
                break
    elif where == "query":
        app.main.action_focus_query()
    else:
        app.main.action_tab("saw")
        app.query_one("#saw-pane").focus()
    await quiet(app)


async def prepare(app: AriMemApp, key_id: str) -> None:
    """What a key needs first: a find to step through, a mark to compare with, a view to go
    back (or forward) to, a filter to clear, queries to recall."""
    if key_id in ("find_next", "find_prev"):
        pane = app.main.tree_pane
        pane.find_text, pane.find_matches, pane.find_index = "e", pane.find_nodes("e"), -1
    elif key_id == "compare":
        app.main.tabs.marked_id = next(n for n in app.ckpt.nodes if n != app.current_id)
    elif key_id in ("history_back", "history_forward"):
        app.main.jump_to(next(n for n in app.ckpt.nodes if n != app.current_id))  # a jump: b's view
        await quiet(app)
        if key_id == "history_forward":
            app.main.action_history_back()  # … and B's
            await quiet(app)
        app.main.action_focus_tree()
    elif key_id == "table_clear":
        app.query_one("#hits-table").set_filter("e")  # Esc clears it (else: back to the tree)
    elif key_id in ("query_older", "query_newer"):
        box = app.query_one("#query-input")
        box.queries, box._at = ["warmup", "schedule"], 2 - (key_id == "query_newer")


def check_effect(app: AriMemApp, key_id: str) -> None:
    """The new keys did what they are timed for (a key that did nothing is fast)."""
    from ari_mem_tui.tui.tables import TableFilter

    if key_id == "table_filter":
        boxes = [(box.display, box.has_focus) for box in app.query(TableFilter)]
        assert any(d for d, _ in boxes), f"/ opened no filter box: {app.focused!r} {boxes}"
    elif key_id == "table_sort":
        assert app.query_one("#hits-table").view.sort_column is not None, "S sorted nothing"
    elif key_id == "table_clear":
        assert not app.query_one("#hits-table").view.needle, "Esc left the filter"
    elif key_id == "maximise":
        pass  # (a toggle: on, then off)


async def tidy(app: AriMemApp, key_id: str) -> None:
    """Leave the app as the next key expects it: no filter box open, no filter kept."""
    from ari_mem_tui.tui.tables import TableFilter, VimTable

    for box in app.query(TableFilter):
        if box.display:
            box.action_cancel()
    for table in app.query(VimTable):
        if table.view.active:
            table.set_filter("")
            table.view = type(table.view)()
    if key_id.startswith("query_"):
        app.query_one("#query-input").value = ""
    await quiet(app)


async def time_keys(
    path: Path, embedder: str, repeat: int, size: tuple[int, int], only: set[str] | None = None
) -> dict:
    def opener(progress) -> Run:  # as `cmd_open` builds it
        options = RunOptions(checkpoint=path, embedder=embedder, index_behind=True)
        return open_run(options, progress.step, progress, progress.tree)

    app = AriMemApp(
        opener, theme="textual-dark", remember_theme=False, blink=False, open_useful=True
    )
    timings: dict[str, list[tuple[float, float]]] = {}
    async with app.run_test(size=size) as pilot:
        while app.run_data is None or app.query_one("#hits-pane").replay is None:
            await asyncio.sleep(0.02)
        ranker = app.run_data.ranker
        while not getattr(ranker, "ready", True):
            await asyncio.sleep(0.1)
        await pilot.pause(0.5)
        await quiet(app)
        for key_id, key, where in key_plan(app):
            if key_id in SKIPPED or (only and key_id not in only):
                continue
            for _ in range(2 * repeat if key_id in TOGGLES else repeat):
                await place(app, where)
                await prepare(app, key_id)
                await quiet(app)
                timings.setdefault(f"{key_id} ({key})", []).append(await press_timed(app, key))
                await drained(app, rounds=8)  # what it caused, to the end (`v`: a view, late)
                check_effect(app, key_id)
                await close_views(app)
                await tidy(app, key_id)
                app.clear_notifications()
    return timings


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f} ms"


def keys_report(
    path: Path, embedder: str, repeat: int, size: tuple[int, int], only: set[str] | None = None
) -> None:
    before = os.getloadavg()
    timings = asyncio.run(time_keys(path, embedder, repeat, size, only))
    after = os.getloadavg()
    print(
        f"every key, press to paint ({size[0]}×{size[1]}, {embedder}, {repeat} presses each; "
        f"load average {before[0]:.2f} before, {after[0]:.2f} after)\n"
        f"  {'key':<36} {'wall: median':>13} {'max':>9}   {'CPU: median':>12} {'max':>9}"
    )
    worst = 0.0
    for name, pairs in timings.items():
        wall, cpu = [w for w, _ in pairs], [c for _, c in pairs]
        worst = max(worst, max(wall))
        flag = "  > 100 ms" if max(wall) > 0.1 else ""
        print(
            f"  {name:<36} {ms(statistics.median(wall)):>13} {ms(max(wall)):>9}   "
            f"{ms(statistics.median(cpu)):>12} {ms(max(cpu)):>9}{flag}"
        )
    for key_id, why in SKIPPED.items():
        print(f"  {key_id:<36} not timed: {why}")
    print(f"slowest key: {1000 * worst:.0f} ms (its max, wall)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", action="store_true", help="every key of the help, press to paint")
    parser.add_argument("--repeat", type=int, default=5, help="--keys: presses of each key")
    parser.add_argument("--size", default="120x40", help="--keys: terminal columns x rows")
    parser.add_argument("--ckpt", type=Path, help="--keys: this run instead of the demo")
    parser.add_argument(
        "--only",
        action="append",
        metavar="KEY_ID",
        help="--keys: only these keys (ids, repeatable)",
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--presses", type=int, default=8)
    parser.add_argument("--big-nodes", type=int, default=10_000)
    parser.add_argument("--big-entries", type=int, default=20_000)
    parser.add_argument(
        "--embedder", choices=["bm25", "minilm"], help="default: bm25; minilm for --keys (as demo)"
    )
    parser.add_argument("--big-path", type=Path, help="reuse this big checkpoint (not generated)")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--no-tree-first", action="store_true", help="no tree before memory")
    args = parser.parse_args()
    tree_first = not args.no_tree_first
    os.environ.setdefault("ARI_MEM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="ari-bench-cfg-"))
    from ari_mem_tui.demo import demo_checkpoint, write_demo
    from ari_mem_tui.search.record import MiniLMRecorder

    if args.keys:
        path = args.ckpt or demo_checkpoint(record=MiniLMRecorder())
        size = tuple(int(x) for x in args.size.split("x"))
        only = set(args.only) if args.only else None
        keys_report(path, args.embedder or "minilm", args.repeat, size, only)  # type: ignore[arg-type]
        return 0
    args.embedder = args.embedder or "bm25"

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
