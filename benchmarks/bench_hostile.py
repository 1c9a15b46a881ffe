"""Hostile sizes: peak RSS and wall time of each command on each big hostile case.

The cases are built at run time in a temp folder, from small inputs (nothing big is stored):

- `gzip-bomb`: the small demo run whose backup gets a second gzip member of 1 GiB of NULs
  (~1 MB on disk);
- `memory-200mib`: a backup line whose text is 200 MiB (by default a gzip bomb by ratio, so
  also run with `--max gzip-ratio=100000` and then `--max line-mib=256`, when it is loaded and
  ranked by its prefix);
- `preview-100mib`: one access-log write whose text_preview is 100 MiB;
- `tree-nuls-1gib`: tree.json of 1 GiB of NULs, a sparse file;
- `chain-20k`: a 20,000-deep chain of nodes without ancestor_ids;
- `caches-dev-zero`: the small demo run whose BM25 index and run counts are symlinks to
  /dev/zero, beside a FIFO vector segment (damaged again before every run: each run
  meets them, refuses them and rebuilds);
- `audit-chain-20k`: a 20,000-deep chain without ancestor_ids whose every node searched its
  parent's memory (an LLM call in its trace_log, judged against the rebuilt lineage) and read
  its child's (an access-log read no reader can be found for: 20,000 unattributed reads, each
  a row of the text audit); `audit` as text and as `--json`, and the ratio of their medians
  (issue 31: 77.8 s against 8.0 s);
- `numbers-past-range`: every number of the small demo's tree, nodes tree, access log and
  backup past some range, in turn (1e308, -1e308, 10**400, 2**64, 5e-324); `score-1e308`:
  one recorded score of 1e308 (issue 31 item 2); each also with `health`;
- `tui-chain-20k`: the TUI (Textual headless, 120×40, BM25) on the 20,000-deep chain, scored
  so that it opens on the deepest node: time until the run is shown, then `q` until the app has
  ended, and the child's peak RSS.

Then `health --embedder bm25` on chains of 1,250 … 20,000 nodes (`--chains`, default on): wall
and CPU seconds per depth, and the exponent of a least-squares fit of log(CPU) on log(depth)
(1 is linear; issue 22 measured 1.3 … 85.8 s, quadratic, before Lineages in health.py).

Then (`--only storage`, `--only endpoint`; issue 31 §1, §3, §8) the small demo with its cache
on a read-only bind mount (warm, and empty), on a full 512 KiB tmpfs (each in a private mount
namespace: `unshare -m`, as root), and chowned to another user (the command run without the
capabilities that pass permissions: `setpriv`); and the embedding client against a local
endpoint that answers a 1 GiB gzip bomb, a TLS client on its plain port, and a key holding CRLF
(the time until the one-line failure, and the peak).

Each command runs in a child process `--repeat` times, reading the files each time (no
persistent index unless `--with-index`; MiniLM's vector cache is cold only on the first run); its peak RSS is the child's own
ru_maxrss (RUSAGE_CHILDREN of a wrapper that runs only it). The goal: no case above 1.5 GB or
30 s on this project's 2-core machine.

    python benchmarks/bench_hostile.py [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MIB = 1 << 20
# runs one command in a grandchild and prints the grandchild's peak RSS (KiB) and wall time
ROOT = Path(__file__).resolve().parent.parent  # children run this checkout's code
WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.monotonic()\n"
    "code = subprocess.call([sys.executable, '-m', 'ari_mem_tui', *sys.argv[1:]],"
    " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "took = time.monotonic() - t\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code, use.ru_maxrss, took, use.ru_utime + use.ru_stime)\n"
)
CHAIN_DEPTHS = (1_250, 2_500, 5_000, 10_000, 20_000)


def demo(folder: Path, name: str) -> Path:
    out = folder / name
    subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "demo", "--out", str(out), "--nodes", "8"],
        check=True,
        capture_output=True,
    )
    return out


def first_child(ckpt: Path) -> str:
    name = "nodes_tree.json" if (ckpt / "nodes_tree.json").is_file() else "tree.json"
    nodes = json.loads((ckpt / name).read_text())["nodes"]
    return next(n["id"] for n in nodes if n.get("parent_id") == nodes[0]["id"])


def gzip_bomb(folder: Path) -> Path:
    ckpt = demo(folder, "gzip-bomb")
    bomb = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(16 * MIB)
    with (ckpt / "memory_backup.jsonl.gz").open("ab") as out:
        for _ in range(64):
            out.write(bomb.compress(zeros))
        out.write(bomb.flush())
    return ckpt


def memory_200mib(folder: Path) -> Path:
    ckpt = demo(folder, "memory-200mib")
    path = ckpt / "memory_backup.jsonl.gz"
    records = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    head = json.dumps({**json.loads(records[0]), "text": "@@"})
    before, after = head.split("@@")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1) as out:
        out.writelines(records)
        out.write(before.encode())
        chunk = b"huge memory " * (MIB // 12)
        for _ in range(200):
            out.write(chunk)
        out.write(after.encode() + b"\n")
    path.write_bytes(buffer.getvalue())
    return ckpt


def preview_100mib(folder: Path) -> Path:
    ckpt = demo(folder, "preview-100mib")
    log = ckpt / "memory_access.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    with log.open("wb") as out:
        out.writelines(lines[:3])
        out.write(b'{"ts": 1.0, "op": "write", "node_id": "x", "text_preview": "')
        for _ in range(100):
            out.write(b"p" * MIB)
        out.write(b'"}\n')
        out.writelines(lines[3:])
    return ckpt


def tree_nuls(folder: Path) -> Path:
    ckpt = demo(folder, "tree-nuls-1gib")
    with (ckpt / "tree.json").open("r+b") as handle:
        handle.truncate(0)
        handle.truncate(1 << 30)
    return ckpt


def chain(folder: Path, depth: int = 20_000, name: str = "chain-20k") -> Path:
    ckpt = folder / name
    ckpt.mkdir()
    nodes = [
        {"id": f"n{i}", "parent_id": f"n{i - 1}" if i else None, "status": "success"}
        for i in range(depth)
    ]
    (ckpt / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    return ckpt


def chain_reads(folder: Path, depth: int = 20_000) -> Path:
    """A chain whose every node read twice: its parent's memory by an LLM search (trace_log),
    its child's by a get_node_memory logged under it, which no trace call explains."""
    ckpt = folder / "audit-chain-20k"
    ckpt.mkdir()
    nodes, events = [], []
    for i in range(depth):
        args = {"query": "q", "ancestor_ids": [f"n{i - 1}"] if i else [], "limit": 5}
        found = {"results": [{"entry_id": f"p{i - 1}", "node_id": f"n{i - 1}", "text": "x"}]}
        nodes.append(
            {"id": f"n{i}", "parent_id": f"n{i - 1}" if i else None, "status": "success",
             "trace_log": [f"→ search_memory({json.dumps(args)})",
                           "  ← " + str({"result": json.dumps(found if i else {"results": []})})]}
        )  # fmt: skip
        events.append(
            {"ts": 1.78e9 + i, "node_id": f"n{i}", "op": "read", "collection": "node_scope",
             "query": "inherit:get_node_memory", "ancestor_ids": [f"n{i + 1}"], "limit": 0,
             "results": []}
        )  # fmt: skip
    (ckpt / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    (ckpt / "memory_access.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return ckpt


# ---------------------------------------------------------------- numbers past every range
PAST_RANGE = [1e308, -1e308, 10**400, 2**64, 5e-324]  # 10**400: an integer no float holds


def numbers_past_range(folder: Path) -> Path:
    """Issue 31 item 2: the small demo with every number of its tree, nodes tree, access log
    and backup past some range, in turn: scores, ts, metrics, limits, steps, depths, sizes."""
    sys.path.insert(0, str(ROOT))  # the fuzzer's damage (tests/fuzz/damage.py)
    from tests.fuzz.damage import past_range

    ckpt = demo(folder, "numbers-past-range")
    count = [0]
    for name in ("tree.json", "nodes_tree.json"):
        path = ckpt / name
        path.write_text(json.dumps(past_range(json.loads(path.read_text()), PAST_RANGE, count)))
    log = ckpt / "memory_access.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(past_range(e, PAST_RANGE, count)) + "\n" for e in lines))
    backup = ckpt / "memory_backup.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(backup.read_bytes()).splitlines()]
    body = "".join(json.dumps(past_range(r, PAST_RANGE, count)) + "\n" for r in records)
    backup.write_bytes(gzip.compress(body.encode()))
    return ckpt


def score_1e308(folder: Path) -> Path:
    """Issue 31 item 2 as it was seen: one access-log result's score 1e308 (every replay and
    health exited 3)."""
    ckpt = demo(folder, "score-1e308")
    log = ckpt / "memory_access.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    searches = (
        e
        for e in events
        if e.get("op") == "read" and e.get("results") and not e["query"].startswith("inherit")
    )
    next(searches)["results"][0]["score"] = 1e308
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    return ckpt


NUMBER_CASES = {"numbers-past-range": numbers_past_range, "score-1e308": score_1e308}


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float:
    """The slope of log(seconds) on log(size), least squares: 1 linear, 2 quadratic."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(t, 1e-9)) for t in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def chain_health(folder: Path, repeat: int) -> None:
    """`health` on chains of CHAIN_DEPTHS nodes: median wall and CPU, and the fitted exponent."""
    print(f"\nhealth --embedder bm25 on chains (load average {os.getloadavg()[0]:.1f})")
    print(f"{'depth':>7} {'exit':>4} {'peak MiB':>9} {'median s':>9} {'CPU s':>7}")
    cpus = []
    for depth in CHAIN_DEPTHS:
        ckpt = chain(folder, depth, f"chain-health-{depth}")
        command = ["health", str(ckpt), "--embedder", "bm25", "--no-letta"]
        runs = [measure(command) for _ in range(repeat)]
        cpu = statistics.median(c for _, _, _, c in runs)
        cpus.append(cpu)
        code = "/".join(sorted({str(r[0]) for r in runs}))
        print(
            f"{depth:>7} {code:>4} {max(r[1] for r in runs):9.0f}"
            f" {statistics.median(r[2] for r in runs):9.2f} {cpu:7.2f}"
        )
    # start-up (~0.8 s of CPU, the same at every depth) flattens a fit of the totals; the CPU
    # each doubling of the depth adds, c(2n) − c(n) = b·n^k·(2^k − 1), grows as n^k
    steps = [(n, b - a) for n, a, b in zip(CHAIN_DEPTHS[1:], cpus, cpus[1:], strict=False)]
    kept = [(n, d) for n, d in steps if d > 0]
    added = fitted_exponent([n for n, _ in kept], [d for _, d in kept]) if len(kept) > 1 else None
    print(
        f"fitted exponent of CPU on depth: {fitted_exponent(list(CHAIN_DEPTHS), cpus):.2f} on"
        " the totals; "
        + (f"{added:.2f} on what each doubling adds" if added is not None else "")
        + " (1 = linear, 2 = quadratic)"
    )


def caches_dev_zero(folder: Path) -> Path:
    ckpt = demo(folder, "caches-dev-zero")
    subprocess.run(  # the caches as a sound run leaves them
        [sys.executable, "-m", "ari_mem_tui", "saw", str(ckpt), first_child(ckpt),
         "--embedder", "bm25", "--no-letta"],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "runs", str(ckpt.parent)],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    return ckpt


def damage_caches() -> None:
    """/dev/zero for the BM25 vocabulary and the run counts, a FIFO for a vector segment."""
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "ari-mem-tui"
    targets = [*cache.glob("bm25/*.idx"), cache / "run-counts.bin"]
    for target in targets:
        target.unlink(missing_ok=True)
        target.symlink_to("/dev/zero")
    segments = cache / "vectors" / "minilm"
    segments.mkdir(parents=True, exist_ok=True)
    fifo = segments / f"seg-{'f' * 64}.vec"
    if not fifo.exists():
        os.mkfifo(fifo)


def scored_chain(folder: Path) -> Path:
    ckpt = folder / "tui-chain-20k"
    ckpt.mkdir()
    nodes = [
        {"id": f"n{i}", "parent_id": f"n{i - 1}" if i else None, "depth": i,
         "status": "success", "metrics": {"_scientific_score": i / 20_000}}
        for i in range(20_000)
    ]  # fmt: skip
    (ckpt / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    return ckpt


# the TUI on a run in a child: seconds until shown, seconds from `q` until ended, peak KiB
TUI_PROBE = """
import asyncio, resource, sys, time
from pathlib import Path
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp

async def main():
    opener = lambda _p: open_run(RunOptions(checkpoint=Path(sys.argv[1]), embedder="bm25"))
    app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False,
                    open_useful=True)
    start = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        while app.loaded_count == 0:
            await asyncio.sleep(0.05)
        await pilot.pause()
        shown = time.monotonic() - start
        asked = time.monotonic()
        await pilot.press("q")
        while app.is_running:
            await asyncio.sleep(0.01)
        ended = time.monotonic() - asked
    print(shown, ended, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)

