"""Hostile data on the CLI's output paths: literal, terminal-safe, never a traceback.

Each test copies the small demo run, plants one hostile value in ARI's own file format, runs the
real command in a child process and checks the exit code, the named problem, that the rest is
still shown, and that no escape, BEL or C1 byte reaches the terminal.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ari_mem_tui import cli
from ari_mem_tui.render.text import clean, json_text

# ESC, BEL, CSI/OSC as C1 (U+009B, U+009D) and the bidi override, as they would reach a terminal
UNSAFE = re.compile("[\x1b\x07\x9b\x9d\u202e\u2066]")
NASTY_TEXT = "bidi \u202eevil\u202c osc \x1b]0;pwned\x07 csi \x9b2J lone \ud800 end"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", *args],
        check=False,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=300,
    )


def assert_safe(proc: subprocess.CompletedProcess) -> None:
    for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        assert not UNSAFE.search(stream), f"raw control in {name}: {stream[:400]!r}"
        assert "Traceback" not in stream, stream[-2000:]


@pytest.fixture
def run_copy(small_ckpt: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "ckpt"
    shutil.copytree(small_ckpt, dest)
    return dest


def _root_id(ckpt: Path) -> str:
    nodes = json.loads((ckpt / "tree.json").read_text())["nodes"]
    return next(n["id"] for n in nodes if not n.get("parent_id"))


def _first_child(ckpt: Path) -> str:
    nodes = json.loads((ckpt / "tree.json").read_text())["nodes"]
    root = _root_id(ckpt)
    return next(n["id"] for n in nodes if n.get("parent_id") == root)


def _append_backup_record(ckpt: Path, record: dict) -> None:
    path = ckpt / "memory_backup.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode()
    path.write_bytes(gzip.compress((lines + json.dumps(record) + "\n").encode()))


def test_cleaner_shows_bidi_marks_and_lone_surrogates() -> None:
    out = clean("a\u202eb\u2066c\u200fd\u061ce\ud800f\x1bg\x9bh", multiline=False)
    assert out == "a<U+202E>b<U+2066>c<U+200F>d<U+061C>e<U+D800>f␛g<9B>h"
    assert clean("one\u2028two") == "one\ntwo"


def test_json_keeps_data_exact_and_escapes_controls() -> None:
    value = {"text": NASTY_TEXT, "n": 1}
    out = json_text(value)
    assert not UNSAFE.search(out)
    assert "\\u202e" in out and "\\u001b" in out and "\\u009b" in out and "\\ud800" in out
    assert json.loads(out) == value
    out.encode("utf-8")  # a lone surrogate escaped is printable; raw it would not be


def test_hostile_memory_text_in_saw_and_summary(run_copy: Path) -> None:
    root = _root_id(run_copy)
    _append_backup_record(
        run_copy,
        {"kind": "node_scope", "node_id": root, "text": NASTY_TEXT, "metadata": {}, "ts": 1.0e9},
    )
    child = _first_child(run_copy)
    for args in (
        ("saw", str(run_copy), child, "--json", "--embedder", "bm25", "--query", "evil pwned"),
        ("saw", str(run_copy), child, "--embedder", "bm25", "--query", "evil pwned"),
        ("summary", str(run_copy), "--json"),
        ("summary", str(run_copy)),
        ("audit", str(run_copy), "--json"),
    ):
        proc = run(*args)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert_safe(proc)
    saw = json.loads(run("saw", str(run_copy), child, "--json", "--embedder", "bm25").stdout)
    assert saw["node_id"] == child


def test_an_integer_over_4300_digits_skips_one_line(run_copy: Path) -> None:
    log = run_copy / "memory_access.jsonl"
    before = len(log.read_text().splitlines())
    with log.open("a") as fh:
        fh.write('{"ts": 1.0, "node_id": "x", "op": "read", "n": ' + "9" * 5000 + "}\n")
    proc = run("summary", str(run_copy), "--json")
    assert proc.returncode == 0, proc.stderr
    assert_safe(proc)
    summary = json.loads(proc.stdout)
    text = json.dumps(summary)
    assert "4,300 digits" in text
    assert summary["counts"]["events"] == before
    audit = run("audit", str(run_copy))
    assert audit.returncode in (0, 1), audit.stderr
    assert_safe(audit)


def test_an_integer_over_4300_digits_in_tree_json_is_a_problem(run_copy: Path) -> None:
    (run_copy / "tree.json").write_text('{"nodes": [{"id": "n", "x": ' + "1" * 5000 + "}]}")
    proc = run("summary", str(run_copy), "--json")
    assert proc.returncode in (0, 2), proc.stderr
    assert_safe(proc)
    assert "4,300 digits" in proc.stdout


def test_an_internal_error_is_one_line_and_exit_3(monkeypatch, capsys) -> None:
    def broken(_args):
        raise RuntimeError("kaboom \x1b[2J [/x]")

    monkeypatch.setattr(cli, "_dispatch", broken)
    assert cli.main(["summary", "somewhere"]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError: kaboom ␛[2J [/x]" in err
    assert "--debug" in err and "Traceback" not in err
    with pytest.raises(RuntimeError):
        cli.main(["--debug", "summary", "somewhere"])
