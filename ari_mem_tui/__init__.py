"""ari-mem-tui: a terminal browser for the memory of ARI runs.

A `§x.y` in this package's comments is a section of `docs/ari-format.md`: what ARI writes and
how its scoped search works, in this project's words (tests/test_format_doc.py checks that
every cited section exists)."""

__version__ = "0.1.0"
