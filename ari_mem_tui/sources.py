"""Open a run from its checkpoint files, optionally with memory and ranking from a Letta server.

The one place the CLI and the TUI turn their options into (Checkpoint, Ranker), so both always
read the same data the same way.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ari_mem_tui.checkpoint import Checkpoint


@dataclass
class Run:
    checkpoint: Checkpoint
    ranker: object  # an ari_mem_tui.search ranker (embedded or Letta)
    source_label: str  # "files: <path>" or "letta: <url> agent <name>"


def open_run(args: argparse.Namespace) -> Run:
    """Load the checkpoint; with a Letta URL, take memory, core blocks and ranking from there."""
    from ari_mem_tui.checkpoint.load import load_checkpoint

    path = Path(args.checkpoint)
    ckpt = load_checkpoint(path)
    letta_url = None if getattr(args, "no_letta", False) else getattr(args, "letta_url", None)
    if letta_url:
        from ari_mem_tui.memory.letta import open_letta_run

        return open_letta_run(ckpt, args)
    from ari_mem_tui.search.rankers import make_ranker

    ranker = make_ranker(ckpt, getattr(args, "embedder", "minilm"))
    return Run(checkpoint=ckpt, ranker=ranker, source_label=f"files: {path}")
