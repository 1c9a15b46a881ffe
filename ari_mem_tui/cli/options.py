"""argparse Namespace → the typed options of the library (one set of defaults, here)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ari_mem_tui.letta.errors import url_secrets
from ari_mem_tui.letta.options import LettaOptions
from ari_mem_tui.model.secrets import remember
from ari_mem_tui.run import RunOptions

DEFAULT_LIMIT = 5  # ARI's hits per start-up search


def letta_options(args: argparse.Namespace) -> LettaOptions | None:
    """The server to read from, or None for the checkpoint's own files (--no-letta, no URL)."""
    remember(getattr(args, "letta_api_key", None), *url_secrets(getattr(args, "letta_url", "")))
    if getattr(args, "no_letta", False) or not getattr(args, "letta_url", None):
        return None
    return LettaOptions(
        url=args.letta_url,
        api_key=args.letta_api_key,
        agent=args.letta_agent,
        timeout=args.letta_timeout,
        checkpoint_hash=args.checkpoint_hash,
    )


def run_options(
    args: argparse.Namespace, rank: bool = True, prefetch_queries: bool = True
) -> RunOptions:
    return RunOptions(
        checkpoint=Path(args.checkpoint),
        embedder=getattr(args, "embedder", "auto"),
        letta=letta_options(args),
        rank=rank,
        prefetch_queries=prefetch_queries,
    )
