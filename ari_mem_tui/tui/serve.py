"""`ari-mem-tui serve CKPT|DIR`: the same app in a web browser, through textual-serve.

textual-serve starts one app process per browser tab (the command below) and relays its
terminal over a websocket to xterm.js in the page. It binds to 127.0.0.1 unless told otherwise:
whoever reaches the port reads the run's memory, so another address gets a warning first. The
socket is bound before anything is printed, so a busy port, a port out of range or a host that
does not resolve is one line and exit 2; what guards the sessions is in serve_sessions.py.
"""

from __future__ import annotations

import ipaddress
import shlex
import socket
import sys
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


class ServeError(Exception):
    """Why the server cannot listen where asked; `str(exc)` is one line for the user."""


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, port: int) -> str | None:
    """The warning for a bind address other than this machine's loopback, else None."""
    if is_loopback(host):
        return None
    return (
        f"warning: serving on {host}:{port}, not only on this machine: anyone who can reach "
        "that address can open the app and read the run's memory (there is no login)"
    )


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on (host, port), or ServeError saying why not."""
    if not 1 <= port <= 65535:
        raise ServeError(f"--port {port} is not a port (1 to 65535)")
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ServeError(f"--host {host!r} does not resolve ({exc})") from None
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.setblocking(False)
    return sock


def app_command(path: Path, embedder: str) -> str:
    """The command textual-serve runs for each browser tab: this tool's TUI on `path`."""
    return shlex.join(
        [sys.executable, "-m", "ari_mem_tui", "open", str(path.resolve()), "--embedder", embedder]
    )


def serve(path: Path, sock: socket.socket, embedder: str) -> None:
    """Serve on `sock` (from `listen`) until Ctrl+C (or SIGTERM); every app process ends too."""
    from ari_mem_tui.checkpoint.limits import value  # noqa: PLC0415 - only `serve` needs them
    from ari_mem_tui.tui.serve_sessions import GuardedServer  # noqa: PLC0415 - aiohttp

    title = f"ari-mem-tui · {path.resolve().name}"
    server = GuardedServer(
        app_command(path, embedder),
        sock,
        sessions=value("sessions"),
        memory_mib=value("session-mib"),
        title=title,
    )
    server.serve()
