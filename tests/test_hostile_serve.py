"""`serve` under hostile browser clients (issue 22 §4): a real server process on loopback and
aiohttp's websocket client playing the browser (what xterm.js sends: `["stdin", text]`,
`["resize", {width, height}]`, `["ping", x]`), misbehaving.

Checked: a huge terminal asked for in the URL or a resize is clamped (the app process's own
COLUMNS/ROWS, read from /proc), malformed frames are dropped while the session goes on, a frame
over 64 KiB ends only that socket, sessions past `--max sessions` get 503, a session's app
process ends when its socket closes, and every app process when the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from ari_mem_tui.tui.serve_sessions import COLUMNS, FRAME_BYTES, ROWS, clamp, data_limit
from tests.hostile_helpers import ROOT, wait_for_page

GONE_S = 30  # a process still there after this long is left running: never a speed bound


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def app_processes(server_pid: int) -> list[int]:
    """The app processes the server started (its children running `ari_mem_tui open`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == server_pid and b"open" in cmdline:
            found.append(int(entry.name))
    return found


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


async def until(condition, seconds: float = GONE_S) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        await asyncio.sleep(0.1)
    return condition()


@pytest.fixture
def serving(small_ckpt: Path, tmp_path: Path):
    """`serve` on the small demo in a child process, with `--max` settings; yields
    (process, url) and kills whatever is left."""
    started: list[subprocess.Popen] = []

    def start(*limits: str) -> tuple[subprocess.Popen, str]:
        port = free_port()
        env = {
            **os.environ,
            "ARI_MEM_TUI_CONFIG_DIR": str(tmp_path / "config"),
            "ARI_MEM_TUI_CACHE": str(tmp_path / "cache"),
        }
        args = [arg for limit in limits for arg in ("--max", limit)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "ari_mem_tui", "serve", str(small_ckpt), "--port", str(port),
             "--embedder", "bm25", *args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        started.append(proc)
        url = f"http://127.0.0.1:{port}"
        wait_for_page(url + "/")
        return proc, url

    yield start
    for proc in started:
        apps = app_processes(proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        for pid in apps:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_sizes_are_clamped_to_a_screen() -> None:
    assert clamp("20000", COLUMNS, 80) == COLUMNS[1]
    assert clamp(-5, ROWS, 24) == ROWS[0]
    assert clamp("wide", COLUMNS, 80) == 80
    assert clamp(True, ROWS, 24) == 24
    assert clamp(120, COLUMNS, 80) == 120


@pytest.mark.parametrize("mib", [4096, 2**44, 10**30])
def test_a_session_bound_past_the_kernels_range_still_starts_the_app(mib: int) -> None:
    """`--max session-mib=1e30` (a whole number, as --max takes): setrlimit refused the bytes
    (OverflowError in the child's preexec hook), so no session could start; past what the
    kernel holds there is no bound."""
    done = subprocess.run(
        [sys.executable, "-c", "pass"], preexec_fn=data_limit(mib), check=False, timeout=GONE_S
    )
    assert done.returncode == 0


async def test_hostile_clients_are_bounded_and_every_app_ends(serving) -> None:
    proc, url = serving("sessions=2")
    async with aiohttp.ClientSession() as client:
        first = await client.ws_connect(f"{url}/ws?width=20000&height=20000")
        assert await until(lambda: len(app_processes(proc.pid)) == 1)
        (app,) = app_processes(proc.pid)
        env = environ_of(app)
        assert int(env["COLUMNS"]) == COLUMNS[1] and int(env["ROWS"]) == ROWS[1]

        junk = [
            "not json",
            "[1, 2",
            '{"a": 1}',
            "[]",
            '["stdin", 5]',
            '["resize", {"width": 50000, "height": "x"}]',
            '["resize", [1, 2]]',
            '["stdin", "\\ud800"]',
            '["ping", "' + "p" * 100 + '"]',
        ]
        for frame in junk:
            await first.send_str(frame)
        await first.send_str('["ping", "still-here"]')
        pong = None
        for _ in range(200):  # app output (binary) may come first
            message = await asyncio.wait_for(first.receive(), GONE_S)
            if message.type == aiohttp.WSMsgType.TEXT and "pong" in message.data:
                pong = message.data
                break
        assert pong == '["pong", "still-here"]'  # the junk was dropped, the session lives

        second = await client.ws_connect(f"{url}/ws")
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(f"{url}/ws")
        assert refused.value.status == 503

        await second.send_str('["stdin", "' + "a" * (FRAME_BYTES + 1) + '"]')
        closed = await asyncio.wait_for(second.receive(), GONE_S)
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        assert closed.data == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
        assert await until(lambda: len(app_processes(proc.pid)) == 1)  # its app ended

        await first.close()  # the socket closes: its app process ends (was: 53 s later)
        assert await until(lambda: not Path(f"/proc/{app}").exists())  # ended and reaped

        last = await client.ws_connect(f"{url}/ws")  # a slot is free again
        assert await until(lambda: len(app_processes(proc.pid)) == 1)
        (orphan,) = app_processes(proc.pid)
        proc.send_signal(signal.SIGTERM)  # the server stops: every app with it
        assert proc.wait(GONE_S) == 0
        assert await until(lambda: not Path(f"/proc/{orphan}").exists())
        await last.close()
    err = proc.stderr.read()
    assert b"Traceback" not in err
    # the client past the cap: one line, as every refused request
    assert err.count(b"refused GET /ws from 127.0.0.1: HTTP 503 Service Unavailable\n") == 1


async def test_a_session_past_its_memory_bound_ends_alone(serving) -> None:
    """With `--max session-mib=32` no app loads the run: the bound fails an allocation, and
    the app either dies while it starts (its socket closed: an app that died sends no exit
    message) or says "could not load the run's memory: MemoryError" and waits for its user;
    once its client leaves, its process ends, and the server goes on serving the page and the
    next client."""
    proc, url = serving("session-mib=32")
    async with aiohttp.ClientSession() as client:
        for _ in range(2):
            socket_ = await client.ws_connect(f"{url}/ws")
            said, closed = b"", False
            end = time.monotonic() + GONE_S
            while not closed and b"MemoryError" not in said and time.monotonic() < end:
                try:
                    message = await asyncio.wait_for(socket_.receive(), 1.0)
                except TimeoutError:
                    continue
                closed = message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
                if isinstance(message.data, str | bytes):
                    data = message.data
                    said += data.encode() if isinstance(data, str) else data
            assert closed or b"could not load the run's memory: MemoryError" in said, said[-400:]
            await socket_.close()
            assert await until(lambda: app_processes(proc.pid) == [])
    wait_for_page(url + "/")  # the server itself is untouched
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(GONE_S) == 0


def raw_request(port: int, request: bytes) -> str:
    """The status line the server answers `request` with (bytes sent as they are)."""
    with socket.create_connection(("127.0.0.1", port), timeout=GONE_S) as sock:
        sock.sendall(request)
        answer = sock.recv(4096)
    return answer.split(b"\r\n", 1)[0].decode().split(" ", 1)[1]  # (HTTP/1.0 for unread)


def test_a_refused_request_is_one_line_without_headers_or_locals(serving) -> None:
    """Issue 31 item 6: textual-serve logged each bad request as Rich tracebacks with every
    frame's locals, the request's headers among them (8 blocks in one run). Now one line each
    on stderr, naming client, method, path and status or what HTTP could not read."""
    proc, url = serving()
    port = int(url.rsplit(":", 1)[1])
    secret = "Bearer sk-hostile-0123456789"
    requests = [
        f"GET /ws HTTP/1.1\r\nHost: x\r\nAuthorization: {secret}\r\n\r\n".encode(),  # no Upgrade
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # a request line over 8 KiB
        f"GET / HTTP/1.1\r\nHost: x\r\nX-Big: {secret}{'b' * 9000}\r\n\r\n".encode(),
        b"GET /gone%1b[2J HTTP/1.1\r\nHost: x\r\nUser-Agent: " + secret.encode() + b"\r\n\r\n",
    ]
    statuses = [raw_request(port, request) for request in requests]
    assert statuses == ["400 Bad Request"] * 3 + ["404 Not Found"]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(GONE_S) == 0
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    assert out == ""
    assert err.splitlines()[1:] == [
        "ari-mem-tui: serve: refused GET /ws from 127.0.0.1: HTTP 400 Bad Request",
        "ari-mem-tui: serve: refused a request from 127.0.0.1: LineTooLong (HTTP 400)",
        "ari-mem-tui: serve: refused a request from 127.0.0.1: LineTooLong (HTTP 400)",
        "ari-mem-tui: serve: refused GET /gone%1b[2J from 127.0.0.1: HTTP 404 Not Found",
    ]


async def test_a_load_whose_thread_cannot_start_ends_the_app(tiny: Path, monkeypatch) -> None:
    """Under a bound lower than a thread's stack (64 MiB here, before the merged code held less
    while it starts), the load's thread itself cannot start ("can't start new thread"): its
    worker fails before the load's own handler can say anything, and the app showed "loading …"
    for good, its session held open. Played here by a load that raises that error where the
    thread would: the app ends, return code 1, saying why."""
    from ari_mem_tui.tui import workers
    from tests.tui_app_helpers import make_app

    def no_thread(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(workers, "load_run", no_thread)
    app = make_app(tiny)
    said: list[object] = []
    leave = app.exit
    app.exit = lambda *args, **kwargs: (said.append(kwargs.get("message")), leave(*args, **kwargs))
    async with app.run_test() as pilot:
        for _ in range(250):
            if app.return_code is not None:
                break
            await pilot.pause(0.02)
    assert app.return_code == 1
    assert said == ["out of memory: RuntimeError: can't start new thread"]
