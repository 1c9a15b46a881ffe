"""The node tree: `tree.json` → `nodes_tree.json` → `node_*/tree.json` (§2.1–§2.6).

Bad nodes become problems; the rest of the tree still loads. The graph is built from `parent_id`
(the field ARI itself trusts), with cycles broken so nothing downstream can loop forever.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import networkx as nx
from msgspec import UNSET, UnsetType, ValidationError

from ari_mem_tui.checkpoint.jsonfile import (
    MAX_DEPTH,
    depth_exceeds,
    read_json,
    read_whole,
    salvage_list,
    usable_file,
)
from ari_mem_tui.model import (
    NODE_LABELS,
    JsonList,
    JsonStrings,
    Node,
    ParentChain,
    Problem,
    set_depths,
    tree_graph,
)

SIDE_FILE_BYTES = 1 << 20  # trace logs past this size are kept in a mapped file, not in memory
RUN_ID_DIR = re.compile(r"^[0-9]{8,14}_")

_STR_FIELDS = (
    "parent_id",
    "status",
    "created_at",
    "completed_at",
    "eval_summary",
    "label",
    "raw_label",
    "name",
    "error_log",
    "original_direction",
    "node_report_path",
)
_INT_FIELDS = ("depth", "retry_count")
_STR_LIST_FIELDS = ("children", "ancestor_ids", "trace_log")


@dataclass
class TreeResult:
    source: str | None = None  # file the tree came from, relative to the checkpoint
    document: Any = None  # the parsed document of that file
    run_id: str | None = None
    nodes: dict[str, Node] = field(default_factory=dict)
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    roots: list[str] = field(default_factory=list)
    node_memory: dict[str, Any] = field(default_factory=dict)  # nodes_tree.json `memory` arrays


# ---- finding and reading the document ----


def tree_candidates(ckpt: Path) -> list[Path]:
    """ARI's precedence: tree.json, nodes_tree.json, then node_*/tree.json newest first."""
    found = [ckpt / "tree.json", ckpt / "nodes_tree.json"]
    legacy: list[tuple[float, str, Path]] = []
    for sub in ckpt.glob("node_*/tree.json"):
        try:
            stat = sub.stat()
        except OSError:
            continue
        if stat.st_size > 2:  # ARI skips "{}" and empty files
            legacy.append((stat.st_mtime, str(sub), sub))
    legacy.sort(reverse=True)
    return found + [item[2] for item in legacy]


def raw_node_list(document: Any) -> list[Any] | None:
    """The node dicts of a tree document, whichever of the known shapes it has."""
    if isinstance(document, dict):
        nodes = document.get("nodes")
        if isinstance(nodes, list):
            return nodes
        if isinstance(nodes, dict):  # the documented-but-unused {id: node} shape
            return [
                {"id": key, **value} if isinstance(value, dict) and "id" not in value else value
                for key, value in nodes.items()
            ]
        if "id" in document:  # very old node_*/tree.json holding one node
            return [document]
        return None
    if isinstance(document, list):
        return document
    return None


_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_NODES = msgspec.json.Decoder(list[dict[str, msgspec.Raw]]).decode
_STRINGS = msgspec.json.Decoder(list[str]).decode
_VALUE = msgspec.json.Decoder().decode


class _NotPlain(Exception):
    """The document is not the plain shape the fast reader takes; the full reader will."""


def _value(raw: msgspec.Raw) -> Any:
    value = _VALUE(raw)
    if isinstance(value, (dict, list)):
        data = bytes(raw)
        if data.count(b"[") + data.count(b"{") > MAX_DEPTH - 3 and depth_exceeds(
            value, MAX_DEPTH - 3
        ):
            raise _NotPlain
    return value


Scan = Callable[[bytes, list[str]], Any]  # what to take from a trace_log's lines (or None)