asyncio.run(main())
"""


def measure_tui(ckpt: Path) -> tuple[float, float, float]:
    """(seconds until shown, seconds from q until ended, peak MiB) of the TUI on `ckpt`."""
    out = subprocess.run(
        [sys.executable, "-c", TUI_PROBE, str(ckpt)],
        check=True, capture_output=True, text=True, cwd=ROOT,
    ).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1]), int(out[2]) / 1024


def commands(name: str, ckpt: Path) -> list[list[str]]:
    if name == "caches-dev-zero":
        node = first_child(ckpt)
        return [
            ["saw", str(ckpt), node, "--embedder", "bm25", "--no-letta"],
            ["saw", str(ckpt), node, "--embedder", "minilm", "--no-letta"],
            ["runs", str(ckpt.parent)],
        ]
    if name == "audit-chain-20k":
        return [["audit", str(ckpt), "--no-letta"], ["audit", str(ckpt), "--json", "--no-letta"]]
    if name == "chain-20k":
        node = "n19999"
    else:
        node = first_child(ckpt)
    base = [
        ["summary", str(ckpt)],
        ["audit", str(ckpt)],
        ["saw", str(ckpt), node, "--embedder", "bm25"],
    ]
    if name in NUMBER_CASES:
        base.append(["health", str(ckpt), "--embedder", "bm25"])
    if name == "memory-200mib":
        loose = ["--max", "gzip-ratio=100000"]
        base += [
            ["summary", str(ckpt), *loose],
            ["saw", str(ckpt), node, *loose, "--max", "line-mib=256", "--embedder", "bm25"],
            ["saw", str(ckpt), node, *loose, "--max", "line-mib=256", "--embedder", "minilm"],
        ]
    return [[*c, "--no-letta"] for c in base]


def measure(args: list[str]) -> tuple[int, float, float, float]:
    """(exit code, peak MiB, wall s, CPU s) of one command in a child process."""
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], check=True, capture_output=True, text=True,
        cwd=ROOT,  # this checkout's code, not another's
    ).stdout.split()  # fmt: skip
    return int(out[0]), int(out[1]) / 1024, float(out[2]), float(out[3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the cases here and keep them")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument(
        "--no-chains",
        action="store_true",
        help="skip health on chains of 1,250 … 20,000 nodes (`--only chains`: only those)",
    )
    parser.add_argument(
        "--with-index",
        action="store_true",
        help="let runs after the first reopen from the persistent index (default: every run"
        " reads the files)",
    )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(folder / "cache")  # not the user's vector cache / index
    if not args.with_index:
        os.environ["ARI_MEM_TUI_INDEX"] = "off"
    cases = {
        "gzip-bomb": gzip_bomb,
        "memory-200mib": memory_200mib,
        "preview-100mib": preview_100mib,
        "tree-nuls-1gib": tree_nuls,
        "chain-20k": chain,
        "audit-chain-20k": chain_reads,
        "caches-dev-zero": caches_dev_zero,
        "tui-chain-20k": scored_chain,
        **NUMBER_CASES,
    }
    print(f"load average {os.getloadavg()[0]:.1f}; {args.repeat} runs per command")
    print(f"{'case':16} {'command':90} {'exit':>4} {'peak MiB':>9} {'median s':>9} {'max s':>7}")
    worst_rss = worst_s = 0.0
    try:
        for name, build in cases.items():
            if args.only and args.only not in name:
                continue
            start = time.monotonic()
            ckpt = build(folder)
            built = time.monotonic() - start
            print(f"{name:16} (built in {built:.1f} s)")
            if name == "tui-chain-20k":
                tui = [measure_tui(ckpt) for _ in range(args.repeat)]
                shown = statistics.median(t for t, _, _ in tui)
                ended = max(q for _, q, _ in tui)
                peak = max(rss for _, _, rss in tui)
                print(
                    f"{'':16} {'TUI: run shown (median s) / q until ended (max s)':90}"
                    f" {'':>4} {peak:9.0f} {shown:9.2f} {ended:7.2f}"
                )
                worst_rss, worst_s = max(worst_rss, peak), max(worst_s, shown)
                continue
            medians = []
            for command in commands(name, ckpt):
                damage = damage_caches if name == "caches-dev-zero" else lambda: None
                runs = [(damage(), measure(command))[1] for _ in range(args.repeat)]
                codes = {code for code, _, _, _ in runs}
                peak = max(rss for _, rss, _, _ in runs)
                times = [t for _, _, t, _ in runs]
                shown = " ".join(command).replace(str(ckpt), "CKPT").replace(" --no-letta", "")
                code = "/".join(map(str, sorted(codes)))
                print(
                    f"{'':16} {shown[:90]:90} {code:>4} {peak:9.0f}"
                    f" {statistics.median(times):9.2f} {max(times):7.2f}"
                )
                worst_rss, worst_s = max(worst_rss, peak), max(worst_s, max(times))
                medians.append(statistics.median(times))
            if name == "audit-chain-20k":  # the same audit, as text and as --json
                print(
                    f"{'':16} {'audit: text ÷ --json (medians)':90} {medians[0] / medians[1]:>24.2f}"
                )
        if not args.no_chains and (not args.only or args.only in "health-chains"):
            chain_health(folder, args.repeat)
        for name, run_cases in (("storage", storage_cases), ("endpoint", endpoint_cases)):
            if not args.only or args.only in name:
                worst = run_cases(folder, args.repeat)
                worst_rss, worst_s = max(worst_rss, worst[0]), max(worst_s, worst[1])
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    verdict = "met" if worst_rss < 1500 and worst_s < 30 else "NOT met"
    print(f"worst: {worst_rss:.0f} MiB peak, {worst_s:.1f} s (goal 1.5 GB, 30 s: {verdict})")
    return 0


# ---------------------------------------------------------------- storage and endpoints
# (issue 31 §1, §3: a cache that cannot be written; §8: endpoints whose errors cannot heal)
ARGV_WRAPPER = WRAPPER.replace(
    "[sys.executable, '-m', 'ari_mem_tui', *sys.argv[1:]]", "sys.argv[1:]"
)
NO_BYPASS = "-dac_override,-dac_read_search,-fowner"  # root as any other user: permissions bite


def measure_argv(argv: list[str], env: dict[str, str]) -> tuple[int, float, float, float]:
    """(exit code, peak MiB, wall s, CPU s) of `argv` in a child process (as `measure`)."""
    out = subprocess.run(
        [sys.executable, "-c", ARGV_WRAPPER, *argv], check=True, capture_output=True,
        text=True, cwd=ROOT, env={**os.environ, **env},
    ).stdout.split()  # fmt: skip
    return int(out[0]), int(out[1]) / 1024, float(out[2]), float(out[3])


def in_namespace(setup: str, cli: list[str]) -> list[str]:
    """The CLI in a private mount namespace, after `setup` mounted its cache."""
    script = f'{setup} && exec "$0" -m ari_mem_tui "$@"'
    return ["unshare", "-m", "sh", "-c", script, sys.executable, *cli]


def report(name: str, rows: list[tuple[str, list[tuple[int, float, float, float]]]]) -> tuple:
    print(f"{name:16}")
    worst_rss = worst_s = 0.0
    for shown, runs in rows:
        codes = "/".join(map(str, sorted({code for code, _, _, _ in runs})))
        peak, times = max(r[1] for r in runs), [r[2] for r in runs]
        print(f"{'':16} {shown[:90]:90} {codes:>4} {peak:9.0f}"
              f" {statistics.median(times):9.2f} {max(times):7.2f}")  # fmt: skip
        worst_rss, worst_s = max(worst_rss, peak), max(worst_s, max(times))
    return worst_rss, worst_s


def storage_cases(folder: Path, repeat: int) -> tuple[float, float]:
    """The small demo with its cache read-only (warm, empty), full, and another user's."""
    probe = subprocess.run(["unshare", "-m", "true"], check=False, capture_output=True)
    if probe.returncode != 0 or os.geteuid() != 0:
        print(f"{'storage':16} skipped: needs root and unshare -m ({probe.stderr!r:.80})")
        return 0.0, 0.0
    ckpt = demo(folder, "storage")
    node = first_child(ckpt)
    clis = {
        "saw --embedder bm25": ["saw", str(ckpt), node, "--embedder", "bm25", "--no-letta"],
        "summary": ["summary", str(ckpt), "--no-letta"],
        "runs": ["runs", str(ckpt.parent)],
    }
    warm = folder / "storage-warm"
    env = {"ARI_MEM_TUI_CACHE": str(warm), "ARI_MEM_TUI_INDEX": ""}
    for cli in clis.values():  # the caches as a sound run leaves them
        subprocess.run([sys.executable, "-m", "ari_mem_tui", *cli], check=True,
                       capture_output=True, cwd=ROOT, env={**os.environ, **env})  # fmt: skip
    empty = folder / "storage-empty"
    empty.mkdir()
    full = folder / "storage-full"
    full.mkdir()
    other = folder / "storage-other"
    shutil.copytree(warm, other)
    for path in [other, *other.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)

    def read_only(cache: Path) -> str:
        where = shlex.quote(str(cache))
        return f"mount --bind {where} {where} && mount -o remount,bind,ro {where}"

    fill = shlex.quote(str(full))
    setups = {
        "read-only, warm": (warm, lambda cli: in_namespace(read_only(warm), cli)),
        "read-only, empty": (empty, lambda cli: in_namespace(read_only(empty), cli)),
        "full (512 KiB)": (full, lambda cli: in_namespace(
            f"mount -t tmpfs -o size=512k tmpfs {fill} &&"
            f" (dd if=/dev/zero of={fill}/filler bs=4096 2>/dev/null || true)", cli)),
        "another user's": (other, lambda cli: [
            "setpriv", "--bounding-set", NO_BYPASS, "--inh-caps", NO_BYPASS,
            sys.executable, "-m", "ari_mem_tui", *cli]),
    }  # fmt: skip
    rows = []
    for label, (cache, wrap) in setups.items():
        for shown, cli in clis.items():
            env = {"ARI_MEM_TUI_CACHE": str(cache), "ARI_MEM_TUI_INDEX": ""}
            runs = [measure_argv(wrap(cli), env) for _ in range(repeat)]
            rows.append((f"cache {label}: {shown}", runs))
    return report("storage", rows)


