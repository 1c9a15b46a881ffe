"""What a command leaves until its answer is out: the run index of a first open, the audit kept
beside it. The answer is written and flushed, stdout is closed (a pipe's reader sees its end
at once, not when the index is written), then these run, in order.

A command hands its work over with `later(fn)`; `cli.main` runs it once the answer is out.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable

_LATER: list[Callable[[], object]] = []


def later(work: Callable[[], object] | None) -> None:
    """Run `work` once the command's answer is out (None: nothing to run)."""
    if work is not None:
        _LATER.append(work)


def close_stdout() -> None:
    """Flush stdout, and when it is a pipe or a socket of this process's own (not a terminal,
    a file, or a stream a caller swapped in: a test calling `main`), close it: its reader gets
    the end of the answer now. Raises BrokenPipeError when the reader has gone."""
    sys.stdout.flush()
    if sys.stdout is not sys.__stdout__:
        return
    try:
        fd = sys.stdout.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)  # (our end of the pipe closes; a late print goes nowhere)
        os.close(devnull)


def run_later() -> None:
    """Run what the command left, in order (each once)."""
    while _LATER:
        _LATER.pop(0)()


def forget() -> None:
    """Drop what is left (an interrupted or failed command)."""
    _LATER.clear()