def _trace_field(raw: msgspec.Raw, scan: Scan | None = None) -> Any:
    """A trace_log that is an array of strings stays undecoded (checked; its bytes kept, and
    what `scan` takes from its lines while they are decoded)."""
    try:
        lines = _STRINGS(raw)
    except msgspec.ValidationError:
        return _value(raw)  # not strings: the type checks name what is wrong
    return JsonStrings(raw, None if scan is None else scan(bytes(raw), lines))


def _artifacts_field(raw: msgspec.Raw) -> Any:
    """An artifacts array not nested too deeply stays undecoded (its bytes kept)."""
    data = bytes(raw)
    if data[:1] != b"[" or data.count(b"[") + data.count(b"{") > MAX_DEPTH - 3:
        return _value(raw)  # not an array, or maybe deep: decoded and checked now
    return JsonList(data)


def _lazy_fields(scan: Scan | None) -> dict[str, Callable[[msgspec.Raw], Any]]:
    """The readers of the fields kept undecoded, by key."""
    return {"trace_log": partial(_trace_field, scan=scan), "artifacts": _artifacts_field}


def _own_copies(nodes: list[dict[str, Any]]) -> None:
    """The undecoded fields' bytes copied into a buffer of their own, so that the file's buffer
    they were views of can go (a big run's tree.json is hundreds of MB, most of it trace logs
    nobody reads until a node is looked at). The buffer is an unnamed temporary file, mapped:
    its pages stay on disk (in the page cache), out of the process's memory, until a node's
    trace is read, as a reopened run's stay in its mapped index."""
    lazy = [
        (node, key, value)
        for node in nodes
        for key, value in node.items()
        if type(value) in (JsonStrings, JsonList)
    ]
    view, pos = _side_buffer([value.raw for _, _, value in lazy]), 0
    for node, key, value in lazy:
        size = len(value.raw)
        node[key] = type(value)(view[pos : pos + size], value.scanned)
        pos += size


def _side_buffer(parts: list[Any]) -> memoryview:
    """`parts` one after the other, in a mapped temporary file (in memory if none can be made)."""
    total = sum(len(part) for part in parts)
    if total >= SIDE_FILE_BYTES:
        try:
            with tempfile.TemporaryFile(prefix="ari-mem-tui-", buffering=0) as handle:
                _write_all(handle.fileno(), parts)
                return memoryview(mmap.mmap(handle.fileno(), total, access=mmap.ACCESS_READ))
        except (OSError, ValueError):
            pass
    side = bytearray(total)
    view, pos = memoryview(side), 0
    for part in parts:
        view[pos : pos + len(part)] = part
        pos += len(part)
    return view


def _write_all(fd: int, parts: list[Any]) -> None:
    """`parts` written to `fd` one after the other, many per system call where the system has
    one for that (10k nodes' trace logs and artifacts are 20,000 parts)."""
    writev = getattr(os, "writev", None)
    if writev is None:
        for part in parts:
            _write_one(fd, memoryview(part).cast("B"))
        return
    for start in range(0, len(parts), _IOV):
        pending = [memoryview(part).cast("B") for part in parts[start : start + _IOV]]
        first = 0
        while first < len(pending):
            done = writev(fd, pending[first:])
            while first < len(pending) and done >= len(pending[first]):
                done -= len(pending[first])
                first += 1
            if done:  # (a short write, part-way through a part)
                pending[first] = pending[first][done:]


_IOV = 1024  # parts per writev (Linux's IOV_MAX)


def _write_one(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data) :]


def forget_read_pages(nodes: dict[str, Node]) -> None:
    """Drop the pages of the mapped trace logs read so far (a pass over every node's) from the
    process's memory: they stay in the page cache, and a later read maps them again."""
    done: set[int] = set()
    for node in nodes.values():
        owner = getattr(node.trace_raw(), "obj", None)
        if isinstance(owner, mmap.mmap) and id(owner) not in done:
            done.add(id(owner))
            with contextlib.suppress(OSError, ValueError):
                owner.madvise(mmap.MADV_DONTNEED)


