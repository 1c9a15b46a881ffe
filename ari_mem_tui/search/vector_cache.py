"""On-disk cache of text vectors, outside any checkpoint: embed each distinct text once, ever.

Layout: `<root>/vectors/<model>/seg-*.npz`, each segment holding `keys` (sha1 hex of the text)
and `vecs` (float32 rows). Segments are immutable and appear atomically (written to a temp file,
then renamed), so any number of processes can read while one writes, and a crash mid-write
leaves at most a stray temp file. A segment that fails to load is set aside and its vectors are
simply computed again: a bad cache costs time, never a crash. Many small segments are merged
into one when there are too many.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import uuid
from pathlib import Path

import numpy as np
from platformdirs import user_cache_dir

CACHE_ENV = "ARI_MEM_TUI_CACHE"
MERGE_ABOVE = 16  # segments; more than this are merged on load


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def cache_root(cache_dir: Path | str | None = None) -> Path:
    """The parameter, else $ARI_MEM_TUI_CACHE, else the user's XDG cache dir."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return Path(user_cache_dir("ari-mem-tui"))


class VectorCache:
    """Vectors of one model, by text key. In-memory only when the directory is not writable."""

    def __init__(self, root: Path, model: str, dim: int) -> None:
        self.dir = root / "vectors" / model
        self.dim = dim
        self.notes: list[str] = []  # what went wrong with the cache, for the UI
        self.writable = True
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.writable = False
            self.notes.append(f"vector cache not writable ({exc}); vectors kept in memory only")

    def segments(self) -> list[Path]:
        try:
            return sorted(self.dir.glob("seg-*.npz"))
        except OSError:
            return []

    def load(self) -> tuple[list[str], np.ndarray]:
        """All cached (keys, vectors); unreadable segments are set aside and skipped."""
        keys: list[str] = []
        blocks: list[np.ndarray] = []
        loaded: list[Path] = []
        for seg in self.segments():
            got = self._read_segment(seg)
            if got is None:
                continue
            seg_keys, vecs = got
            keys.extend(seg_keys)
            blocks.append(vecs)
            loaded.append(seg)
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, self.dim), np.float32)
        if len(loaded) > MERGE_ABOVE and self.writable:
            self._merge(loaded, keys, matrix)
        return keys, matrix

    def find(self, wanted: set[str]) -> dict[str, np.ndarray]:
        """The cached vectors of a few keys (a query's), reading the segments again rather
        than keeping every cached vector in memory for them."""
        found: dict[str, np.ndarray] = {}
        for seg in self.segments():
            got = self._read_segment(seg)
            if got is None:
                continue
            for key, vec in zip(*got, strict=True):
                if key in wanted and key not in found:
                    found[key] = vec.copy()
            if len(found) == len(wanted):
                break
        return found

    def _read_segment(self, seg: Path) -> tuple[list[str], np.ndarray] | None:
        try:
            with np.load(seg, allow_pickle=False) as data:
                seg_keys = [str(k) for k in data["keys"]]
                vecs = np.asarray(data["vecs"], dtype=np.float32)
            if vecs.ndim != 2 or vecs.shape != (len(seg_keys), self.dim):
                raise ValueError(f"shape {vecs.shape} for {len(seg_keys)} keys")
            if not np.isfinite(vecs).all():
                raise ValueError("non-finite values")
            return seg_keys, vecs
        except FileNotFoundError:
            return None  # merged away by another process meanwhile; its rows live on elsewhere
        except Exception as exc:  # noqa: BLE001 - corrupt, truncated, foreign file: set aside and rebuild
            self.notes.append(f"ignored corrupt cache segment {seg.name} ({type(exc).__name__})")
            self._set_aside(seg)
            return None

    def _set_aside(self, seg: Path) -> None:
        try:
            seg.rename(seg.with_name(seg.name + ".corrupt"))
        except OSError:
            pass

    def add(self, keys: list[str], vecs: np.ndarray) -> None:
        """Persist new vectors as one new segment (atomic); silently in-memory if not writable."""
        if not keys or not self.writable:
            return
        try:
            self._write(self.dir / f"seg-{uuid.uuid4().hex}.npz", keys, vecs)
        except OSError as exc:
            self.writable = False
            self.notes.append(f"vector cache write failed ({exc}); vectors kept in memory only")

    def _write(self, target: Path, keys: list[str], vecs: np.ndarray) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=self.dir)
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, keys=np.array(keys, dtype="U40"), vecs=vecs.astype(np.float32))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _merge(self, segments: list[Path], keys: list[str], matrix: np.ndarray) -> None:
        _, first = np.unique(np.array(keys), return_index=True)
        first.sort()
        try:
            self._write(
                self.dir / f"seg-{uuid.uuid4().hex}.npz",
                [keys[i] for i in first],
                matrix[first],
            )
        except OSError:
            return
        for seg in segments:
            seg.unlink(missing_ok=True)
