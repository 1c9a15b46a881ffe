"""Writers for small hand-made checkpoints used by the checkpoint reader tests."""

from __future__ import annotations

import gzip
import hashlib
import json
from datetime import UTC
from pathlib import Path
from typing import Any

T0 = 1_780_000_000.0  # an epoch in 2026
COW = "node_id does not match current node (CoW violation)"


def iso(ts: float) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def node(
    node_id: str,
    parent: str | None = None,
    ancestors: list[str] | None = None,
    created: float = T0,
    **extra: Any,
) -> dict[str, Any]:
    """A current-format node dict (§2.2); ancestors default to [] for roots."""
    anc = ancestors if ancestors is not None else ([] if parent is None else [parent])
    data = {
        "id": node_id,
        "parent_id": parent,
        "depth": len(anc),
        "status": "success",
        "retry_count": 0,
        "children": [],
        "created_at": iso(created),
        "completed_at": iso(created + 60),
        "artifacts": [],
        "metrics": {},
        "has_real_data": False,
        "eval_summary": f"direction of {node_id}",
        "label": "draft" if parent is None else "improve",
        "raw_label": "",
        "name": node_id,
        "error_log": None,
        "ancestor_ids": anc,
        "trace_log": [],
        "original_direction": f"direction of {node_id}",
        "node_report_path": None,
    }
    data.update(extra)
    return data


def chain_tree() -> list[dict[str, Any]]:
    """root → a → b, plus a sibling c of a."""
    return [
        node("root", created=T0),
        node("a", "root", ["root"], created=T0 + 100),
        node("c", "root", ["root"], created=T0 + 110),
        node("b", "a", ["root", "a"], created=T0 + 200),
    ]


def write_tree(ckpt: Path, nodes: list[Any], name: str = "tree.json", **top: Any) -> Path:
    ckpt.mkdir(parents=True, exist_ok=True)
    doc = {"run_id": top.pop("run_id", "20260101000000_test"), "nodes": nodes, **top}
    path = ckpt / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def scope(node_id: str, text: str, ts: float, metadata: dict | None = None) -> dict:
    return {
        "kind": "node_scope",
        "node_id": node_id,
        "text": text,
        "metadata": metadata or {},
        "ts": ts,
    }


def react(text: str, ts: float, metadata: dict | None = None) -> dict:
    return {"kind": "react_step", "text": text, "metadata": metadata or {}, "ts": ts}


def core_seed(context: dict) -> dict:
    return {"kind": "core_seed", "persona": "", "human": "", "context": context, "seeded_at": 0.0}


def backup_bytes(lines: list[Any]) -> bytes:
    """JSONL of the given records (str items are written verbatim)."""
    out = []
    for item in lines:
        out.append(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))
    return ("\n".join(out) + "\n").encode("utf-8")


def write_backup(ckpt: Path, lines: list[Any], raw: bytes | None = None) -> Path:
    path = ckpt / "memory_backup.jsonl.gz"
    path.write_bytes(gzip.compress(raw if raw is not None else backup_bytes(lines)))
    return path


def write_event(
    ts: float,
    node_id: str,
    entry_id: str,
    text: str,
    metadata: dict | None = None,
    collection: str = "node_scope",
) -> dict:
    return {
        "ts": ts,
        "node_id": node_id,
        "op": "write",
        "collection": collection,
        "entry_id": entry_id,
        "text_preview": text[:200],
        "metadata": metadata or {},
    }


def read_event(
    ts: float,
    node_id: str,
    query: str,
    ancestors: list[str] | None,
    limit: int = 5,
    results: list[dict] | None = None,
    collection: str = "node_scope",
) -> dict:
    return {
        "ts": ts,
        "node_id": node_id,
        "op": "read",
        "collection": collection,
        "query": query,
        "ancestor_ids": ancestors,
        "limit": limit,
        "results": results or [],
    }


def write_access(ckpt: Path, events: list[Any], name: str = "memory_access.jsonl") -> Path:
    path = ckpt / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(backup_bytes(events))
    return path


def call(tool: str, args: dict) -> str:
    """A trace_log call line."""
    return f"→ {tool}({json.dumps(args, ensure_ascii=False)})"


def result(payload: Any) -> str:
    """A trace_log result line: the MCP envelope's repr around the tool's JSON."""
    return "  ← " + str({"result": json.dumps(payload)})


def full_checkpoint(path: Path) -> Path:
    """Every file the loader reads, most of them trivial: two trees, two access logs, v0.5 stores."""
    write_tree(path, chain_tree())
    write_tree(path, chain_tree(), name="nodes_tree.json", experiment_goal="g")
    write_tree(path, [node("old")], name="node_1/tree.json")
    write_backup(path, [scope("a", "x", T0), core_seed({"primary_metric": "m"})])
    write_access(path, [write_event(T0 + 0.1, "a", "p", "x"), read_event(T0, "", "q", ["root"])])
    write_access(path, [read_event(T0 - 5, "", "q", ["root"])], name="memory_access.17.jsonl")
    (path / "memory_access.summary.json").write_text("{}")
    (path / "memory_store.jsonl").write_text("{}\n")
    (path / "memory.json").write_text("[]")
    for name in ("experiment.md", "idea.json", "evaluation_criteria.json"):
        (path / name).write_text("{}")
    return path


def write_cow_case(path: Path) -> Path:
    """b refuses twice (into its parent a, timed by its auto entry; into root, untimed) and
    writes its own entries; one write event has no backup entry."""
    nodes = chain_tree()
    auto_text = "Tool add_memory: " + json.dumps(
        {"result": json.dumps({"ok": False, "error": COW})}
    )
    nodes[3]["trace_log"] = [  # b tries to write into its parent a, then writes its own entry
        call("add_memory", {"node_id": "a", "text": "overwrite parent", "metadata": {"k": 1}}),
        result({"ok": False, "error": COW}),
        call("add_memory", {"node_id": "b", "text": "mine"}),
        result({"ok": True, "id": "p2"}),
        call("clear_node_memory", {"node_id": "root"}),
        "  ← " + str({"result": json.dumps({"removed": 0, "error": COW})}),
    ]
    write_tree(path, nodes)
    backup = [
        scope("a", "a finding", T0 + 150, {"type": "finding"}),
        scope("b", auto_text, T0 + 210, {"step": 3, "tool": "add_memory"}),
        scope("b", "mine", T0 + 220),
        scope("b", "Tool clear_node_memory: lost", T0 + 225, {"step": 5, "tool": "x"}),
    ]
    write_backup(path, backup)
    write_access(
        path,
        [
            write_event(T0 + 150.2, "a", "p0", "a finding", {"type": "finding"}),
            write_event(T0 + 210.1, "b", "p1", auto_text, {"step": 3, "tool": "add_memory"}),
            write_event(T0 + 220.1, "b", "p2", "mine"),
            write_event(T0 + 400, "b", "p3", "after the backup"),
        ],
    )
    return path


def dir_fingerprint(root: Path) -> dict[str, tuple[str, int]]:
    """sha1 and mtime_ns of every file under root (to prove nothing was written)."""
    result = {}
    for path in sorted(root.rglob("*")):
        stat = path.stat()
        digest = hashlib.sha1(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        result[str(path.relative_to(root))] = (digest, stat.st_mtime_ns)
    return result
