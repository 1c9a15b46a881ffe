"""Every figure of issue 20's goals per run, beside its floor measured in the same run.

At each size (the demo runs `--demo 50 --demo 500 --demo 2000 --demo 10000:200000`, or
`--ckpt DIR`), in child processes:

- the floors: parse-and-keep (msgspec decodes tree.json, every access-log line and the
  decompressed backup, and keeps every object, the collector off) and parse-and-drop (the same,
  keeping nothing); the files are read and decompressed before the clock starts;
- the load (`load_checkpoint` + summary counts, no index), the first open writing the index and
  the reopen from it, each with its max RSS, as ratios to the floors;
- whole commands (`summary`, `audit`, `saw NODE --embedder bm25`, `saw NODE` with MiniLM's
  vectors cached where the run is small enough to embed, `health --embedder bm25`): wall and
  CPU seconds of the whole process with the index present and warm caches (one untimed run
  first), and for runs of at most 100 nodes the import time of each (`python -X importtime`:
  the sum, and the packages that cost most);
- with `--tui`: the real app headless: first paint, tree shown, first hits on a first open and
  on a reopen, key→hits; and first hits of a run never opened before (no index, empty caches:
  its BM25 index built, the default MiniLM embedding behind it), as a user first opens a run.

Then one table per run: each figure, its floor or goal, the ratio, and whether the goal is met;
the load average before and after each run. One command runs it all:

    python benchmarks/bench_scale.py --demo-dir /tmp/bench-demos --tui \
        --demo 50 --demo 500 --demo 2000 --demo 10000:200000@1

Big runs: every number of issue 12 per run, in one go.

For each run (`--ckpt DIR`, repeatable, or demo runs `--demo N[:ENTRIES][@REPEAT]`, generated
once into `--demo-dir` and reused from there): the `summary`-equivalent full load
(`load_checkpoint` + the summary counts) in a child process with no index (wall time and the
child's peak RSS, VmHWM), the same with the index (the first open that writes it, then
reopens of unchanged files), and the floor: msgspec parsing the same bytes (tree.json, every
access-log file, the decompressed backup) in this process.

`--tui`: the real app, headless (bench_tui.measure: Textual's run_test / Pilot, BM25 ranker),
in a child process per start: tree shown, memory ready, key→cursor while loading, key→hits;
once with no index (first open) and once reopening from the index; then never opened (no
index, empty caches, MiniLM).
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

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

# A child's own peak resident memory: the kernel's high-water mark of its address space
# (VmHWM). Not ru_maxrss: a child started by vfork + exec (as subprocess starts one) inherits its
# parent's ru_maxrss, so every child of this script read at least this script's own peak (after
# it parsed a 2,000-node tree.json to pick a node: 308 MB for a 10k reopen of 88 MB).
PEAK = """
def proc_status(key):  # a size from /proc/self/status, in bytes (None: none there)
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None

def peak_rss():
    peak = proc_status("VmHWM")
    if peak is None:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return peak
"""

# the child: one load, timed from inside (no interpreter start-up), max RSS of the whole child
CHILD = (
    PEAK
    + """
import json, sys, time
from pathlib import Path
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.summary import counts
t = time.perf_counter()
ckpt = load_checkpoint(Path(sys.argv[1]), use_index=sys.argv[2] == "index")
numbers = counts(ckpt)
wall = time.perf_counter() - t
rss = peak_rss()
# what is resident now: the process's own memory, and pages of mapped files (the run index),
# which are the page cache's, shared and dropped under pressure: how many of those a reopen
# maps depends on the kernel's page-cache folios, not on what it reads
anon, mapped = proc_status("RssAnon") or 0, proc_status("RssFile") or 0
print(json.dumps({"wall": wall, "rss": rss, "anon": anon, "file": mapped,
                  "entries": numbers["entries"], "events": numbers["events"],
                  "nodes": numbers["nodes"]}))
"""
)


# the floors: msgspec decodes every JSON document and line of the run (read and decompressed
# first, untimed), keeping every object ("keep") or none ("drop"), the collector off
FLOOR_CHILD = (
    PEAK
    + """
import gc, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import msgspec
from bench_scale import read_inputs
path, mode = Path(sys.argv[1]), sys.argv[2]
docs, lines = read_inputs(path)
size = sum(map(len, docs)) + sum(map(len, lines))
decode = msgspec.json.Decoder().decode
gc.disable()
t = time.perf_counter()
if mode == "keep":
    kept = [decode(d) for d in docs] + [decode(line) for line in lines]
