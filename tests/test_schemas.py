"""Every JSON output against its committed JSON Schema (docs/schema/), and those files against
the models they come from (render/outputs.py).

The outputs are made by the real commands (in this process, `cli.main`) on the demo and on the
ARI-like run (tests/ari_like), read back with a parser that refuses NaN and Infinity, and
validated with jsonschema against the files as committed: a field the code adds without its
model, a type that drifts, or a schema file not regenerated (`python scripts/make_schemas.py`)
fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ari_mem_tui.cli import main
from ari_mem_tui.render.dossier import dossier_json
from ari_mem_tui.render.outputs import OUTPUTS, SCHEMA_PREFIX
from ari_mem_tui.render.text import json_text
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.replay import replay
from tests.ari_like import generate_in_memory

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "docs" / "schema"


def strict_json(text: str) -> Any:
    """`text` as JSON, refusing what JSON lacks and json.loads would take: NaN, Infinity."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} in a JSON output")

    return json.loads(text, parse_constant=refuse)


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMA_DIR / f"{name}.json").read_text()))


def check(document: Any) -> str:
    """`document` valid against the committed schema its `schema` field names; that name."""
    name = document["schema"].removeprefix(SCHEMA_PREFIX)
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]]
    return name


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) in (0, 1)  # 1: findings (audit, health)
    return strict_json(capsys.readouterr().out)


@pytest.fixture(scope="module")
def ari_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_in_memory(tmp_path_factory.mktemp("ari_like") / "ckpt").path


