"""Started without a terminal (`</dev/null >out`, a pipe, cron), the TUI would wait for keys that
never come and burn a core: it refuses with one line and exit 2 instead, before any work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_without_terminal(*args: str, env: dict[str, str] | None = None):
    """`python -m ari_mem_tui ARGS </dev/null` with its output piped (neither is a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize("how", ["run", "demo"])
def test_the_tui_refuses_without_a_terminal(tiny: Path, how: str) -> None:
    """GIVEN stdin from /dev/null and stdout to a pipe WHEN the TUI is asked for (on a run, or
    the demo without --out) THEN it exits 2 at once with one line naming what to use instead,
    and writes nothing to stdout (no escape codes of a screen)."""
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"}
    done = run_without_terminal(*([str(tiny)] if how == "run" else ["demo"]), env=env)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0] and "--json" in lines[0]


def test_demo_out_needs_no_terminal(tmp_path: Path) -> None:
    """`demo --out DIR` writes files only: it runs without a terminal, as before."""
    done = run_without_terminal(
        "demo", "--out", str(tmp_path / "d"), "--nodes", "3", "--recordings", "keywords"
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d" / "tree.json").exists()