else:
    for d in docs:
        decode(d)
    for line in lines:
        decode(line)
wall = time.perf_counter() - t
rss = peak_rss()
print(json.dumps({"wall": wall, "rss": rss, "bytes": size}))
"""
)

# one command in a grandchild: exit code, wall, CPU and max RSS of that process alone
COMMAND_CHILD = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
code = subprocess.call([sys.executable, *sys.argv[1:]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall": wall, "cpu": use.ru_utime + use.ru_stime,
                  "rss": use.ru_maxrss * 1024}))
"""

# the app, headless, as bench_tui drives it; max RSS of the whole child
TUI_CHILD = (
    PEAK
    + """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[5])
import bench_tui
m = bench_tui.measure(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), True)
m["rss"] = peak_rss()
print(json.dumps(m))
"""
)

# replay medians on the loaded run (bench_search); max RSS of the whole child
REPLAY_CHILD = (
    PEAK
    + """
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import bench_search
from ari_mem_tui.checkpoint.load import load_checkpoint
ckpt = load_checkpoint(Path(sys.argv[1]))
with tempfile.TemporaryDirectory(prefix="bench-scale-replay-") as work:
    m = bench_search.replay_on_checkpoint(ckpt, Path(work), int(sys.argv[3]))
m["rss"] = peak_rss()
print(json.dumps(m))
"""
)


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


def read_inputs(path: Path) -> tuple[list[bytes], list[bytes]]:
    """tree.json, and every line of the access logs and of the decompressed backup: the bytes
    the load parses (read and decompressed before a floor's clock starts)."""
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
    return docs, [line for line in lines if line.strip()]