def fast_tree_document(path: Path, scan: Scan | None = None) -> Any:
    """The `{"nodes": [{...}, ...], ...}` document of `path`, decoded by msgspec with every
    node's trace_log and artifacts left as checked bytes (in a buffer of their own; `scan`
    given each trace_log's lines as they are checked); None when the file is not of that
    plain shape or does not decode (the full reader then says why)."""
    lazy = _lazy_fields(scan)
    try:
        data = read_whole(path)  # over the file limit: the full reader names the problem
        top = _TOP(data)
        if "nodes" not in top:
            return None
        raw_nodes = top.pop("nodes")
        document = {key: _value(raw) for key, raw in top.items()}
        nodes = _plain_nodes(raw_nodes, lazy)
        if nodes is None:
            nodes = [
                {key: lazy.get(key, _value)(raw) for key, raw in node.items()}
                for node in _NODES(raw_nodes)
            ]
    except (OSError, msgspec.DecodeError, RecursionError, _NotPlain):
        return None
    del top, raw_nodes, data
    _own_copies(nodes)
    document["nodes"] = nodes
    return document


class _PlainNode(msgspec.Struct, forbid_unknown_fields=True):
    """A node of only the fields ARI writes, each of the type `build_node` wants (UNSET: the
    key is absent), decoded in C; a tree with any other node takes the per-key reader. The
    fields that can nest are kept as bytes (metrics, trace_log, artifacts: a Raw cannot be in
    a union, so UNSET is only their default)."""

    id: str | int | UnsetType = UNSET
    parent_id: str | None | UnsetType = UNSET
    depth: int | None | UnsetType = UNSET
    status: str | None | UnsetType = UNSET
    retry_count: int | None | UnsetType = UNSET
    children: list[str] | None | UnsetType = UNSET
    created_at: str | None | UnsetType = UNSET
    completed_at: str | None | UnsetType = UNSET
    artifacts: msgspec.Raw = UNSET  # type: ignore[assignment]
    metrics: msgspec.Raw = UNSET  # type: ignore[assignment]
    has_real_data: bool | None | UnsetType = UNSET
    eval_summary: str | None | UnsetType = UNSET
    label: str | None | UnsetType = UNSET
    raw_label: str | None | UnsetType = UNSET
    name: str | None | UnsetType = UNSET
    error_log: str | None | UnsetType = UNSET
    ancestor_ids: list[str] | None | UnsetType = UNSET
    trace_log: msgspec.Raw = UNSET  # type: ignore[assignment]
    original_direction: str | None | UnsetType = UNSET
    node_report_path: str | None | UnsetType = UNSET


_PLAIN_NODES = msgspec.json.Decoder(list[_PlainNode]).decode
_PLAIN_KEYS = _PlainNode.__struct_fields__
_RAW_KEYS = ("artifacts", "metrics", "trace_log")  # the `_PlainNode` fields kept as bytes


def _plain_nodes(
    raw: msgspec.Raw, lazy: dict[str, Callable[[msgspec.Raw], Any]] | None = None
) -> list[dict[str, Any]] | None:
    """The nodes as the per-key reader gives them when every node is a `_PlainNode` (the
    dicts' keys in field order; the fields kept as bytes read as that reader reads them:
    `lazy`'s, else decoded), else None."""
    lazy = _lazy_fields(None) if lazy is None else lazy
    try:
        plain = _PLAIN_NODES(raw)
    except msgspec.ValidationError:
        return None
    nodes = []
    for node in plain:
        fields = {
            key: value
            for key, value in zip(_PLAIN_KEYS, msgspec.structs.astuple(node))
            if value is not UNSET
        }
        for key in _RAW_KEYS:
            if key in fields:
                fields[key] = lazy.get(key, _value)(fields[key])
        nodes.append(fields)
    return nodes


