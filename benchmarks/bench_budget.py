"""Issue 30's budget with the card's stack (networkx, pydantic): a 50-node run's `summary` and
`audit` whole process ≤ 0.5 s, the TUI's first paint ≤ 0.3 s and key → hits ≤ 100 ms, each
beside a bare `python -c pass` timed the same way in the same run, with the load average.

    python benchmarks/bench_budget.py [--ckpt DIR] [--repeat 7] [--runs 3]

Whole process = from the parent's spawn to the child's exit (interpreter start, imports, load,
output), median of `--repeat` after one untimed run that warms the run index and compiles the
bytecode (the children run with PYTHONDONTWRITEBYTECODE unset, as after a `pip install`). The
imports of each command are `-X importtime`'s sum, and the packages that cost most
(bench_scale.py's `import_times`). The TUI
figures are bench_tui.py's (headless 120×40, BM25; medians over `--runs` app starts). Without
--ckpt a 50-node demo is generated into a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's code (and bench_tui beside this file)
sys.path.insert(0, str(ROOT / "benchmarks"))

GOALS = {"summary": 0.5, "audit": 0.5, "first_paint": 0.3, "key_hits": 0.1}


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LETTA_BASE_URL", "LETTA_API_KEY")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed package has it
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child, spawn to exit (CPU: user + sys, its own: on a busy
    machine the steadier figure); a command that fails (not 0, nor 1: findings) is no time."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=False)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[3:5]} failed: {done.stderr.decode()[-500:]}")
    return took, after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime


def median_timed(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    timed(argv, env)  # warms the run index, the bytecode
    runs = [timed(argv, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def run(ckpt: Path, repeat: int, runs: int) -> None:
    from bench_scale import import_times
    from bench_tui import measure

    env = child_env()
    before = os.getloadavg()
    floor, floor_cpu = median_timed([sys.executable, "-c", "pass"], env, repeat)
    rows = [("`python -c pass`", floor, floor_cpu, None, "")]
    for command in ("summary", "audit"):
        argv = [sys.executable, "-m", "ari_mem_tui", command, str(ckpt), "--no-letta"]
        took, cpu = median_timed(argv, env, repeat)
        found = import_times(argv[3:], env)
        shares = ", ".join(f"{name} {ms:.0f}" for name, ms in found["top"].items())
        notes = f"imports {found['total_ms']:.0f} ms ({shares} ms)"
        rows.append((f"`{command}` whole process", took, cpu, GOALS[command], notes))
    tui = measure(ckpt, "bm25", runs, 5, True)
    rows.append(("TUI first paint", tui["first_paint"], None, GOALS["first_paint"], "120×40"))
    presses = f"median of {tui['key_hits_n']} presses"
    rows.append(("TUI key → hits", tui["key_hits"], None, GOALS["key_hits"], presses))
    after = os.getloadavg()
    print(f"{ckpt}: load average {before[0]:.2f} → {after[0]:.2f}\n")
    print("| figure | wall (median) | ÷ python -c pass | CPU | goal | met | notes |")
    print("|---|---|---|---|---|---|---|")
    for name, value, cpu, goal, notes in rows:
        met = "–" if goal is None else ("met" if value <= goal else "NOT met")
        goal_text = "–" if goal is None else f"≤ {goal * 1000:.0f} ms"
        cpu_text = "–" if cpu is None else f"{cpu * 1000:.0f} ms"
        print(
            f"| {name} | {value * 1000:.0f} ms | {value / floor:.1f}× | {cpu_text} | {goal_text}"
            f" | {met} | {notes} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", type=Path, help="a 50-node run (default: a demo made now)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each command")
    parser.add_argument("--runs", type=int, default=3, help="TUI app starts")
    args = parser.parse_args()
    if args.ckpt is not None:
        run(args.ckpt, args.repeat, args.runs)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as folder:
        ckpt = Path(folder) / "demo50"
        subprocess.run(
            [sys.executable, "-m", "ari_mem_tui", "demo", "--nodes", "50", "--out", str(ckpt),
             "--recordings", "keywords"],
            cwd=ROOT, env=child_env(), check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        run(ckpt, args.repeat, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
