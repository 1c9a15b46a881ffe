"""Counted nouns, for the messages of every layer (a note from the ranker, a problem from a
reader, a line of the TUI): `3 passages`, never `3 passage(s)`."""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`1 leak`, `2 leaks`; `nouns` for an irregular plural (`match`, `matches`)."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"
