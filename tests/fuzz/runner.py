"""One command on one damaged input, in a forked child, judged by the fuzzer's invariants.

The fuzzer's process imports the tool once; each command runs in a child forked from it (what a
fresh `python -m ari_mem_tui` would do, without its 0.5 s of imports), with its own environment,
its output in files, an alarm for a hang, a bound on its data segment, and watchers on the
catch-alls that turn any exception into a message (`open_run` behind "cannot read", the run
ranker's fallback, the TUI's workers): an exception of a kind no reader raises on purpose is
recorded there before the catch-all swallows it.

The invariants (each broken one is a `failure` string):
- no traceback anywhere in what it printed, no "Exception ignored";
- no catch-all: exit 3 ("internal error"), or a watched call raising a bug's exception;
- bounded time (`SLOW_CPU_S` of CPU; killed at `CPU_BOUND_S` of CPU and, a hang, at `HANG_S`
  of wall time) and memory (`RISE_MIB` over the fork's size);
- no write to the checkpoint (every file's sha256, before and after);
- `--json` output strict (NaN and Infinity refused) and nothing on stdout when refused (exit 2);
- no raw terminal escapes (ESC, BEL, C1) in what it printed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SLOW_CPU_S = 20.0  # a small damaged run takes a second or two of CPU: more is a bug, not load
CPU_BOUND_S = 60  # past this much CPU the child is killed (SIGXCPU): a loop that never ends
# wall time is a poor measure on a shared machine: at `nice -n 19` beside a load of 20 a
# second of CPU takes a minute and more; a command still running after this is a hang (one
# waiting on a socket, a FIFO); `scripts/fuzz.py --hang S` sets it
HANG_S = 300
RISE_MIB = 1024  # the sizes cases' bound: peak RSS over the process it was forked from
DATA_BOUND_MIB = 4096  # past this an allocation fails in the child (MemoryError: exit 3)
ESCAPE = re.compile(r"[\x07\x1b\x80-\x9f]")
EXPECTED_EXITS = {0, 1, 2}
BIG = 64 << 20  # a file past this is fingerprinted by size and time


@dataclass
class Outcome:
    """What one command did, and which invariants it broke."""

    argv: list[str]
    code: int
    seconds: float
    peak_mib: float
    stdout: str = ""
    stderr: str = ""
    caught: str = ""  # what the watchers saw swallowed
    cpu: float = 0.0
    failures: list[str] = field(default_factory=list)


def fingerprint(root: Path) -> dict[str, str]:
    """sha256 (or what a non-file is) of everything under `root`."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = "link:" + os.readlink(path)
        elif path.is_file() and path.stat().st_size > BIG:  # (a sparse 2 GiB file)
            info = path.stat()
            found[name] = f"size:{info.st_size} mtime:{info.st_mtime_ns}"
        elif path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[name] = "dir" if path.is_dir() else "other"
    return found


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def _data_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_forked(
    body: Callable[[], int], argv: list[str], env: dict[str, str], workdir: Path
) -> Outcome:
    """`body()` (the command) in a forked child with `env` set; its exit code and output."""
    workdir.mkdir(parents=True, exist_ok=True)
    out, err, caught = workdir / "stdout", workdir / "stderr", workdir / "caught"
    for path in (out, err, caught):
        path.write_bytes(b"")
    sys.stdout.flush()
    sys.stderr.flush()
    base = _rss_mib()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(body, env, out, err, caught)
    try:
        _, status, usage = os.wait4(pid, 0)
    except BaseException:  # Ctrl+C in the fuzzer: the command ends with it
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    seconds = time.monotonic() - start
    outcome = Outcome(
        argv=argv,
        code=os.waitstatus_to_exitcode(status),
        seconds=seconds,
        peak_mib=usage.ru_maxrss / 1024 - base,
        stdout=out.read_text(errors="replace"),
        stderr=err.read_text(errors="replace"),
        caught=caught.read_text(errors="replace"),
        cpu=usage.ru_utime + usage.ru_stime,
    )
    return outcome


def _child(body: Callable[[], int], env: dict[str, str], out: Path, err: Path, caught: Path):
    code = 70
    try:
        for fd, path in ((1, out), (2, err)):
            handle = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.dup2(handle, fd)
            os.close(handle)
        # streams on the new fds as Python makes them for a file (pytest's capture, in the
        # harness's tests, had replaced them): stdout strict, stderr backslashreplace
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        os.environ.update(env)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(HANG_S)
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_BOUND_S, CPU_BOUND_S + 5))
        bound = int((_data_mib() + DATA_BOUND_MIB) * (1 << 20))
        resource.setrlimit(resource.RLIMIT_DATA, (bound, bound))
        install_watchers(caught)
        code = int(body())
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:  # noqa: BLE001 - the harness's own report of a child's escape
        traceback.print_exc()
        code = 71
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# ---------------------------------------------------------------- catch-all watchers
def _allowed() -> tuple[type[BaseException], ...]:
    """The exceptions a reader raises on purpose, that a catch-all may turn into a message."""
    from ari_mem_tui.letta.errors import LettaUnavailable
    from ari_mem_tui.model.checkpoint import NodeRefError
    from ari_mem_tui.search.embed_client import EndpointFailed
    from ari_mem_tui.search.run_model import EmbedSetupError

    return (OSError, LettaUnavailable, EmbedSetupError, NodeRefError, EndpointFailed)


