"""On-disk cache of text vectors, outside any checkpoint: embed each distinct text once, ever.

Layout: `<root>/vectors/<model>/seg-<sha256>.npz` (`<model>`: MiniLM's name, or an embedding
endpoint's model and dimension, `endpoint_folder`), each segment holding `keys` (sha1 hex of the
text) and `vecs` (float32 rows), stored uncompressed, and named by the checksum of its own bytes.
Segments are immutable and appear atomically (written to a temp file, then renamed), so any
number of processes can read while one writes, and a crash mid-write leaves at most a stray temp
file. A segment is used only when it is a regular file within `cache-mib`, its bytes match the
checksum in its name, and its arrays have the shape, type and values vectors have
(checkpoint/cachefile.py); any other is set aside and its vectors computed again, said once: a
bad cache costs time, never a crash. Many small segments are merged into a few when there are
too many.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import zipfile
from collections.abc import Collection
from pathlib import Path

import numpy as np
from platformdirs import user_cache_dir

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.checkpoint.limits import current

CACHE_ENV = "ARI_MEM_TUI_CACHE"
MERGE_ABOVE = 16  # segments; more than this are merged on load
MERGE_ROWS = 65_536  # rows of one merged segment (~110 MB at 384 dimensions): well in cache-mib
MERGE_BYTES = 256 * 2**20  # at most this much per merged segment: an endpoint's 4096-dim rows too
SEGMENT = re.compile(r"seg-([0-9a-f]{64})\.npz")
MEMBERS = {"keys.npy", "vecs.npy"}
PEEK_ABOVE = 8 * 2**20  # bytes: a bigger segment's keys are read before its vectors
KEY = re.compile(r"[0-9a-f]{40}")


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def endpoint_folder(model: str, dim: int) -> str:
    """The folder of an embedding endpoint's model: keyed by the model's name and dimension only
    (never the URL or the key), so the same model's vectors serve any endpoint that serves it.
    The name is made safe for a path; a hash of the exact name keeps two that clean alike apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)[:60].strip("._") or "model"
    digest = hashlib.sha1(model.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"endpoint-{safe}-{digest}-{int(dim)}"


def endpoint_dims(root: Path, model: str) -> list[int]:
    """The dimensions an endpoint's model has vectors cached for (one, unless the same name was
    served with several)."""
    prefix = endpoint_folder(model, 0)[:-1]
    try:
        names = [p.name for p in (root / "vectors").glob(prefix + "*") if p.is_dir()]
    except OSError:
        return []
    dims = [name[len(prefix) :] for name in names]
    return sorted(int(d) for d in dims if d.isdigit() and int(d) > 0)


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

    def __init__(self, root: Path, model: str, dim: int, checkpoint: Path | None = None) -> None:
        self.dir = root / "vectors" / model
        self.dim = dim
        self.notes: list[str] = []  # what went wrong with the cache, for the UI
        # a cache dir inside the checkpoint is neither read nor written (read-only principle)
        self.usable = self.writable = not cachefile.refuse_inside(root, checkpoint)
        if not self.usable:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.writable = False
            self.notes.append(f"vector cache not writable ({exc}); vectors kept in memory only")

    def segments(self) -> list[Path]:
        if not self.usable:
            return []
        try:
            return sorted(self.dir.glob("seg-*.npz"))
        except OSError:
            return []

    def load(self, wanted: Collection[str] | None = None) -> tuple[list[str], np.ndarray]:
        """Cached (keys, vectors): all of them, or those of the `wanted` keys only; unreadable
        segments are set aside and skipped. With `wanted`, a big segment's vectors are read
        (and its bytes checked) only when its keys name one of them (`_may_hold`): a small
        run's ranker does not read every vector ever cached, a big run's hundreds of MB."""
        segments = self.segments()
        merge = len(segments) > MERGE_ABOVE and self.writable  # (merging needs them all)
        want = set(wanted) if wanted is not None else None
        keys: list[str] = []
        blocks: list[np.ndarray] = []
        loaded: list[Path] = []
        for seg in segments:
            if want is not None and not merge and not self._may_hold(seg, want):
                continue
            got = self._read_segment(seg)
            if got is None:
                continue
            seg_keys, vecs = got
            keys.extend(seg_keys)
            blocks.append(vecs)
            loaded.append(seg)
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, self.dim), np.float32)
        if merge:
            self._merge(loaded, keys, matrix)
        if want is not None:
            rows = [i for i, key in enumerate(keys) if key in want]
            keys, matrix = [keys[i] for i in rows], matrix[rows]
        return keys, matrix

    def find(self, wanted: set[str]) -> dict[str, np.ndarray]:
        """The cached vectors of a few keys (a query's), reading the segments again rather
        than keeping every cached vector in memory for them."""
        found: dict[str, np.ndarray] = {}
        for seg in self.segments():
            if not self._may_hold(seg, wanted):
                continue
            got = self._read_segment(seg)
            if got is None:
                continue
            for key, vec in zip(*got, strict=True):
                if key in wanted and key not in found:
                    found[key] = vec.copy()
            if len(found) == len(wanted):
                break
        return found

    def _may_hold(self, seg: Path, wanted: set[str]) -> bool:
        """Whether a segment may hold one of the `wanted` keys: a small one is read whole
        anyway (its checksum needs every byte); a big one's `keys` member is peeked at first.
        Anything odd answers True: the full read then checks it, and says what is wrong."""
        try:
            size = seg.stat().st_size
            if size <= PEEK_ABOVE or size > current().cache_bytes or not seg.is_file():
                return True
            with zipfile.ZipFile(seg) as archive:
                info = archive.getinfo("keys.npy")
                if info.compress_type != zipfile.ZIP_STORED or info.file_size > size:
                    return True
                with archive.open(info) as member:
                    keys = np.lib.format.read_array(member, allow_pickle=False)
            return keys.dtype.kind != "U" or not wanted.isdisjoint(keys.tolist())
        except Exception:  # noqa: BLE001 - a peek only: the full read judges the segment
            return True

    def _read_segment(self, seg: Path) -> tuple[list[str], np.ndarray] | None:
        try:
            return self._verified(seg)
        except FileNotFoundError:
            return None  # merged away by another process meanwhile; its rows live on elsewhere
        except cachefile.CacheMiss as exc:  # a FIFO, too big, damaged, foreign: aside, rebuilt
            cachefile.rebuilt("vector cache segment", seg, exc)
            self._set_aside(seg)
            return None

    def _verified(self, seg: Path) -> tuple[list[str], np.ndarray]:
        """The segment's (keys, vectors), when its bytes match the checksum in its name and its
        arrays are what this cache writes; else CacheMiss."""
        named = SEGMENT.fullmatch(seg.name)
        if named is None:
            raise cachefile.CacheMiss("no checksum in its name: written by an older version")
        data = cachefile.read_file(seg)
        if cachefile.checksum(data) != named.group(1):
            raise cachefile.CacheMiss("damaged: its checksum does not match")
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = archive.infolist()
        except (zipfile.BadZipFile, ValueError, OSError) as exc:
            raise cachefile.CacheMiss(f"not a zip archive ({type(exc).__name__})") from None
        # stored, never deflated: what is read is no bigger than the file (no zip bomb)
        if {m.filename for m in members} != MEMBERS or any(
            m.compress_type != zipfile.ZIP_STORED for m in members
        ):
            raise cachefile.CacheMiss("not the two stored arrays of a segment")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                keys, vecs = arrays["keys"], arrays["vecs"]
        except Exception as exc:  # noqa: BLE001 - whatever numpy makes of bad bytes
            raise cachefile.CacheMiss(f"unreadable ({type(exc).__name__})") from None
        if keys.dtype.kind != "U" or vecs.dtype != np.float32 or keys.ndim != 1:
            raise cachefile.CacheMiss(f"arrays of type {keys.dtype} / {vecs.dtype}")
        if vecs.shape != (len(keys), self.dim):
            raise cachefile.CacheMiss(f"shape {vecs.shape} for {len(keys)} keys")
        seg_keys = keys.tolist()
        if not all(KEY.fullmatch(k) for k in seg_keys) or not np.isfinite(vecs).all():
            raise cachefile.CacheMiss("keys or values that no text gives")
        return seg_keys, vecs

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
            self._write(keys, vecs)
        except OSError as exc:
            self.writable = False
            self.notes.append(f"vector cache write failed ({exc}); vectors kept in memory only")

    def _write(self, keys: list[str], vecs: np.ndarray) -> Path:
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.array(keys, dtype="U40"), vecs=vecs.astype(np.float32))
        data = buffer.getvalue()
        target = self.dir / f"seg-{cachefile.checksum(data)}.npz"
        cachefile.write_atomic(target, data)
        return target

    def _merge(self, segments: list[Path], keys: list[str], matrix: np.ndarray) -> None:
        _, first = np.unique(np.array(keys), return_index=True)
        first.sort()
        written: set[Path] = set()
        per_segment = max(1, min(MERGE_ROWS, MERGE_BYTES // (4 * self.dim + 160)))
        try:
            for start in range(0, len(first), per_segment):
                rows = first[start : start + per_segment]
                written.add(self._write([keys[i] for i in rows], matrix[rows]))
        except OSError:
            return
        for seg in segments:
            if seg not in written:  # (a merged chunk may be byte for byte an old segment)
                seg.unlink(missing_ok=True)
