"""The one error a Letta server problem becomes (kept free of heavy imports for the CLI)."""

from __future__ import annotations

from ari_mem_tui.model.secrets import safe_url, url_problem


class LettaUnavailable(RuntimeError):
    """The Letta server could not give what was asked; `str(exc)` is one line for the user.

    Raised for: server unreachable or too slow, a URL that is not a Letta server, an API key
    refused, an agent not found, and a search the server failed (its embedding endpoint).
    The CLI prints it and exits 2; the TUI catches it and keeps what it already shows.
    """


def check_url(url: str) -> str:
    """`url` if it can be connected to at all; else the one-line error, before anything runs."""
    problem = url_problem(url)
    if problem:
        raise LettaUnavailable(f"--letta-url {safe_url(url)} is {problem}")
    return url
