"""A persistent index of a loaded run, so that reopening unchanged files maps instead of parsing.

Kept outside the checkpoint, in `<cache>/index/<sha1 of the checkpoint's real path>/` (the cache
is $ARI_MEM_TUI_CACHE or the user's cache dir; $ARI_MEM_TUI_INDEX names another folder, or
`off`); never inside the checkpoint. The key is every file the loader may read: (name, device,
inode, size, mtime_ns) and a hash of its first and last 64 KiB, with the loader's own source and
the limits in force; any difference and the run is loaded from its files again and the index
rewritten.

The file holds the run's columns (model/columns.py) as they are in memory, so a reopen maps
them: `MAGIC`, the header's size and CRC, the header (msgpack: the key, the run id, the
sections' names, places, sizes and CRCs), then the sections, each 64-byte aligned: one per
column (raw arrays, UTF-8 buffers with their offsets), the buffer of trace logs and artifacts
(read from disk only when a node's are), and a small msgpack body (the tree's nodes, core
blocks, problems, the rare values kept as Python objects). Data only, never code.

A file of ours is still not trusted: it is opened only when it is a regular file of ours
(without following a symlink, without blocking on a FIFO), under a size limit, and every
section's CRC, seeded with the key, is checked before anything is used, so a flipped bit or
another run's body under this run's header is a miss: the run is loaded from its files and the
index rewritten, and the user is told once (checkpoint/cachefile.py `tell`, as for every cache).

The CoW log is not stored but built again, from the same inputs, when it is first read; what
an audit reads of it, its rejected rows (with their order), is stored, and so is which nodes'
trace logs hold the calls the loader reads (a read tool's, a refused write's): a reopened run's
audit reads those logs alone (`TraceCallsByNode`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import shutil
import stat
import tempfile
import zlib
from array import array
from pathlib import Path
from typing import Any

import msgspec
from platformdirs import user_cache_dir

from ari_mem_tui.checkpoint.access_log import access_files
from ari_mem_tui.checkpoint.attribution import READ_TOOLS
from ari_mem_tui.checkpoint.cachefile import rebuilt
from ari_mem_tui.checkpoint.cow import CowLog, joined_rows, stored_current, stored_rejected
from ari_mem_tui.checkpoint.limits import MIB, current, hint
from ari_mem_tui.checkpoint.trace_log import TraceCallsByNode, known_calls, trace_calls_of
from ari_mem_tui.checkpoint.tree import link_ancestors
from ari_mem_tui.model import (
    Checkpoint,
    CoreBlocks,
    CowWrite,
    Entries,
    Events,
    JsonList,
    JsonStrings,
    Node,
    Problem,
    StringTable,
    set_depths,
    tree_graph,
)
from ari_mem_tui.model.columns import Groups, OptInts, ResultRows, Texts, utf8

FORMAT = 11  # 8: the columns themselves, mapped on a reopen; sections checked by CRC
# 9: the nodes whose trace logs hold the calls the loader reads, the CoW log's rejected rows
# 10: the CoW log's entries by current node (a reopen's first replay no longer groups them)
# 11: the entries by owner node, each entry's write event (nor these, nor the tree's labels)
INDEX_ENV = "ARI_MEM_TUI_INDEX"
CACHE_ENV = "ARI_MEM_TUI_CACHE"
EDGE = 1 << 16  # bytes hashed at each end of a file
INDEX_FILE = "index.bin"
OLD_FILES = ("index.msgpack",)  # earlier formats' names, removed when an index is written
MAGIC = b"ARIMTIX\x00"
_PREFIX = len(MAGIC) + 8 + 4  # magic, header size, header CRC
ALIGN = 64
MAX_HEADER = 64 * MIB
_CODE = Path(__file__).resolve().parent.parent  # the package: its loader and model sources


class Damaged(Exception):
    """The index cannot be used as it is; `str(exc)` says why, in a few words."""


def index_root() -> Path | None:
    """Where indexes live (None: switched off with ARI_MEM_TUI_INDEX=off)."""
    chosen = os.environ.get(INDEX_ENV)
    if chosen:
        return None if chosen.strip().lower() == "off" else Path(chosen).expanduser()
    cache = os.environ.get(CACHE_ENV)
    return (Path(cache).expanduser() if cache else Path(user_cache_dir("ari-mem-tui"))) / "index"


def index_dir(ckpt: Path) -> Path | None:
    root = index_root()
    if root is None:
        return None
    real = os.path.realpath(ckpt)
    folder = root / hashlib.sha1(real.encode("utf-8", "surrogatepass")).hexdigest()
    # never inside the checkpoint: it is read-only to us
    if os.path.realpath(folder).startswith(real.rstrip("/") + "/"):
        return None
    return folder


# ---- the key ----

_code_key: str | None = None


def code_key() -> str:
    """A hash of the sources that decide what a load gives (checkpoint/ and model/)."""
    global _code_key
    if _code_key is None:
        digest = hashlib.sha1(str(FORMAT).encode())
        for folder in ("checkpoint", "model"):
            for source in sorted((_CODE / folder).glob("*.py")):
                digest.update(source.name.encode())
                digest.update(source.read_bytes())
        _code_key = digest.hexdigest()
    return _code_key


def _watched(ckpt: Path, run_id: str | None) -> list[Path]:
    """Every file a load of `ckpt` may read: its top-level files, node_*/tree.json, and the
    access logs of runs/<run_id>/traces."""
    found: set[Path] = set()
    try:
        found.update(entry for entry in ckpt.iterdir() if not entry.is_dir())
    except OSError:
        return []
    found.update(ckpt.glob("node_*/tree.json"))
    found.update(access_files(ckpt, run_id, []))
    return sorted(found)


def _file_key(path: Path, ckpt: Path) -> list[Any]:
    name = os.path.relpath(path, ckpt)
    try:
        info = path.stat()
    except OSError as exc:
        return [name, "unreadable", exc.__class__.__name__]
    if not stat.S_ISREG(info.st_mode):
        return [name, "not a file", stat.S_IFMT(info.st_mode)]
    digest = hashlib.sha1()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb", buffering=0) as handle:
            digest.update(handle.read(EDGE))
            if info.st_size > EDGE:
                handle.seek(max(EDGE, info.st_size - EDGE))
                digest.update(handle.read(EDGE))
    except OSError as exc:
        return [name, "unreadable", exc.__class__.__name__]
    return [name, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, digest.hexdigest()]


def run_key(ckpt: Path, run_id: str | None) -> list[Any]:
    # the limits in force decide what a load keeps too (a line over line-mib is skipped)
    code = f"{code_key()} {current()!r}"
    return [code, [_file_key(path, ckpt) for path in _watched(ckpt, run_id)]]


def _seed(key: list[Any]) -> int:
    """Every section's CRC starts from the key's: a body written for other files fails."""
    return zlib.crc32(msgspec.msgpack.encode(key))


def size_limit(key: list[Any]) -> tuple[int, str]:
    """The most an index of these files may weigh, and in words: what they hold (the backup as
    it may decompress) twice over for the columns beside it, and 64 MiB; never more than the
    cache-mib limit of every cache file. A larger file is not read (a sparse 2 GiB file in its
    place must not be)."""
    limits, total = current(), 0
    for item in key[1]:
        if len(item) == 6:
            size = item[3]
            total += limits.gzip_allowed(size) if item[0].endswith(".gz") else size
    run = 2 * total + 64 * MIB
    if limits.cache_bytes < run:
        return limits.cache_bytes, f"the cache-mib limit ({hint('cache-mib')})"
    return run, "what its run can need"


# ---- the columns of the tables ----

# (attribute, typecode) of each plain column; Texts, OptInts and side values follow
_ENTRY_COLUMNS = (("kind", "B"), ("node", "i"), ("ts", "d"), ("source", "i"), ("letta", "i"))
_ENTRY_COLUMNS += (("partial", "B"), ("ckpt", "i"))
_ENTRY_TEXTS = ("text", "meta")
_ENTRY_INTS = ("line", "step")
_EVENT_COLUMNS = (("ts", "d"), ("op", "B"), ("node", "i"), ("coll", "i"), ("eid", "i"))
_EVENT_COLUMNS += (("query", "i"), ("source", "i"), ("reader", "i"), ("how", "i"), ("note", "i"))
_EVENT_COLUMNS += (("joined", "i"), ("anc_start", "q"), ("anc_end", "q"), ("anc", "i"))
_EVENT_COLUMNS += (("res_start", "q"), ("res_end", "q"))
_EVENT_TEXTS = ("preview", "meta")
_EVENT_INTS = ("limit", "line")
_ROW_CODES = ("entry_id", "src_node_id", "node_id", "type")


_CURRENT = ("cow.current.nodes", "cow.current.ends", "cow.current.rows")  # stored_current
_BY_NODE = ("e.by_node.nodes", "e.by_node.ends", "e.by_node.rows")  # Entries.node_groups
_GROUP_KINDS = "iqi"  # (codes, ends, rows) of a Groups


def _groups(names: tuple[str, ...], groups: Groups, out: dict[str, Any]) -> None:
    columns = (groups.codes, groups.ends, groups.rows)
    for name, column, kind in zip(names, columns, _GROUP_KINDS, strict=True):
        out[name] = _as_array(column, kind)


def _groups_of(sections: dict[str, memoryview], names: tuple[str, ...]) -> Groups:
    return Groups(*(_column(sections, n, k) for n, k in zip(names, _GROUP_KINDS, strict=True)))


def _texts(name: str, texts: Texts, out: dict[str, Any]) -> None:
    out[name] = texts.buf
    out[name + ".starts"] = _as_array(texts.starts, "q")
    out[name + ".ends"] = _as_array(texts.ends, "q")


def _as_array(column: Any, kind: str) -> Any:
    """`column` as a buffer of items of `kind` (a mapped column is one already)."""
    if isinstance(column, memoryview) and column.format == kind:
        return column
    if isinstance(column, array) and column.typecode == kind:
        return column
    if kind == "B":
        return bytes(column)
    return array(kind, column)


def _columns(ckpt: Checkpoint) -> tuple[dict[str, Any], dict[str, Any]]:
    """The buffers to store, by section name, and the small values for the body."""
    out: dict[str, Any] = {}
    side: dict[str, Any] = {}
    ckpt.strings.freeze()  # (one buffer, as stored: the strings' objects go)
    strings_buf, offsets = ckpt.strings.export()
    out["strings"], out["strings.offsets"] = strings_buf, _as_array(offsets, "q")
    hashes, order = ckpt.strings.hash_index()
    out["strings.hashes"], out["strings.order"] = _as_array(hashes, "Q"), _as_array(order, "i")
    entries, events = ckpt.entries, ckpt.access_events
    for name, kind in _ENTRY_COLUMNS:
        out["e." + name] = _as_array(getattr(entries, name), kind)
    for name in _ENTRY_TEXTS:
        _texts("e." + name, getattr(entries, name), out)
    ids = [utf8(entry_id) for entry_id in entries.all_ids()]
    _texts("e.ids", _packed(ids), out)
    _groups(_BY_NODE, entries.node_groups(), out)
    for name in _ENTRY_INTS:
        column: OptInts = getattr(entries, name)
        out["e." + name] = _as_array(column.values, "q")
        side["e." + name] = column.big
    side["e.meta_side"] = entries.meta_side
    for name, kind in _EVENT_COLUMNS:
        out["v." + name] = _as_array(getattr(events, name), kind)
    for name in _EVENT_TEXTS:
        _texts("v." + name, getattr(events, name), out)
    for name in _EVENT_INTS:
        column = getattr(events, name)
        out["v." + name] = _as_array(column.values, "q")
        side["v." + name] = column.big
    # derived previews point into these entries (not into a Letta server's, swapped in since)
    if events.derived is not None and events.derived_from is not entries:
        raise ValueError("the run's entries are no longer those its events were joined to")
    derived = events.derived
    out["v.derived"] = _as_array(
        array("i", [-1]) * len(events) if derived is None else derived, "i"
    )
    side["v.meta_side"], side["v.extra"] = events.meta_side, events.extra
    side["v.joined_ids"] = events.joined_ids
    log = ckpt.pending_writes()
    current = stored_current(log) if isinstance(log, CowLog) else Groups((), (), ())
    side["cow.current"] = isinstance(log, CowLog)
    _groups(_CURRENT, current, out)
    out["v.joined_rows"] = joined_rows(events, len(entries))  # (for the CoW log's `Joined`)
    rows = events.rows
    for key in _ROW_CODES:
        out["r." + key] = _as_array(rows.codes[key], "i")
    out["r.score"] = _as_array(rows.score, "d")
    out["r.score_state"] = _as_array(rows.score_state, "B")
    out["r.count"] = _as_array(rows.count.values, "q")
    out["r.count_state"] = _as_array(rows.count_state, "B")
    side["r.count"], side["r.side"] = rows.count.big, rows.side
    return out, side


def _packed(items: list[bytes]) -> Texts:
    starts, ends, pos = array("q"), array("q"), 0
    for item in items:
        starts.append(pos)
        pos += len(item)
        ends.append(pos)
    return Texts(b"".join(items), starts, ends)


# ---- writing ----


_REBUILT = {"ancestor_ids"}
_LAZY = {"trace_log", "artifacts"}


def _lazy_bytes(node: Node) -> tuple[bytes | memoryview, bytes | memoryview]:
    """The node's trace_log and artifacts as JSON bytes (the file's own while undecoded)."""
    trace = node.trace_raw()
    artifacts = node.artifacts_raw()
    return (
        trace if trace is not None else _json(node.trace_lines()),
        artifacts if artifacts is not None else _json(node.artifacts),
    )


def _json(value: Any) -> bytes:
    """JSON bytes; a lone surrogate (msgspec refuses it) as json's `\\ud800` escape, which
    JsonStrings/JsonList read back exact."""
    try:
        return msgspec.json.encode(value)
    except UnicodeEncodeError:
        return json.dumps(value).encode("ascii")


def save(ckpt: Checkpoint, before: list[Any]) -> bool:
    """Write the index of a freshly loaded `ckpt`, whose files had the key `before` when the
    load began; False (and nothing written) when it cannot be (no cache dir, a file changed
    during the load, a value msgpack cannot hold, a full disk)."""
    folder = index_dir(ckpt.path)
    if folder is None:
        return False
    key = run_key(ckpt.path, ckpt.run_id)
    if before[0] != key[0] or any(item not in key[1] for item in before[1]):
        return False  # something changed while it was read: the next open reads it again
    try:
        sections = _sections(ckpt)
        _write(folder, key, ckpt.run_id, sections)
    except (OSError, TypeError, OverflowError, ValueError, msgspec.EncodeError):
        return False  # (UnicodeEncodeError is a ValueError: a lone surrogate)
    return True


def _sections(ckpt: Checkpoint) -> dict[str, Any]:
    nodes, lazy, parts, pos = [], [], [], 0
    for node in ckpt.nodes.values():
        # rebuilt ancestors are not stored: the edges give them again, lazily
        exclude = _LAZY | _REBUILT if node.scope_reconstructed else _LAZY
        nodes.append(node.as_data(exclude=exclude))
        for data in _lazy_bytes(node):
            parts.append(data)
            lazy += [pos, len(data)]
            pos += len(data)
    columns, side = _columns(ckpt)
    body = {
        "tree_source": ckpt.tree_source,
        "experiment_goal": ckpt.experiment_goal,
        "roots": ckpt.roots,
        "edges": list(ckpt.graph.edges),
        "nodes": nodes,
        "lazy": lazy,
        "core": ckpt.core.as_data(),
        "letta_embedding_config": ckpt.letta_embedding_config,
        "access_summary": ckpt.access_summary,
        "trace_call_count": ckpt.trace_call_count(),
        "write_counts": list(ckpt.write_counts()),
        "read_calls": known_calls(ckpt.read_tool_calls()),
        "rejected": _rejected(ckpt),
        "problems": [p.as_data() for p in ckpt.problems],
        "side": side,
    }
    return {"body": _pack(body), "lazy": b"".join(parts), **columns}


# msgpack's strings are UTF-8, which a lone surrogate is not (JSON may escape one, "\ud800"):
# such a string is stored as an Ext of its surrogatepass bytes. The walk runs only when msgpack
# refused the body, so a clean run costs nothing more.
SURROGATES = 1


def _pack(body: dict[str, Any]) -> bytes:
    try:
        return msgspec.msgpack.encode(body)
    except UnicodeEncodeError:
        return msgspec.msgpack.encode(_packable(body))


def _packable(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return msgspec.msgpack.Ext(SURROGATES, value.encode("utf-8", "surrogatepass"))
        return value
    if isinstance(value, dict):
        return {_packable(k): _packable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_packable(v) for v in value]
    return value


def _unpack_ext(code: int, data: memoryview) -> str:
    if code != SURROGATES:
        raise ValueError(f"unknown msgpack extension {code}")  # a damaged index: a miss
    return bytes(data).decode("utf-8", "surrogatepass")


def _rejected(ckpt: Checkpoint) -> bytes | None:
    """The CoW log's rejected rows and their order (`stored_rejected`), packed; None when the
    log is built already or a row holds a value msgpack cannot (its metadata is any JSON)."""
    log = ckpt.pending_writes()
    if not isinstance(log, CowLog):
        return None
    rows, order = stored_rejected(log)
    try:
        return msgspec.msgpack.encode([[row.as_data() for row in rows], order])
    except (TypeError, OverflowError, ValueError, msgspec.EncodeError):
        return None


def _stored_rejected(data: bytes | None) -> tuple[list[CowWrite], list[int]] | None:
    if data is None:
        return None
    rows, order = msgspec.msgpack.decode(data)
    return [CowWrite.from_data(row) for row in rows], order


def _write(folder: Path, key: list[Any], run_id: str | None, sections: dict[str, Any]) -> None:
    seed = _seed(key)
    table, offset = [], 0
    for name, data in sections.items():
        size = memoryview(data).nbytes
        table.append([name, offset, size, zlib.crc32(data, seed)])
        offset += _aligned(size)
    if offset > size_limit(key)[0]:  # it would never be read: not written either
        raise ValueError("the index would be over its size limit")
    header = msgspec.msgpack.encode(
        {"format": FORMAT, "key": key, "run_id": run_id, "sections": table}
    )
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, tmp = tempfile.mkstemp(dir=folder, prefix=".index-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC + len(header).to_bytes(8, "little"))
            out.write(zlib.crc32(header).to_bytes(4, "little") + header)
            out.write(bytes(_aligned(_PREFIX + len(header)) - _PREFIX - len(header)))
            for data in sections.values():
                size = memoryview(data).nbytes
                out.write(data)
                out.write(bytes(_aligned(size) - size))
        target = folder / INDEX_FILE
        if target.is_dir() and not target.is_symlink():  # (a rename cannot replace it)
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for old in OLD_FILES:
        (folder / old).unlink(missing_ok=True)


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


# ---- reading ----


class _Header(msgspec.Struct):
    format: int
    key: list[Any]
    run_id: str | None
    sections: list[tuple[str, int, int, int]]


def _open(path: Path) -> int | None:
    """A descriptor of our own index file: a regular file (a symlink is not followed, a FIFO
    not waited on), ours, writable by nobody else; None when there is no index."""
    folder = index_dir(path)
    if folder is None:
        return None
    try:
        fd = os.open(
            folder / INDEX_FILE, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Damaged(_why(exc)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Damaged("not a regular file")
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        os.close(fd)
        raise Damaged("not written by this user alone")
    return fd


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink, not a file"
    return exc.strerror or exc.__class__.__name__


def _read_header(fd: int) -> tuple[_Header, int]:
    """The header, checked (magic, size, CRC, shape), and where the sections begin."""
    size = os.fstat(fd).st_size
    prefix = os.pread(fd, _PREFIX, 0)
    if len(prefix) < _PREFIX or prefix[: len(MAGIC)] != MAGIC:
        raise Damaged("not an index of this version")
    length = int.from_bytes(prefix[len(MAGIC) : len(MAGIC) + 8], "little")
    if length > min(MAX_HEADER, size - _PREFIX):
        raise Damaged("its header is cut short")
    raw = os.pread(fd, length, _PREFIX)
    if len(raw) != length or zlib.crc32(raw) != int.from_bytes(prefix[-4:], "little"):
        raise Damaged("its header does not match its checksum")
    try:
        header = msgspec.msgpack.decode(raw, type=_Header)
    except (msgspec.DecodeError, RecursionError):
        raise Damaged("its header is not of this version") from None
    if header.format != FORMAT:
        raise Damaged("not an index of this version")
    return header, _aligned(_PREFIX + length)


def is_current(path: Path) -> bool:
    """Whether `load(path)` would give the run (an index of the unchanged files exists), read
    off the index's header alone: a few milliseconds, however big the run."""
    try:
        fd = _open(Path(path))
    except Damaged:
        return False
    if fd is None:
        return False
    try:
        header, _ = _read_header(fd)
        return header.key == run_key(Path(path), header.run_id)
    except (Damaged, OSError):
        return False
    finally:
        os.close(fd)


