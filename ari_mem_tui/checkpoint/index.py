"""A persistent index of a loaded run, so that reopening unchanged files maps instead of parsing.

Kept outside the checkpoint, in `<cache>/index/<sha1 of the checkpoint's real path>/` (the cache
is $ARI_MEM_TUI_CACHE or the user's cache dir; $ARI_MEM_TUI_INDEX names another folder, or
`off`); never inside the checkpoint. The key is every file the loader may read, each as (name,
device, inode, size, mtime_ns, ctime_ns) and an XXH3-128 hash: of every byte for a file read
whole (tree.json, nodes_tree.json, node_*/tree.json, the backup, experiment.md, idea.json,
settings.json …: an in-place edit of the same size with its mtime put back is a new key), of
its first and last 64 KiB for the JSON Lines logs (appended to, gigabytes on a long run) and
for any file over the `file-mib` limit (which the loader refuses unread); with the loader's own
source and the limits in force. Any difference and the run is loaded from its files again and
the index rewritten.

The file holds the run's columns (model/columns/) as they are in memory, so a reopen maps
them: `MAGIC` padded to 64 bytes, then the sections, each 64-byte aligned: one per column (raw
arrays, UTF-8 buffers with their offsets), the buffer of trace logs and artifacts (read from
disk only when a node's are), and a small msgpack body (the tree's nodes, core blocks, problems,
the rare values kept as Python objects); then the header (msgpack: the key, the run id, the
sections' names, places, sizes and CRCs) and a trailer: the header's size, its CRC and `MAGIC`
again. The header comes last so that the file is written section by section as each is made,
its CRC taken on the way: no section waits for another in memory. Data only, never code.

A file of ours is still not trusted: it is opened only when it is a regular file of ours
(without following a symlink, without blocking on a FIFO), under a size limit, and every
section's CRC, seeded with the key, is checked before anything is used, so a flipped bit or
another run's body under this run's header is a miss: the run is loaded from its files and the
index rewritten, and the user is told once (checkpoint/cachefile.py `tell`, as for every cache).

One writer at a time: a writer holds an advisory lock (`flock` on the run's index folder) while
its temporary `.index-XXXX` file exists, and renames it into place. A writer that died
half-way (a crash, kill -9, a full disk) leaves that temporary file behind; the next open that
finds one and can take the lock at once (so no writer is alive) removes it: only files of this
user named as ours, only in the index's own folder (never inside a checkpoint).

The CoW log is not stored but built again, from the same inputs, when it is first read; what
an audit reads of it, its rejected rows (with their order), is stored, and so is which nodes'
trace logs hold the calls the loader reads (a read tool's, a refused write's): a reopened run's
audit reads those logs alone (`TraceCallsByNode`). Entry ids are stored for the rows whose id
was asked for before the write (none, on most first opens: a SHA-1 per entry was a tenth of the
load); the others are computed when first asked for, as on a fresh load.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import mmap
import os
import shutil
import stat
import tempfile
import time
import zlib
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import xxhash
from platformdirs import user_cache_dir

from ari_mem_tui.checkpoint.access_log import access_files
from ari_mem_tui.checkpoint.attribution import READ_TOOLS
from ari_mem_tui.checkpoint.cachefile import cannot_cache, rebuilt
from ari_mem_tui.checkpoint.cachefile import writable as cachefile_writable
from ari_mem_tui.checkpoint.cow import CowLog, joined_rows, stored_current, stored_rejected
from ari_mem_tui.checkpoint.limits import MIB, current, hint
from ari_mem_tui.checkpoint.trace_log import TraceCallsByNode, known_calls, trace_calls_of
from ari_mem_tui.checkpoint.tree import forget_read_pages, link_ancestors
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
from ari_mem_tui.model.columns import Groups, OptInts, ResultRows, Texts

FORMAT = 12  # 8: the columns themselves, mapped on a reopen; sections checked by CRC
# 9: the nodes whose trace logs hold the calls the loader reads, the CoW log's rejected rows
# 10: the CoW log's entries by current node (a reopen's first replay no longer groups them)
# 11: the entries by owner node, each entry's write event (nor these, nor the tree's labels)
# 12: the header after the sections (written as made); the ids asked for only; files read
#     whole keyed by a hash of every byte; integers past 64 bits in the body
INDEX_ENV = "ARI_MEM_TUI_INDEX"
CACHE_ENV = "ARI_MEM_TUI_CACHE"
EDGE = 1 << 16  # bytes hashed at each end of a file
INDEX_FILE = "index.bin"
OLD_FILES = ("index.msgpack",)  # earlier formats' names, removed when an index is written
TEMP_PREFIX = ".index-"  # a writer's temporary file, renamed into place when whole
MAGIC = b"ARIMTIX\x00"
ALIGN = 64
_START = ALIGN  # the sections begin after MAGIC, padded
_TRAILER = 8 + 4 + len(MAGIC)  # the header's size and CRC, and MAGIC again
MAX_HEADER = 64 * MIB
_CODE = Path(__file__).resolve().parent.parent  # the package: its loader and model sources


class TooBig(ValueError):
    """The index would be over its size limit (`size_limit`): never read, so not written."""


class Damaged(Exception):
    """The index cannot be used as it is; `str(exc)` says why, in a few words."""


def cache_dir() -> Path:
    """$ARI_MEM_TUI_CACHE, else the user's cache dir: where every cache of the tool lives (as
    search/vector_cache.py `cache_root` says, without its numpy)."""
    cache = os.environ.get(CACHE_ENV)
    return Path(cache).expanduser() if cache else Path(user_cache_dir("ari-mem-tui"))


def index_root() -> Path | None:
    """Where indexes live (None: switched off with ARI_MEM_TUI_INDEX=off)."""
    chosen = os.environ.get(INDEX_ENV)
    if chosen:
        return None if chosen.strip().lower() == "off" else Path(chosen).expanduser()
    return cache_dir() / "index"


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


def writable(ckpt: Path) -> bool:
    """Whether `ckpt`'s index folder can be written now (cachefile.writable): a writer handed
    off to another process (cli/after_output.py) is handed off only then, so what cannot be
    cached is said before the command ends, as it is everywhere else."""
    folder = index_dir(ckpt)
    return folder is not None and cachefile_writable(folder)


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


def watched(ckpt: Path, run_id: str | None) -> list[Path]:
    """Every file a load of `ckpt` may read: its top-level files, node_*/tree.json, and the
    access logs of runs/<run_id>/traces."""
    found: set[Path] = set()
    try:
        with os.scandir(ckpt) as listing:  # (its entries know their type: no stat each)
            entries = list(listing)
    except OSError:
        return []
    for entry in entries:
        if not entry.is_dir():
            found.add(ckpt / entry.name)
        elif entry.name.startswith("node_"):  # (node_*/tree.json, as a glob finds it)
            tree = ckpt / entry.name / "tree.json"
            if os.path.exists(tree):
                found.add(tree)
    found.update(access_files(ckpt, run_id, []))
    return sorted(found)


LOG_SUFFIX = ".jsonl"  # JSON Lines logs: appended to, keyed by their ends


def _file_key(path: Path, ckpt: Path) -> list[Any]:
    name = os.path.relpath(path, ckpt)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return [name, "unreadable", exc.__class__.__name__]
    with open(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return [name, "not a file", stat.S_IFMT(info.st_mode)]
        whole = not path.name.endswith(LOG_SUFFIX) and info.st_size <= current().file_bytes
        try:
            digest = _whole_hash(handle, info) if whole else _edge_hash(handle, info.st_size)
        except OSError as exc:
            return [name, "unreadable", exc.__class__.__name__]
    # (the ctime too: an edit changes it and no one can set it back, so a same-size edit
    # crafted to keep the hash, which is not a cryptographic one, is another key all the same)
    return [
        name,
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        digest,
    ]


# what a readable file's key holds, in order (size_limit reads its size)
_FILE_KEY = ("name", "device", "inode", "size", "mtime_ns", "ctime_ns", "hash")


# a file's whole hash, by what no edit can keep: an edit changes the inode's ctime, which no
# one can set back (utime sets the mtime), so within one process a file is hashed once however
# many keys are taken (the load's before and after, the kept audit's)
_hashed: dict[tuple[int, ...], str] = {}


def _whole_hash(handle: Any, info: os.stat_result) -> str:
    """ "all:" and the XXH3-128 of every byte (18 ms for a 10k run's 111 MB tree, where SHA-1
    took 78 ms: a reopen hashes every file read whole)."""
    seen = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    found = _hashed.get(seen)
    if found is None:
        found = _hashed[seen] = "all:" + hashlib.file_digest(handle, xxhash.xxh3_128).hexdigest()
    return found


def _edge_hash(handle: Any, size: int) -> str:
    """ "ends:" and the XXH3-128 of the first and last 64 KiB."""
    digest = xxhash.xxh3_128(handle.read(EDGE))
    if size > EDGE:
        handle.seek(max(EDGE, size - EDGE))
        digest.update(handle.read(EDGE))
    return "ends:" + digest.hexdigest()


def run_key(ckpt: Path, run_id: str | None) -> list[Any]:
    # the limits in force decide what a load keeps too (a line over line-mib is skipped)
    code = f"{code_key()} {current()!r}"
    return [code, [_file_key(path, ckpt) for path in watched(ckpt, run_id)]]


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
        if len(item) == len(_FILE_KEY):  # (an unreadable one's is [name, why, what])
            size = item[_FILE_KEY.index("size")]
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


Section = tuple[str, Iterable[Any]]  # a section's name and its parts, written one after another


def _groups(names: tuple[str, ...], groups: Groups) -> Iterator[Section]:
    columns = (groups.codes, groups.ends, groups.rows)
    for name, column, kind in zip(names, columns, _GROUP_KINDS, strict=True):
        yield name, [_as_array(column, kind)]


def _groups_of(sections: dict[str, memoryview], names: tuple[str, ...]) -> Groups:
    return Groups(*(_column(sections, n, k) for n, k in zip(names, _GROUP_KINDS, strict=True)))


def _texts(name: str, texts: Texts) -> Iterator[Section]:
    yield name, [texts.buf]
    yield name + ".starts", [_as_array(texts.starts, "q")]
    yield name + ".ends", [_as_array(texts.ends, "q")]


def _as_array(column: Any, kind: str) -> Any:
    """`column` as a buffer of items of `kind` (a mapped column is one already)."""
    if isinstance(column, memoryview) and column.format == kind:
        return column
    if isinstance(column, array) and column.typecode == kind:
        return column
    if kind == "B":
        return bytes(column)
    return array(kind, column)


def _columns(ckpt: Checkpoint, side: dict[str, Any]) -> Iterator[Section]:
    """The buffers to store, section by section, each made as it is written (a converted
    column lives only while it is written); the small values for the body go into `side`."""
    ckpt.strings.freeze()  # (one buffer, as stored: the strings' objects go)
    strings_buf, offsets = ckpt.strings.export()
    yield "strings", [strings_buf]
    yield "strings.offsets", [_as_array(offsets, "q")]
    hashes, order = ckpt.strings.hash_index()
    yield "strings.hashes", [_as_array(hashes, "Q")]
    yield "strings.order", [_as_array(order, "i")]
    entries = ckpt.entries
    for name, kind in _ENTRY_COLUMNS:
        yield "e." + name, [_as_array(getattr(entries, name), kind)]
    for name in _ENTRY_TEXTS:
        yield from _texts("e." + name, getattr(entries, name))
    ids = entries.known_ids()  # (only those asked for: the others are made when asked)
    if ids is not None:
        yield from _texts("e.ids", ids)
    yield from _groups(_BY_NODE, entries.node_groups())
    for name in _ENTRY_INTS:
        column: OptInts = getattr(entries, name)
        yield "e." + name, [_as_array(column.values, "q")]
        side["e." + name] = column.big
    side["e.meta_side"] = entries.meta_side
    yield from _event_columns(ckpt, side)


def _event_columns(ckpt: Checkpoint, side: dict[str, Any]) -> Iterator[Section]:
    entries, events = ckpt.entries, ckpt.access_events
    for name, kind in _EVENT_COLUMNS:
        yield "v." + name, [_as_array(getattr(events, name), kind)]
    for name in _EVENT_TEXTS:
        yield from _texts("v." + name, getattr(events, name))
    for name in _EVENT_INTS:
        column = getattr(events, name)
        yield "v." + name, [_as_array(column.values, "q")]
        side["v." + name] = column.big
    # derived previews point into these entries (not into a Letta server's, swapped in since)
    if events.derived is not None and events.derived_from is not entries:
        raise ValueError("the run's entries are no longer those its events were joined to")
    derived = array("i", [-1]) * len(events) if events.derived is None else events.derived
    yield "v.derived", [_as_array(derived, "i")]
    side["v.meta_side"], side["v.extra"] = events.meta_side, events.extra
    side["v.joined_ids"] = events.joined_ids
    log = ckpt.pending_writes()
    current = stored_current(log) if isinstance(log, CowLog) else Groups((), (), ())
    side["cow.current"] = isinstance(log, CowLog)
    yield from _groups(_CURRENT, current)
    yield "v.joined_rows", [joined_rows(events, len(entries))]  # (for the CoW log's `Joined`)
    rows = events.rows
    for key in _ROW_CODES:
        yield "r." + key, [_as_array(rows.codes[key], "i")]
    yield "r.score", [_as_array(rows.score, "d")]
    yield "r.score_state", [_as_array(rows.score_state, "B")]
    yield "r.count", [_as_array(rows.count.values, "q")]
    yield "r.count_state", [_as_array(rows.count_state, "B")]
    side["r.count"], side["r.side"] = rows.count.big, rows.side


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


def save(ckpt: Checkpoint, before: list[Any], took: float | None = None) -> bool:
    """Write the index of a freshly loaded `ckpt`, whose files had the key `before` when the
    load (of `took` seconds) began; False (and nothing written) when it cannot be (no cache
    dir, a file changed during the load, a full disk, a value it cannot store: the last two
    said once, with what they cost). Another writer of the same run's index is waited for
    (its file is then replaced by this one, of the same files)."""
    folder = index_dir(ckpt.path)
    if folder is None:
        return False
    key = run_key(ckpt.path, ckpt.run_id)
    if before[0] != key[0] or any(item not in key[1] for item in before[1]):
        return False  # something changed while it was read: the next open reads it again
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _writer(folder):
            _write(folder, key, ckpt.run_id, _sections(ckpt))
    except OSError as exc:  # a read-only or full cache, another user's folder: said once
        cannot_cache("run index", folder, exc, _cost(took))
        return False
    except (TypeError, OverflowError, ValueError, msgspec.EncodeError) as exc:
        # (UnicodeEncodeError is a ValueError) a bug of ours: what is lost is said all the same
        why = (
            str(exc)
            if isinstance(exc, TooBig)
            else f"a value it cannot store: {type(exc).__name__}"
        )
        cannot_cache("run index", folder, why, _cost(took))
        return False
    return True


def _cost(took: float | None) -> str:
    """What a run index not written costs: every open loads the files, as this one did."""
    return "every open of the run reads its files" + (
        f" ({took:.1f} s this time)" if took is not None else ""
    )


@contextlib.contextmanager
def _writer(folder: Path, wait: float | None = None) -> Iterator[None]:
    """Held by the one writer of `folder`'s index (an advisory lock on the folder itself: the
    kernel lets it go when its holder ends, however it ends; no file is made for it).
    `wait` seconds at most (None: as long as it takes), then BlockingIOError."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if wait is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            _lock_within(fd, wait)
        yield
    finally:
        os.close(fd)


