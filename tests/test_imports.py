"""Each command imports only what it uses: a small run's `summary` or `audit` is over in a few
tenths of a second only if the model runtime, the TUI and the Letta client stay unloaded.

The command runs in a child process (`python -X importtime -m ari_mem_tui …` from this
checkout), and the modules it imported are read from its import-time report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# never needed by a command that ranks nothing: the model runtime and its tokenizer, the
# lexical ranker (and scipy under it), the TUI, the Letta client and its HTTP stack
NOT_FOR_SUMMARY = (
    "onnxruntime",
    "tokenizers",
    "bm25s",
    "scipy",
    "textual",
    "letta_client",
    "httpx",
)


def imported(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    """Top-level packages a command imported, from its `-X importtime` report."""
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("LETTA_BASE_URL", "LETTA_API_KEY")},
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ari_mem_tui", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,  # the exit code is asserted below, with stderr
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "ari_mem_tui" in names  # the report was read: this checkout's package came in
    return names


@pytest.mark.parametrize("command", ["summary", "audit"])
def test_summary_and_audit_import_no_ranker_tui_or_letta(
    small_ckpt: Path, tmp_path: Path, command: str
) -> None:
    """Their answer's imports (no run index: nothing left for after the answer), and a reopen's
    (the run index and the run's summary kept by the first open, which makes the summary once
    its answer is out: that, counting starved nodes, may use numpy)."""
    for index in ("off", str(tmp_path / "index")):
        env = {"ARI_MEM_TUI_INDEX": index, "ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
        if index != "off":
            imported(command, str(small_ckpt), "--no-letta", env=env)  # the first open
        names = imported(command, str(small_ckpt), "--no-letta", env=env)
        assert not names & set(NOT_FOR_SUMMARY), sorted(names & set(NOT_FOR_SUMMARY))
        assert "numpy" not in names  # nothing of theirs ranks: no array is needed
        assert {"networkx", "pydantic"} <= names  # the tree model; the output and settings models


def test_saw_with_bm25_loads_no_model_runtime_and_reads_its_index_without_bm25s(
    small_ckpt: Path,
) -> None:
    """The first BM25 `saw` may build the index (bm25s, scipy); the next reads it with numpy
    alone (search/bm25_cache.StoredIndex)."""
    node = json.loads((small_ckpt / "tree.json").read_text())["nodes"][1]["id"]
    for _ in range(2):
        names = imported("saw", str(small_ckpt), node, "--embedder", "bm25", "--json")
        assert "Stemmer" in names  # the ranker asked for
        assert not names & {"onnxruntime", "tokenizers", "textual", "letta_client"}
    assert not names & {"bm25s", "scipy"}  # the index stored by the first


def test_the_first_demo_records_with_minilm_without_loading_the_model(tmp_path: Path) -> None:
    """An empty vector cache: the default demo's vectors come from the package (checked by
    hash), so its MiniLM recordings and a MiniLM `saw` need no model: its tokenizer is never
    loaded (nor onnxruntime: a small run's int8 ranking is numpy's, search/quantized.py)."""
    env_cache = tmp_path / "cache"
    out = tmp_path / "demo"
    old = os.environ.get("ARI_MEM_TUI_CACHE")
    os.environ["ARI_MEM_TUI_CACHE"] = str(env_cache)
    try:
        names = imported("demo", "--out", str(out))
        assert "tokenizers" not in names
        marker = json.loads((out / ".ari_mem_tui_demo.json").read_text())
        assert marker["recorded_with"].endswith("all-MiniLM-L6-v2-int8")
        node = json.loads((out / "tree.json").read_text())["nodes"][3]["id"]
        names = imported("saw", str(out), node, "--json")
        assert not names & {"tokenizers", "onnxruntime"}
    finally:
        if old is None:
            os.environ.pop("ARI_MEM_TUI_CACHE", None)
        else:
            os.environ["ARI_MEM_TUI_CACHE"] = old


def test_saw_reads_the_config_files_ranker_without_loading_textual(small_ckpt: Path) -> None:
    """No --embedder: the config file's "embedder" is read (tui/config.py), and reading it
    costs no Textual (only the TUI maps keys)."""
    from ari_mem_tui.tui import config

    config.config_path().parent.mkdir(parents=True, exist_ok=True)
    config.config_path().write_text(json.dumps({"embedder": "bm25"}))
    node = json.loads((small_ckpt / "tree.json").read_text())["nodes"][1]["id"]
    names = imported("saw", str(small_ckpt), node, "--json")
    assert "Stemmer" in names and "onnxruntime" not in names  # the config's ranker, BM25
    assert not names & {"textual", "letta_client"}
