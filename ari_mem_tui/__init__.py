"""ari-mem-tui: a terminal browser for the memory of ARI runs."""

__version__ = "0.1.0"
