"""A long pass's progress as one line: "n of N texts (p%), rate, ETA", and the stderr line that
shows it in place (Rich's progress display, on a terminal).

Every display of a `search.progress.Progress` (the CLI's stderr, the TUI's status line, the
Health screen) draws it with `progress_line`, so they all read alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self, TextIO

from ari_mem_tui.render.text import clean
from ari_mem_tui.search.progress import Progress

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress

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
    """One line on a stream: on a terminal, Rich's progress display, rewritten in place (each
    rewrite erases the line before it, a line wider than the terminal is cut with "…"); on
    anything else (a file, a pipe, a dumb terminal), appended as lines. `close()` leaves the
    last line on screen; used as a context manager it closes on any exit, so an interrupt
    never leaves the terminal's cursor hidden.

    The words are `progress_line`'s, drawn from the model the TUI shares: Rich's own columns
    would keep a second rate and ETA of their own ("0:00:07"), so one text column shows ours.
    """

    def __init__(self, stream: TextIO, tty: bool) -> None:
        self.stream, self.tty = stream, tty
        self._shown: RichProgress | None = None
        self._last = ""

    def show(self, line: str) -> None:
        line = clean(line, False)
        if line == self._last:
            return
        self._last = line
        if self.tty and self._shown is None:
            self._shown = _in_place(self.stream, line)
            self.tty = self._shown is not None
        elif self._shown is not None:
            self._shown.update(self._shown.task_ids[0], description=line, refresh=True)
        if self._shown is None:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self._shown is not None:
            self._shown.stop()
        self._shown = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _in_place(stream: TextIO, line: str) -> RichProgress | None:
    """Rich's progress display of one line of text on `stream`, started on `line`; None on a
    terminal that cannot rewrite a line (TERM=dumb). Rich's progress is imported here, once a
    pass shows progress on a terminal: the TUI's status bar imports this module for its words
    alone."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import Progress, TextColumn  # noqa: PLC0415
    from rich.table import Column  # noqa: PLC0415

    console = Console(file=stream, force_terminal=True, highlight=False)
    if console.is_dumb_terminal:
        return None
    text = TextColumn("{task.description}", markup=False, table_column=Column(no_wrap=True))
    shown = Progress(
        text,
        console=console,
        auto_refresh=False,  # drawn when a line changes, no thread of its own
        redirect_stdout=False,
        redirect_stderr=False,
    )
    shown.add_task(line, total=None)
    shown.start()
    return shown