def uptime() -> str:
    try:
        return subprocess.run(
            ["uptime"], check=False, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def median(values: list[float]) -> float:
    return statistics.median(values)


def medians(runs: list[dict]) -> dict:
    """Each key's median over the runs that measured it (None where none did)."""
    return {
        key: median([r[key] for r in runs if r[key] is not None])
        if any(r[key] is not None for r in runs)
        else None
        for key in runs[0]
    }


GOALS = {  # issue 20: seconds (or MB) a figure may take, and at which sizes it applies
    # issue 30 brought networkx and pydantic back and moved the whole-process budget of
    # `summary` and `audit` to 0.5 s (benchmarks/bench_budget.py); `saw` keeps issue 20's
    "summary": (0.5, "small"),
    "audit": (0.5, "small"),
    "saw_bm25": (0.3, "small"),
    "saw_minilm": (0.3, "small"),
    "tui_first_paint": (0.3, "small"),
    "tui_key_hits": (0.1, "small"),
    "load_ratio_keep": (3.0, "big"),
    "load_rss_mb": (400, "big"),
    "reopen_s": (0.5, "big"),
    "reopen_rss_mb": (300, "big"),
    "tui_first_hits": (3.0, "big"),
    "tui_reopen_hits": (1.0, "big"),
    "health": (10.0, "big"),
    "tui_cold_hits": (None, "big"),  # (no goal: issue 20 asks for it to be useful at once)
}
SMALL_NODES = 100  # import times and the "small run" goals up to this many nodes
MINILM_MAX_ENTRIES = 3_000  # `saw` with MiniLM only where its vectors take seconds to warm


def measure_floors(path: Path, env: dict[str, str], repeat: int) -> dict:
    """Median parse-and-keep and parse-and-drop floors (seconds, max RSS) in children."""
    out = {}
    for mode in ("keep", "drop"):
        runs = [child(path, mode, env, FLOOR_CHILD, str(BENCH)) for _ in range(repeat)]
        out[f"floor_{mode}_s"] = median([r["wall"] for r in runs])
        out[f"floor_{mode}_rss_mb"] = median([r["rss"] for r in runs]) / 2**20
        out["parsed_mb"] = runs[0]["bytes"] / 2**20
    return out


def a_node(path: Path) -> str | None:
    """A child of the first root: a node whose start-up search `saw` replays."""
    for name in ("tree.json", "nodes_tree.json"):
        if (path / name).is_file():
            nodes = json.loads((path / name).read_text())["nodes"]
            ids = {n.get("id") for n in nodes}
            for node in nodes:
                if node.get("parent_id") in ids:
                    return node["id"]
    return None


def run_command(
    argv: list[str], env: dict[str, str], code: str = COMMAND_CHILD, module: bool = True
) -> dict:
    """A command (`module`: of ari_mem_tui, else python's own argv) in a grandchild of `code`,
    which prints its figures as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", code, *(["-m", "ari_mem_tui"] if module else []), *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def import_times(argv: list[str], env: dict[str, str]) -> dict:
    """`python -X importtime`: the summed self time of every import, and the costliest
    top-level packages (ms)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ari_mem_tui", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    by_package: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        fields = line[len("import time:") :].split("|")
        name = fields[2].strip().split(".")[0]
        by_package[name] = by_package.get(name, 0) + int(fields[0])
    top = sorted(by_package.items(), key=lambda item: -item[1])[:5]
    return {"total_ms": sum(by_package.values()) / 1000, "top": {k: v / 1000 for k, v in top}}


def commands(path: Path, env: dict[str, str], repeat: int, nodes: int, entries: int) -> dict:
    """Whole-process wall / CPU / RSS of each command (median of `repeat`, after one untimed
    run that warms the caches), and for small runs their import times."""
    node = a_node(path)
    argvs = {
        "summary": ["summary", str(path)],
        "audit": ["audit", str(path)],
        "health": ["health", str(path), "--embedder", "bm25"],
    }
    if node:
        argvs["saw_bm25"] = ["saw", str(path), node, "--embedder", "bm25"]
        if entries <= MINILM_MAX_ENTRIES:
            argvs["saw_minilm"] = ["saw", str(path), node]
    out: dict = {}
    for name, argv in argvs.items():
        argv = [*argv, "--no-letta"]
        run_command(argv, env)  # warms the BM25 index, MiniLM's vectors, the run index
        runs = [run_command(argv, env) for _ in range(repeat)]
        out[name] = {
            "wall": median([r["wall"] for r in runs]),
            "cpu": median([r["cpu"] for r in runs]),
            "rss_mb": median([r["rss"] for r in runs]) / 2**20,
            "codes": sorted({r["code"] for r in runs}),
        }
        if nodes <= SMALL_NODES and name != "health":
            out[name]["imports"] = import_times(argv, env)
    return out


def bench(
    path: Path, repeat: int, index_root: Path, tui: bool, replay: bool, presses: int, sample: int
) -> dict:
    before = uptime()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARI_MEM_TUI_INDEX": str(index_root)}
    env.setdefault("ARI_MEM_TUI_CACHE", str(index_root.parent / "cache"))  # BM25, vectors
    env.setdefault("ARI_MEM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="bench-scale-cfg-"))
    cold = [child(path, "plain", env) for _ in range(repeat)]
    first, reopen = [], []
    for _ in range(repeat):
        subprocess.run(["rm", "-rf", str(index_root)], check=True)
        first.append(child(path, "index", env))
        reopen.append(child(path, "index", env))
    load = median([r["wall"] for r in cold])
    both = measure_floors(path, env, repeat)
    floor = both["floor_drop_s"]
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
        "reopen_anon_mb": median([r["anon"] for r in reopen]) / 2**20,
        "reopen_file_mb": median([r["file"] for r in reopen]) / 2**20,
        "parse_floor_s": floor,
        "ratio_to_floor": load / floor if floor else None,
        **both,
        "ratio_to_keep": load / both["floor_keep_s"] if both["floor_keep_s"] else None,
        "ratio_to_drop": load / both["floor_drop_s"] if both["floor_drop_s"] else None,
    }
    result["commands"] = commands(path, env, repeat, result["nodes"], result["entries"])
    result["issue33"] = issue33(path, env, repeat)
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
            result[label] = medians(runs)
        # a run never opened before: no index, no BM25 index, no vector (the default MiniLM,
        # BM25 standing in until the pool is embedded); as a user first opens a run
        runs = []
        for _ in range(repeat):
            fresh = Path(tempfile.mkdtemp(prefix="bench-scale-cold-"))
            cold_env = {**env, "ARI_MEM_TUI_INDEX": str(fresh / "index"),
                        "ARI_MEM_TUI_CACHE": str(fresh / "cache")}  # fmt: skip
            runs.append(child(path, "minilm", cold_env, TUI_CHILD, "1", str(presses), str(BENCH)))
            subprocess.run(["rm", "-rf", str(fresh)], check=True)
        result["tui_cold"] = medians(runs)
    if replay:
        result["replay"] = child(path, str(BENCH), env, REPLAY_CHILD, str(sample))
    result["uptime_before"] = before
    result["uptime_after"] = uptime()
    return result


# ---- issue 33: the first open as a user meets it, the tree before the memory, a node's search ----

# whole processes, as a user runs them: the orjson (else msgspec) parse-and-drop floor of every
# file a load reads, read and decompressed inside the clock (what `summary` must do too)
WHOLE_FLOOR = """
import gzip, sys
from pathlib import Path
try:
    from orjson import loads
except ImportError:
    import msgspec
    loads = msgspec.json.Decoder().decode
path = Path(sys.argv[1])
for name in ("tree.json", "nodes_tree.json"):
    if (path / name).is_file():
        loads((path / name).read_bytes())
        break
for log in sorted(path.glob("memory_access*.jsonl")):
    for line in log.read_bytes().splitlines():
        if line.strip():
            loads(line)
backup = path / "memory_backup.jsonl.gz"
if backup.is_file():
    for line in gzip.decompress(backup.read_bytes()).splitlines():
        if line.strip():
            loads(line)
"""

# a command in a grandchild whose stdout is a pipe read to its end: when the answer's end
# arrives (EOF), when the process ends, its CPU and peak memory (its own: see PEAK); then the
# writer it may have left in a process of its own (cli/after_output.py `detach`), reparented
# here (a child subreaper) and waited for: when it is done, and its CPU
ANSWER_CHILD = """
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
t = time.perf_counter()
proc = subprocess.Popen([sys.executable, *sys.argv[1:]], stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL)
size = len(proc.stdout.read())
eof = time.perf_counter() - t
code = proc.wait()
end = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
written = time.perf_counter() - t
more = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = use.ru_utime + use.ru_stime
print(json.dumps({"code": code, "eof": eof, "wall": end, "bytes": size, "written": written,
                  "cpu": cpu, "writer_cpu": more.ru_utime + more.ru_stime - cpu,
                  "rss": use.ru_maxrss * 1024}))
"""

# the DuckDB peer of "what did node X's start-up search return" on the run's own files: the
# node's scope and limit 5 (ARI's rule: a start-up search passes its ancestors), its first such
# read; DuckDB reads the JSON itself
DUCKDB_PEER = """
import json, resource, sys, time
import duckdb
path, node = sys.argv[1], sys.argv[2]
t = time.perf_counter()
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # (it writes to stdout)
tree = next(n for n in ("tree.json", "nodes_tree.json") if __import__("os").path.isfile(f"{path}/{n}"))
ancestors = con.execute(
    f"SELECT n.ancestor_ids FROM (SELECT unnest(nodes) AS n FROM read_json_auto('{path}/{tree}', "
    "maximum_object_size=1073741824)) WHERE n.id = ?", [node]).fetchone()[0]
rows = con.execute(
    f"SELECT results FROM read_json_auto('{path}/memory_access.jsonl', format='newline_delimited', "
    "maximum_object_size=268435456) WHERE op = 'read' AND \\"limit\\" = 5 AND ancestor_ids = ? "
    "ORDER BY ts LIMIT 1", [ancestors]).fetchall()
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rows": len(rows[0][0]) if rows else 0,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def answer(argv: list[str], env: dict[str, str]) -> dict:
    """A command as its own process (ANSWER_CHILD's figures)."""
    return run_command(argv, env, ANSWER_CHILD)


def whole(code: str, args: list[str], env: dict[str, str]) -> dict:
    """A script as its own process (ANSWER_CHILD's figures)."""
    return run_command(["-c", code, *args], env, ANSWER_CHILD, module=False)


def issue33(path: Path, env: dict[str, str], repeat: int) -> dict:
    """The first open as a user meets it (`summary`, fresh index and cache: the answer's end,
    the process's end, peak memory), its reopen, the whole-process floors, and a node's
    start-up search from files cold (ours, and DuckDB's on the same files)."""
    out: dict = {}
    floors = [whole(WHOLE_FLOOR, [str(path)], env) for _ in range(repeat)]
    out["floor_whole_s"] = median([f["wall"] for f in floors])
    out["floor_whole_rss_mb"] = median([f["rss"] for f in floors]) / 2**20
    out["python_pass_s"] = median([whole("pass", [], env)["wall"] for _ in range(max(3, repeat))])
    first, reopen = [], []
    for _ in range(repeat):
        fresh = Path(tempfile.mkdtemp(prefix="bench-scale-first-"))
        cold = {**env, "ARI_MEM_TUI_INDEX": str(fresh / "index"),
                "ARI_MEM_TUI_CACHE": str(fresh / "cache")}  # fmt: skip
        first.append(answer(["summary", str(path), "--no-letta"], cold))
        reopen.append(answer(["summary", str(path), "--no-letta"], cold))
        subprocess.run(["rm", "-rf", str(fresh)], check=True)
    for label, runs in (("first", first), ("reopen", reopen)):
        out[f"{label}_answer_s"] = median([r["eof"] for r in runs])
        out[f"{label}_exit_s"] = median([r["wall"] for r in runs])
        out[f"{label}_cpu_s"] = median([r["cpu"] for r in runs])
        out[f"{label}_written_s"] = median([r["written"] for r in runs])
        out[f"{label}_writer_cpu_s"] = median([r["writer_cpu"] for r in runs])
        out[f"{label}_rss_mb"] = median([r["rss"] for r in runs]) / 2**20
    node = a_node(path)
    if node:
        fresh = Path(tempfile.mkdtemp(prefix="bench-scale-saw-"))
        cold = {**env, "ARI_MEM_TUI_INDEX": str(fresh / "index"),
                "ARI_MEM_TUI_CACHE": str(fresh / "cache")}  # fmt: skip
        argv = ["saw", str(path), node, "--json", "--embedder", "bm25", "--no-letta"]
        out["saw_cold"] = answer(argv, cold)
        out["saw_reopen"] = answer(argv, cold)
        subprocess.run(["rm", "-rf", str(fresh)], check=True)
        try:
            peer = subprocess.run(
                [sys.executable, "-c", DUCKDB_PEER, str(path), node],
                env=env, capture_output=True, text=True, check=True, timeout=900,
            )  # fmt: skip
            out["duckdb_peer"] = json.loads(peer.stdout.strip().splitlines()[-1])
        except (subprocess.SubprocessError, ValueError) as exc:
            out["duckdb_peer"] = {"error": str(exc)[:200]}
    return out


def table33(results: list[dict]) -> str:
    """Issue 33's rows, each beside its floor in the same run, with the load average."""
    head = ["figure", "value", "floor / peer (same run)", "ratio", "goal", ""]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def row(figure, value, floor, ratio, goal, met):
        lines.append(f"| {figure} | {value} | {floor} | {ratio} | {goal} | {met} |")

    by_nodes = {r["nodes"]: r for r in results}
    for r in results:
        i, n = r.get("issue33"), f"{r['nodes']:,}"
        if not i:
            continue
        loads = f"load {load_avg(r['uptime_before'])} → {load_avg(r['uptime_after'])}"
        lines.append(f"| **{n} nodes / {r['entries']:,} entries** ({loads}) | | | | | |")
        small = r["nodes"] <= SMALL_NODES
        if small:
            c = r["commands"]["summary"]
            row("`summary`, whole process (index present)", fmt_s(c["wall"]),
                f"`python -c pass` {fmt_s(i['python_pass_s'])}", "–", "≤ 500 ms",
                _met(c["wall"], 0.5))  # fmt: skip
        floor = i["floor_whole_s"]
        ratio = i["first_exit_s"] / floor
        goal_ratio = not small
        row("first open (`summary`, fresh cache), process end", fmt_s(i["first_exit_s"]),
            f"parse-and-drop, whole process {fmt_s(floor)}", f"{ratio:.1f}×",
            "≤ 3×" if goal_ratio else "–", _met(ratio, 3.0) if goal_ratio else "–")  # fmt: skip
        row("… its answer's end (stdout EOF)", fmt_s(i["first_answer_s"]), "", 
            f"{i['first_answer_s'] / floor:.1f}×", "–", "–")  # fmt: skip
        after = i["first_written_s"] - i["first_answer_s"]
        row("… after it: the run index and summary written (a detached writer: wall, CPU)",
            f"{fmt_s(after)}, {fmt_s(i['first_writer_cpu_s'])}", "", "–",
            "off the answer's path (≤ a tenth left in the process)",
            _met(i["first_exit_s"] - i["first_answer_s"], after / 10))  # fmt: skip
        mb_goal = 800 if r["nodes"] > 15_000 else 400
        row("… peak memory", f"{i['first_rss_mb']:.0f} MB",
            f"floor {i['floor_whole_rss_mb']:.0f} MB", "–", f"≤ {mb_goal} MB" if not small else "–",
            _met(i["first_rss_mb"], mb_goal) if not small else "–")  # fmt: skip
        row("… CPU", fmt_s(i["first_cpu_s"]), "", "–", "–", "–")
        row("reopen (`summary`)", f"{fmt_s(i['reopen_exit_s'])}, {i['reopen_rss_mb']:.0f} MB",
            "", f"{i['reopen_exit_s'] / floor:.2f}×", "–", "–")  # fmt: skip
        half = by_nodes.get(r["nodes"] // 2)
        if half and half.get("issue33"):
            import math

            t0, t1 = half["issue33"]["first_exit_s"], i["first_exit_s"]
            row(f"growth from {half['nodes']:,} nodes (exponent)",
                f"{math.log(t1 / t0) / math.log(2):.2f}", "", "–", "linear (1.0)", "–")  # fmt: skip
        cold, reopen = r.get("tui_cold"), r.get("tui_reopen")
        if cold and not small:
            row("TUI first open, fresh cache: tree shown", fmt_s(cold["tree_shown"]), "", "–",
                "≤ 1 s", _met(cold["tree_shown"], 1.0))  # fmt: skip
            row("… first hits (BM25 standing in for MiniLM)", fmt_s(cold["memory_ready"]),
                "", "–", "≤ 3 s", _met(cold["memory_ready"], 3.0))  # fmt: skip
            row("… a key while it loads", fmt_s(cold["key_cursor_loading"]), "", "–", "–", "–")
        if reopen and not small:
            row("TUI reopen: tree shown / first hits",
                f"{fmt_s(reopen['tree_shown'])} / {fmt_s(reopen['memory_ready'])}", "", "–",
                "≤ 1 s", _met(reopen["memory_ready"], 1.0))  # fmt: skip
        saw, peer = i.get("saw_cold"), i.get("duckdb_peer") or {}
        if saw:
            peer_s = peer.get("wall")
            row("a node's start-up search from files cold (`saw --json`, BM25)",
                f"{fmt_s(saw['wall'])}, {saw['rss'] / 2**20:.0f} MB",
                f"DuckDB on the files {fmt_s(peer_s)}, {peer.get('rss', 0) / 2**20:.0f} MB"
                if peer_s else f"DuckDB: {peer.get('error', 'not run')}",
                f"{saw['wall'] / peer_s:.1f}×" if peer_s else "–", "≤ DuckDB",
                _met(saw["wall"], peer_s) if peer_s else "–")  # fmt: skip
            row("… the same, reopened", fmt_s(i["saw_reopen"]["wall"]), "", 
                f"{i['saw_reopen']['wall'] / peer_s:.2f}×" if peer_s else "–", "–", "–")  # fmt: skip
    return "\n".join(lines)


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


def _met(value: float | None, goal: float) -> str:
    return "–" if value is None else ("met" if value <= goal else "NOT met")


def goal_rows(r: dict) -> list[list[str]]:
    """Each figure of issue 20 for this run: value, its floor or anchor, ratio, goal, met."""
    small = r["nodes"] <= SMALL_NODES
    rows: list[list[str]] = []

    def add(key: str, figure: str, value: float | None, shown: str, anchor: str = "–",
            ratio: str = "–") -> None:  # fmt: skip
        goal, where = GOALS[key]
        applies = (where == "small") == small and goal is not None
        goal_text = (f"≤ {goal:g} MB" if key.endswith("_mb") else
                     f"≤ {goal:g}×" if key.startswith("load_ratio") else f"≤ {fmt_s(goal)}")  # fmt: skip
        rows.append([figure, shown, anchor, ratio, goal_text if applies else "–",
                     _met(value, goal) if applies else "–"])  # fmt: skip

    keep, drop = r["floor_keep_s"], r["floor_drop_s"]
    add("load_ratio_keep", "load (summary's, no index)", r["ratio_to_keep"],
        f"{fmt_s(r['load_s'])}, {r['load_rss_mb']:.0f} MB",
        f"keep {fmt_s(keep)} / {r['floor_keep_rss_mb']:.0f} MB; drop {fmt_s(drop)}",
        f"{r['ratio_to_keep']:.1f}× / {r['ratio_to_drop']:.1f}×")  # fmt: skip
    add("load_rss_mb", "load max RSS", r["load_rss_mb"], f"{r['load_rss_mb']:.0f} MB",
        f"keep floor {r['floor_keep_rss_mb']:.0f} MB",
        f"{r['load_rss_mb'] / r['floor_keep_rss_mb']:.1f}×")  # fmt: skip
    add("reopen_s", "reopen from the index", r["reopen_s"], fmt_s(r["reopen_s"]),
        f"keep floor {fmt_s(keep)}", f"{r['reopen_s'] / keep:.2f}×")  # fmt: skip
    add("reopen_rss_mb", "reopen max RSS", r["reopen_rss_mb"], f"{r['reopen_rss_mb']:.0f} MB",
        f"at the end: own {r['reopen_anon_mb']:.0f} MB, mapped index pages "
        f"{r['reopen_file_mb']:.0f} MB")  # fmt: skip
    for key, label in (("summary", "summary"), ("audit", "audit"), ("saw_bm25", "saw (BM25)"),
                       ("saw_minilm", "saw (MiniLM, vectors cached)")):  # fmt: skip
        c = r["commands"].get(key)
        if c is None:
            continue
        imports = c.get("imports")
        anchor = f"imports {imports['total_ms']:.0f} ms" if imports else "–"
        add(key, f"`{label}` whole process", c["wall"],
            f"{fmt_s(c['wall'])} (CPU {fmt_s(c['cpu'])}, {c['rss_mb']:.0f} MB)", anchor,
            f"{c['wall'] / keep:.1f}× keep floor" if keep else "–")  # fmt: skip
    c = r["commands"]["health"]
    add(
        "health",
        "`health --embedder bm25` (index present)",
        c["wall"],
        f"{fmt_s(c['wall'])} (CPU {fmt_s(c['cpu'])}, {c['rss_mb']:.0f} MB)",
    )
    tf, tr = r.get("tui_first"), r.get("tui_reopen")
    if tf and tr:
        add("tui_first_paint", "TUI first paint", tf["first_paint"], fmt_s(tf["first_paint"]))
        add(
            "tui_first_hits",
            "TUI first hits, first open",
            tf["memory_ready"],
            fmt_s(tf["memory_ready"]),
            f"tree shown {fmt_s(tf['tree_shown'])}",
        )
        add(
            "tui_reopen_hits",
            "TUI first hits, reopen",
            tr["memory_ready"],
            fmt_s(tr["memory_ready"]),
            f"tree shown {fmt_s(tr['tree_shown'])}",
        )
        add("tui_key_hits", "TUI key→hits", tr["key_hits"], fmt_s(tr["key_hits"]))
    cold = r.get("tui_cold")
    if cold:
        add(
            "tui_cold_hits",
            "TUI first hits, never opened (no index, empty caches, MiniLM)",
            cold["memory_ready"],
            fmt_s(cold["memory_ready"]),
            f"tree shown {fmt_s(cold['tree_shown'])}",
        )
    return rows


def goals_table(r: dict) -> str:
    head = ["figure", "value", "floor / anchor (same run)", "ratio", "goal", ""]
    loads = f"{load_avg(r['uptime_before'])} → {load_avg(r['uptime_after'])}"
    title = f"{r['nodes']} nodes / {r['entries']} entries / {r['events']} events"
    lines = [f"{title} (load average {loads})", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in goal_rows(r)]
    small = {k: c["imports"] for k, c in r["commands"].items() if c.get("imports")}
    for name, imports in small.items():
        top = ", ".join(f"{k} {v:.0f}" for k, v in imports["top"].items())
        lines.append(f"\nimports of `{name}`: {imports['total_ms']:.0f} ms ({top} ms)")
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
        print("Issue 33 (whole processes, as a user meets them):\n")
        print(table33(results) + "\n")
        for result in results:
            print(goals_table(result) + "\n")
        print(table(results))
        print(
            "medians of REPEAT runs; wall inside the child, max RSS of the child; TUI: BM25, "
            "120×40 headless, first open (no index) / reopen (index); replay: SYNTHETIC cached "
            "vectors, queries prefetched"
        )


if __name__ == "__main__":
    main()
