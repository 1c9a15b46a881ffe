"""Across runs on an existing engine (issue 33, item 4): `export WORKSPACE --parquet DIR` writes
one folder of Parquet tables per run; README's DuckDB queries, run as README prints them, give
what the CLI gives run by run (`audit --json`, `health --json`, `saw --json`); the tables'
columns are docs/schema/parquet.md's."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hostile_helpers import run_cli
from workspace_helpers import copies_as_runs, rewrite_log, starve_one

from ari_mem_tui.checkpoint import index
from ari_mem_tui.cli import main
from ari_mem_tui.render.parquet import SCHEMAS

duckdb = pytest.importorskip("duckdb")  # (the test extra has it; a slim install skips)
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parent.parent
README_RUN, README_NODE = "20260101000000_run0", "node_9755d4c1"  # the README query's literals


def _never_return(passage: str):
    def edit(events: list[dict]) -> None:
        for event in events:
            if event["op"] == "read":
                event["results"] = [
                    r for r in event.get("results") or [] if r.get("entry_id") != passage
                ]

    return edit


@pytest.fixture(scope="module")
def exported(tmp_path_factory, small_ckpt: Path) -> tuple[Path, Path, dict[str, str]]:
    """Three runs (one with a starved node, one with two entries no read returns) and their
    export."""
    root = tmp_path_factory.mktemp("parquet")
    ckpts = root / "ws" / "checkpoints"
    writes = [
        json.loads(line)
        for line in (small_ckpt / "memory_access.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    passages = [e["entry_id"] for e in writes if e["op"] == "write" and e.get("entry_id")]
    copies_as_runs(small_ckpt, ckpts)
    rewrite_log(ckpts / "20260102000000_run1", starve_one)
    for passage in passages[-2:]:
        rewrite_log(ckpts / "20260103000000_run2", _never_return(passage))
    env = {
        index.INDEX_ENV: str(root / "index"),
        "ARI_MEM_TUI_CACHE": str(root / "cache"),
        "ARI_MEM_TUI_CONFIG_DIR": str(root / "config"),
    }
    out = root / "out"
    proc = run_cli("export", str(root / "ws"), "--parquet", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == sorted(str(out / p.name) for p in ckpts.iterdir())
    return ckpts, out, env


def readme_queries() -> dict[str, str]:
    """README's DuckDB queries by their first comment line (`-- which runs leaked` …)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = {}
    for block in re.findall(r"```sql\n(.*?)```", text, re.DOTALL):
        title, _, sql = block.partition("\n")
        found[title.removeprefix("-- ").strip()] = sql
    return found


def _query(out: Path, name: str) -> list[tuple]:
    sql = readme_queries()[name].replace("'out/", f"'{out}/")
    return duckdb.connect().execute(sql).fetchall()