def _lock_within(fd: int, wait: float) -> None:
    """flock(LOCK_EX) within `wait` seconds (polled: flock has no deadline of its own)."""
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


WRITER_PATIENCE = 60.0  # seconds an open waits for a writer at work (a 20k run's: ~4 s)


def sweep(path: Path, patience: float = WRITER_PATIENCE) -> int:
    """Wait for a writer of `path`'s index that is at work (its temporary file exists and it
    holds the lock: a command's detached writer, cli/after_output.py), up to `patience`
    seconds, as reading the index it is writing is faster than reading the files again; then
    remove the temporary files that writers left when they died (a crash, kill -9, a full
    disk): only when no writer is alive, only files named as ours, regular, of this user, in
    the index's own folder. How many went."""
    folder = index_dir(Path(path))
    if folder is None or not _temporary(folder):
        return 0
    gone = 0
    try:
        with _writer(folder, wait=patience):
            for entry in _temporary(folder):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)
                        gone += 1
    except OSError:  # (BlockingIOError: a writer is still at work; its file is not stale)
        return gone
    return gone


def _temporary(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as listing:
            return [entry for entry in listing if entry.name.startswith(TEMP_PREFIX)]
    except OSError:
        return []


def _sections(ckpt: Checkpoint) -> Iterator[Section]:
    """Every section, made as it is written: the columns, the trace logs' buffer (each
    node's bytes as they are), then the body, which holds the small values the columns set
    aside."""
    side: dict[str, Any] = {}
    yield from _columns(ckpt, side)
    lazy: list[int] = []
    yield "lazy", _lazy_parts(ckpt, lazy)
    nodes = []
    for node in ckpt.nodes.values():
        # rebuilt ancestors are not stored: the edges give them again, lazily
        exclude = _LAZY | _REBUILT if node.scope_reconstructed else _LAZY
        nodes.append(node.as_data(exclude=exclude))
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
    yield "body", [_pack(body)]


def _lazy_parts(ckpt: Checkpoint, places: list[int]) -> Iterator[Any]:
    """Each node's trace_log and artifacts bytes, one after another; `places` gets where each
    begins and its size. The pages of the mapped buffer they are read from are let go every
    few hundred nodes (they stay in the page cache): a 10k run's 90 MB of trace logs would
    otherwise all count in this process's memory by the end of the write."""
    pos = 0
    nodes = list(ckpt.nodes.values())
    for start in range(0, len(nodes), _FORGET_EVERY):
        part = nodes[start : start + _FORGET_EVERY]
        for node in part:
            for data in _lazy_bytes(node):
                size = memoryview(data).nbytes
                places += [pos, size]
                pos += size
                yield data
        forget_read_pages({node.id: node for node in part})


_FORGET_EVERY = 512  # nodes


# msgpack's strings are UTF-8, which a lone surrogate is not (JSON may escape one, "\ud800"),
# and its integers 64 bits, which JSON's are not (a metric of 2**70): such a value is stored as
# an Ext (a string: its surrogatepass bytes; an integer: its decimal digits), and so is a map
# whose keys are no plain strings (a key holding a surrogate: its [key, value] pairs). The walk
# runs only when msgpack refused the body, so a clean run costs nothing more.
SURROGATES, BIG_INT, PAIRS = 1, 2, 3
_INT64 = range(-(1 << 63), 1 << 64)  # what msgpack holds: int64 and uint64


def _pack(value: Any) -> bytes:
    try:
        return msgspec.msgpack.encode(value)
    except (UnicodeEncodeError, OverflowError):
        return msgspec.msgpack.encode(_packable(value))


def _packable(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return msgspec.msgpack.Ext(SURROGATES, value.encode("utf-8", "surrogatepass"))
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value not in _INT64:
        return msgspec.msgpack.Ext(BIG_INT, str(value).encode("ascii"))
    if isinstance(value, dict):
        pairs = [(_packable(k), _packable(v)) for k, v in value.items()]
        if all(type(k) is str or type(k) is int for k, _ in pairs):
            return dict(pairs)
        return msgspec.msgpack.Ext(PAIRS, msgspec.msgpack.encode([list(p) for p in pairs]))
    if isinstance(value, list | tuple):
        return [_packable(v) for v in value]
    return value


def _unpack_ext(code: int, data: memoryview) -> Any:
    if code == SURROGATES:
        return bytes(data).decode("utf-8", "surrogatepass")
    if code == BIG_INT:
        return int(bytes(data).decode("ascii"))
    if code == PAIRS:
        return dict(msgspec.msgpack.decode(data, ext_hook=_unpack_ext))
    raise ValueError(f"unknown msgpack extension {code}")  # a damaged index: a miss


def _rejected(ckpt: Checkpoint) -> bytes | None:
    """The CoW log's rejected rows and their order (`stored_rejected`), packed; None when the
    log is built already."""
    log = ckpt.pending_writes()
    if not isinstance(log, CowLog):
        return None
    rows, order = stored_rejected(log)
    return _pack([[row.as_data() for row in rows], order])


def _stored_rejected(data: bytes | None) -> tuple[list[CowWrite], list[int]] | None:
    if data is None:
        return None
    rows, order = msgspec.msgpack.decode(data, ext_hook=_unpack_ext)
    return [CowWrite.from_data(row) for row in rows], order


def _write(folder: Path, key: list[Any], run_id: str | None, sections: Iterable[Section]) -> None:
    """The index into a temporary file of `folder`, section by section (each one's CRC taken
    as it is written), the header last; then renamed into place. The caller holds the lock."""
    seed, (limit, what) = _seed(key), size_limit(key)
    handle, tmp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC + bytes(_START - len(MAGIC)))
            table, offset = [], 0
            for name, parts in sections:
                crc, size = seed, 0
                for part in parts:
                    data = memoryview(part).cast("B")
                    out.write(data)
                    crc, size = zlib.crc32(data, crc), size + data.nbytes
                out.write(bytes(_aligned(size) - size))
                table.append([name, offset, size, crc])
                offset += _aligned(size)
                if offset > limit:  # it would never be read: not written either
                    raise TooBig(f"it would be over its size limit ({what})")
            header = msgspec.msgpack.encode(
                {"format": FORMAT, "key": key, "run_id": run_id, "sections": table}
            )
            out.write(header + len(header).to_bytes(8, "little"))
            out.write(zlib.crc32(header).to_bytes(4, "little") + MAGIC)
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
    """The header, checked (magic at both ends, size, CRC, shape), and where the sections
    begin. Its place is read off the trailer: nothing before it is read."""
    size = os.fstat(fd).st_size
    if size < _START + _TRAILER or os.pread(fd, len(MAGIC), 0) != MAGIC:
        raise Damaged("not an index of this version")
    trailer = os.pread(fd, _TRAILER, size - _TRAILER)
    if len(trailer) != _TRAILER or trailer[12:] != MAGIC:
        raise Damaged("it is cut short (no header at its end)")
    length = int.from_bytes(trailer[:8], "little")
    if length > min(MAX_HEADER, size - _START - _TRAILER):
        raise Damaged("its header does not fit in it")
    raw = os.pread(fd, length, size - _TRAILER - length)
    if len(raw) != length or zlib.crc32(raw) != int.from_bytes(trailer[8:12], "little"):
        raise Damaged("its header does not match its checksum")
    try:
        header = msgspec.msgpack.decode(raw, type=_Header)
    except (msgspec.DecodeError, RecursionError):
        raise Damaged("its header is not of this version") from None
    if header.format != FORMAT:
        raise Damaged("not an index of this version")
    return header, _START


def header_place(fd: int) -> tuple[int, int]:
    """(where the header begins, its size): for tests that damage it."""
    size = os.fstat(fd).st_size
    length = int.from_bytes(os.pread(fd, 8, size - _TRAILER), "little")
    return size - _TRAILER - length, length


def exists(path: Path) -> bool:
    """Whether an index file of `path` is there at all (whether it is current is not read): a
    run without one is read from its files, whatever its files' keys say."""
    folder = index_dir(Path(path))
    return folder is not None and os.path.lexists(folder / INDEX_FILE)


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
    end, room = start, header_place(fd)[0]  # (the sections end where the header begins)
    piece = bytearray(4 * MIB)
    view = memoryview(piece)
    for _name, offset, length, crc in header.sections:
        if offset < 0 or length < 0 or start + offset < end or start + offset + length > room:
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
        ids=_texts_of(sections, "e.ids") if "e.ids" in sections else None,
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
