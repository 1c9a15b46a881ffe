"""On-disk cache of text vectors, outside any checkpoint: embed each distinct text once, ever.

Layout: `<root>/vectors/<model>/seg-<sha256>.vec` (`<model>`: MiniLM's name, or an embedding
endpoint's identity, model and dimension: `endpoint_folder`), each segment one cache file of the
tool's one format (checkpoint/cachefile.py: a sealed msgpack body), named by the checksum its
header carries and holding the sha1 of each text (`keys`, 20 bytes each), the dimension and the
float32 rows. Segments are immutable and appear atomically (written to a temp file, then
renamed), so any number of processes can read while one writes, and a crash mid-write leaves at
most a stray temp file. A segment is used only when it is a regular file of this user's within
`cache-mib`, its bytes match the checksum in its name and header, and it holds as many finite
rows of this dimension as keys; any other is set aside and its vectors computed again, said
once per reason (not once per segment): a bad cache costs time, never a crash. Many small
segments are merged into a few when there are too many. Nothing here must be written: a
read-only or full cache keeps the vectors in memory, said once with what that costs.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Collection
from pathlib import Path
from urllib.parse import urlsplit

import msgspec
import numpy as np
from platformdirs import user_cache_dir

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.checkpoint.limits import current
from ari_mem_tui.model.words import plural

CACHE_ENV = "ARI_MEM_TUI_CACHE"
KIND = "vectors/1"  # the header's kind: a segment of this format
MERGE_ABOVE = 16  # segments; more than this are merged on load
MERGE_ROWS = 65_536  # rows of one merged segment (~110 MB at 384 dimensions): well in cache-mib
MERGE_BYTES = 256 * 2**20  # at most this much per merged segment: an endpoint's 4096-dim rows too
SEGMENT = re.compile(r"seg-([0-9a-f]{64})\.vec")
PEEK_ABOVE = 8 * 2**20  # bytes: a bigger segment's keys are read before its vectors
DIGEST = 20  # bytes of a key (sha1)


class Segment(msgspec.Struct, array_like=True):
    """One segment's body. `keys` comes first: `cachefile.peek_first` reads it alone."""

    keys: memoryview  # the sha1 digest of each row's text
    dim: int
    vecs: memoryview  # rows × dim little-endian float32


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def endpoint_identity(url: str) -> str:
    """What names an endpoint in the cache key: its URL without credentials, query or fragment
    (scheme and host lower-cased, the default port dropped, no trailing slash). The query is
    left out, as a key may travel in it (`?key=…`): its hash is no place for one."""
    try:
        parts = urlsplit(str(url).strip())
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return str(url).strip()
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host if port in (None, default) else f"{host}:{port}"
    if ":" in host:  # an IPv6 address keeps its brackets
        netloc = f"[{host}]" + ("" if port in (None, default) else f":{port}")
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def endpoint_folder(url: str, model: str, dim: int) -> str:
    """The folder of one endpoint's model at one dimension: keyed by everything that decides a
    vector but the text (the endpoint's identity, the model's exact name, the dimension), so
    another endpoint serving the same model name never shares them (it may serve other
    vectors: a poisoned cache). The name is made safe for a path; a hash of the identity and
    the exact name keeps two that clean alike apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)[:60].strip("._") or "model"
    who = f"{endpoint_identity(url)}\n{model}".encode("utf-8", "surrogatepass")
    return f"endpoint-{safe}-{hashlib.sha1(who).hexdigest()[:12]}-{int(dim)}"


def endpoint_dims(root: Path, url: str, model: str) -> list[int]:
    """The dimensions an endpoint's model has vectors cached for (one, unless the same name was
    served with several)."""
    prefix = endpoint_folder(url, model, 0)[:-1]
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
    """Vectors of one model, by text key. In-memory only when the directory is not writable.

    `cost`: what a vector not cached costs the next run, in the words of the `cannot_cache`
    note (an endpoint's texts are sent again, MiniLM's embedded again)."""

    def __init__(
        self,
        root: Path,
        model: str,
        dim: int,
        checkpoint: Path | None = None,
        cost: str = "the texts not in it are embedded again on every run",
    ) -> None:
        self.dir = root / "vectors" / model
        self.dim = dim
        self.cost = cost
        self.notes: list[str] = []  # what went wrong with the cache, for the UI
        self._why: BaseException | None = None  # why nothing can be written, said at a write
        # a cache dir inside the checkpoint is neither read nor written (read-only principle)
        self.usable = self.writable = not cachefile.refuse_inside(root, checkpoint)
        if not self.usable:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.writable, self._why = False, exc
            return
        # (a read-only mount, another user's folder: no merging, nothing set aside; a write is
        # still tried once, for the system's own reason)
        self.writable = cachefile.writable(self.dir)

    def _cannot(self, why: BaseException) -> None:
        cachefile.cannot_cache("vectors", self.dir, why, f"kept in memory only; {self.cost}")

    def segments(self) -> list[Path]:
        if not self.usable:
            return []
        try:
            return sorted(p for p in self.dir.glob("seg-*") if not p.name.endswith(".corrupt"))
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
        misses: dict[str, list[Path]] = defaultdict(list)
        for seg in segments:
            if want is not None and not merge and not self._may_hold(seg, want):
                continue
            got = self._read_segment(seg, misses)
            if got is None:
                continue
            seg_keys, vecs = got
            keys.extend(seg_keys)
            blocks.append(vecs)
            loaded.append(seg)
        self._say(misses)
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
        misses: dict[str, list[Path]] = defaultdict(list)
        for seg in self.segments():
            if not self._may_hold(seg, wanted):
                continue
            got = self._read_segment(seg, misses)
            if got is None:
                continue
            for key, vec in zip(*got, strict=True):
                if key in wanted and key not in found:
                    found[key] = vec.copy()
            if len(found) == len(wanted):
                break
        self._say(misses)
        return found

    def _may_hold(self, seg: Path, wanted: set[str]) -> bool:
        """Whether a segment may hold one of the `wanted` keys: a small one is read whole
        anyway (its checksum needs every byte); a big one's keys are peeked at first.
        Anything odd answers True: the full read then checks it, and says what is wrong."""
        try:
            size = seg.stat().st_size
        except OSError:
            return True
        if size <= PEEK_ABOVE or size > current().cache_bytes:
            return True
        keys = cachefile.peek_first(seg, KIND)
        if keys is None or len(keys) % DIGEST:
            return True
        return not wanted.isdisjoint(_hex_keys(keys))

    def _read_segment(
        self, seg: Path, misses: dict[str, list[Path]]
    ) -> tuple[list[str], np.ndarray] | None:
        try:
            return self._verified(seg)
        except FileNotFoundError:
            return None  # merged away by another process meanwhile; its rows live on elsewhere
        except cachefile.CacheMiss as exc:  # a FIFO, too big, damaged, foreign: aside, rebuilt
            misses[str(exc)].append(seg)
            if self.writable:
                self._set_aside(seg)
            return None

    def _say(self, misses: dict[str, list[Path]]) -> None:
        """One note per reason, however many segments share it (another user's cache: one
        line, not one per segment), "rebuilt" only where it can be."""
        for why, segs in misses.items():
            if len(segs) == 1:
                cachefile.rebuilt("vector cache segment", segs[0], why)
                continue
            what = f"{plural(len(segs), 'vector cache segment')} in {self.dir}"
            tail = ": rebuilt" if self.writable else ""
            cachefile.tell(f"{what} not used ({why}; the first: {segs[0].name}){tail}")

    def _verified(self, seg: Path) -> tuple[list[str], np.ndarray]:
        """The segment's (keys, vectors), when its bytes match the checksum in its name and its
        header, it is this user's, and it holds rows of this dimension; else CacheMiss."""
        named = SEGMENT.fullmatch(seg.name)
        if named is None:
            raise cachefile.CacheMiss("not named by its checksum: written by an older version")
        data = cachefile.read_file(seg, own=True)
        body = cachefile.unpack(data, KIND, Segment)
        if not data.startswith(f"{cachefile.SEAL} {KIND} sha256={named.group(1)}\n".encode()):
            raise cachefile.CacheMiss("its name is not its checksum: copied from elsewhere?")
        rows = len(body.keys) // DIGEST
        if len(body.keys) % DIGEST:
            raise cachefile.CacheMiss(f"{len(body.keys):,} bytes of keys: not whole keys")
        if body.dim != self.dim:
            raise cachefile.CacheMiss(f"{body.dim}-dimensional rows, not {self.dim}")
        if len(body.vecs) != rows * self.dim * 4:
            raise cachefile.CacheMiss(f"{len(body.vecs):,} bytes of vectors for {rows} keys")
        vecs = cachefile.array(body.vecs, "float32").reshape(rows, self.dim)
        if not np.isfinite(vecs).all():
            raise cachefile.CacheMiss("values that no text gives (NaN or infinite)")
        return _hex_keys(body.keys), vecs

    def _set_aside(self, seg: Path) -> None:
        try:
            seg.rename(seg.with_name(seg.name + ".corrupt"))
        except OSError:
            pass

    def add(self, keys: list[str], vecs: np.ndarray) -> None:
        """Persist new vectors as one new segment (atomic); in memory only when it cannot be
        written (said once, with what it costs)."""
        if not keys or not self.usable:
            return
        if self._why is not None:  # (failed before: not tried again)
            self._cannot(self._why)
            return
        try:
            self._write(keys, vecs)
        except OSError as exc:
            self.writable, self._why = False, exc
            self._cannot(exc)

    def _write(self, keys: list[str], vecs: np.ndarray) -> Path:
        rows = np.ascontiguousarray(vecs, dtype="<f4")
        digests = b"".join(bytes.fromhex(key) for key in keys)
        data = cachefile.pack(KIND, Segment(memoryview(digests), self.dim, memoryview(rows)))
        checksum = data[data.index(b"sha256=") + 7 : data.index(b"\n")].decode()
        target = self.dir / f"seg-{checksum}.vec"
        cachefile.write_atomic(target, data)
        return target

    def _merge(self, segments: list[Path], keys: list[str], matrix: np.ndarray) -> None:
        _, first = np.unique(np.array(keys), return_index=True)
        first.sort()
        written: set[Path] = set()
        per_segment = max(1, min(MERGE_ROWS, MERGE_BYTES // (4 * self.dim + DIGEST)))
        try:
            for start in range(0, len(first), per_segment):
                rows = first[start : start + per_segment]
                written.add(self._write([keys[i] for i in rows], matrix[rows]))
        except OSError:
            return
        for seg in segments:
            if seg not in written:  # (a merged chunk may be byte for byte an old segment)
                cachefile.remove(seg)


def _hex_keys(digests: bytes | memoryview) -> list[str]:
    raw = bytes(digests)
    return [raw[i : i + DIGEST].hex() for i in range(0, len(raw), DIGEST)]
