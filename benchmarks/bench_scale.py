"""Big runs: every number of issue 12 per run, in one go.

For each run (`--ckpt DIR`, repeatable, or demo runs `--demo N[:ENTRIES][@REPEAT]`, generated
once into `--demo-dir` and reused from there): the `summary`-equivalent full load
(`load_checkpoint` + the summary counts) in a child process with no index (wall time and the
child's max RSS from getrusage), the same with the index (the first open that writes it, then
reopens of unchanged files), and the floor: msgspec parsing the same bytes (tree.json, every
access-log file, the decompressed backup) in this process.

`--tui`: the real app, headless (bench_tui.measure: Textual's run_test / Pilot, BM25 ranker),
in a child process per start: tree shown, memory ready, key→cursor while loading, key→hits;
once with no index (first open) and once reopening from the index.
`--replay`: in a child process (bench_search.replay_on_checkpoint): replay median per node with
MiniLM over a pre-warmed cache of SYNTHETIC vectors (one per distinct text; queries prefetched,
as the app does), windows and hits checked against an exact full pass; and BM25.

Medians of REPEAT runs (default `--repeat`); the load average (`uptime`) before and after each run.

    python benchmarks/bench_scale.py --ckpt /tmp/bigrun10k-200k --repeat 3
    python benchmarks/bench_scale.py --demo-dir /tmp/bench12-demos --tui --replay \\
        --demo 50 --demo 500 --demo 2000 --demo 10000:200000@1
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

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

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


# the app, headless, as bench_tui drives it; max RSS of the whole child
TUI_CHILD = """
import json, resource, sys
from pathlib import Path
sys.path.insert(0, sys.argv[5])
import bench_tui
m = bench_tui.measure(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), True)
m["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(m))
"""

# replay medians on the loaded run (bench_search); max RSS of the whole child
REPLAY_CHILD = """
import json, resource, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import bench_search
from ari_mem_tui.checkpoint.load import load_checkpoint
ckpt = load_checkpoint(Path(sys.argv[1]))
with tempfile.TemporaryDirectory(prefix="bench-scale-replay-") as work:
    m = bench_search.replay_on_checkpoint(ckpt, Path(work), int(sys.argv[3]))
m["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(m))
"""


def child(path: Path, mode: str, env: dict[str, str], code: str = CHILD, *extra: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), mode, *extra],
        cwd=ROOT,  # `python -c` puts the working directory first: measure this checkout's code
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


def bench(
    path: Path, repeat: int, index_root: Path, tui: bool, replay: bool, presses: int, sample: int
) -> dict:
    before = uptime()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARI_MEM_TUI_INDEX": str(index_root)}
    env.setdefault("ARI_MEM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="bench-scale-cfg-"))
    cold = [child(path, "plain", env) for _ in range(repeat)]
    floors = [parse_floor(path)[0] for _ in range(repeat)]
    first, reopen = [], []
    for _ in range(repeat):
        subprocess.run(["rm", "-rf", str(index_root)], check=True)
        first.append(child(path, "index", env))
        reopen.append(child(path, "index", env))
    load = median([r["wall"] for r in cold])
    floor = median(floors)
    result = {
        "run": str(path),
        "repeat": repeat,
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
    if tui:
        # one app start per child: first open (an empty index folder), then a reopen (the
        # index written above); medians of the REPEAT starts of each
        for label, root in (("tui_first", None), ("tui_reopen", index_root)):
            runs = []
            for _ in range(repeat):
                where = root or Path(tempfile.mkdtemp(prefix="bench-scale-noindex-"))
                tui_env = {**env, "ARI_MEM_TUI_INDEX": str(where)}
                runs.append(child(path, "bm25", tui_env, TUI_CHILD, "1", str(presses), str(BENCH)))
                if root is None:
                    subprocess.run(["rm", "-rf", str(where)], check=True)
            result[label] = {
                key: median([r[key] for r in runs if r[key] is not None])
                if any(r[key] is not None for r in runs)
                else None
                for key in runs[0]
            }
    if replay:
        result["replay"] = child(path, str(BENCH), env, REPLAY_CHILD, str(sample))
    result["uptime_before"] = before
    result["uptime_after"] = uptime()
    return result


def demo_run(spec: str, out: Path) -> Path:
    """Write (or reuse from `out`) the demo run N[:ENTRIES]."""
    nodes, _, entries = spec.partition(":")
    target = out / f"demo-{nodes}-{entries or 'default'}"
    if (target / ".ari_mem_tui_demo.json").is_file():
        print(f"reusing {target}", flush=True)
        return target
    cmd = [sys.executable, "-m", "ari_mem_tui", "demo", "--out", str(target), "--nodes", nodes]
    if entries:
        cmd += ["--entries", entries]
    t0 = time.perf_counter()
    subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    print(f"generated {target} in {time.perf_counter() - t0:.1f} s", flush=True)
    return target


def fmt_s(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def fmt_ms(value: float | None) -> str:
    return "–" if value is None else f"{value * 1000:.1f} ms"


def load_avg(text: str) -> str:
    return text.rpartition("load average:")[2].strip() or text


def table(results: list[dict]) -> str:
    head = [
        "run", "first open (load, max RSS)", "first open + index write", "reopen (RSS)",
        "parse floor (MB)", "ratio", "TUI tree shown first / reopen", "TUI memory ready first / reopen",
        "key→cursor loading", "key→hits", "TUI max RSS", "replay MiniLM median (p95)",
        "windows identical", "replay BM25 median", "repeat", "load avg before → after",
    ]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        tf, tr, rp = r.get("tui_first"), r.get("tui_reopen"), r.get("replay")
        cells = [
            f"{r['nodes']} nodes / {r['entries']} entries / {r['events']} events",
            f"{fmt_s(r['load_s'])}, {r['load_rss_mb']:.0f} MB",
            fmt_s(r["first_open_with_index_s"]),
            f"{fmt_s(r['reopen_s'])} ({r['reopen_rss_mb']:.0f} MB)",
            f"{fmt_s(r['parse_floor_s'])} ({r['parsed_mb']:.0f} MB)",
            f"{r['ratio_to_floor']:.1f}×",
            f"{fmt_s(tf['tree_shown'])} / {fmt_s(tr['tree_shown'])}" if tf else "–",
            f"{fmt_s(tf['memory_ready'])} / {fmt_s(tr['memory_ready'])}" if tf else "–",
            fmt_s(tf["key_cursor_loading"]) if tf else "–",
            fmt_s(tr["key_hits"]) if tr else "–",
            f"{tf['rss'] / 2**20:.0f} / {tr['rss'] / 2**20:.0f} MB" if tf else "–",
            f"{fmt_ms(rp['minilm_median_s'])} ({fmt_ms(rp['minilm_p95_s'])})" if rp else "–",
            rp["identical_windows"] if rp else "–",
            fmt_ms(rp["bm25_median_s"]) if rp else "–",
            str(r["repeat"]),
            f"{load_avg(r['uptime_before'])} → {load_avg(r['uptime_after'])}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", type=Path, action="append", default=[])
    parser.add_argument("--demo", action="append", default=[], help="N or N:ENTRIES, [@REPEAT]")
    parser.add_argument("--demo-dir", type=Path, help="keep demo runs here and reuse them")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tui", action="store_true", help="TUI numbers (headless app)")
    parser.add_argument("--replay", action="store_true", help="replay medians")
    parser.add_argument("--presses", type=int, default=8, help="keypresses per TUI start")
    parser.add_argument("--sample", type=int, default=200, help="nodes replayed")
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch:
        demo_dir = args.demo_dir or Path(scratch)
        demo_dir.mkdir(parents=True, exist_ok=True)
        runs = [(path, args.repeat) for path in args.ckpt]
        for spec in args.demo:
            spec, _, repeat = spec.partition("@")
            runs.append((demo_run(spec, demo_dir), int(repeat or args.repeat)))
        if not runs:
            parser.error("give --ckpt DIR or --demo N")
        print(f"before: {uptime()}", flush=True)
        results = []
        for run, repeat in runs:
            r = bench(
                run, repeat, Path(scratch) / "index", args.tui, args.replay, args.presses,
                args.sample,
            )  # fmt: skip
            results.append(r)
            print(json.dumps(r), flush=True)
        print(f"after:  {uptime()}")
    if not args.json:
        print(table(results))
        print(
            "medians of REPEAT runs; wall inside the child, max RSS of the child; TUI: BM25, "
            "120×40 headless, first open (no index) / reopen (index); replay: SYNTHETIC cached "
            "vectors, queries prefetched"
        )


if __name__ == "__main__":
    main()