def read_tree_document(
    ckpt: Path, problems: list[Problem], scan: Scan | None = None
) -> tuple[str | None, Any, list]:
    broken: list[tuple[Path, str]] = []  # files that exist but do not parse whole
    for path in tree_candidates(ckpt):
        name = path.relative_to(ckpt).as_posix()
        if not usable_file(path, name, problems):
            continue
        document = fast_tree_document(path, scan)
        if document is None:
            document = read_json(path, name, problems)
        if document is None:
            broken.append((path, name))
            continue
        nodes = raw_node_list(document)
        if not nodes:
            problems.append(
                Problem(
                    file=name, what="not used as the tree", why="no nodes in it", severity="warning"
                )
            )
            continue
        return name, document, nodes
    return _salvage(broken, problems)


def _salvage(
    broken: list[tuple[Path, str]], problems: list[Problem]
) -> tuple[str | None, Any, list]:
    """No tree file parsed whole: take the complete nodes at the start of the first that has
    some (a tree.json half-written by ARI's in-place write keeps its first nodes)."""
    for path, name in broken:
        nodes = salvage_list(path, "nodes")
        if nodes:
            problems.append(
                Problem(
                    file=name,
                    what=f"salvaged the first {len(nodes)} nodes; the rest is unreadable",
                    why="the file is cut short or damaged after them (half-written?)",
                    severity="warning",
                )
            )
            return name, {"nodes": nodes}, nodes
    return None, None, []


# ---- one node ----


