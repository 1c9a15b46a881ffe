"""`F`: follow a running checkpoint. A timer compares the checkpoint's files (name, mtime, size)
with what they were at the last load and posts `CheckpointChanged` when they differ."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.message_pump import MessagePump

from ari_mem_tui.tui.messages import CheckpointChanged

WATCHED = (
    "tree.json",
    "nodes_tree.json",
    "memory_backup.jsonl.gz",
    "memory_access*.jsonl",
    "idea.json",
    "experiment.md",
)


def signature(path: Path | None) -> tuple:
    """(name, mtime, size) of every watched file in the checkpoint dir `path`."""
    if path is None:
        return ()
    sig = []
    for pattern in WATCHED:
        for file in sorted(Path(path).glob(pattern)):
            try:
                st = file.stat()
            except OSError:
                continue
            sig.append((file.name, st.st_mtime_ns, st.st_size))
    return tuple(sig)


class Follower:
    """Owned by the app: `toggle` starts and stops it, `rebase` after every load."""

    def __init__(
        self, owner: MessagePump, interval: float, checkpoint_dir: Callable[[], Path | None]
    ) -> None:
        self.owner = owner
        self.checkpoint_dir = checkpoint_dir
        self.on = False
        self._sig: tuple = ()
        self._timer = owner.set_interval(interval, self._tick, pause=True)

    def rebase(self) -> None:
        """What is loaded now is the state to compare with."""
        self._sig = signature(self.checkpoint_dir())

    def toggle(self) -> bool:
        self.on = not self.on
        if self.on:
            self.rebase()
            self._timer.resume()
        else:
            self._timer.pause()
        return self.on

    def _tick(self) -> None:
        sig = signature(self.checkpoint_dir())
        if sig != self._sig:
            self._sig = sig
            self.owner.post_message(CheckpointChanged())
