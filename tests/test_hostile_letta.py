"""Misbehaving servers behind --letta-url: a deadline per call, no secret echoed, no escape.

Each server is a few lines of stdlib socket code on 127.0.0.1, NOT Letta (named fakes): it
answers slowly, never, or with a hostile error, and the real command must give one clean line.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

UNSAFE = re.compile("[\x1b\x07\x9b\x9d]")


class TinyServer:
    """A fake HTTP peer: `respond(conn, request_bytes)` decides what the client gets."""

    def __init__(self, respond: Callable[[socket.socket, bytes], None]) -> None:
        self.respond = respond
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            request = conn.recv(65536)
            self.respond(conn, request)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()


@pytest.fixture
def server() -> Iterator[Callable[[Callable[[socket.socket, bytes], None]], TinyServer]]:
    started: list[TinyServer] = []

    def start(respond: Callable[[socket.socket, bytes], None]) -> TinyServer:
        started.append(TinyServer(respond))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def _node(ckpt: Path) -> str:
    return json.loads((ckpt / "tree.json").read_text())["nodes"][1]["id"]


def run(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, time.monotonic() - start


def assert_one_clean_line(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert not UNSAFE.search(proc.stderr + proc.stdout)
    assert proc.stderr.strip().count("\n") == 0, proc.stderr


def drip(conn: socket.socket, _request: bytes) -> None:
    """Headers at once, then one body byte a second: each read is quick, the answer never ends."""
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n"
    )
    for _ in range(120):
        conn.sendall(b" ")
        time.sleep(1.0)


def silent(_conn: socket.socket, _request: bytes) -> None:
    time.sleep(120)


@pytest.mark.parametrize("respond", [drip, silent], ids=["slow-drip", "silent"])
def test_a_slow_server_meets_one_deadline(small_ckpt: Path, server, respond) -> None:
    srv = server(respond)
    url = f"http://127.0.0.1:{srv.port}"
    proc, took = run(
        "saw", str(small_ckpt), _node(small_ckpt), "--letta-url", url, "--letta-timeout", "3"
    )
    assert_one_clean_line(proc)
    assert "did not answer within 3 s" in proc.stderr
    assert took < 30, took  # 3 s deadline + start-up, generous for a loaded machine


def test_credentials_are_never_echoed(small_ckpt: Path, server) -> None:
    def echo(conn: socket.socket, request: bytes) -> None:
        body = json.dumps({"detail": "bad request: " + request.decode("latin-1")}).encode()
        conn.sendall(
            b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    srv = server(echo)
    url = f"http://admin:PWSECRET9@127.0.0.1:{srv.port}/?api_key=QSECRET7"
    proc, _ = run(
        "saw",
        str(small_ckpt),
        _node(small_ckpt),
        "--letta-url",
        url,
        "--letta-api-key",
        "KEYSECRET5",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    for secret in ("PWSECRET9", "QSECRET7", "KEYSECRET5"):
        assert secret not in out, out
    assert "Traceback" not in out


def test_escapes_and_markup_in_a_server_error_are_shown_as_text(small_ckpt: Path, server) -> None:
    def hostile(conn: socket.socket, _request: bytes) -> None:
        body = json.dumps({"detail": "\x1b]0;pwned\x07 \x9b2J [/x] [bold]boom"}).encode()
        conn.sendall(
            b"HTTP/1.1 418 I'm a teapot\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    srv = server(hostile)
    proc, _ = run(
        "saw", str(small_ckpt), _node(small_ckpt), "--letta-url", f"http://127.0.0.1:{srv.port}"
    )
    assert_one_clean_line(proc)


@pytest.mark.parametrize("command", ["saw", "letta-restore"])
def test_an_unusable_url_is_one_line(small_ckpt: Path, command: str) -> None:
    args = [command, str(small_ckpt)] + ([_node(small_ckpt)] if command == "saw" else [])
    proc, _ = run(*args, "--letta-url", "http://[::1:80")
    assert_one_clean_line(proc)
    assert "not a usable URL" in proc.stderr or "Invalid port" in proc.stderr


MIB = 1 << 20


def _reply(status: str, content_type: str, body: bytes) -> Callable[[socket.socket, bytes], None]:
    def respond(conn: socket.socket, _request: bytes) -> None:
        head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        conn.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)

    return respond


def endless_brackets(conn: socket.socket, _request: bytes) -> None:
    """`[[[[…` with no length and no end, until the client hangs up (or a minute passes)."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
    end = time.monotonic() + 60
    while time.monotonic() < end:
        conn.sendall(b"[" * 65536)


