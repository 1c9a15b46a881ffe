"""Fuzz every reader of the tool with damaged real runs, caches, settings and server answers.

    python scripts/fuzz.py --minutes 30              # seed 1; prints every input tried
    python scripts/fuzz.py --seconds 60 --seed 7 --out /tmp/fuzz
    python scripts/fuzz.py --replay /tmp/fuzz/failures/0001-tree-json   # one failure again

Structure-aware (tests/fuzz/damage.py): JSON documents, JSON lines, gzip, trace_log lines,
passage footers, npz segments and sealed caches are parsed, one value changed (a number past
every range, another type, a deep nest, a lone surrogate, a huge string, a duplicate key, a
cycle of parent ids ...) and written back, then maybe bit-flipped, cut or given bad UTF-8.
Every choice comes from input N's own seed (`--seed S`, input N: `--case N` makes it again
alone; the same code makes the same inputs); each input runs two or three real commands (the CLI in a forked child, or the TUI
headless, driven by keys) and is judged by one set of invariants (tests/fuzz/runner.py): no
traceback, no catch-all (exit 3, or a swallowed exception of a bug's kind), bounded time and
memory, no write to the checkpoint, strict `--json`, no raw escape, and a damaged cache giving
the sound answer. Exit 0 when nothing failed, 1 otherwise; each distinct failure keeps up to
three reproducers under `OUT/failures/` with `case.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
for name in ("LETTA_BASE_URL", "ARI_MEM_TUI_EMBED_API_KEY", "NO_COLOR", "TEXTUAL_THEME"):
    os.environ.pop(name, None)

from tests.fuzz import runner
from tests.fuzz.damage import Seeded
from tests.fuzz.session import Session, case_seed


def explore(session: Session, until: float, quiet: bool, only: int | None = None) -> None:
    """Inputs 1, 2, 3 … until the time is up (or input `only` alone)."""
    number = only or 1
    while time.monotonic() < until:
        tried = session.number
        session.case(Seeded(case_seed(session.seed, number)), number)
        if not quiet and session.number > tried:
            print(f"input {number}: {session.last}", flush=True)
        if only is not None:
            return
        number += 1


def report(session: Session, seconds: float) -> str:
    head = (
        f"fuzz: seed {session.seed}, {session.number} inputs in {seconds / 60:.1f} min"
        f" ({session.repeats} repeated inputs skipped), "
        f"{sum(session.ran.values())} commands, {len(session.failures)} failures "
        f"({len(session.kinds)} distinct)"
    )
    lines = [head, "inputs per reader:"]
    lines += [f"  {n:6d}  {reader}" for reader, n in session.tried.most_common()]
    lines.append("commands:")
    lines += [f"  {n:6d}  {key}" for key, n in session.ran.most_common()]
    if session.kinds:
        lines.append("failures (count, kind, first reproducer):")
        for kind, n in session.kinds.most_common():
            first = next(f for f in session.failures if f.kind == kind)
            lines.append(f"  {n:4d}  {kind}  [{first.reader}; {first.command}] {first.saved}")
    return "\n".join(lines)


def replay(folder: Path) -> int:
    """A kept failure's command again, in a fresh process, with --debug (its traceback)."""
    record = json.loads((folder / "case.json").read_text())
    old, new = record["case_dir"], str(folder)
    argv = [arg.replace(old, new) for arg in record["command"]]
    env = {**os.environ, **{k: v.replace(old, new) for k, v in record["env"].items()}}
    print("damage:", *record["damage"], sep="\n  ")
    if record.get("answers"):
        print("(a server's answers were damaged: run scripts/fuzz.py with its seed to see it)")
    if argv[0] == "tui":
        code = "from tests.fuzz.session import drive_tui; import sys, pathlib;"
        code += "drive_tui(pathlib.Path(sys.argv[1]), sys.argv[2:])"
        command = [sys.executable, "-c", code, *argv[1:]]
    else:
        command = [sys.executable, "-m", "ari_mem_tui", "--debug", *argv]
    print("$", " ".join(command))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    return subprocess.run(command, env=env, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="default /tmp/ari-mem-tui-fuzz-SEED")
    parser.add_argument("--quiet", action="store_true", help="no line per input")
    parser.add_argument("--case", type=int, default=None, help="make and run input N alone")
    parser.add_argument(
        "--hang", type=int, default=runner.HANG_S, help="seconds after which a command is hung"
    )
    parser.add_argument(
        "--readers", default="", help="only the readers whose name holds one of these (a,b)"
    )
    parser.add_argument("--replay", type=Path, default=None, help="run a kept failure again")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    runner.HANG_S = args.hang
    budget = args.seconds if args.seconds is not None else 60 * (args.minutes or 1)
    out = args.out or Path(f"/tmp/ari-mem-tui-fuzz-{args.seed}")
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    session = Session(out, args.seed, only=[r for r in args.readers.split(",") if r])
    print(f"fuzz: seeds ready in {time.monotonic() - start:.1f} s; {budget:.0f} s of inputs")
    try:
        explore(session, time.monotonic() + budget, args.quiet, args.case)
    except KeyboardInterrupt:
        print("fuzz: interrupted")
    finally:
        session.close()
        text = report(session, time.monotonic() - start)
        print(text)
        (out / "report.txt").write_text(text + "\n")
    return 1 if session.failures else 0


if __name__ == "__main__":
    sys.exit(main())
