"""NaN, Infinity and 1e400 in a run's files: every JSON output writes `null` there (JSON has no
such numbers; json.dumps writes `NaN`, which strict parsers refuse), and a problem names the
file and the field they were read from.

ARI's own writers are Python's json, which writes `NaN` and `Infinity`; json reads them back,
and `1e400` as Infinity. The values are planted in ARI's formats (the backup's core seed, a
node's metrics, another key and its artifacts in tree.json, a Letta server's ari_context block)
and every output is read with a parser that refuses NaN and Infinity.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from fake_letta import FakeLetta

from ari_mem_tui.render.dossier import dossier_json
from ari_mem_tui.render.text import json_text
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.replay import replay
from tests.letta_helpers import as_original_server
from tests.test_schemas import check, cli_json, strict_json


@pytest.fixture(scope="module")
def odd_run(small_ckpt: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The small demo run with non-finite numbers where ARI's json would have written them;
    the id of the node that holds some."""
    run = tmp_path_factory.mktemp("nonfinite") / "ckpt"
    shutil.copytree(small_ckpt, run)
    backup = run / "memory_backup.jsonl.gz"
    lines = gzip.decompress(backup.read_bytes()).decode().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("kind") == "core_seed":
            record["context"].update(n=float("nan"), low=-float("inf"), big="BIG")
            lines[i] = json.dumps(record).replace('"BIG"', "1e400")  # read as Infinity
    backup.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    tree = json.loads((run / "tree.json").read_text())
    node = tree["nodes"][2]
    node["metrics"]["weird"] = float("nan")
    node["x_extra"] = {"deep": [1.0, float("inf")]}
    node["artifacts"] = [float("nan")]
    (run / "tree.json").write_text(json.dumps(tree))
    return run, node["id"]


def test_every_output_is_strict_json_with_null_where_the_files_had_none(odd_run, capsys):
    run, node_id = odd_run
    saw = cli_json(capsys, "saw", str(run), node_id, "--embedder", "bm25")
    assert {k: saw["core"]["ari_context"][k] for k in ("n", "low", "big")} == dict.fromkeys(
        ("n", "low", "big")
    )
    others = [
        cli_json(capsys, command, str(run), *extra)
        for command, *extra in (
            ("summary",),
            ("audit",),
            ("runs",),
            ("health", "--all-entries", "--embedder", "bm25"),
            ("saw", node_id, "--now", "--embedder", "bm25"),
        )
    ]
    opened = open_run(RunOptions(checkpoint=run, embedder="bm25"))
    dossier = strict_json(
        json_text(
            dossier_json(replay(opened.checkpoint, node_id, opened.ranker), opened.checkpoint)
        )
    )
    node = dossier["node"]
    assert node["metrics"]["weird"] is None and node["x_extra"] == {"deep": [1.0, None]}
    assert node["artifacts"] == [None]
    assert dossier["replay"]["core"]["ari_context"]["n"] is None
    assert {check(doc) for doc in [saw, *others, dossier]} == {
        "saw",
        "summary",
        "audit",
        "runs",
        "health",
        "dossier",
    }


def test_a_problem_names_each_file_and_field(odd_run, capsys) -> None:
    run, _node = odd_run
    problems = cli_json(capsys, "summary", str(run))["problems"]
    lines = [f"{p['file']} {p['where']}: {p['what']} ({p['why']})" for p in problems]
    tree = next(line for line in lines if line.startswith("tree.json"))
    assert "nodes[2].metrics.weird = NaN" in tree
    assert "nodes[2].x_extra.deep[1] = Infinity" in tree
    assert "nodes[2].artifacts[0] = NaN" in tree
    assert "JSON output writes null" in tree
    seed = next(line for line in lines if "core_seed" in line)
    assert seed.startswith("memory_backup.jsonl.gz line ")
    assert "context.n = NaN" in seed and "context.big = Infinity" in seed
    assert "context.low = -Infinity" in seed


def test_a_letta_servers_context_block_alike(small_ckpt: Path, capsys) -> None:
    with FakeLetta() as fake:
        agent = as_original_server(fake, small_ckpt)
        fake.set_block(agent, "ari_context", '{"primary_metric": "GFlops_per_s", "n": NaN}')
        node = json.loads((small_ckpt / "tree.json").read_text())["nodes"][3]["id"]
        saw = cli_json(
            capsys, "saw", str(small_ckpt), node, "--letta-url", fake.url, "--embedder", "bm25"
        )
        summary = cli_json(capsys, "summary", str(small_ckpt), "--letta-url", fake.url)
    assert saw["core"]["ari_context"] == {"primary_metric": "GFlops_per_s", "n": None}
    (problem,) = [p for p in summary["problems"] if p["where"] == "block ari_context"]
    assert problem["file"].startswith("letta:") and "ari_context.n = NaN" in problem["why"]
