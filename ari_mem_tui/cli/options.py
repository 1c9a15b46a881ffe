"""argparse Namespace → the typed options of the library (one set of defaults, here)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ari_mem_tui.letta.footer import given_hash
from ari_mem_tui.letta.options import LettaOptions
from ari_mem_tui.model.secrets import remember, url_secrets
from ari_mem_tui.run import EMBEDDERS, LOCAL_EMBEDDERS, EmbedOptions, RunOptions
from ari_mem_tui.search.run_model import DEFAULT_DEADLINE

DEFAULT_LIMIT = 5  # ARI's hits per start-up search
RANKER_FLAGS = ("embedder", "embed_url", "embed_model", "letta_agent", "checkpoint_hash")


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


def settle_embedder(args: argparse.Namespace) -> None:
    """--embedder and --embed-url/--embed-model: the flags, else the config file's "embedder",
    "embed_url", "embed_model" (so `"embedder": "run"` there is asking for the run's model),
    else "auto" (the run's own ranker where this tool has it locally). A command whose choices
    lack the config's ranker (demo and serve never send anything) takes "auto"."""
    from ari_mem_tui.tui.config import load_settings  # noqa: PLC0415 - only when it matters

    # what the command line itself said, before the config fills the rest in
    args.ranker_flags = [key for key in RANKER_FLAGS if getattr(args, key, None) is not None]
    if args.embedder is not None:
        return
    settings = load_settings()
    allowed = EMBEDDERS if hasattr(args, "embed_url") else LOCAL_EMBEDDERS
    args.embedder = settings.embedder if settings.embedder in allowed else EMBEDDERS[0]
    if args.embedder == "run":
        for key in ("embed_url", "embed_model"):
            value = getattr(settings, key)
            if getattr(args, key, None) is None and value:
                setattr(args, key, value)


def embed_options(args: argparse.Namespace) -> EmbedOptions:
    return EmbedOptions(
        url=getattr(args, "embed_url", None),
        model=getattr(args, "embed_model", None),
        deadline=float(getattr(args, "embed_deadline", None) or DEFAULT_DEADLINE),
        checkpoint_hash=given_hash(getattr(args, "checkpoint_hash", None)),
    )


def run_options(
    args: argparse.Namespace, rank: bool = True, prefetch_queries: bool = True
) -> RunOptions:
    return RunOptions(
        checkpoint=Path(args.checkpoint),
        embedder=getattr(args, "embedder", None) or EMBEDDERS[0],
        letta=letta_options(args),
        rank=rank,
        embed=embed_options(args),
        prefetch_queries=prefetch_queries,
        # a first open's run index: written once the answer is out (cli/after_output.py)
        index_behind=True,
    )