@functools.cache
def _cli_json(args: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> dict:
    """The CLI's JSON answer (its `main`, in this process: a child each cost a second)."""
    out = io.StringIO()
    with mock.patch.dict(os.environ, dict(env)), contextlib.redirect_stdout(out):
        code = main([*args, "--json"])
    assert code in (0, 1)
    return json.loads(out.getvalue())


def _json(*args: str, env: dict[str, str]) -> dict:
    return _cli_json(args, tuple(sorted(env.items())))


def test_readme_has_the_four_queries() -> None:
    assert set(readme_queries()) == {
        "which runs leaked",
        "entries never retrieved, per run",
        "starved nodes by depth, per run",
        "the start-up search of a node",
    }


def test_which_runs_leaked_is_what_audit_says(exported) -> None:
    ckpts, out, env = exported
    rows = _query(out, "which runs leaked")
    expected = []
    for run in sorted(ckpts.iterdir()):
        leaks = len(_json("audit", str(run), env=env)["leaks"])
        if leaks:
            expected.append((run.name, leaks))
    assert sorted(rows) == sorted(expected) and expected


def test_entries_never_retrieved_are_what_health_counts(exported) -> None:
    ckpts, out, env = exported
    rows = dict(_query(out, "entries never retrieved, per run"))
    for run in sorted(ckpts.iterdir()):
        entries = _json("health", str(run), "--embedder", "bm25", env=env)["entries"]
        assert rows.get(run.name, 0) == entries["total"] - entries["retrieved"], run.name
    assert rows == {"20260103000000_run2": 2}  # the two no read returns


def test_starved_nodes_by_depth_are_what_health_says(exported) -> None:
    ckpts, out, env = exported
    rows = _query(out, "starved nodes by depth, per run")
    for run in sorted(ckpts.iterdir()):
        health = _json("health", str(run), "--embedder", "bm25", env=env)
        expected = [(b["label"], b["nodes"], b["starved"]) for b in health["by_depth"]]
        got = [(f"depth {d}", n, s) for run_id, d, n, s in rows if run_id == run.name]
        assert got == expected, run.name
    assert sum(s for *_, s in rows) == 1  # the one starved node planted


def test_the_start_up_search_of_a_node_is_what_saw_recorded(exported) -> None:
    ckpts, out, env = exported
    rows = _query(out, "the start-up search of a node")
    saw = _json("saw", str(ckpts / README_RUN), README_NODE, "--embedder", "bm25", env=env)
    recorded = saw["recorded"]["hits"]
    assert [(r, e, s) for r, e, s, _text in rows] == [
        (h["rank"], h["entry_id"], h["score"]) for h in recorded
    ]
    assert len(rows) == 5 and all(text for *_, text in rows)


def test_every_table_has_the_documented_columns(exported) -> None:
    ckpts, out, env = exported
    doc = (ROOT / "docs" / "schema" / "parquet.md").read_text(encoding="utf-8")
    for table, columns in SCHEMAS.items():
        section = doc.split(f"## `{table}.parquet`")[1].split("\n## ")[0]
        documented = re.findall(r"^\| `(\w+)` \| ([\w<>]+) \|", section, re.MULTILINE)
        assert documented == columns, table
        for run in ckpts.iterdir():
            schema = pq.read_schema(out / run.name / f"{table}.parquet")
            assert schema.names == [c for c, _ in columns]
            assert schema.metadata[b"ari_mem_tui.table"] == table.encode()
    con = duckdb.connect()
    nodes = con.execute(f"SELECT count(*) FROM '{out}/*/nodes.parquet'").fetchone()[0]
    entries = con.execute(f"SELECT count(*) FROM '{out}/*/entries.parquet'").fetchone()[0]
    summary = _json("summary", str(ckpts / README_RUN), env=env)["counts"]
    assert (nodes, entries) == (3 * summary["nodes"], 3 * summary["entries"])


def test_without_pyarrow_one_line_and_exit_2(tmp_path, small_ckpt) -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None; from ari_mem_tui.cli import main; "
        f"sys.exit(main(['export', {str(small_ckpt)!r}, '--parquet', {str(tmp_path / 'o')!r}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "ari-mem-tui: Parquet export needs pyarrow: pip install 'ari-mem-tui[parquet]'"
    ]
    assert not (tmp_path / "o").exists()


def test_never_into_a_run(tmp_path, small_ckpt) -> None:
    run = Path(shutil.copytree(small_ckpt, tmp_path / "run"))
    proc = run_cli("export", str(run), "--parquet", str(run / "out"), env={})
    assert proc.returncode == 2 and "inside a run" in proc.stderr
    assert not (run / "out").exists()


def test_ranker_flags_are_refused_not_ignored(tmp_path, small_ckpt, capsys) -> None:
    """The export replays what the log did not record with BM25 whatever is asked: a ranker or
    Letta flag would be a silent lie, so it is refused by name, and nothing is written."""
    from ari_mem_tui.cli import main

    out = tmp_path / "o"
    argv = ["export", str(small_ckpt), "--parquet", str(out), "--embedder", "minilm"]
    assert main([*argv, "--checkpoint-hash", "0123456789ab"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("no --embedder, --checkpoint-hash"), err
    assert "with BM25" in err[0] and not out.exists()
