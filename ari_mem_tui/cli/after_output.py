"""What a command leaves until its answer is out: the run index of a first open, the audit kept
beside it. The answer is written and flushed, stdout is closed (a pipe's reader sees its end
at once, not when the index is written), then these run, in order.

A command hands its work over with `later(fn)`; `cli.main` runs it once the answer is out, in
a process of its own (`detach`) where it can: the user's prompt comes back with the answer, as
git's automatic gc does, and the next open of the run waits for that writer rather than read
the files again (checkpoint/index.py `sweep`). What it has to say (a cache it cannot write)
still reaches the command's stderr, which it keeps: a reader of stderr sees its end only when
the writer is done.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import traceback
from collections.abc import Callable

_LATER: list[tuple[Callable[[], object], bool]] = []


def later(work: Callable[[], object] | None, elsewhere: bool = True) -> None:
    """Run `work` once the command's answer is out (None: nothing to run); `elsewhere=False`
    keeps it (and all that is left) in this process."""
    if work is not None:
        _LATER.append((work, elsewhere))


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


DETACH_ENV = "ARI_MEM_TUI_DETACH"  # "0": the work is done before the command ends


def detach(work: Callable[[], int]) -> bool:
    """Fork a child of its own session that runs `work` (what is left), and return True in the
    parent (which then ends); False, and nothing forked, when there is nothing left or where a
    fork is not safe or not wanted: no `fork`, a caller that swapped our streams (a test calling
    `main`), a thread of ours alive (its locks would be held in the child forever), or
    ARI_MEM_TUI_DETACH=0. The child never returns: it ends with `os._exit` once `work` is done
    (no exit handler of the parent runs twice)."""
    if not _LATER or not all(elsewhere for _, elsewhere in _LATER) or not _may_fork():
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork():
        _LATER.clear()  # (the child has them now)
        return True
    code = 1
    try:
        os.setsid()  # (no terminal signal of the next command reaches it: Ctrl+C, a hang-up)
        code = work()
    except BaseException:  # noqa: BLE001 - (--debug lets a bug through: its traceback shown)
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _may_fork() -> bool:
    if os.environ.get(DETACH_ENV, "1") == "0" or not hasattr(os, "fork"):
        return False
    if sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return False
    return threading.active_count() == 1


def run_later() -> None:
    """Run what the command left, in order (each once)."""
    while _LATER:
        _LATER.pop(0)[0]()


def forget() -> None:
    """Drop what is left (an interrupted or failed command)."""
    _LATER.clear()
