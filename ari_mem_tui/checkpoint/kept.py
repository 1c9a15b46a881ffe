"""What is kept beside a run's index for the next open of the same files: the one shape.

The audit (`audit.AuditStore`, `audit.bin`) and the replay check (`search/check_store.py`,
`replay-check.bin`) are each one sealed file in the run's index folder (checkpoint/index.py),
keyed by every file the loader reads (`index.run_key`, taken before the load began and checked
unchanged when the result is kept, as `index.save` does) and by what else decides them (their
sources, a ranker). Sealed and read as every cache of the tool (checkpoint/cachefile.py):
another key, a damaged or foreign file is a miss (the caller computes again), and a damaged
one is said once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from ari_mem_tui.checkpoint import cachefile


class KeptBeside:
    """One sealed file (`FILE`, of kind `KIND`) beside the run index of the files at `path`."""

    FILE = ""
    KIND = ""
    WHAT = ""  # in words, for the one line a damaged file gets ("kept audit")

    def __init__(self, path: Path, before: list[Any]) -> None:
        self.path, self.before = Path(path), before

    @classmethod
    def before_load(cls, path: Path, only_if_kept: bool = False) -> Any:
        """Taken before the run's files are read (None when indexes are switched off, and
        with `only_if_kept` when nothing is kept: the files' key is not taken then)."""
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415 - only where a run is opened

        folder = index.index_dir(Path(path))
        if folder is None or (only_if_kept and not os.path.exists(folder / cls.FILE)):
            return None
        return cls(path, index.run_key(Path(path), None))

    def _file(self) -> Path | None:
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415

        folder = index.index_dir(self.path)
        return folder / self.FILE if folder is not None else None

    def key(self, run_id: str | None, *more: Any) -> list[Any]:
        """The files' key now, then `more` (what else decides the kept result)."""
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415

        return [index.run_key(self.path, run_id), *more]

    def _unchanged(self, key: list[Any]) -> bool:
        """Whether the files are as they were when the load began (as `index.save` checks)."""
        now, before = key[0], self.before
        return before[0] == now[0] and all(item in now[1] for item in before[1])

    def read(self, key: list[Any], prefix: bool = False) -> Any:
        """The body kept under `key`, else None (none kept, another key, or unusable).
        `prefix`: kept under a key that begins with `key` (whatever else decided it)."""
        where = self._file()
        if where is None or not self._unchanged(key):
            return None  # the files changed since the load began: what was loaded is older
        try:
            kept, body = msgspec.msgpack.decode(cachefile.read_sealed(where, self.KIND))
        except FileNotFoundError:
            return None
        except (cachefile.CacheMiss, msgspec.DecodeError, ValueError, TypeError) as exc:
            cachefile.rebuilt(self.WHAT, where, exc)
            return None
        wanted = msgspec.msgpack.decode(msgspec.msgpack.encode(key))
        if prefix and isinstance(kept, list):
            kept = kept[: len(wanted)]
        if kept != wanted:
            return None  # other files, code or inputs: computed again, and kept again
        return body

    def write(self, key: list[Any], body: Any) -> bool:
        """Keep `body` under `key` (False, nothing written: the files changed since the load
        began, or it cannot be written)."""
        where = self._file()
        if where is None or not self._unchanged(key):
            return False
        try:
            data = msgspec.msgpack.encode([key, body])
            cachefile.write_atomic(where, cachefile.seal(self.KIND, data))
        except (OSError, TypeError, OverflowError, ValueError, msgspec.EncodeError):
            return False  # (a lone surrogate in a text cannot be encoded: not kept)
        return True