ENDPOINT_PROBE = """
import sys
from ari_mem_tui.search.embed_client import EmbeddingClient, EndpointFailed
try:
    EmbeddingClient(sys.argv[1], "m", api_key=sys.argv[2] or None).embed(["a"], 10**12)
except EndpointFailed as exc:
    print(exc, file=sys.stderr)
    sys.exit(0)
sys.exit(1)
"""


def bomb_server(bomb: bytes) -> ThreadingHTTPServer:
    """A local endpoint answering every POST with `bomb` as gzip, in a thread."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(bomb)))
            self.end_headers()
            self.wfile.write(bomb)

    class Quiet(ThreadingHTTPServer):
        def handle_error(self, *_args: object) -> None:  # a client that hung up: expected
            pass

    server = Quiet(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def endpoint_cases(_folder: Path, repeat: int) -> tuple[float, float]:
    """The embedding client against a local endpoint: a 1 GiB gzip bomb, TLS on its plain
    port, a key holding CRLF: time until the one-line failure, and the child's peak."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(16 * MIB)
    bomb = b"".join([*(packer.compress(zeros) for _ in range(64)), packer.flush()])
    server = bomb_server(bomb)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    cases = {
        f"gzip bomb: 1 GiB of NULs in {len(bomb) / MIB:.1f} MiB": [url, ""],
        "TLS against a plain port": [url.replace("http:", "https:"), ""],
        "an API key holding CRLF": [url, "sk-x\r\nX-Injected: 1"],
    }
    try:
        rows = [
            (shown, [measure_argv([sys.executable, "-c", ENDPOINT_PROBE, *argv], {})
                     for _ in range(repeat)])
            for shown, argv in cases.items()
        ]  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    return report("endpoint", rows)


if __name__ == "__main__":
    raise SystemExit(main())
