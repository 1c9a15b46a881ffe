"""The tool's own files (caches and settings), read as warily as a checkpoint's.

A cache dir is ours, but anything can end up in it: a FIFO or a symlink to /dev/zero, a file cut
short by a full disk, a flipped bit, another run's body under this run's name. So every file of
ours is opened only when it is a regular file (never blocking), read under a size limit
(checkpoint/limits.py: `cache-mib`, `config-kib`), decoded with a depth limit, and a cached body
carries a checksum that is checked against its key before the body is used. Whatever fails is a
cache miss: the caller rebuilds, and the user is told once (`tell`, collected by the CLI and the
TUI through `take_notes`), never an error.

This module is the one reader of such files; the run index (checkpoint/index.py), the vector and
BM25 caches (search/), the run counts (workspace.py), the settings (tui/config.py) and the
demo's marker use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import msgspec

from ari_mem_tui.checkpoint.jsonfile import MAX_DEPTH, depth_exceeds, read_regular
from ari_mem_tui.checkpoint.limits import current

SEAL = "ari-mem-tui"  # first word of a sealed file's header line


class CacheMiss(Exception):
    """A file of ours that cannot be used; `str(exc)` says why, in a few words."""


# ---------------------------------------------------------------- reading
def read_file(path: Path | str, limit: int | None = None, limit_name: str = "cache-mib") -> bytes:
    """The bytes of a file of ours: a regular file within `limit` (default: `cache-mib`).
    FileNotFoundError when it is not there (a plain miss); CacheMiss for anything else."""
    limit = current().cache_bytes if limit is None else limit
    try:
        return read_regular(path, limit, limit_name)
    except FileNotFoundError:
        raise
    except (OSError, RuntimeError) as exc:  # EINVAL: a FIFO or device; EFBIG; EACCES; ELOOP
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CacheMiss(why) from None


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


def unseal(data: bytes, kind: str) -> bytes:
    """The body of a sealed file of `kind`; CacheMiss when it is of another kind or version, or
    its body does not match its checksum (damaged, cut short, or another file's)."""
    head, newline, body = data.partition(b"\n")
    words = head.decode("ascii", "replace").split(" ")
    if not newline or len(words) != 3 or words[0] != SEAL or not words[2].startswith("sha256="):
        raise CacheMiss("not a sealed file of this tool")
    if words[1] != kind:
        raise CacheMiss(f"holds {words[1][:40]!r}, not {kind!r}")
    if checksum(body) != words[2].removeprefix("sha256="):
        raise CacheMiss("damaged: its checksum does not match")
    return body


def read_sealed(path: Path | str, kind: str, limit: int | None = None) -> bytes:
    return unseal(read_file(path, limit), kind)


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
    rebuilt."""
    tell(f"{what} {path} not used ({why}): rebuilt")


def take_notes() -> list[str]:
    """The notes not shown yet (each once)."""
    with _lock:
        taken = list(_notes)
        _notes.clear()
    return taken
