"""The run's replay check (search/check.py), kept beside its run index for the next open.

Checking a run replays every recorded search: one ranking each, seconds on a big run, and
with the run's embedding model a build of its vectors. `summary` must answer in a fraction of
a second on a reopen, and the TUI must not redo it: the result is kept as `audit.AuditStore`
keeps the audit, in a sealed file (`replay-check.bin`) beside `index.bin`, keyed by

- the files' key (`index.run_key`: every file a load reads, taken before the load began and
  checked unchanged when the result is kept),
- the sources that decide a replay (search/, and the footer encoding in checkpoint/),
- the ranker's identity (`ranker: …` below, from the caller: what ranks, where, with which
  given hash), and for a Letta server's memory a digest of the passages read.

Sealed and read as every cache of the tool (checkpoint/cachefile.py): another key, a damaged
or foreign file is a miss (the run is checked again), and a damaged one is said once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import msgspec

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.checkpoint.kept import KeptBeside
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.search.check import ReplayCheck

STORE_FILE = "replay-check.bin"  # beside the run index's index.bin (checkpoint/index.py)
STORE_KIND = "replay-check-1"  # the sealed file's kind: a new layout takes a new number
_SOURCES = Path(__file__).resolve().parent
_source_key: str | None = None


def source_key() -> str:
    """The sources whose rules decide what a replay gives: search/ and the passage footers."""
    global _source_key
    if _source_key is None:
        digest = hashlib.sha1(STORE_KIND.encode())
        files = sorted(_SOURCES.glob("*.py"))
        files += [_SOURCES.parent / "checkpoint" / name for name in ("passages.py", "origin.py")]
        for source in files:
            digest.update(source.name.encode())
            digest.update(source.read_bytes())
        _source_key = digest.hexdigest()
    return _source_key


def memory_digest(ckpt: Checkpoint) -> str:
    """A digest of the memory as read from a Letta server (passage ids, stamps, texts): the
    server's memory is not the files', and may change between two opens."""
    entries = ckpt.entries
    digest = hashlib.sha1(str(len(entries)).encode())
    for entry in entries:
        digest.update(f"{entry.letta_id}\x00{entry.ts!r}\x00".encode("utf-8", "surrogatepass"))
        digest.update(entry.text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class CheckStore(KeptBeside):
    """Where the replay check of a run's files is kept (see the module doc)."""

    FILE, KIND, WHAT = STORE_FILE, STORE_KIND, "kept replay check"

    def load(self, ckpt: Checkpoint, ranker: str) -> ReplayCheck | None:
        """The kept check of these files by the ranker `ranker`, else None."""
        body = self.read(self.key(ckpt.run_id, source_key(), ranker))
        if body is None:
            return None
        try:
            return ReplayCheck.from_data(body)
        except (msgspec.ValidationError, ValueError, TypeError) as exc:
            where = self._file()
            cachefile.rebuilt(self.WHAT, where or self.path, exc)
            return None

    def latest(self, ckpt: Checkpoint) -> ReplayCheck | None:
        """The check kept for these files by this code, whichever ranker made it (the run's
        summary shows the last one kept: run_summary.py), else None; nothing is hashed when
        none is kept."""
        where = self._file()
        if where is None or not os.path.exists(where):  # (False, not raised, when unreadable)
            return None
        body = self.read(self.key(ckpt.run_id, source_key()), prefix=True)
        try:
            return ReplayCheck.from_data(body) if body is not None else None
        except (msgspec.ValidationError, ValueError, TypeError) as exc:
            cachefile.rebuilt(self.WHAT, where, exc)
            return None

    def save(self, ckpt: Checkpoint, ranker: str, check: ReplayCheck) -> bool:
        """Keep `check` (False, nothing written: interrupted, or see `KeptBeside.write`)."""
        if not check.complete:
            return False
        return self.write(self.key(ckpt.run_id, source_key(), ranker), check.as_data())
