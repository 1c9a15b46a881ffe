"""The tool's own files (caches and settings), read as warily as a checkpoint's, in one format.

A cache dir is ours, but anything can end up in it: a FIFO or a symlink to /dev/zero, a file cut
short by a full disk, a flipped bit, another run's body under this run's name, another user's
file. So every file of ours is opened only when it is a regular file (never blocking), read
under a size limit (checkpoint/limits.py: `cache-mib`, `config-kib`), decoded with a depth
limit, and a cached body carries a checksum that is checked against its key before the body is
used; a cache file is used only when this user wrote it and nobody else may write it (as the run
index). Whatever fails is a cache miss: the caller rebuilds, and the user is told once (`tell`,
collected by the CLI and the TUI through `take_notes`), never an error.

The one format of a cache file (`pack` / `read_packed`): a header line `ari-mem-tui KIND
sha256=HEX`, then a msgpack body of that checksum, decoded into the caller's typed struct (an
array's bytes are a `memoryview` into the body read), whose arrays `array` hands out: numpy's
own dtype in this machine's byte order, aligned (copied where msgpack left them at an odd
offset), read-only. The vector segments, the BM25 indexes, the run counts and the kept audit
are such files; the run index (checkpoint/index.py) keeps its own sectioned layout, checked by
CRC, because it is mapped rather than read.

Every write and touch of a cache is optional: one that fails (a read-only or full file system,
another user's folder) leaves the answer as it was, and `cannot_cache` says once per command
what could not be cached and what that costs.

This module is the one reader of such files; the run index (checkpoint/index.py), the vector and
BM25 caches (search/), the run counts (workspace.py), the settings (tui/config.py) and the
demo's marker use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from ari_mem_tui.checkpoint.jsonfile import MAX_DEPTH, depth_exceeds, read_regular
from ari_mem_tui.checkpoint.limits import current, take_ignored

if TYPE_CHECKING:
    import numpy as np

SEAL = "ari-mem-tui"  # first word of a sealed file's header line
FOREIGN = "not written by this user alone"  # (the run index's words for the same refusal)
T = TypeVar("T")


class CacheMiss(Exception):
    """A file of ours that cannot be used; `str(exc)` says why, in a few words."""


class Foreign(CacheMiss):
    """A cache file another user wrote, or may write: never used (it could hold anything)."""


# ---------------------------------------------------------------- reading
def read_file(
    path: Path | str, limit: int | None = None, limit_name: str = "cache-mib", own: bool = False
) -> bytes:
    """The bytes of a file of ours: a regular file within `limit` (default: `cache-mib`), and
    with `own` one this user wrote that nobody else may write (Foreign otherwise).
    FileNotFoundError when it is not there (a plain miss); CacheMiss for anything else."""
    limit = current().cache_bytes if limit is None else limit
    try:
        return read_regular(path, limit, limit_name, _owned if own else None)
    except FileNotFoundError:
        raise
    except (OSError, RuntimeError) as exc:  # EINVAL: a FIFO or device; EFBIG; EACCES; ELOOP
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CacheMiss(why) from None


def _owned(info: os.stat_result) -> None:
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise Foreign(FOREIGN)


def read_config(path: Path | str) -> bytes:
    """A settings file of ours (config.json, recent.json, a demo's marker), within `config-kib`."""
    return read_file(path, current().config_bytes, "config-kib")


def decode_json(data: bytes) -> Any:
    """JSON of ours, decoded in C; CacheMiss when it is not JSON or nests past MAX_DEPTH (a
    value that deep would break whatever reads it next)."""
    try:
        value = msgspec.json.decode(data)
    except RecursionError:
        raise CacheMiss(f"nested deeper than {MAX_DEPTH} levels") from None
    except msgspec.DecodeError:
        value = _lenient(data)  # e.g. a lone surrogate's escape: JSON, but not to msgspec
    if depth_exceeds(value):
        raise CacheMiss(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _lenient(data: bytes) -> Any:
    """What json makes of what msgspec refused (the data is within its size limit already)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise CacheMiss(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, an integer of 4,301 digits
        raise CacheMiss(f"not readable JSON ({str(exc)[:80]})") from None


# ---------------------------------------------------------------- checksums
def checksum(data: bytes | memoryview) -> str:
    """The checksum a cached body is checked against (sha256: ~0.6 s a GB here)."""
    return hashlib.sha256(data).hexdigest()


def seal(kind: str, body: bytes) -> bytes:
    """`body` with a header line naming its kind and checksum: `ari-mem-tui KIND sha256=HEX`."""
    return f"{SEAL} {kind} sha256={checksum(body)}\n".encode() + body


def unseal(data: bytes, kind: str) -> memoryview:
    """The body of a sealed file of `kind`, a view of `data` (not a copy: a vector segment's is
    ~100 MB); CacheMiss when it is of another kind or version, or its body does not match its
    checksum (damaged, cut short, or another file's)."""
    end = data.find(b"\n")
    words = data[:end].decode("ascii", "replace").split(" ") if end >= 0 else []
    if len(words) != 3 or words[0] != SEAL or not words[2].startswith("sha256="):
        raise CacheMiss("not a sealed file of this tool")
    body = memoryview(data)[end + 1 :]
    if words[1] != kind:
        raise CacheMiss(f"holds {words[1][:40]!r}, not {kind!r}")
    if checksum(body) != words[2].removeprefix("sha256="):
        raise CacheMiss("damaged: its checksum does not match")
    return body


def read_sealed(path: Path | str, kind: str, limit: int | None = None) -> memoryview:
    """The checked body of a sealed file of ours (this user's alone: `read_file`'s `own`)."""
    return unseal(read_file(path, limit, own=True), kind)


# ---------------------------------------------------------------- the one format
def pack(kind: str, value: Any) -> bytes:
    """`value` (a msgspec struct; bytes for an array) as a cache file of `kind`: sealed
    msgpack."""
    return seal(kind, msgspec.msgpack.encode(value))


def unpack(data: bytes, kind: str, into: type[T]) -> T:
    """The value of a packed file of `kind`, checked: its seal, then its type (`into`, whose
    `memoryview` fields are views of `data`), then its depth; else CacheMiss."""
    body = unseal(data, kind)
    try:
        value = msgspec.msgpack.decode(body, type=into)
    except RecursionError:
        raise CacheMiss(f"nested deeper than {MAX_DEPTH} levels") from None
    except msgspec.ValidationError as exc:  # (a DecodeError too: before it)
        raise CacheMiss(f"not what this tool writes ({str(exc)[:80]})") from None
    except msgspec.DecodeError:
        raise CacheMiss("not readable msgpack") from None
    if depth_exceeds(value):  # (an untyped part: a struct's fields are not walked)
        raise CacheMiss(f"nested deeper than {MAX_DEPTH} levels")
    return value


def read_packed(path: Path | str, kind: str, into: type[T], limit: int | None = None) -> T:
    """A packed file of ours, read as `read_sealed` reads and checked as `unpack` checks."""
    return unpack(read_file(path, limit, own=True), kind, into)


def array(data: memoryview, kind: str) -> np.ndarray:
    """A packed array's bytes (little-endian `kind`, e.g. "float32") as a read-only numpy array
    of numpy's own dtype for `kind`: this machine's byte order, aligned. The bytes lie wherever
    msgpack put them (an int64 at an odd offset), and numpy's fast paths take neither an
    unaligned array nor a dtype spelled little-endian rather than native (equal, but another
    descriptor): with the latter, BM25's `np.add.at` took 6.0 s instead of 0.4 s in a 2k-node
    `health`. So the bytes are viewed when they are aligned and native, copied otherwise (a
    copy costs a fraction of the checksum already paid). CacheMiss when not whole items."""
    import numpy as np  # noqa: PLC0415 - summary and audit read cache files and need no numpy

    native = np.dtype(kind)  # (the one descriptor numpy's loops are specialised for)
    if data.nbytes % native.itemsize:
        raise CacheMiss(f"an array of {kind} cut short")
    stored = np.frombuffer(data, dtype=native.newbyteorder("<"))
    out = stored.view(native) if stored.dtype.isnative else stored.astype(native)
    if not out.flags.aligned:
        out = out.copy()
    out.flags.writeable = False  # a cached array is never written, copied or not
    return out


_BIN_SIZE = {0xC4: 1, 0xC5: 2, 0xC6: 4}  # msgpack's bin 8/16/32: bytes of the length


def peek_first(path: Path | str, kind: str) -> bytes | None:
    """The first field (bytes) of a packed array-like struct of `kind`, read without the rest
    and UNCHECKED: a peek that decides whether the whole is worth reading, never what is used
    (the full read checks everything). None when the file does not start as such a file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.pread(fd, 256, 0)
        line, newline, rest = head.partition(b"\n")
        if not newline or line.split(b" ")[:2] != [SEAL.encode(), kind.encode()]:
            return None
        if len(rest) < 2 or not 0x91 <= rest[0] <= 0x9F or rest[1] not in _BIN_SIZE:
            return None
        width = _BIN_SIZE[rest[1]]
        size = int.from_bytes(rest[2 : 2 + width], "big")
        if len(rest) < 2 + width or size > current().cache_bytes:
            return None
        data = os.pread(fd, size, len(line) + 1 + 2 + width)
        return data if len(data) == size else None
    except OSError:
        return None
    finally:
        os.close(fd)


# ---------------------------------------------------------------- writing
def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file and a rename: readers see the old file or the
    new one, never half of one. OSError when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_optional(path: Path, data: bytes, what: str, cost: str, verb: str = "cached") -> bool:
    """`write_atomic`, when it can be: a failure (read-only, full, not ours) is `cannot_cache`'s
    one note, and False; the caller's answer is the same either way."""
    try:
        write_atomic(path, data)
    except OSError as exc:
        cannot_cache(what, path.parent, exc, cost, verb)
        return False
    return True


def touch(path: Path) -> None:
    """Mark a cache file as recently used (pruning keeps it), when it can be: on a read-only
    cache, or another user's, nothing is lost by not marking it, and nothing is said."""
    try:
        os.utime(path)
    except OSError:
        pass


def writable(folder: Path | str) -> bool:
    """Whether this user may write in `folder`, or where it is not yet, in the nearest folder
    above it that exists (read-only mounts included), on a disk with room."""
    folder = os.path.abspath(folder)
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        return os.access(folder, os.W_OK | os.X_OK) and os.statvfs(folder).f_bavail > 0
    except OSError:
        return False


def remove(path: Path) -> None:
    """Remove a cache file of ours, when it can be (a read-only cache keeps it)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def inside(path: Path | str, root: Path | str) -> bool:
    """Whether `path` is `root` or lies under it, symlinks followed (a cache dir pointed into a
    checkpoint must not be written: checkpoints are read-only to us)."""
    try:
        real, top = os.path.realpath(path), os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def refuse_inside(cache: Path, checkpoint: Path | str | None) -> bool:
    """True (and one note) when the cache dir `cache` lies inside `checkpoint`."""
    if checkpoint is None or not inside(cache, checkpoint):
        return False
    tell(
        f"cache dir {cache} is inside the checkpoint {checkpoint}: nothing is cached there"
        " (checkpoints are read-only to this tool); set ARI_MEM_TUI_CACHE elsewhere"
    )
    return True


# ---------------------------------------------------------------- telling the user, once
_notes: list[str] = []
_said: set[str] = set()
_lock = threading.Lock()  # the vector cache is read in a background thread


def tell(note: str) -> None:
    """Say `note` to the user once per process (the CLI prints it on stderr, the TUI in a
    toast): a damaged cache is rebuilt silently otherwise, and again on every run."""
    with _lock:
        if note not in _said:
            _said.add(note)
            _notes.append(note)


def rebuilt(what: str, path: Path | str, why: object) -> None:
    """The one note for a cache file that was not used: what, where, why, and that it is
    rebuilt, when its folder can be written (else the write's `cannot_cache` note says what
    that costs)."""
    where = os.path.dirname(path) or "."
    tell(f"{what} {path} not used ({why})" + (": rebuilt" if writable(where) else ""))


_cannot: set[str] = set()


def cannot_cache(
    what: str, where: Path | str, why: BaseException | str, cost: str, verb: str = "cached"
) -> None:
    """The one note for a cache that cannot be written (a read-only or full file system,
    another user's folder): what, where, why, and what it costs, e.g. `cannot_cache("run
    index", folder, exc, "every open reads the run's files (12.8 s)")`; `verb` for what is
    no cache ("saved": the settings). Said once per `what` in a process: a command's hundred
    failed writes are one line."""
    reason = why.strerror if isinstance(why, OSError) and why.strerror else str(why)
    with _lock:
        if what in _cannot:
            return
        _cannot.add(what)
    tell(f"{what} cannot be {verb} in {where} ({reason}): {cost}")


def take_notes() -> list[str]:
    """The notes not shown yet (each once), a limit's bad variable among them."""
    with _lock:
        taken = [*take_ignored(), *_notes]
        _notes.clear()
    return taken
