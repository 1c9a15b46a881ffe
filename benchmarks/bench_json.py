"""What writing `health --json` costs on a big run: the document built (its pydantic model,
render/outputs.py) and written (render/indented.py), apart from the health computed before it.

The run is loaded and its health computed once (BM25), then `health_json` and `json_text` are
timed over `--repeat` passes each (the median), and the whole command `health --json` in a child
process (once untimed first: it writes the run and BM25 indexes when missing), beside a bare `python -c pass` of the same moment and the load average. Point
PYTHONPATH at another checkout to measure its code the same way (before / after a change).

    python benchmarks/bench_json.py --ckpt /tmp/demo2000 --ckpt /tmp/demo10000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(work, repeat: int) -> tuple[float, object]:
    """The median wall time of `work()` over `repeat` passes, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def whole_command(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def measure(path: Path, repeat: int) -> dict:
    from ari_mem_tui.health import compute_health
    from ari_mem_tui.render.health import health_json
    from ari_mem_tui.render.text import json_text
    from ari_mem_tui.run import RunOptions, open_run

    run = open_run(RunOptions(checkpoint=path, embedder="bm25"))
    report = compute_health(run.checkpoint, run.ranker, all_entries=True)
    every = report.all_entries
    out: dict = {"nodes": len(run.checkpoint.nodes)}
    for name, rows in (("default", None), ("all", every)):
        report.all_entries = rows
        build, document = timed(lambda: health_json(report), repeat)
        write, text = timed(lambda doc=document: json_text(doc), repeat)
        size = len(str(text).encode("utf-8", "surrogatepass"))
        out[name] = {"bytes": size, "build_ms": build * 1000, "write_ms": write * 1000}
    floor = whole_command([sys.executable, "-c", "pass"])
    argv = [
        sys.executable,
        "-m",
        "ari_mem_tui",
        "health",
        str(path),
        "--json",
        "--embedder",
        "bm25",
    ]
    whole_command(argv)  # (untimed: writes the run index and the BM25 index if missing)
    command = whole_command(argv)
    return {**out, "command_s": command, "floor_s": floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", type=Path, action="append", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for path in args.ckpt:
        before = os.getloadavg()[0]
        r = measure(path, args.repeat)
        after = os.getloadavg()[0]
        parts = [
            f"{label} {d['bytes'] / 1e6:.1f} MB built {d['build_ms']:.0f} ms,"
            f" written {d['write_ms']:.0f} ms"
            for label, d in (("health --json", r["default"]), ("--all-entries", r["all"]))
        ]
        print(
            f"{path.name}: {r['nodes']:,} nodes: {'; '.join(parts)} (medians of {args.repeat});"
            f" `health --json` whole process {r['command_s']:.2f} s (python -c pass"
            f" {r['floor_s'] * 1000:.0f} ms); load average {before:.2f} → {after:.2f}"
        )


if __name__ == "__main__":
    main()
