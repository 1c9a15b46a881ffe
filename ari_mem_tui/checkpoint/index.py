"""A persistent index of a loaded run, so that reopening unchanged files skips the parse.

Kept outside the checkpoint, in `<cache>/index/<sha1 of the checkpoint's real path>/` (the cache
is $ARI_MEM_TUI_CACHE or the user's cache dir; $ARI_MEM_TUI_INDEX names another folder, or
`off`). The key is every file the loader may read: (name, device, inode, size, mtime_ns) and a
hash of its first and last 64 KiB, with the loader's own source; any difference and the run is
loaded from its files again and the index rewritten. The index is msgpack (data only, never
code): the records' field values, rebuilt into the same models on reopen. Trace logs stay
undecoded bytes, as after a fresh load: views into the memory-mapped index, read from disk only
when a node's trace is; the CoW log is not stored but built again, from the same inputs, when it
is first read.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from platformdirs import user_cache_dir

from ari_mem_tui.checkpoint.access_log import access_files
from ari_mem_tui.checkpoint.attribution import READ_TOOLS
from ari_mem_tui.checkpoint.cow import CowLog
from ari_mem_tui.checkpoint.limits import current
from ari_mem_tui.checkpoint.trace_log import TraceCallsByNode, trace_calls_of
from ari_mem_tui.checkpoint.tree import link_ancestors
from ari_mem_tui.model import (
    AccessEvent,
    Checkpoint,
    CoreBlocks,
    JsonStrings,
    MemoryEntry,
    Node,
    Problem,
    RunGraph,
)

FORMAT = 7  # 2: rebuilt ancestor_ids are not stored (the edges give them); 3: the body holds
# the CoW log's (accepted, rejected) counts and its rows stay undecoded until first read;
# 4: entries and events are msgspec Structs, written and read as such; 5: no CoW rows;
# 6: the key alone in the first section (is_current); 7: the trace logs in a last section of
# their own, read through a memory map
INDEX_ENV = "ARI_MEM_TUI_INDEX"
CACHE_ENV = "ARI_MEM_TUI_CACHE"
EDGE = 1 << 16  # bytes hashed at each end of a file
INDEX_FILE = "index.msgpack"
_CODE = Path(__file__).resolve().parent.parent  # the package: its loader and model sources


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
        with path.open("rb") as handle:
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


# ---- writing ----


_KEPT = {"trace_log"}
_REBUILT = {"trace_log", "ancestor_ids"}


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
    # rebuilt ancestors are not stored: the edges give them again, lazily
    nodes = [
        node.model_dump(exclude=_REBUILT if node.scope_reconstructed else _KEPT)
        for node in ckpt.nodes.values()
    ]
    traces = [node.trace_json() for node in ckpt.nodes.values()]
    head = {"key": key, "run_id": ckpt.run_id}  # alone, so `is_current` reads only this
    body = {
        "tree_source": ckpt.tree_source,
        "experiment_goal": ckpt.experiment_goal,
        "roots": ckpt.roots,
        "edges": list(ckpt.graph.edges),
        "nodes": nodes,
        "trace_sizes": [len(trace) for trace in traces],
        "core": ckpt.core.model_dump(),
        "letta_embedding_config": ckpt.letta_embedding_config,
        "access_summary": ckpt.access_summary,
        "trace_call_count": ckpt.trace_call_count(),
        "write_counts": list(ckpt.write_counts()),
        "problems": [p.model_dump() for p in ckpt.problems],
    }
    encoder = msgspec.msgpack.Encoder()
    try:
        # one section at a time, so that the rows of only one list are held at once
        sections = [encoder.encode(head), encoder.encode(body)]
        # the bulk records are Structs: msgspec writes and reads them without a Python loop
        sections.append(encoder.encode(ckpt.entries))
        sections.append(encoder.encode(ckpt.access_events))
        sections.append(b"".join(traces))  # JSON as the file had it: sliced, never decoded
        # no CoW rows: they follow from the entries, events and trace logs, and building them
        # only to store them took longer than building them again when they are first read
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, tmp = tempfile.mkstemp(dir=folder, prefix=".index-")
        try:
            with os.fdopen(handle, "wb") as out:
                for data in sections:
                    out.write(len(data).to_bytes(8, "little"))
                    out.write(data)
            os.replace(tmp, folder / INDEX_FILE)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, TypeError, OverflowError, ValueError, msgspec.EncodeError):
        return False
    return True


# ---- reading ----


def _sections(path: Path) -> list[memoryview]:
    """Views into the file, memory-mapped (no copies: a 10k-node run's index is hundreds of MB,
    and the pages of trace logs nobody reads are never read from disk). The index is replaced by
    a rename, never written in place, so the mapped file does not change under the views."""
    with path.open("rb") as handle:
        data = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
    sections, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 8], "little")
        sections.append(data[pos + 8 : pos + 8 + size])
        pos += 8 + size
    return sections


def _own_index(path: Path) -> Path | None:
    folder = index_dir(path)
    if folder is None:
        return None
    info = (folder / INDEX_FILE).stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None  # only an index of our own, that nobody else could have written
    return folder / INDEX_FILE


def _current(head: dict, path: Path) -> bool:
    return head.get("key") == run_key(path, head.get("run_id"))


def _head(stored: Path) -> dict:
    """The index's first section (the key and run id) alone, without reading the rest."""
    with stored.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        head = msgspec.msgpack.decode(handle.read(size))
    return head if isinstance(head, dict) else {}


