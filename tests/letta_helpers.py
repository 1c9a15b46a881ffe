"""Helpers for the Letta tests: options as the CLI builds them, and a fake "original" server."""

from __future__ import annotations

import json
from pathlib import Path

from fake_letta import FakeLetta

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.cli import build_parser
from ari_mem_tui.cli.options import letta_options
from ari_mem_tui.letta.footer import agent_name, node_footer, react_footer
from ari_mem_tui.letta.options import LettaOptions


def letta_args(url: str, checkpoint: Path | None = None, **options: str) -> LettaOptions:
    """The options the CLI builds from `--letta-url URL [--letta-agent A] [--checkpoint-hash H]`
    (`checkpoint` is accepted for symmetry with the command line; the options do not hold it)."""
    del checkpoint
    return letta_options(
        build_parser().parse_args(["saw", ".", "x", "--letta-url", url, *_flags(options)])
    )


def _flags(options: dict[str, str]) -> list[str]:
    return [arg for k, v in options.items() for arg in ("--" + k.replace("_", "-"), v)]


def as_original_server(fake: FakeLetta, ckpt_path: Path, ckpt_hash: str | None = None) -> str:
    """Fill the fake the way ARI's run left its server: every backup entry as a passage whose
    id is the one the access log recorded for it (when the loader could join it), created at
    its ts, in ARI's encoding, plus the core blocks. Returns the agent id."""
    ckpt = load_checkpoint(ckpt_path)
    ckpt_hash = ckpt_hash or checkpoint_hash(ckpt_path)
    context = json.dumps(ckpt.core.ari_context, ensure_ascii=False) if ckpt.core.seeded else ""
    agent_id = fake.add_agent(
        agent_name(ckpt_hash), blocks={"persona": "", "human": "", "ari_context": context}
    )
    for entry in sorted(ckpt.entries, key=lambda e: e.ts or 0.0):
        if entry.kind == "node_scope":
            footer = node_footer(ckpt_hash, entry.node_id, entry.metadata, entry.ts)
        else:
            footer = react_footer(ckpt_hash, entry.metadata, entry.ts)
        fake.add_ari_passage(agent_id, entry.text, footer, passage_id=entry.letta_id or None)
    return agent_id
