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
    """Load the checkpoint; with a Letta URL, take memory, core blocks and ranking from there.

    `args.load_step`, if set, is called as `(n, m, part)` when each of the m parts starts: the
    checkpoint's `LOAD_STEPS`, then the search index (or the Letta server).
    """
    from ari_mem_tui.checkpoint.load import LOAD_STEPS, load_checkpoint

    step = getattr(args, "load_step", None) or (lambda _n, _m, _part: None)
    total = len(LOAD_STEPS) + 1
    path = Path(args.checkpoint)
    ckpt = load_checkpoint(path, on_step=lambda n, _m, part: step(n, total, part))
    letta_url = None if getattr(args, "no_letta", False) else getattr(args, "letta_url", None)
    if letta_url:
        from ari_mem_tui.letta.source import open_letta_run

        step(total, total, "Letta server")
        return open_letta_run(ckpt, args)
    from ari_mem_tui.search.rankers import make_ranker

    step(total, total, "search index")
    ranker = make_ranker(ckpt, getattr(args, "embedder", "minilm"))
    return Run(checkpoint=ckpt, ranker=ranker, source_label=f"files: {path}")