def is_current(path: Path) -> bool:
    """Whether `load(path)` would give the run (an index of the unchanged files exists), read
    off the index's first section alone: a few milliseconds, however big the run."""
    try:
        stored = _own_index(Path(path))
        return stored is not None and _current(_head(stored), Path(path))
    except Exception:  # noqa: BLE001 - no index, or a damaged one: not current
        return False


def load(path: Path) -> Checkpoint | None:
    """The run as indexed, when the index exists and every file it was built from is unchanged;
    else None."""
    try:
        stored = _own_index(Path(path))
        if stored is None:
            return None
        head = _head(stored)
        if not _current(head, Path(path)):
            return None  # a stale index is not read further
        sections = _sections(stored)
        body = msgspec.msgpack.decode(sections[1])
        ckpt = _rebuild(Path(path), head["run_id"], body, sections)
        _forget_decoded(sections)
        return ckpt
    except Exception:  # noqa: BLE001 - a damaged or foreign index is only a missed shortcut
        return None


def _forget_decoded(sections: list[memoryview]) -> None:
    """Let the kernel drop the mapped pages already decoded into objects (only the trace logs'
    are read again), so they do not stay in the process's memory."""
    mapped = sections[0].obj
    if isinstance(mapped, mmap.mmap) and hasattr(mapped, "madvise"):
        done = len(mapped) - len(sections[-1])  # every section before the trace logs
        mapped.madvise(mmap.MADV_DONTNEED, 0, done - done % mmap.PAGESIZE)


def _rebuild(path: Path, run_id: str | None, body: dict, sections: list[memoryview]) -> Checkpoint:
    """The Checkpoint from the index's sections (views of the file's bytes): the entries and
    events decoded straight into their Structs; the CoW log and the trace calls are built on
    their first read."""

    decode = msgspec.msgpack.decode

    ckpt = Checkpoint(path=path)
    ckpt.run_id, ckpt.tree_source = run_id, body["tree_source"]
    ckpt.experiment_goal = body["experiment_goal"]
    traces, start = sections[4], 0
    for fields, size in zip(body["nodes"], body["trace_sizes"], strict=True):
        fields["trace_log"] = JsonStrings(traces[start : start + size])
        start += size
        node = Node.model_validate(fields)
        ckpt.nodes[node.id] = node
    graph = RunGraph()
    graph.add_nodes_from(ckpt.nodes)
    graph.add_edges_from(body["edges"])
    ckpt.graph, ckpt.roots = graph, body["roots"]
    parent: dict[str, str | None] = dict.fromkeys(ckpt.nodes)
    parent.update((child, up) for up, child in body["edges"])
    rebuilt = [nid for nid, node in ckpt.nodes.items() if node.scope_reconstructed]
    link_ancestors(ckpt.nodes, parent, rebuilt)
    ckpt.core = CoreBlocks.model_validate(body["core"])
    ckpt.letta_embedding_config = body["letta_embedding_config"]
    ckpt.access_summary = body["access_summary"]
    ckpt.problems = [Problem.model_validate(p) for p in body["problems"]]
    ckpt.entries = decode(sections[2], type=list[MemoryEntry])
    ckpt.access_events = decode(sections[3], type=list[AccessEvent])
    # the CoW log as the load built it, from the same inputs: built when it is first read, one
    # node's rows parsing only that node's trace_log
    calls = TraceCallsByNode(ckpt.nodes, READ_TOOLS)
    cow = CowLog(ckpt.entries, ckpt.access_events, calls, tuple(body["write_counts"]))
    ckpt.defer_writes(cow)
    ckpt.defer_trace_calls(trace_calls_of(ckpt.nodes), body["trace_call_count"])
    ckpt.reindex()
    return ckpt
