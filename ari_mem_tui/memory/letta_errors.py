"""The one error a Letta server problem becomes (kept free of heavy imports for the CLI)."""

from __future__ import annotations


class LettaUnavailable(RuntimeError):
    """The Letta server could not give what was asked; `str(exc)` is one line for the user.

    Raised for: server unreachable or too slow, a URL that is not a Letta server, an API key
    refused, an agent not found, and a search the server failed (its embedding endpoint).
    The CLI prints it and exits 2; the TUI catches it and keeps what it already shows.
    """
