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
from pathlib import Path
from typing import Any

import msgspec

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


class CheckStore:
    """Where the replay check of a run's files is kept (see the module doc)."""

    def __init__(self, path: Path, before: list[Any]) -> None:
        self.path, self.before = Path(path), before

    @classmethod
    def before_load(cls, path: Path) -> CheckStore | None:
        """Taken before the run's files are read (None when indexes are switched off)."""
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415 - only where a run is opened

        if index.index_dir(Path(path)) is None:
            return None
        return cls(path, index.run_key(Path(path), None))

    def _file(self) -> Path | None:
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415

        folder = index.index_dir(self.path)
        return folder / STORE_FILE if folder is not None else None

    def _key(self, ckpt: Checkpoint, ranker: str) -> list[Any]:
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415

        return [index.run_key(self.path, ckpt.run_id), source_key(), ranker]

    def _unchanged(self, key: list[Any]) -> bool:
        """Whether the files are as they were when the load began (as `index.save` checks)."""
        now, before = key[0], self.before
        return before[0] == now[0] and all(item in now[1] for item in before[1])

    def load(self, ckpt: Checkpoint, ranker: str) -> ReplayCheck | None:
        """The kept check of these files by the ranker `ranker`, else None."""
        from ari_mem_tui.checkpoint import cachefile  # noqa: PLC0415

        where = self._file()
        if where is None:
            return None
        now = self._key(ckpt, ranker)
        if not self._unchanged(now):
            return None  # the files changed since the load began: `ckpt` is of older ones
        try:
            key, body = msgspec.msgpack.decode(cachefile.read_sealed(where, STORE_KIND))
            if key != msgspec.msgpack.decode(msgspec.msgpack.encode(now)):
                return None  # other files, code or ranker: checked again, and kept again
            return ReplayCheck.model_validate(body)
        except FileNotFoundError:
            return None
        except (cachefile.CacheMiss, msgspec.DecodeError, ValueError, TypeError) as exc:
            cachefile.rebuilt("kept replay check", where, exc)
            return None

    def save(self, ckpt: Checkpoint, ranker: str, check: ReplayCheck) -> bool:
        """Keep `check` (False, nothing written: the files changed since the load began, the
        check was interrupted, or it cannot be written)."""
        from ari_mem_tui.checkpoint import cachefile  # noqa: PLC0415

        where = self._file()
        if where is None or not check.complete:
            return False
        key = self._key(ckpt, ranker)
        if not self._unchanged(key):
            return False
        try:
            body = msgspec.msgpack.encode([key, check.model_dump()])
            cachefile.write_atomic(where, cachefile.seal(STORE_KIND, body))
        except (OSError, TypeError, OverflowError, ValueError, msgspec.EncodeError):
            return False
        return True
