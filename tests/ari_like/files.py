"""The files a run leaves in its checkpoint directory, in ARI's formats (§1.2–§4)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from tests.ari_like import texts
from tests.ari_like.backends import Backend
from tests.ari_like.run import RUN_ID, Simulation, iso

MEMORY_ENTRIES = 20  # ARI_TRANSFORM_MEMORY_MAX_ENTRIES
MEMORY_CHARS = 2000  # ARI_TRANSFORM_MEMORY_MAX_CHARS


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def tree_document(sim: Simulation) -> dict:
    """`save_tree_json`'s document: nodes in creation order, the goal file's fingerprint."""
    goal = texts.GOAL.encode("utf-8")
    return {
        "run_id": RUN_ID,
        "experiment_file": "/home/researcher/experiments/spmv.md",
        "experiment_file_sha256": hashlib.sha256(goal).hexdigest()[:16],
        "experiment_file_len": len(goal),
        "created_at": iso(sim.now()),
        "nodes": [node.to_dict() for node in sim.nodes.values()],
    }


def nodes_tree(sim: Simulation, backend: Backend) -> dict:
    """The paper pipeline's nodes_tree.json: each node with its newest entries (§2.3)."""
    rows: dict[str, list[dict]] = {}
    for record in backend.backup_records():
        if record["kind"] == "node_scope":
            rows.setdefault(record["node_id"], []).append(record)
    nodes = []
    for node in sim.nodes.values():
        newest = sorted(rows.get(node.id, []), key=lambda r: r["ts"], reverse=True)
        memory = [
            {
                "text": r["text"]
                if len(r["text"]) <= MEMORY_CHARS
                else r["text"][:MEMORY_CHARS] + "…[truncated]",
                "metadata": r["metadata"],
                "ts": r["ts"],
            }
            for r in newest[:MEMORY_ENTRIES]
        ]
        nodes.append({**node.to_dict(), "memory": memory})
    return {"experiment_goal": texts.GOAL, "nodes": nodes}


def write_checkpoint(sim: Simulation, out: Path, embedding: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    backend = sim.backend
    (out / "experiment.md").write_text(texts.GOAL, encoding="utf-8")
    write_json(out / "idea.json", sim.idea)
    write_json(out / "tree.json", tree_document(sim))
    write_json(out / "nodes_tree.json", nodes_tree(sim, backend))
    results = {
        n.id: {
            "artifacts": n.artifacts,
            "metrics": n.metrics,
            "has_real_data": bool(n.metrics),
            "eval_summary": n.eval_summary,
            "status": n.status,
            "error_log": n.error_log,
        }
        for n in sim.nodes.values()
    }
    write_json(out / "results.json", {"run_id": RUN_ID, "nodes": results})
    # the dashboard keeps the run's settings here, whatever the backend (§3.7)
    write_json(out / "settings.json", {"letta_embedding_config": embedding})
    with gzip.open(out / "memory_backup.jsonl.gz", "wt", encoding="utf-8") as f:
        for record in backend.backup_records():
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    lines = sim.backend.log.lines()
    (out / "memory_access.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
