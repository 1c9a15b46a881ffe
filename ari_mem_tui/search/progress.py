"""How far a long pass has got: n of N, its rate and an estimate of what is left.

One shape for every long pass the tool runs (MiniLM's vectors, a remote embedder's, the memory
health of a run), so that every place that shows one (TUI status line, Health, CLI stderr) says
the same "n of N texts, ETA": `render.progress.progress_line` draws it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# the rate is measured from the first sample with work done (model loading and planning would
# otherwise count as slow work), over at least this long
SETTLE_S = 0.5


@dataclass
class Progress:
    """`done` of `total` units (texts, nodes); updated by the worker, read by any thread."""

    unit: str = "texts"
    done: int = 0
    total: int = 0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    started: float = -1.0  # the clock's time at creation (set in __post_init__)
    _first: tuple[float, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    def update(self, done: int, total: int | None = None) -> None:
        now = self.clock()
        with self._lock:
            if total is not None:
                self.total = total
            self.done = done
            if self._first is None and done > 0:
                self._first = (now, done)

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    def rate(self) -> float | None:
        """Units per second since the first settled sample; None until it can be told."""
        with self._lock:
            first, done = self._first, self.done
        if first is None:
            return None
        seconds = self.clock() - first[0]
        if seconds < SETTLE_S or done <= first[1]:
            return None
        return (done - first[1]) / seconds

    def eta(self, until: int | None = None) -> float | None:
        """Seconds until `until` units are done (default: all of them); None while unknown,
        0 when they are."""
        target = self.total if until is None else until
        left = target - self.done
        if left <= 0:
            return 0.0
        rate = self.rate()
        return left / rate if rate else None
