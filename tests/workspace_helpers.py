"""A workspace of three runs written in ARI's layout, for the workspace and run-picker tests."""

from __future__ import annotations

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
