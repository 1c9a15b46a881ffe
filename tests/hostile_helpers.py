"""Running the CLI in a child process with its peak RSS and wall time, for the size cases.

The peak is the child's own `ru_maxrss`, written to stderr as it exits. Bounds are on the rise
over a bare start-up of the same child (the same command on the tiny demo run), so a loaded
machine or a bigger library import does not move them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PROBE = (
    "import resource, sys\n"
    "from ari_mem_tui.cli import main\n"
    "code = 3\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    sys.stderr.write(f'\\nPEAK_RSS_KIB={peak}\\n')\n"
    "sys.exit(code)\n"
)
_PEAK = re.compile(r"\nPEAK_RSS_KIB=(\d+)\n")
MIB = 1 << 20
# what the goal of the issue allows a hostile case, as a rise over the bare start-up
RSS_RISE_MIB = 1024


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str  # without the probe's line
    peak_mib: float
    seconds: float


def run_measured(*args: str, timeout: float = 120, env: dict | None = None) -> Measured:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        check=False,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        env={**os.environ, "COLUMNS": "4000", **(env or {})},  # one problem, one line
    )
    seconds = time.monotonic() - start
    match = _PEAK.search(proc.stderr)
    assert match, f"no peak reported: {proc.stderr[-2000:]}"
    stderr = proc.stderr[: match.start()] + proc.stderr[match.end() :]
    return Measured(proc.returncode, proc.stdout, stderr, int(match.group(1)) / 1024, seconds)


@functools.cache
def bare_peak_mib(small_ckpt: Path) -> float:
    """The peak of the same child on the tiny demo run: start-up, imports, a small load."""
    return run_measured("summary", str(small_ckpt)).peak_mib


def fingerprint(root: Path) -> dict[str, tuple]:
    """Size, mtime and (for files up to 16 MiB) sha1 of everything under root, without reading
    a big file whole: proves that nothing was written."""
    result: dict[str, tuple] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = ""
        if path.is_file() and info.st_size <= 16 * MIB:
            digest = hashlib.sha1(path.read_bytes()).hexdigest()
        result[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns, digest)
    return result


def clean_stderr(text: str) -> None:
    """No traceback and no terminal control bytes in what the tool printed."""
    assert "Traceback" not in text, text[-2000:]
    assert not re.search(r"[\x07\x1b\x80-\x9f]", text), repr(text[-500:])


ROOT = Path(__file__).resolve().parent.parent
HANG_S = 120  # a command that has not ended by then is hung (a FIFO read): never a speed bound


def run_cli(
    *args: str, env: dict | None = None, timeout: float = HANG_S, unprivileged: bool = False
) -> subprocess.CompletedProcess:
    """The real CLI in a child process, from this checkout, as a user runs it. `unprivileged`:
    without the capabilities that let root read a mode-000 file (setpriv), so permissions bite
    as they do for anyone else."""
    prefix: list[str] = []
    if unprivileged and os.geteuid() == 0:
        drop = "-dac_override,-dac_read_search"
        prefix = ["setpriv", "--bounding-set", drop, "--inh-caps", drop]
    return subprocess.run(
        [*prefix, sys.executable, "-m", "ari_mem_tui", *args],
        check=False,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The single stderr line of a refused command (exit 2, nothing on stdout)."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-1000:])
    assert proc.stdout == "", proc.stdout[-500:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    clean_stderr(proc.stderr)
    return lines[0]


def wait_for_page(url: str, seconds: float = HANG_S) -> None:
    """Until `url` answers 200 (a server started in a child process is listening)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as page:
                if page.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} never answered")
