"""`q` and Ctrl+C quit the TUI at once while a load waits on a Letta server that never answers.

The server is the stdlib fake of test_hostile_letta.py on 127.0.0.1: it accepts, reads the
request and says nothing for 30 s or until the test ends, then hangs up. The load's call has a
60 s deadline, so only a quit that does not wait for it can be quick.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import pytest
from test_hostile_letta import TinyServer

from ari_mem_tui.letta.options import LettaOptions
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp

QUICK_S = 5.0  # a quit must not wait for the 60 s call; generous for a loaded machine


@pytest.fixture
def mute_server():
    asked, done = threading.Event(), threading.Event()

    def respond(_conn: socket.socket, _request: bytes) -> None:
        asked.set()
        done.wait(30)  # never answers; the connection closes after 30 s or when the test ends

    srv = TinyServer(respond)
    yield srv, asked
    # the quit left the load's thread waiting on this server: end its call, so that its bulk
    # work does not outlive the test (conftest waits for that)
    srv.stop()
    done.set()


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_quit_does_not_wait_for_a_letta_call(
    small_ckpt: Path, mute_server, key: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    srv, asked = mute_server
    letta = LettaOptions(url=f"http://127.0.0.1:{srv.port}", timeout=60)
    options = RunOptions(checkpoint=small_ckpt, embedder="bm25", letta=letta)
    app = AriMemApp(
        lambda _progress: open_run(options), theme="textual-dark", remember_theme=False, blink=False
    )
    loop = asyncio.get_running_loop()
    async with app.run_test() as pilot:
        for _ in range(1500):  # until the load is waiting on the server
            if asked.is_set():
                break
            await pilot.pause(0.02)
        assert asked.is_set(), "the load never asked the server"
        assert any(w.is_running for w in app.workers)
        start = time.monotonic()
        await pilot.press(key)
        for _ in range(int(QUICK_S / 0.02)):
            if not app.is_running:
                break
            await pilot.pause(0.02)
        assert not app.is_running, f"{key} did not quit"
    # what asyncio.run does when the app returns: wait for the executor's threads; the waiting
    # load must not hold the process
    await asyncio.wait_for(loop.shutdown_default_executor(), QUICK_S)
    assert time.monotonic() - start < QUICK_S
