"""Every view from the CLI (issue 32): `compare`, `export`, `writes`, each JSON carrying
`schema` and `schema_version`; text that a closed pipe ends with exit 141 as JSON does; text
tables that keep ids, counts and verdicts whole at 80 columns."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ari_mem_tui.cli import main
from ari_mem_tui.cli.exits import EXIT_PIPE
from tests.tui_helpers import IDS, write_tiny_checkpoint

ROOT = Path(__file__).resolve().parents[1]


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_says_the_common_ancestor_and_what_only_each_side_has(tiny: Path, capsys):
    data = run_json(capsys, "compare", str(tiny), "a1z", "b1", "--embedder", "bm25")
    assert (data["schema"], data["schema_version"]) == ("ari-mem-tui/compare", 1)
    assert data["common_ancestor"] == IDS["R"] and data["shared_lineage"] == [IDS["R"]]
    a, b = data["a"], data["b"]
    assert (a["node_id"], b["node_id"]) == (IDS["A1z"], IDS["B1"])
    assert a["lineage_from_common"][0] == IDS["R"] and a["lineage_from_common"][-1] == IDS["A1z"]
    hits_a = [h["entry_id"] for h in a["replay"]["hits"]]
    hits_b = {h["entry_id"] for h in b["replay"]["hits"]}
    assert a["only_here_hits"] == [e for e in hits_a if e not in hits_b]
    assert a["only_here_hits"] and a["replay"]["schema"] == "ari-mem-tui/saw"  # as saw's
    assert main(["compare", str(tiny), "a1z", "b1", "--embedder", "bm25"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Compare  common ancestor root (depth 0")
    assert "\nA root › a0000001" in text and "\nB root › b0000001 › b1000001" in text
    assert main(["compare", str(tiny), "a1z", "nope", "--embedder", "bm25"]) == 2


def test_export_writes_the_dossier_e_writes(tiny: Path, tmp_path: Path, capsys):
    out = tmp_path / "dossiers"
    data = run_json(capsys, "export", str(tiny), "b1", "--out", str(out), "--embedder", "bm25")
    assert (data["schema"], data["schema_version"]) == ("ari-mem-tui/export", 1)
    md, js = Path(data["markdown"]), Path(data["json"])
    assert md.parent == out and md.name.startswith("b1000001-") and md.suffix == ".md"
    dossier = json.loads(js.read_text(encoding="utf-8"))
    assert dossier["schema"] == "ari-mem-tui/dossier" and dossier["node"]["id"] == IDS["B1"]
    # without --out: the export folder (as `e`: $ARI_MEM_TUI_EXPORT_DIR in the tests)
    assert main(["export", str(tiny), "b1", "--embedder", "bm25"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [Path(p).parent for p in lines] == [tmp_path / "exports"] * 2
    # never into the checkpoint
    assert main(["export", str(tiny), "b1", "--out", str(tiny / "x"), "--embedder", "bm25"]) == 2
    assert "refusing to write into the checkpoint" in capsys.readouterr().err
    assert not (tiny / "x").exists()


def test_writes_lists_the_cow_log_filters_sorts_and_writes_csv(tiny: Path, capsys):
    data = run_json(capsys, "writes", str(tiny))
    assert (data["schema"], data["schema_version"]) == ("ari-mem-tui/writes", 1)
    assert (data["scope"], data["count"], data["rejected"]) == ("run", 20, 1)
    node = run_json(capsys, "writes", str(tiny), "a2")
    assert (node["node_id"], node["count"], node["rejected"]) == (IDS["A2"], 3, 1)
    assert {w["current_node"] for w in node["writes"]} == {IDS["A2"]}
    picked = run_json(
        capsys, "writes", str(tiny), "--filter", "note from a1", "--sort", "time", "--desc"
    )
    times = [w["ts"] for w in picked["writes"]]
    assert len(times) == 4 and times == sorted(times, reverse=True)
    assert main(["writes", str(tiny), "--filter", "note from a1", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["time", "result", "by", "tool", "reason", "source", "text"]
    assert [r[6][:15] for r in rows[1:]] == [
        "note from A1: b",
        "note from A1x: ",
        "note from A1y: ",
        "note from A1z: ",
    ]
    assert main(["writes", str(tiny), "--sort", "nope"]) == 2
    assert "no such column" in capsys.readouterr().err


def test_writes_text_keeps_times_and_results_whole_at_80_columns(tiny: Path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["writes", str(tiny), "a2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Writes (node a2000001): 3 writes, 1 rejected"
    assert lines[1].split() == ["time", "result", "text"]
    rejected = next(line for line in lines if "✗" in line)
    assert "✗ →b0000001" in rejected and "steal a note" in rejected
    assert all(len(line) <= 80 for line in lines)


@pytest.mark.parametrize(
    "argv",
    [
        ["summary"],
        ["audit"],
        ["saw", "b1", "--embedder", "bm25"],
        ["summary", "--json"],
        ["writes"],
        ["health", "--embedder", "bm25"],
    ],
    ids=lambda a: " ".join(a),
)
def test_output_closed_by_its_reader_exits_141_text_or_json(tiny: Path, argv: list[str]) -> None:
    """`… | head -1`: the reader is gone before the first line; text exits 141 as JSON does
    (Rich's console exited 1 there, which reads as findings)."""
    args = [argv[0], str(tiny), *argv[1:]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "ari_mem_tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader has gone before the command writes its first line
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == EXIT_PIPE, err
    assert "Traceback" not in err and "internal error" not in err


def test_health_text_at_80_columns_keeps_ids_counts_and_verdicts(
    small_ckpt: Path, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "80")
    main(["health", str(small_ckpt), "--embedder", "bm25"])
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("node ") and "verdict" in line)
    rows = []
    for line in lines[head + 2 :]:
        if line.startswith("Entries:") or not line.strip():
            break
        rows.append(line.split())
    assert rows, lines
    for cells in rows:
        assert len(cells[0]) == 8 and "…" not in cells[0], cells  # the short id whole
        assert cells[-1] in ("ok", "starved"), cells
    # every line fits, but the title's run id, which is never cut (it is copied to commands)
    assert lines[0].startswith("Memory health of ") and "…" not in lines[0]
    assert all(len(line) <= 80 for line in lines[1:])


def test_summary_text_has_no_padded_lines(tmp_path: Path, capsys):
    # a path longer than the 80 columns a pipe gets is printed whole on the header's line
    run = write_tiny_checkpoint(tmp_path / ("deep-folder-" * 8) / "tiny")
    assert main(["summary", str(run)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 10
    assert [line for line in lines if line != line.rstrip()] == []
    assert lines[0] == f"checkpoint {run}"


def test_saw_and_audit_name_a_long_path_on_one_line(tmp_path: Path, capsys):
    run = write_tiny_checkpoint(tmp_path / ("deep-folder-" * 8) / "tiny")
    main(["saw", str(run), "a1z", "--embedder", "bm25"])
    assert capsys.readouterr().out.splitlines()[0] == f"node {IDS['A1z']}   (files: {run})"
    main(["audit", str(run)])
    assert capsys.readouterr().out.splitlines()[0] == f"memory from files: {run}"


def test_health_names_a_long_run_id_whole_on_its_title_line(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    run_id = "20260601120000_" + "a_long_experiment_name_" * 4
    run = write_tiny_checkpoint(tmp_path / "tiny")
    tree = json.loads((run / "tree.json").read_text(encoding="utf-8"))
    tree["run_id"] = run_id
    (run / "tree.json").write_text(json.dumps(tree), encoding="utf-8")
    main(["health", str(run), "--embedder", "bm25"])
    first = capsys.readouterr().out.splitlines()[0]
    main(["health", str(run), "--embedder", "bm25", "--what-if", "limit=10"])
    what_if = capsys.readouterr().out.splitlines()[0]
    assert run_id in first and first.startswith("Memory health of ")
    assert what_if == f"What if: memory health of {run_id} under other settings"
