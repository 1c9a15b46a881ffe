"""A workspace of three runs written in ARI's layout, for the workspace and run-picker tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from checkpoint_helpers import T0, chain_tree, node, scope, write_backup, write_tree

RUNS = ("20260301120000_first", "20260415093000_second", "20260510170000_third")


def make_workspace(root: Path) -> Path:
    """Three runs in root/checkpoints (5, 1 and 4 nodes), plus ARI's other folders."""
    ckpts = root / "checkpoints"
    first = chain_tree()
    first[1]["status"] = "failed"
    first.append(node("d", "b", ["root", "a", "b"], created=T0 + 300, status="running"))
    write_tree(ckpts / RUNS[0], first, run_id=RUNS[0])
    write_backup(ckpts / RUNS[0], [scope("root", "x", T0), scope("a", "y", T0 + 1)])
    write_tree(ckpts / RUNS[1], [node("root")], run_id=RUNS[1])
    third = chain_tree()
    write_tree(ckpts / RUNS[2], third, run_id=RUNS[2])
    write_backup(ckpts / RUNS[2], [scope("root", f"e{i}", T0 + i) for i in range(7)])
    (root / "experiments" / RUNS[0] / "root").mkdir(parents=True)  # not a run
    (ckpts / "notes").mkdir()  # not a run either
    return root


def copies_as_runs(source: Path, ckpts: Path, count: int = 3) -> list[Path]:
    """`count` copies of the run `source` in the folder `ckpts`, each with its own run id
    (`2026010N000000_runM`, in tree.json too)."""
    runs = []
    for number in range(count):
        run_id = f"2026010{number + 1}000000_run{number}"
        run = Path(shutil.copytree(source, ckpts / run_id))
        tree = json.loads((run / "tree.json").read_text(encoding="utf-8"))
        tree["run_id"] = run_id
        (run / "tree.json").write_text(json.dumps(tree), encoding="utf-8")
        runs.append(run)
    return runs


def rewrite_log(run: Path, edit: Callable[[list[dict]], None]) -> None:
    """The run's access log, its events edited by `edit` (in place) and written back."""
    log = run / "memory_access.jsonl"
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    edit(events)
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


def starve_one(events: list[dict]) -> None:
    """The first recorded start-up search that returned 5 hits returns 1: its node got fewer
    hits than its lineage held (starved, by health's rule)."""
    search = next(
        e
        for e in events
        if e["op"] == "read" and e.get("limit") == 5 and len(e.get("results") or []) == 5
    )
    search["results"] = search["results"][:1]