def _check(fd: int, header: _Header, start: int) -> None:
    """Every section within the file and of its CRC (read in pieces: nothing stays in
    memory)."""
    size, (limit, what) = os.fstat(fd).st_size, size_limit(header.key)
    if size > limit:
        raise Damaged(f"{size:,} bytes, over {what}: {limit:,} bytes")
    seed = _seed(header.key)
    end = start
    piece = bytearray(4 * MIB)
    view = memoryview(piece)
    for _name, offset, length, crc in header.sections:
        if offset < 0 or length < 0 or start + offset < end or start + offset + length > size:
            raise Damaged("its sections do not fit in it")
        end = start + offset + length
        value, pos = seed, start + offset
        while pos < end:
            got = os.preadv(fd, [view[: min(len(piece), end - pos)]], pos)
            if got <= 0:
                raise Damaged("it is cut short")
            value = zlib.crc32(view[:got], value)
            pos += got
        if value != crc:
            raise Damaged("a section does not match its checksum")


def load(path: Path) -> Checkpoint | None:
    """The run as indexed, when the index exists, is sound, and every file it was built from
    is unchanged; else None, and when it was damaged the user is told once (cachefile.tell:
    the caller loads the files, which writes the index again)."""
    try:
        return load_or_raise(path)
    except Damaged as exc:
        folder = index_dir(Path(path))
        rebuilt("run index", folder / INDEX_FILE if folder else path, exc)
        return None