HOSTILE = {
    # a refused key whose error text echoes the key, with markup and escapes around it
    "401": (
        _reply(
            "401 Unauthorized",
            "application/json",
            json.dumps({"detail": "bad key KEYSECRET5 \x1b[2J\x07 [red]x[/red]"}).encode(),
        ),
        "refused the API key (HTTP 401",
    ),
    "html": (
        _reply("200 OK", "text/html", b"<html><body><h1>Welcome to nginx!</h1></body></html>"),
        "does not answer like a Letta server",
    ),
    "huge-body": (
        _reply("200 OK", "application/json", b'{"detail": "' + b"h" * (64 * MIB) + b'"}'),
        "does not answer like a Letta server",
    ),
    "deep-brackets": (
        _reply("200 OK", "application/json", b"[" * (2 * MIB)),  # RecursionError in a parser
        "does not answer like a Letta server",
    ),
    "deep-brackets-500": (
        _reply("500 Internal Server Error", "application/json", b"[" * (2 * MIB)),
        "failed while checking",
    ),
    # whichever comes first: the deadline, or the answer limit (256 MiB at loopback speed)
    "endless-brackets": (endless_brackets, ("did not answer within 5 s", "sent too much")),
}


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("command", ["saw", "summary"])
def test_a_misbehaving_server_is_one_clean_line(
    small_ckpt: Path, server, case: str, command: str
) -> None:
    respond, expected = HOSTILE[case]
    srv = server(respond)
    args = [command, str(small_ckpt)] + ([_node(small_ckpt)] if command == "saw" else [])
    url = f"http://127.0.0.1:{srv.port}"
    proc, took = run(
        *args, "--letta-url", url, "--letta-api-key", "KEYSECRET5", "--letta-timeout", "5"
    )
    assert_one_clean_line(proc)  # exit 2 (cannot use the server), no traceback, no escapes
    expected = (expected,) if isinstance(expected, str) else expected
    assert any(text in proc.stderr for text in expected), proc.stderr
    assert not re.search("[\x80-\x9f]", proc.stderr + proc.stdout)
    assert "KEYSECRET5" not in proc.stderr + proc.stdout
    assert "[red]" not in proc.stderr  # the server's text is not shown at all here
    assert took < 60, took


@pytest.mark.parametrize("case", ["huge-body", "endless-brackets"])
def test_an_answer_past_the_limit_is_read_no_further(
    small_ckpt: Path, server, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_LETTA_ANSWER_MIB", "8")  # inherited by the child
    srv = server(HOSTILE[case][0])
    proc, took = run(
        "summary", str(small_ckpt), "--letta-url", f"http://127.0.0.1:{srv.port}",
        "--letta-timeout", "20",
    )  # fmt: skip
    assert_one_clean_line(proc)
    assert "sent too much in answer to checking /v1/health/" in proc.stderr, proc.stderr
    assert "over the 8 MiB limit (raise it with --max letta-answer-mib=N" in proc.stderr
    assert took < 20, took  # stopped by the limit, not by the deadline


@pytest.mark.parametrize("ts", [10**400, float("nan"), float("inf")], ids=["1e400", "nan", "inf"])
def test_a_footer_ts_that_is_no_finite_number_is_the_passages_creation_time(ts: float) -> None:
    """A server's passage whose footer says `"ts": 1e400` written out (json reads it as an
    int) raised OverflowError out of a decoder that never raises; NaN and Infinity were kept
    as the entry's time. Each is said, and the passage's creation time used."""
    from ari_mem_tui.checkpoint.entry_ids import EntryIds
    from ari_mem_tui.checkpoint.passages import encode_passage, node_footer
    from ari_mem_tui.letta.source import entry_from_passage

    footer = {**node_footer("0123456789ab", "n1", {}, 1.0), "ts": ts}
    problems: list = []
    entry = entry_from_passage(
        "p1", encode_passage("hello", footer), 5.0, EntryIds(), problems, "letta"
    )
    assert entry.ts == 5.0 and entry.text == "hello" and entry.node_id == "n1"
    assert [p.why for p in problems] == ["footer ts is not a number"]
