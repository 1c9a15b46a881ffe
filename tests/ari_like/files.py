"""The files a run leaves in its checkpoint directory, in ARI's formats (§1.2–§4)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from tests.ari_like import texts
from tests.ari_like.backends import Backend
from tests.ari_like.run import RUN_ID, START, Simulation, iso

MEMORY_ENTRIES = 20  # ARI_TRANSFORM_MEMORY_MAX_ENTRIES
MEMORY_CHARS = 2000  # ARI_TRANSFORM_MEMORY_MAX_CHARS


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


CLI_EXPERIMENT = "/home/researcher/experiments/spmv.md"  # what a CLI user typed: not the run


def tree_document(sim: Simulation, experiment_file: str = CLI_EXPERIMENT) -> dict:
    """`save_tree_json`'s document: nodes in creation order, the goal file's fingerprint."""
    goal = texts.GOAL.encode("utf-8")
    return {
        "run_id": RUN_ID,
        "experiment_file": experiment_file,
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


def write_checkpoint(sim: Simulation, out: Path, embedding: str, web: bool = False) -> None:
    """The run's files; `web`: launched from ARI's web UI, which also leaves the path the run
    ran at in tree.json's `experiment_file`, its stdout log, meta.json and ari.log
    (`write_launch_records`)."""
    out.mkdir(parents=True, exist_ok=True)
    backend = sim.backend
    (out / "experiment.md").write_text(texts.GOAL, encoding="utf-8")
    write_json(out / "idea.json", sim.idea)
    experiment = f"{out.resolve()}/experiment.md" if web else CLI_EXPERIMENT
    write_json(out / "tree.json", tree_document(sim, experiment))
    if web:
        write_launch_records(sim, out)
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


def write_launch_records(sim: Simulation, out: Path) -> None:
    """What a launch from ARI's web UI leaves beside the run (e41c806, facts read in its
    source): the run's stdout as `ari_run_<ts>.log` (viz/api_experiment.py; stdout is a
    file, so Rich draws its panels 80 columns wide and folds a long path), with cli/run.py's
    opening panel (`Experiment: <file>`), its closing one (`… Checkpoint: <dir>`) and the
    paper stage's plain `Checkpoint:` line (core.py); `meta.json` with `checkpoint_dir` (a
    wizard launch with recursion settings); `ari.log`, JSON lines, with the paper stage's
    `Starting paper pipeline (config_path=…, checkpoint=…)`."""
    import io

    from rich.console import Console
    from rich.panel import Panel

    ckpt = str(out.resolve())
    start, end = START, sim.now()
    buffer = io.StringIO()
    console = Console(file=buffer, width=80)
    console.print(
        Panel(
            f"[bold green]ARI Run[/bold green]  id={RUN_ID}\nExperiment: {ckpt}/experiment.md",
            title="ARI",
        )
    )
    total = sum(1 for n in sim.nodes.values() if n.status != "pending")
    console.print(
        Panel(
            f"[bold green]Run complete.[/bold green]  Processed {total} nodes  |  Checkpoint: {ckpt}",
            title="Done",
        )
    )
    buffer.write(f"\n{'=' * 60}\n  Paper Pipeline Starting\n  Checkpoint: {ckpt}\n{'=' * 60}\n")
    (out / f"ari_run_{int(start)}.log").write_text(buffer.getvalue(), encoding="utf-8")
    meta = {
        "run_id": RUN_ID,
        "parent_run_id": None,
        "recursion_depth": 0,
        "max_recursion_depth": 3,
        "created_at": iso(start),
        "checkpoint_dir": ckpt,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    lines = [
        {"ts": iso(start), "level": "INFO", "logger": "ari.cli.run",
         "msg": "[cli.run] experiment_data['goal']: len=1 sha256=0", "run_id": RUN_ID},
        {"ts": iso(end), "level": "INFO", "logger": "ari.core",
         "msg": f"Starting paper pipeline (config_path={ckpt}/workflow.yaml, checkpoint={ckpt})",
         "run_id": RUN_ID},
    ]  # fmt: skip
    (out / "ari.log").write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )


RECORDS = ("tree", "run_log", "meta", "ari_log", "trace")  # where a web-UI run names its path


def copy_run(source: Path, dest: Path, keep: tuple[str, ...] = ()) -> Path:
    """The run at `source` (launched from the web UI, in a workspace) copied to `dest`, as a
    run copied off a cluster is, keeping only the places of RECORDS in `keep` that name the
    path it ran at: the others are removed, or read as a CLI launch leaves them."""
    import re
    import shutil

    shutil.copytree(source, dest)
    if "tree" not in keep:
        tree = json.loads((dest / "tree.json").read_text(encoding="utf-8"))
        tree["experiment_file"] = "experiment.md"  # a CLI launch's, as typed
        write_json(dest / "tree.json", tree)
    if "run_log" not in keep:
        for log in dest.glob("ari_run_*.log"):
            log.unlink()
    if "meta" not in keep:
        (dest / "meta.json").unlink(missing_ok=True)
    if "ari_log" not in keep:
        (dest / "ari.log").unlink(missing_ok=True)
    if "trace" not in keep:  # the model never typed its work dir
        for name in ("tree.json", "nodes_tree.json", "results.json"):
            path = dest / name
            text = re.sub(
                r"cd /[^\s\"&]*/experiments/[^\s\"&]* && ", "", path.read_text(encoding="utf-8")
            )
            path.write_text(text, encoding="utf-8")
    return dest
