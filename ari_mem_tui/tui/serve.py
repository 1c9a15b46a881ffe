"""`ari-mem-tui serve CKPT|DIR`: the same app in a web browser, through textual-serve.

textual-serve starts one app process per browser tab (the command below) and relays its
terminal over a websocket to xterm.js in the page. It binds to 127.0.0.1 unless told otherwise:
whoever reaches the port reads the run's memory, so another address gets a warning first.
"""

from __future__ import annotations

import ipaddress
import shlex
import sys
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


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


def app_command(path: Path, embedder: str) -> str:
    """The command textual-serve runs for each browser tab: this tool's TUI on `path`."""
    return shlex.join(
        [sys.executable, "-m", "ari_mem_tui", "open", str(path.resolve()), "--embedder", embedder]
    )


def serve(path: Path, host: str, port: int, embedder: str) -> None:
    """Serve until Ctrl+C (or SIGTERM)."""
    from textual_serve.server import Server  # noqa: PLC0415 - only `serve` needs it

    title = f"ari-mem-tui · {path.resolve().name}"
    Server(app_command(path, embedder), host=host, port=port, title=title).serve()