def _check_types(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy with wrongly typed known fields removed, and a note for each removal."""
    clean = dict(raw)
    bad: list[str] = []

    def drop(key: str, expected: str) -> None:
        bad.append(f"{key}={_excerpt(clean.pop(key))} (expected {expected})")

    for key in _STR_FIELDS:
        if key in clean and clean[key] is not None and not isinstance(clean[key], str):
            drop(key, "string")
    for key in _INT_FIELDS:
        if key in clean and clean[key] is not None:
            _check_int(clean, key, drop)
    for key in _STR_LIST_FIELDS:
        if key in clean:
            _check_str_list(clean, key, bad, drop)
    _check_others(clean, drop)
    return clean, bad


def _check_others(clean: dict[str, Any], drop: Callable[[str, str], None]) -> None:
    """artifacts (a list), metrics (an object): None is removed; has_real_data a boolean."""
    for key, kind, expected in (("artifacts", list, "list"), ("metrics", dict, "object")):
        if key in clean and type(clean[key]) is not JsonList:  # (checked by the reader)
            if clean[key] is None:
                del clean[key]
            elif not isinstance(clean[key], kind):
                drop(key, expected)
    if "has_real_data" in clean and not isinstance(clean["has_real_data"], (bool, type(None))):
        drop("has_real_data", "boolean")


def _check_int(clean: dict[str, Any], key: str, drop: Callable[[str, str], None]) -> None:
    """An integer field: a whole float becomes an int, anything else is dropped."""
    value = clean[key]
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            clean[key] = int(value)
        else:
            drop(key, "integer")


def _check_str_list(
    clean: dict[str, Any], key: str, bad: list[str], drop: Callable[[str, str], None]
) -> None:
    """A list-of-strings field: None is removed, other items are dropped from the list."""
    value = clean[key]
    if type(value) is JsonStrings:  # checked by the reader
        return
    if value is None:
        del clean[key]
    elif not isinstance(value, list):
        drop(key, "list of strings")
    elif not all(isinstance(item, str) for item in value):
        kept = [item for item in value if isinstance(item, str)]
        bad.append(f"{len(value) - len(kept)} non-string items of {key}")
        clean[key] = kept


def _excerpt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def normalize_label(value: str) -> str:
    """`label=NodeLabel.IMPROVE`, `NodeLabel.IMPROVE` or `Improve` → `improve` (§2.6, §3.9)."""
    text = value.strip()
    text = text.removeprefix("label=")
    text = text.removeprefix("NodeLabel.")
    return text.lower() if text.lower() in NODE_LABELS else value


@dataclass
class _Legacy:
    """Counts of legacy shapes met, reported once per tree instead of once per node."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def note(self, what: str, node_id: str) -> None:
        self.counts[what] += 1
        self.examples.setdefault(what, node_id)


def build_node(
    raw: Any, index: int, name: str, problems: list[Problem], legacy: _Legacy
) -> tuple[Node | None, Any]:
    """A Node from one raw dict (or None with a problem), and its nodes_tree `memory` array."""
    where = f"nodes[{index}]"
    if not isinstance(raw, dict):
        problems.append(
            Problem(
                file=name,
                where=where,
                what="skipped a node",
                why=f"not an object ({type(raw).__name__})",
            )
        )
        return None, None
    node_id = raw.get("id")
    if isinstance(node_id, int) and not isinstance(node_id, bool):
        node_id = str(node_id)
    if not isinstance(node_id, str) or not node_id:
        problems.append(Problem(file=name, where=where, what="skipped a node", why="no string id"))
        return None, None
    clean, bad = _check_types({**raw, "id": node_id})
    if bad:
        problems.append(
            Problem(
                file=name,
                where=f"node {node_id}",
                what="ignored wrongly typed fields",
                why="; ".join(bad),
            )
        )
    memory = clean.pop("memory", None)  # read separately as a memory source (§2.3)
    if clean.get("eval_summary") is None and isinstance(clean.get("score_reason"), str):
        clean["eval_summary"] = clean["score_reason"]
        legacy.note("score_reason read as eval_summary", node_id)
    label = clean.get("label")
    if label is None:
        clean["label"] = "draft"
        legacy.note("no label; assumed draft (ARI's resume default)", node_id)
    elif label != normalize_label(label):
        clean["label"] = normalize_label(label)
        legacy.note("label written as an enum repr; read as the plain label", node_id)
    try:
        # (every field's type is checked above but the loader's own flag, which a file may
        # carry as anything: msgspec's pass then says what is wrong with it)
        flag = type(clean.get("scope_reconstructed", False)) is bool
        node = Node.checked(clean) if flag else Node.from_data(clean)
    except ValidationError as exc:  # defensive: the type checks above should prevent this
        problems.append(
            Problem(file=name, where=f"node {node_id}", what="skipped a node", why=str(exc))
        )
        return None, None
    return node, memory


# ---- the graph ----


def cut_cycles(graph: nx.DiGraph, name: str, problems: list[Problem]) -> None:
    """Cut every parent_id cycle of `graph` (each a strongly connected component: a node has
    one parent, so such a component is one cycle) at its earliest-created node, which becomes
    a root, and name the cycle (`nx.find_cycle`) in a problem."""
    order = {node_id: i for i, node_id in enumerate(graph)}  # (the graph keeps creation order)
    cycles = [
        members
        for members in nx.strongly_connected_components(graph)
        if len(members) > 1 or graph.has_edge(*[next(iter(members))] * 2)
    ]
    for members in sorted(cycles, key=lambda found: min(map(order.__getitem__, found))):
        cut = min(members, key=order.__getitem__)
        downwards = [parent for parent, _child in nx.find_cycle(graph, source=cut)]
        at = downwards.index(cut)
        path = [cut, *reversed(downwards[at + 1 :] + downwards[:at])]  # cut's parent_id first
        graph.remove_edge(path[1] if len(path) > 1 else cut, cut)
        problems.append(
            Problem(
                file=name,
                where=f"node {cut}",
                what="treated the node as a root",
                why="parent_id cycle: " + " → ".join(path[:8]) + (" …" if len(path) > 8 else ""),
                severity="error",
            )
        )


def link_ancestors(nodes: dict[str, Node], graph: nx.DiGraph, reconstructed: Iterable[str]) -> None:
    """Give each `reconstructed` node its ancestors as a ParentChain over the (acyclic) tree:
    no node's list is materialised, so a 20,000-deep chain costs O(n), not O(n²)."""
    depth = graph.nodes
    for node_id in reconstructed:
        node = nodes[node_id]
        node.ancestor_ids = ParentChain(graph, node_id, depth[node_id]["depth"])  # type: ignore[assignment]
        node.scope_reconstructed = True


def check_scope(node: Node, name: str, problems: list[Problem]) -> None:
    """ARI's invariants on ancestor_ids: len == depth, last == parent_id, root has none."""
    issues: list[str] = []
    ancestors = node.ancestor_ids
    if node.depth is not None and len(ancestors) != node.depth:
        issues.append(f"len(ancestor_ids)={len(ancestors)} but depth={node.depth}")
    if node.parent_id is None and ancestors:
        issues.append("a node without parent_id has ancestor_ids")
    if node.parent_id is not None and ancestors and ancestors[-1] != node.parent_id:
        issues.append(f"ancestor_ids[-1]={ancestors[-1]!r} but parent_id={node.parent_id!r}")
    if node.parent_id is not None and not ancestors:
        issues.append("a child with empty ancestor_ids (it could read no memory)")
    # a chain rebuilt from the (cycle-free) parent links never holds its own node
    if type(ancestors) is not ParentChain and node.id in ancestors:
        issues.append("the node is in its own ancestor_ids")
    if issues:
        problems.append(
            Problem(
                file=name,
                where=f"node {node.id}",
                what="kept ancestor_ids as written",
                why="; ".join(issues),
            )
        )


def _parent_edges(
    nodes: dict[str, Node], name: str, problems: list[Problem]
) -> list[tuple[str, str]]:
    """(parent, child) of each node whose parent_id is a node of the tree (node order); one
    whose parent is not in the tree is a root, said in a problem."""
    edges = []
    for node_id, node in nodes.items():
        pid = node.parent_id
        if pid is not None and pid not in nodes:
            problems.append(
                Problem(
                    file=name,
                    where=f"node {node_id}",
                    what="treated the node as a root",
                    why=f"parent {pid!r} is not in the tree",
                )
            )
        elif pid is not None:
            edges.append((pid, node_id))
    return edges


def build_graph(
    nodes: dict[str, Node], has_scope: set[str], name: str, problems: list[Problem]
) -> tuple[nx.DiGraph, list[str]]:
    """The tree from each node's parent_id (a parent not in the tree: the node is a root; a
    cycle: cut), its roots in creation order; each node's depth where the file had none, and
    ancestor_ids where it had none (from the tree)."""
    graph = tree_graph(nodes, _parent_edges(nodes, name, problems))
    try:
        set_depths(graph)
    except nx.NetworkXUnfeasible:  # a broken tree: parent_id cycles
        cut_cycles(graph, name, problems)
        set_depths(graph)
    reconstructed = [n for n in nodes if n not in has_scope]
    link_ancestors(nodes, graph, reconstructed)
    missing_depth = 0
    for node_id, node in nodes.items():
        if node.depth is None:
            node.depth = graph.nodes[node_id]["depth"]
            missing_depth += 1
        check_scope(node, name, problems)
    if missing_depth:
        problems.append(
            Problem(
                file=name,
                what=f"computed depth of {missing_depth} nodes from parent_id",
                why="depth missing",
                severity="info",
            )
        )
    if reconstructed:
        problems.append(
            Problem(
                file=name,
                where=f"node {reconstructed[0]}",
                what=f"rebuilt ancestor_ids of {len(reconstructed)} nodes from parent_id",
                why="ancestor_ids missing (pre-scope tree); flagged scope_reconstructed",
                severity="info",
            )
        )
    roots = [node_id for node_id, degree in graph.in_degree() if degree == 0]
    if len(roots) > 1:
        shown = ", ".join(roots[:5]) + (" …" if len(roots) > 5 else "")
        problems.append(
            Problem(file=name, what=f"kept {len(roots)} roots", why=f"several roots: {shown}")
        )
    return graph, roots


def load_tree(ckpt: Path, problems: list[Problem], scan: Scan | None = None) -> TreeResult:
    """The tree of the checkpoint; TreeResult.source is None when there is no tree at all.
    `scan`: what to take from each trace_log's lines while the reader has them decoded (kept
    on the node: `Node.take_trace_scan`)."""
    name, document, raw_nodes = read_tree_document(ckpt, problems, scan)
    result = TreeResult(source=name, document=document)
    if name is None:
        return result
    _build(result, raw_nodes, name, problems)
    result.run_id = _run_id(document, ckpt)
    return result


def _build(
    result: TreeResult, raw_nodes: Iterable[Any], name: str, problems: list[Problem]
) -> None:
    """The nodes, graph and roots of `raw_nodes` into `result`."""
    legacy = _Legacy()
    has_scope: set[str] = set()
    for index, raw in enumerate(raw_nodes):
        node, memory = build_node(raw, index, name, problems, legacy)
        if node is None:
            continue
        if node.id in result.nodes:
            problems.append(
                Problem(
                    file=name,
                    where=f"nodes[{index}]",
                    what="skipped a duplicate node",
                    why=f"id {node.id!r} already defined earlier; the first one is kept",
                )
            )
            continue
        result.nodes[node.id] = node
        if isinstance(raw, dict) and isinstance(raw.get("ancestor_ids"), list):
            has_scope.add(node.id)
        if memory is not None:
            result.node_memory[node.id] = memory
    for what, count in legacy.counts.items():
        problems.append(
            Problem(
                file=name,
                where=f"node {legacy.examples[what]}",
                what=f"{count} nodes: {what}",
                why="legacy node shape (§2.6)",
                severity="info",
            )
        )
    result.graph, result.roots = build_graph(result.nodes, has_scope, name, problems)


class _SketchNode(msgspec.Struct):
    """What drawing the tree reads of a node; the decoder skips every other key (the trace
    logs and artifacts, most of a big tree.json's bytes). Each value as JSON has it:
    `build_node` checks the types, as for the full read."""

    id: Any = UNSET
    parent_id: Any = UNSET
    depth: Any = UNSET
    status: Any = UNSET
    retry_count: Any = UNSET
    children: Any = UNSET
    created_at: Any = UNSET
    completed_at: Any = UNSET
    metrics: Any = UNSET
    has_real_data: Any = UNSET
    eval_summary: Any = UNSET
    label: Any = UNSET
    raw_label: Any = UNSET
    name: Any = UNSET
    ancestor_ids: Any = UNSET
    original_direction: Any = UNSET


class _SketchDocument(msgspec.Struct):
    nodes: list[_SketchNode]
    run_id: Any = None


_SKETCH = msgspec.json.Decoder(_SketchDocument).decode
_SKETCH_KEYS = _SketchNode.__struct_fields__


def sketch_tree(ckpt: Path) -> TreeResult | None:
    """The tree to draw while the run loads: the file the full reader would take first, its
    nodes decoded without their trace logs and artifacts (~6x less work on a 10k-node tree),
    built as the full reader builds them (the same ids, parents and roots); None when that
    file is not of the plain `{"nodes": [...]}` shape, or does not decode (the full read then
    shows the tree). Its problems are the full read's to say."""
    problems: list[Problem] = []
    for path in tree_candidates(ckpt)[:2]:
        name = path.relative_to(ckpt).as_posix()
        if not usable_file(path, name, problems):
            continue
        try:
            document = _SKETCH(read_whole(path))
        except (OSError, msgspec.DecodeError, RecursionError):
            return None
        if any(depth_exceeds(node.metrics, MAX_DEPTH - 3) for node in document.nodes):
            return None  # (the full reader says what it makes of those)
        raw_nodes = (
            {k: v for k, v in zip(_SKETCH_KEYS, msgspec.structs.astuple(n)) if v is not UNSET}
            for n in document.nodes
        )
        result = TreeResult(source=name)
        _build(result, raw_nodes, name, problems)
        result.run_id = _run_id(document.run_id and {"run_id": document.run_id}, ckpt)
        return result if result.nodes else None
    return None


def _run_id(document: Any, ckpt: Path) -> str | None:
    if (
        isinstance(document, dict)
        and isinstance(document.get("run_id"), str)
        and document["run_id"]
    ):
        return document["run_id"]
    name = ckpt.resolve().name
    return name if RUN_ID_DIR.match(name) else None