def load_or_raise(path: Path) -> Checkpoint | None:
    """As `load`, but a damaged index raises Damaged (a stale or missing one is None)."""
    path = Path(path)
    fd = _open(path)
    if fd is None:
        return None
    try:
        header, start = _read_header(fd)
        if header.key != run_key(path, header.run_id):
            return None  # a stale index is not read further (it is rewritten after the load)
        _check(fd, header, start)
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise Damaged(_why(exc)) from None
    finally:
        os.close(fd)
    view = memoryview(mapped)
    sections = _Sections(
        (name, view[start + offset : start + offset + length])
        for name, offset, length, _ in header.sections
    )
    sections.offsets = {name: start + offset for name, offset, _, _ in header.sections}
    try:
        return _rebuild(path, header.run_id, sections)
    except (KeyError, ValueError, TypeError, IndexError, msgspec.DecodeError) as exc:
        # (sound by its checksums, yet not what this code writes: a bug, or a foreign writer)
        raise Damaged(f"it does not read back ({exc.__class__.__name__})") from None


class _Sections(dict):
    """The sections of a mapped index by name (views of the file), and where each begins in
    the file (`offsets`)."""

    offsets: dict[str, int]


def _column(sections: dict[str, memoryview], name: str, kind: str) -> memoryview:
    data = sections[name]
    return data if kind == "B" else data.cast(kind)


