"""The first open answers first: a command's answer is out, and its stdout closed, before the
run index of a first open is written (issue 33). Checked without a clock: the test holds the
index's writer lock, so the command can write its index only once the test lets go; a reader of
its stdout gets the whole answer and its end while the command still waits to write."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ari_mem_tui.checkpoint import index
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.summary import summary_json

HANG_S = 120  # only a broken build waits this long (its index written before its answer)


@pytest.fixture
def run(tmp_path: Path, small_ckpt: Path) -> Path:
    return Path(shutil.copytree(small_ckpt, tmp_path / "run"))


def _read_to_end(stream) -> bytes:
    """Everything until the end of `stream`, or a failure if none comes (a hang)."""
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(stream.read()), daemon=True)
    reader.start()
    reader.join(HANG_S)
    assert got, "no end of the answer: the command waits for its index before answering"
    return got[0]


@pytest.mark.parametrize("command", [["summary", "--json"], ["audit", "--json"]])
@pytest.mark.parametrize("detach", ["1", "0"])
def test_the_answer_ends_before_the_index_is_written(run, tmp_path, monkeypatch, command, detach):
    """Detached (the default): the command ends with its answer and a writer of its own goes
    on, keeping stderr (its end comes when the index is written); ARI_MEM_TUI_DETACH=0: the
    command itself waits to write, after closing stdout."""
    monkeypatch.setenv(index.INDEX_ENV, str(tmp_path / "index"))
    folder = index.index_dir(run)
    assert folder is not None
    folder.mkdir(parents=True)
    lock = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # (the command's write waits for this)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ari_mem_tui", command[0], str(run), *command[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ARI_MEM_TUI_DETACH": detach},
    )
    try:
        answer = _read_to_end(proc.stdout)
        if detach == "1":  # the command is over; its writer waits for the lock
            assert proc.wait(HANG_S) in (0, 1)
        else:  # the whole answer, and its end, while the command still waits to write
            assert proc.poll() is None
        assert not (folder / index.INDEX_FILE).exists()
        data = json.loads(answer)
        assert data["schema"] == f"ari-mem-tui/{command[0]}"
    finally:
        os.close(lock)  # the index is written now
        err = _read_to_end(proc.stderr).decode()  # (its end: the writer is done)
        code = proc.wait(HANG_S)
    assert code in (0, 1), err
    assert (folder / index.INDEX_FILE).is_file()
    again = index.load(run)
    assert again is not None and summary_json(again) == summary_json(load_checkpoint(run))


@pytest.mark.parametrize(("argv", "code"), [([], 0), (["summry", "x"], 2)])
def test_the_entry_ends_with_the_exit_handlers_run_and_the_streams_flushed(argv, code):
    """`entry` skips the interpreter's teardown (os._exit), never what a user would miss: the
    answer buffered for a pipe, the exit handlers, the command's exit code."""
    script = (
        "import atexit, sys; atexit.register(lambda: sys.stderr.write('handler ran'));"
        f" sys.argv = ['ari-mem-tui', *{argv!r}]; from ari_mem_tui.cli import entry; entry()"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (streams buffered)
    argv = [sys.executable, "-c", script]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, env=env)
    assert done.returncode == code, done.stderr
    assert done.stderr.endswith("handler ran")
    if code == 0:  # (the help, printed to a pipe: still in its buffer when `main` returns)
        assert done.stdout.startswith("usage: ari-mem-tui") and "schema" in done.stdout


@pytest.mark.parametrize("debug", [True, False])
def test_a_bug_in_the_detached_writer_is_said_on_the_commands_stderr(run, tmp_path, debug):
    """The writer runs after the command has ended: its bug is still the one line (or, with
    --debug, the traceback) on the stderr the command was given."""
    script = (
        "import sys; from ari_mem_tui.checkpoint import index;"
        " index.save = lambda *_: 1 / 0;"
        f" sys.argv = ['ari-mem-tui', *{['--debug'] if debug else []!r}, 'summary', {str(run)!r}];"
        " from ari_mem_tui.cli import entry; entry()"
    )
    env = {**os.environ, index.INDEX_ENV: str(tmp_path / "index")}
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, env=env
    )  # (stderr read to its end: the writer's too)
    assert done.returncode == 0 and done.stdout.startswith("checkpoint ")
    if debug:
        assert "Traceback (most recent call last)" in done.stderr
        assert done.stderr.rstrip().endswith("ZeroDivisionError: division by zero")
    else:
        assert (
            "internal error: ZeroDivisionError: division by zero (please report it" in done.stderr
        )
        assert "Traceback" not in done.stderr
