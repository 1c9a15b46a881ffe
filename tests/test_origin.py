"""Where a moved run ran: the checkpoint paths its files name (checkpoint/origin.py), each read
from a file written in ARI's own format (tests/ari_like/files.py: a launch from ARI's web UI),
and nothing taken from a file that names no absolute path."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from rich.console import Console
from rich.panel import Panel

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.origin import hash_candidates, panel_values, path_hash
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from tests.ari_like.files import RECORDS, copy_run


def sha(path: str) -> str:
    return hashlib.sha1(path.encode()).hexdigest()[:12]


def rich_lines(markup: str, width: int = 80) -> list[str]:
    """A panel as ARI's Rich console writes it to a file (80 columns, no colours)."""
    buffer = io.StringIO()
    Console(file=buffer, width=width).print(Panel(markup, title="ARI"))
    return buffer.getvalue().splitlines()


@pytest.mark.parametrize(
    "path",
    [
        "/ws/checkpoints/r",
        (
            "/home/researcher/ARI/workspace/checkpoints/20260620090000_Sparse_CSR_SpMV_on_many"
            "-core_CPUs_with_a_title_long_enough_to_fold_twice/experiment.md"
        ),
        "/x/" + "y" * 76,  # a path exactly as wide as the panel: full, nothing follows
    ],
)
def test_a_path_rich_folds_over_a_panel_s_lines_is_read_whole(path):
    lines = rich_lines(f"[bold green]ARI Run[/bold green]  id=r\nExperiment: {path}\nConfig: c")
    assert len(lines) > 4 or len(path) < 60  # the long ones really wrap
    assert list(panel_values(lines)) == [("Experiment", path)]
    done = rich_lines(f"[bold]Run complete.[/bold]  Processed 3 nodes  |  Checkpoint: {path}")
    assert list(panel_values(done)) == [("Checkpoint", path)]


def test_plain_lines_are_read_and_other_lines_give_nothing():
    lines = ["=" * 60, "  Paper Pipeline Starting", "  Checkpoint: /a/b/c", "Checkpoints: /x"]
    assert list(panel_values(lines)) == [("Checkpoint", "/a/b/c")]
    assert list(panel_values(["│ Experiment:                    │", "╰──────╯"])) == []


def test_the_hash_of_a_named_path_is_ari_s_of_that_string():
    assert path_hash("/ws/checkpoints/r/") == sha("/ws/checkpoints/r")
    assert path_hash("/ws//checkpoints/r") == sha("/ws/checkpoints/r")


@pytest.fixture(scope="module")
def web_run(tmp_path_factory):
    from tests.ari_like import generate_in_memory
    from tests.ari_like.files import write_launch_records
    from tests.ari_like.run import RUN_ID

    # the in-memory run's files, with what a web-UI launch in a workspace leaves beside them
    workspace = tmp_path_factory.mktemp("ws")
    out = workspace / "checkpoints" / RUN_ID
    generated = generate_in_memory(out)
    tree = json.loads((out / "tree.json").read_text(encoding="utf-8"))
    tree["experiment_file"] = f"{out.resolve()}/experiment.md"
    (out / "tree.json").write_text(json.dumps(tree), encoding="utf-8")
    sim = type("Sim", (), {"nodes": {}, "now": lambda self: 1_781_950_000.0})()
    write_launch_records(sim, out)
    # the model cd-ed into its work dir in one call
    text = (out / "tree.json").read_text(encoding="utf-8")
    node = next(iter(generated.planted.startup))
    work = f"cd {workspace.resolve()}/experiments/{RUN_ID}/{node} && make && ./bench"
    (out / "tree.json").write_text(text.replace("make && ./bench", work), encoding="utf-8")
    return out


@pytest.mark.parametrize("place", RECORDS)
def test_each_place_a_web_launch_names_the_path_is_a_candidate(web_run, tmp_path, place):
    """GIVEN the run copied elsewhere keeping one place that names where it ran, THEN that
    path's hash is a candidate from that place, after this path's own."""
    copy = copy_run(web_run, tmp_path / "copy", keep=(place,))
    found = hash_candidates(load_checkpoint(copy, use_index=False))
    assert found[0].hash == checkpoint_hash(copy) and found[0].source == "this path"
    original = sha(str(web_run.resolve()))
    [match] = [c for c in found if c.hash == original]
    want = {
        "tree": "tree.json experiment_file",
        "run_log": "ari_run_1781946000.log",
        "meta": "meta.json checkpoint_dir",
        "ari_log": "ari.log checkpoint=",
        "trace": "trace_log of node_",
    }[place]
    assert match.source.startswith(want) and match.path == str(web_run.resolve())


def test_a_copy_that_names_nowhere_has_only_its_own_hash(web_run, tmp_path):
    copy = copy_run(web_run, tmp_path / "copy")
    assert [c.source for c in hash_candidates(load_checkpoint(copy, use_index=False))] == [
        "this path"
    ]


def test_relative_paths_and_unreadable_places_name_nothing(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "tree.json").write_text(
        json.dumps({"run_id": "r", "experiment_file": "experiments/x.md", "nodes": []}),
        encoding="utf-8",
    )
    (run / "meta.json").write_text('{"checkpoint_dir": "workspace/checkpoints/r"}')
    (run / "ari.log").mkdir()  # a folder where a log would be: skipped, never opened
    (run / "ari_run_1.log").write_bytes(b"\x1b[1mExperiment:\x1b[0m relative.md\n")
    found = hash_candidates(load_checkpoint(run, use_index=False))
    assert [c.source for c in found] == ["this path"]
