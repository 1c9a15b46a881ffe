"""Shared test set-up: a clean environment, an isolated cache, and two generated checkpoints.

The checkpoints are session-scoped and shared by every test module: treat them as read-only
(tools under test must never write into a checkpoint anyway). `small_ckpt` is tiny but still
has every planted feature: a scope leak, a rejected CoW write, depth >= 3, Japanese and
bracketed text.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ari_mem_tui.checkpoint import bulk, cachefile, index, limits
from ari_mem_tui.demo import write_demo
from ari_mem_tui.tui import config
from tests.tui_helpers import write_tiny_checkpoint


def pytest_configure(config: pytest.Config) -> None:
    """`--snapshot-update` runs in one process whatever `-n` says: under xdist syrupy neither
    removes a snapshot no test uses any more nor fails on one (each worker sees only part of the
    suite). Runs before xdist's own configure (trylast), which starts the workers."""
    if config.getoption("update_snapshots", False) and config.pluginmanager.has_plugin("xdist"):
        config.option.numprocesses = 0
        config.option.dist = "no"
        config.option.tx = []


LEFTOVER_WAIT_S = 30.0  # at most this long for an ended test's thread workers' bulk work


# what the host's terminal says about itself: none of it may change what a test sees (run inside
# tmux, the clipboard toast said tmux drops OSC 52; NO_COLOR and TERM=dumb change snapshots and
# Rich's output; COLUMNS the width of a CLI's text)
HOST_TERMINAL = (
    "TMUX",
    "TMUX_PANE",
    "STY",
    "NO_COLOR",
    "FORCE_COLOR",
    "TEXTUAL_THEME",
    "TEXTUAL_DRIVER",
    "COLUMNS",
    "LINES",
    "LC_CTYPE",
    "LC_MESSAGES",
)
TEST_TERMINAL = {
    "TERM": "xterm-256color",
    "COLORTERM": "truecolor",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}


@pytest.fixture(autouse=True)
def _scrub_terminal_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees the same terminal, as Posting's test set-up gives its tests one: the
    host's tmux or screen, NO_COLOR, TERM=dumb, LANG=C, a theme or a width are set aside (and
    with them from the CLI's child processes, which inherit this environment). A test about
    one of them sets it itself."""
    for name in HOST_TERMINAL:
        monkeypatch.delenv(name, raising=False)
    for name, value in TEST_TERMINAL.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's config file (theme, keys, recent runs), and a dossier
    exported by a test goes to tmp_path/exports, never the current directory."""
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path / "config"))
    monkeypatch.setenv(config.EXPORT_ENV, str(tmp_path / "exports"))


@pytest.fixture(autouse=True)
def _collector_thawed() -> Iterator[None]:
    """The TUI freezes what a loaded run leaves alive (tui/main_screen.py: gc.freeze); a test's
    app must not leave the process so for the next test (Hypothesis, for one, finds no
    referrer of a frozen object and warns). Nor its threads' bulk work: an app's thread worker
    goes on after the app exits, and its collector pause (checkpoint/bulk.py) would still hold
    while the next test in this process checks the collector; nor the collector off."""
    yield
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    while bulk.holders() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not bulk.holders(), f"a thread's bulk work outlived the test by {LEFTOVER_WAIT_S} s"
    assert gc.isenabled(), "the test left the collector off for the tests after it"
    gc.unfreeze()


@pytest.fixture
def index_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run indexes (and what is kept beside them) in the test's own folder."""
    root = tmp_path / "index-root"
    monkeypatch.setenv(index.INDEX_ENV, str(root))
    return root


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """The small hand-made run of tests/tui_helpers.py (root, A and its chain, B, B1)."""
    return write_tiny_checkpoint(tmp_path / "tiny")


@pytest.fixture(autouse=True)
def _no_cache_notes_left() -> Iterator[None]:
    """A note a test's damaged cache left for the user (cachefile.tell) is that test's: one
    left pending was printed by the next test's command, a second stderr line it did not
    expect (test_letta_client after test_checkpoint_index, run alone). And what was said once
    in the process is forgotten: each test's first failing write is said again."""
    yield
    cachefile.take_notes()
    cachefile._said.clear()
    cachefile._cannot.clear()
    limits._ignored.clear()


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No test touches the user's cache: XDG_CACHE_HOME points into the session's tmp dir, and
    a developer's ARI_MEM_TUI_CACHE (which every cache of ours follows first) is set aside.
    Under xdist the workers share one, as the tests of one process do: a text MiniLM embedded
    for one worker's test is not embedded again for the other's (the caches are written by
    rename, for processes sharing them)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        cache = tmp_path_factory.getbasetemp().parent / "xdg-cache"  # the run's, not the worker's
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("xdg-cache")
    old = {name: os.environ.pop(name, None) for name in ("XDG_CACHE_HOME", "ARI_MEM_TUI_CACHE")}
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield cache
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def demo_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default demo checkpoint (40 nodes, seed 7, ~2,000 entries). Read-only."""
    return write_demo(tmp_path_factory.mktemp("demo") / "ckpt")


@pytest.fixture(scope="session")
def small_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small fixed checkpoint (8 nodes, seed 1) with every planted feature. Read-only."""
    return write_demo(tmp_path_factory.mktemp("small") / "ckpt", nodes=8, seed=1)