def _texts_of(sections: dict[str, memoryview], name: str) -> Texts:
    return Texts(
        sections[name],
        _column(sections, name + ".starts", "q"),
        _column(sections, name + ".ends", "q"),
        offset=sections.offsets.get(name, 0) if isinstance(sections, _Sections) else 0,
    )


def _ints(sections: dict[str, memoryview], name: str, big: dict[int, int]) -> OptInts:
    return OptInts(_column(sections, name, "q"), big)


def _entries(sections: dict[str, memoryview], strings: StringTable, side: dict) -> Entries:
    columns = {name: _column(sections, "e." + name, kind) for name, kind in _ENTRY_COLUMNS}
    return Entries(
        strings,
        columns["kind"],
        columns["node"],
        columns["ts"],
        _texts_of(sections, "e.text"),
        _texts_of(sections, "e.meta"),
        columns["source"],
        _ints(sections, "e.line", side["e.line"]),
        columns["letta"],
        _ints(sections, "e.step", side["e.step"]),
        columns["partial"],
        columns["ckpt"],
        ids=_texts_of(sections, "e.ids"),
        meta_side=side["e.meta_side"],
        by_node=_groups_of(sections, _BY_NODE),
    )


def _events(sections: dict[str, memoryview], strings: StringTable, side: dict) -> Events:
    columns = {name: _column(sections, "v." + name, kind) for name, kind in _EVENT_COLUMNS}
    rows = ResultRows(
        {key: _column(sections, "r." + key, "i") for key in _ROW_CODES},
        _column(sections, "r.score", "d"),
        _column(sections, "r.score_state", "B"),
        _ints(sections, "r.count", side["r.count"]),
        _column(sections, "r.count_state", "B"),
        side["r.side"],
    )
    return Events(
        strings,
        **columns,
        derived=_column(sections, "v.derived", "i"),
        preview=_texts_of(sections, "v.preview"),
        meta=_texts_of(sections, "v.meta"),
        meta_side=side["v.meta_side"],
        limit=_ints(sections, "v.limit", side["v.limit"]),
        line=_ints(sections, "v.line", side["v.line"]),
        rows=rows,
        joined_ids=side["v.joined_ids"],
        extra=side["v.extra"],
    )


