"""A long pass's progress as one line: "n of N texts (p%), rate, ETA", and the stderr line that
shows it in place.

Every display of a `search.progress.Progress` (the CLI's stderr, the TUI's status line, the
Health screen) draws it with `progress_line`, so they all read alike.
"""

from __future__ import annotations

import os
from typing import TextIO

from rich.cells import cell_len, set_cell_size

from ari_mem_tui.render.text import clean
from ari_mem_tui.search.progress import Progress

EMBEDDER_TIP = "; --embedder bm25 answers at once"
MINILM_WHAT = "embedding memory texts for MiniLM"
MINILM_LOADING = "loading MiniLM and its vector cache"


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def progress_line(
    progress: Progress, what: str = MINILM_WHAT, tip: str = "", waiting: str = MINILM_LOADING
) -> str:
    """`embedding memory texts for MiniLM: 1,200 of 5,000 texts (24%), 27 texts/s, ETA 2 min`;
    before any count, `waiting` and the time so far; once done, the total time."""
    done, total, unit = progress.done, progress.total, progress.unit
    if not total:
        return f"{waiting} … {progress.elapsed:.0f} s{tip}"
    head = f"{what}: {done:,} of {total:,} {unit} ({100 * min(done, total) // total}%)"
    if done >= total:
        return f"{head} in {duration(progress.elapsed)}"
    rate = progress.rate()
    if rate is None:
        return f"{head}, {progress.elapsed:.0f} s so far, ETA estimating …{tip}"
    eta = progress.eta()
    return f"{head}, {rate:,.0f} {unit}/s, ETA {duration(eta or 0)}{tip}"


def progress_brief(progress: Progress) -> str:
    """The status line's short form: `1,200 of 5,000 texts · ETA 2 min`."""
    if not progress.total:
        return f"loading … {progress.elapsed:.0f} s"
    head = f"{progress.done:,} of {progress.total:,} {progress.unit}"
    if progress.finished:
        return head
    eta = progress.eta()
    return f"{head} · ETA {'estimating …' if eta is None else duration(eta)}"


def progress_short(progress: Progress) -> str:
    """The narrowest form, every number whole: `1,200/5,000 · 2 min`."""
    if not progress.total:
        return f"{progress.elapsed:.0f} s"
    head = f"{progress.done:,}/{progress.total:,}"
    eta = None if progress.finished else progress.eta()
    return head if eta is None else f"{head} · {duration(eta)}"


class StatusLine:
    """One line on a stream, rewritten in place on a terminal (each write covers the whole of
    the line before it: no stray characters when a shorter line follows a longer one), or
    appended as lines elsewhere. `close()` ends it with a newline."""

    def __init__(self, stream: TextIO, tty: bool) -> None:
        self.stream, self.tty = stream, tty
        self._width = 0  # cells of the line on screen
        self._columns = _columns(stream) if tty else 0
        self._last = ""

    def show(self, line: str) -> None:
        line = clean(line, False)
        if line == self._last:
            return
        self._last = line
        if not self.tty:
            print(line, file=self.stream, flush=True)
            return
        if cell_len(line) >= self._columns:  # a wrapped line could not be rewritten in place
            line = set_cell_size(line, self._columns - 2) + "…"
        width = cell_len(line)
        pad = " " * max(0, self._width - width)
        print(f"\r{line}{pad}", end="", file=self.stream, flush=True)
        self._width = width

    def close(self) -> None:
        if self.tty and self._width:
            print(file=self.stream, flush=True)
        self._width = 0


def _columns(stream: TextIO) -> int:
    try:
        return max(20, os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        return 80