def _watch(owner: Any, name: str, caught: Path, allowed: tuple[type[BaseException], ...]):
    original = getattr(owner, name)

    @functools.wraps(original)
    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except allowed:
            raise
        except Exception as exc:
            where = f"{getattr(owner, '__name__', owner)}.{name}"
            with caught.open("a") as log:
                log.write(f"{where} swallowed {type(exc).__name__}: {str(exc)[:200]}\n")
                log.write(traceback.format_exc())
            raise

    setattr(owner, name, watched)


WATCHED = [
    ("ari_mem_tui.run", "open_run"),  # the CLI's "cannot read CKPT: …", the TUI's load
    ("ari_mem_tui.search.run_ranker", "RunModelRanker._fill"),  # "embedding model unavailable"
    ("ari_mem_tui.tui.workers", "replay"),  # the TUI's "replay failed"
    ("ari_mem_tui.tui.workers", "kept_or_audit"),  # the Audit tab's "audit failed"
    ("ari_mem_tui.tui.workers", "audit_rows"),
]


def install_watchers(caught: Path) -> None:
    import importlib

    allowed = _allowed()
    for module_name, attr in WATCHED:
        try:
            owner = importlib.import_module(module_name)
        except ImportError:
            continue
        *outer, name = attr.split(".")
        for part in outer:
            owner = getattr(owner, part)  # (renamed in the code: the fuzzer must follow)
        _watch(owner, name, caught, allowed)


# ---------------------------------------------------------------- the invariants
def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is no JSON")

    return json.loads(text, parse_constant=refuse)


def judge(outcome: Outcome, before: dict[str, str], after: dict[str, str]) -> Outcome:
    """Every invariant the command broke, into `outcome.failures`."""
    failures = outcome.failures
    failures += _ending(outcome)
    failures += _bounds(outcome)
    if before != after:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        failures.append(f"checkpoint written: {', '.join(changed)[:120]}")
    failures += _printed(outcome)
    return outcome


def _ending(outcome: Outcome) -> list[str]:
    """How it ended: a signal, exit 3 (the catch-all), a code no command gives; what a
    watched catch-all swallowed."""
    found = []
    if outcome.code < 0:
        why = {-14: " (hang)", -24: " (CPU bound)"}.get(outcome.code, "")
        found.append(f"killed by signal {-outcome.code}{why}")
    elif outcome.code == 3:
        found.append("exit 3: " + _internal_error(outcome.stderr))
    elif outcome.code not in EXPECTED_EXITS:
        found.append(f"exit {outcome.code}")
    printed = outcome.stdout + outcome.stderr
    if "Traceback (most recent call last)" in printed or "Exception ignored" in printed:
        found.append("traceback: " + _last_traceback_line(printed))
    if outcome.caught:
        found.append("catch-all: " + outcome.caught.splitlines()[0])
    return found


def _bounds(outcome: Outcome) -> list[str]:
    found = []
    if outcome.cpu > SLOW_CPU_S:
        found.append(f"slow: {outcome.cpu:.0f} s of CPU ({outcome.seconds:.0f} s)")
    if outcome.peak_mib > RISE_MIB:
        found.append(f"memory: +{outcome.peak_mib:.0f} MiB")
    return found


def _printed(outcome: Outcome) -> list[str]:
    """What it printed: strict JSON, nothing on stdout when refused, no raw escape."""
    found = []
    if "--json" in outcome.argv and outcome.code in (0, 1):
        try:
            strict_json(outcome.stdout)
        except ValueError as exc:
            found.append(f"JSON not strict: {str(exc)[:80]}")
    if outcome.code == 2 and outcome.stdout.strip():
        found.append("refused (exit 2) but printed on stdout")
    if ESCAPE.search(outcome.stdout + outcome.stderr):
        found.append("raw escape in output")
    return found


def _internal_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if "internal error" in line:
            return line.removeprefix("ari-mem-tui: ")[:160]
    return stderr.strip().splitlines()[-1][:160] if stderr.strip() else "(nothing said)"


def _last_traceback_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^\w+(\.\w+)*(Error|Exception|Exit)\b", line)]
    return (errors[-1] if errors else lines[-1] if lines else "")[:160]