def test_the_committed_schemas_are_the_models_own() -> None:
    """docs/schema/ is what `scripts/make_schemas.py` writes now (else: run it, commit)."""
    done = subprocess.run(
        [sys.executable, "scripts/make_schemas.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.stem for p in SCHEMA_DIR.glob("*.json")) == sorted(OUTPUTS)


def test_the_schema_command_prints_the_committed_file_and_lists_the_names(capsys) -> None:
    assert main(["schema", "health"]) == 0
    assert capsys.readouterr().out == (SCHEMA_DIR / "health.json").read_text()
    assert main(["schema"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(OUTPUTS)
    assert main(["schema", "healht"]) == 2
    assert ", ".join(OUTPUTS) in (capsys.readouterr().err)


def _outputs(capsys, run: Path, nodes: list[str], embedder: list[str]) -> list[Any]:
    found = [
        cli_json(capsys, "summary", str(run), "--no-letta"),
        cli_json(capsys, "audit", str(run), "--no-letta"),
        cli_json(capsys, "runs", str(run)),
        cli_json(capsys, "health", str(run), "--all-entries", "--embedder", "bm25", "--no-letta"),
    ]
    for node in nodes:
        found.append(cli_json(capsys, "saw", str(run), node, *embedder, "--no-letta"))
    found.append(cli_json(capsys, "saw", str(run), nodes[-1], "--now", *embedder, "--no-letta"))
    no_letta = ("--embedder", "bm25", "--no-letta")
    found.append(cli_json(capsys, "compare", str(run), nodes[1], nodes[-1], *no_letta))
    found.append(cli_json(capsys, "writes", str(run), "--no-letta"))  # the whole run's
    found.append(cli_json(capsys, "writes", str(run), nodes[-1], "--no-letta"))
    found.append(cli_json(capsys, "export", str(run), nodes[-1], *no_letta))  # (export dir)
    opened = open_run(RunOptions(checkpoint=run, embedder="bm25"))
    for node in (nodes[0], nodes[-1]):  # a dossier, as the TUI's `e` writes it
        result = replay(opened.checkpoint, node, opened.ranker)
        found.append(strict_json(json_text(dossier_json(result, opened.checkpoint))))
    entries = list(opened.checkpoint.entries)
    for entry in (entries[0], entries[-1]):  # why (not): a hit or not, whatever they are
        found.append(
            cli_json(capsys, "saw", str(run), nodes[-1], "--why", entry.id, *embedder, "--no-letta")
        )
    what_if = ("--what-if", "limit=8,drop=tool-auto+react", "--embedder", "bm25", "--no-letta")
    found.append(cli_json(capsys, "health", str(run), *what_if))
    return found


def test_every_output_of_the_ari_like_run_is_valid(ari_like: Path, capsys) -> None:
    """Every node's `saw` with the run's own ranker (ARI's in-memory rule), the others once."""
    nodes = [n["id"] for n in json.loads((ari_like / "tree.json").read_text())["nodes"]]
    names = [check(doc) for doc in _outputs(capsys, ari_like, nodes, [])]
    assert set(names) == set(OUTPUTS)
    assert names.count("saw") == len(nodes) + 1


def test_every_output_of_the_demo_is_valid(demo_ckpt: Path, capsys) -> None:
    """The demo's planted cases (a leak, a scope violation, a rejected write, a late insert)
    on a few nodes, with BM25 and with MiniLM (its vectors ship with the package)."""
    nodes = [n["id"] for n in json.loads((demo_ckpt / "tree.json").read_text())["nodes"]]
    picked = nodes[:: len(nodes) // 5]
    documents = _outputs(capsys, demo_ckpt, picked, ["--embedder", "bm25"])
    documents.append(cli_json(capsys, "saw", str(demo_ckpt), nodes[3], "--no-letta"))
    names = [check(doc) for doc in documents]
    assert set(names) == set(OUTPUTS)
    audit = next(d for d in documents if d["schema"].endswith("/audit"))
    assert audit["leaks"] and audit["scope_violations"] and audit["rejected_writes"]
    health = next(d for d in documents if d["schema"].endswith("/health"))
    assert len(health["all_entries"]) == health["entries"]["total"] > 0


def test_a_field_of_the_wrong_type_or_undeclared_fails_the_schema(demo_ckpt: Path, capsys):
    """The check above can fail: an output changed as a code change would change it."""
    document = cli_json(capsys, "summary", str(demo_ckpt), "--no-letta")
    check(document)
    for change in (
        lambda d: d["counts"].update(nodes="40"),
        lambda d: d.update(added_without_a_model=1),
        lambda d: d["core"].pop("seeded"),
    ):
        broken = json.loads(json.dumps(document))
        change(broken)
        with pytest.raises(AssertionError):
            check(broken)


def test_health_checks_the_first_row_of_each_bulk_list_and_the_schema_every_row(
    demo_ckpt: Path, capsys
) -> None:
    """`Document.BULK` (health's row per node, per depth, per entry) is checked by its first
    row as it is built, every row by the schema test."""
    from ari_mem_tui.render.outputs import HealthOutput, OutputError, output

    document = cli_json(capsys, "health", str(demo_ckpt), "--embedder", "bm25", "--no-letta")
    good = document["nodes"][0]
    bad = {**good, "depth": "deep"}
    with pytest.raises(OutputError, match="nodes.0.depth"):
        output(HealthOutput, {**document, "nodes": [bad, good]})
    built = output(HealthOutput, {**document, "nodes": [good, bad]})
    assert built["nodes"] == [good, bad] and list(built) == list(document)
    with pytest.raises(AssertionError, match="depth"):
        check(built)


def test_a_field_the_model_does_not_declare_says_where_it_is_declared(ari_like: Path) -> None:
    from ari_mem_tui.render.outputs import OutputError, SawOutput, output

    opened = open_run(RunOptions(checkpoint=ari_like, embedder="bm25"))
    data = replay(opened.checkpoint, next(iter(opened.checkpoint.nodes)), opened.ranker).as_data()
    with pytest.raises(
        OutputError, match=r"(?s)added_field.*Extra inputs.*render/outputs.py.*make_schemas"
    ):
        output(SawOutput, {**data, "added_field": 1})
