"""A small fixed checkpoint for the TUI tests and snapshots, written by hand so that snapshots do
not move when the demo generator changes. Shape (R = root):

    R ─┬─ A ─┬─ A1 ── A1x ── A1y ── A1z   (a single-child chain, folded in the tree)
       │     └─ A2                         (failed; tried a CoW-violating write)
       └─ B ─── B1

Memory holds hostile text (`[red]x[/red]`, an ANSI clear-screen) to prove it shows literally.
"""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

T0 = 1_780_000_000.0
RUN_ID = "20260601120000_tiny"
ROOT = f"node_{RUN_ID}_root"
IDS = {
    "R": ROOT,
    "A": "node_a0000001",
    "B": "node_b0000001",
    "A1": "node_a1000001",
    "A2": "node_a2000001",
    "A1x": "node_a1x00001",
    "A1y": "node_a1y00001",
    "A1z": "node_a1z00001",
    "B1": "node_b1000001",
}
PARENT = {
    "A": "R",
    "B": "R",
    "A1": "A",
    "A2": "A",
    "A1x": "A1",
    "A1y": "A1x",
    "A1z": "A1y",
    "B1": "B",
}
LABEL = {
    "R": "draft",
    "A": "improve",
    "B": "ablation",
    "A1": "improve",
    "A2": "debug",
    "A1x": "improve",
    "A1y": "validation",
    "A1z": "improve",
    "B1": "validation",
}
HOSTILE = "metrics=[red]x[/red] then \x1b[2J clear and [bold]loud[/bold]"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def _lineage(key: str) -> list[str]:
    out = []
    while key in PARENT:
        key = PARENT[key]
        out.append(IDS[key])
    return list(reversed(out))


def _node(key: str, order: int) -> dict[str, Any]:
    created = T0 + 1000 * order
    direction = f"{LABEL[key]} step {key}: tune the learning rate schedule for branch {key[0]}"
    status = "failed" if key == "A2" else "success"
    score = None if status == "failed" else round(0.3 + 0.07 * order, 2)
    trace: list[str] = []
    if key == "A2":
        trace = [
            '→ add_memory({"node_id": "' + IDS["B"] + '", "text": "steal a note"})',
            (
                '  ← {\'result\': \'{"ok": false, "error": "node_id does not match current node '
                "(CoW violation)\"}'}"
            ),
        ]
    if key == "B1":  # a read outside its lineage: ARI does not stop it, the audit flags it
        trace = [
            '→ search_memory({"query": "warmup", "ancestor_ids": ["' + IDS["A"] + '"]})',
            "  ← {'result': '[]'}",
        ]
    return {
        "id": IDS[key],
        "parent_id": IDS[PARENT[key]] if key in PARENT else None,
        "depth": len(_lineage(key)),
        "status": status,
        "retry_count": 0,
        "children": [IDS[k] for k, p in PARENT.items() if p == key],
        "created_at": _iso(created),
        "completed_at": _iso(created + 600),
        "artifacts": [],
        "metrics": {}
        if score is None
        else {"accuracy": 0.5 + order / 100, "_scientific_score": score},
        "has_real_data": status == "success",
        "eval_summary": direction
        if status == "failed"
        else f"good result [scientific_score={score}]",
        "label": LABEL[key],
        "raw_label": "",
        "name": f"{LABEL[key]} {key}",
        "error_log": "Max ReAct steps exceeded" if status == "failed" else None,
        "ancestor_ids": _lineage(key),
        "trace_log": trace,
        "original_direction": direction,
        "node_report_path": None,
    }


ORDER = ["R", "A", "B", "A1", "A2", "B1", "A1x", "A1y", "A1z"]


def write_tiny_checkpoint(root: Path) -> Path:
    """Write the checkpoint into `root` (created) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    nodes = [_node(k, i) for i, k in enumerate(ORDER)]
    (root / "tree.json").write_text(
        json.dumps({"run_id": RUN_ID, "created_at": _iso(T0), "nodes": nodes}, indent=2),
        encoding="utf-8",
    )
    records: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for i, key in enumerate(ORDER):
        ts = T0 + 1000 * i + 500
        texts = [
            (
                f"RESULT SUMMARY of {key}: learning rate warmup helped branch {key[0]}",
                {"type": "result_summary"},
            ),
            (f"note from {key}: batch size 64 was stable, cosine schedule", {"type": "note"}),
        ]
        if key == "A":
            texts.append((HOSTILE, {"type": "note"}))
        for j, (text, meta) in enumerate(texts):
            records.append(
                {
                    "kind": "node_scope",
                    "node_id": IDS[key],
                    "text": text,
                    "metadata": meta,
                    "ts": ts + j,
                }
            )
            events.append(
                {
                    "ts": ts + j + 0.05,
                    "node_id": IDS[key],
                    "op": "write",
                    "collection": "node_scope",
                    "entry_id": f"mem-{key}-{j}",
                    "text_preview": text[:200],
                    "metadata": meta,
                }
            )
    records.append(
        {
            "kind": "react_step",
            "text": "step 1: ran train.py with lr=0.1",
            "metadata": {"node_id": IDS["A1"], "step": 1},
            "ts": T0 + 3600,
        }
    )
    records.append(
        {
            "kind": "core_seed",
            "persona": "You are ARI.",
            "human": "a researcher",
            "context": {"primary_metric": "accuracy", "higher_is_better": True},
            "seeded_at": T0,
        }
    )
    # B1's start-up search as the access log recorded it (B1 started at its creation + 1 s)
    b1_start = T0 + 1000 * ORDER.index("B1") + 1
    events.append(
        {
            "ts": b1_start,
            "node_id": IDS["B"],
            "op": "read",
            "collection": "node_scope",
            "query": _node("B1", ORDER.index("B1"))["original_direction"],
            "ancestor_ids": _lineage("B1"),
            "limit": 5,
            "results": [
                {"entry_id": "mem-B-0", "src_node_id": IDS["B"], "score": 1.0},
                {"entry_id": "mem-R-0", "src_node_id": ROOT, "score": 0.99},
            ],
        }
    )
    events.sort(key=lambda e: e["ts"])
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    (root / "memory_backup.jsonl.gz").write_bytes(gzip.compress(data.encode("utf-8"), mtime=0))
    (root / "memory_access.jsonl").write_text(
        "\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8"
    )
    return root


def append_node(root: Path, node_id: str, parent_key: str = "B1") -> None:
    """Append a new child of `parent_key` to tree.json, as a running ARI would."""
    path = root / "tree.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    parent = IDS[parent_key]
    for node in doc["nodes"]:
        if node["id"] == parent:
            node["children"].append(node_id)
    new = _node(parent_key, len(ORDER))
    new.update(
        id=node_id,
        parent_id=parent,
        depth=len(_lineage(parent_key)) + 1,
        ancestor_ids=[*_lineage(parent_key), parent],
        children=[],
        status="running",
        label="debug",
        name="debug new",
        metrics={},
        trace_log=[],
    )
    doc["nodes"].append(new)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
