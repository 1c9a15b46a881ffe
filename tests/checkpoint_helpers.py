"""Writers for small hand-made checkpoints used by the checkpoint reader tests."""

from __future__ import annotations

import gzip
import hashlib
import json
from datetime import UTC
from pathlib import Path
from typing import Any

T0 = 1_780_000_000.0  # an epoch in 2026


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


def dir_fingerprint(root: Path) -> dict[str, tuple[str, int]]:
    """sha1 and mtime_ns of every file under root (to prove nothing was written)."""
    result = {}
    for path in sorted(root.rglob("*")):
        stat = path.stat()
        digest = hashlib.sha1(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        result[str(path.relative_to(root))] = (digest, stat.st_mtime_ns)
    return result