def _rebuild(path: Path, run_id: str | None, sections: dict[str, memoryview]) -> Checkpoint:
    """The Checkpoint from the index's sections (views of the mapped file): the columns as
    they are; the CoW log and the trace calls are built on their first read."""
    body = msgspec.msgpack.decode(sections["body"], ext_hook=_unpack_ext)
    ckpt = Checkpoint(path=path)
    ckpt.run_id, ckpt.tree_source = run_id, body["tree_source"]
    ckpt.experiment_goal = body["experiment_goal"]
    lazy, stored = sections["lazy"], body["lazy"]
    for number, fields in enumerate(body["nodes"]):
        trace_at, trace_size, art_at, art_size = stored[4 * number : 4 * number + 4]
        trace = JsonStrings(lazy[trace_at : trace_at + trace_size])
        node = Node.restore(fields, trace, JsonList(lazy[art_at : art_at + art_size]))
        ckpt.nodes[node.id] = node
    graph = tree_graph(ckpt.nodes, map(tuple, body["edges"]))
    set_depths(graph)  # (the edges stored are the tree's: acyclic)
    ckpt.graph, ckpt.roots = graph, body["roots"]
    rebuilt = [nid for nid, node in ckpt.nodes.items() if node.scope_reconstructed]
    link_ancestors(ckpt.nodes, graph, rebuilt)
    ckpt.core = CoreBlocks.from_data(body["core"])
    ckpt.letta_embedding_config = body["letta_embedding_config"]
    ckpt.access_summary = body["access_summary"]
    ckpt.problems = [Problem.from_data(p) for p in body["problems"]]
    strings = StringTable.mapped(
        sections["strings"],
        _column(sections, "strings.offsets", "q"),
        _column(sections, "strings.hashes", "Q"),
        _column(sections, "strings.order", "i"),
    )
    side = body["side"]
    ckpt.entries = _entries(sections, strings, side)
    ckpt.access_events = _events(sections, strings, side)
    ckpt.access_events.derived_from = ckpt.entries
    # the CoW log as the load built it, from the same inputs: built when it is first read, one
    # node's rows parsing only that node's trace_log
    calls = TraceCallsByNode(ckpt.nodes, READ_TOOLS, tuple(body["read_calls"]))  # type: ignore[arg-type]
    counts, rejected = tuple(body["write_counts"]), _stored_rejected(body["rejected"])
    current = _groups_of(sections, _CURRENT) if side["cow.current"] else None
    joined = _column(sections, "v.joined_rows", "i")
    cow = CowLog(ckpt.entries, ckpt.access_events, calls, counts, rejected, current, joined)  # type: ignore[arg-type]
    ckpt.defer_writes(cow)
    ckpt.defer_trace_calls(trace_calls_of(ckpt.nodes), body["trace_call_count"])
    ckpt.reindex()
    return ckpt
