"""Helpers for the Letta tests: options as the CLI builds them, a fake "original" server, and
for the live suite the guard that lets a file-mode replay reach the embedding endpoint only."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fake_letta import FakeLetta

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.cli import build_parser, main
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


# ---- the live suite's embedding server (scripts/letta/live-tests.sh) ---------------------


def embed_url() -> str:
    url = os.environ.get("LETTA_LIVE_EMBED_URL")
    if not url:
        pytest.fail("set LETTA_LIVE_EMBED_URL (scripts/letta/live-tests.sh does)")
    return url


@contextmanager
def only_the_embedding_endpoint() -> Iterator[list]:
    """Any connection but to the embedding endpoint fails (and fails the test): proof that a
    file-mode replay makes no Letta call, nor any other."""
    endpoint = urlsplit(embed_url())
    allowed = (endpoint.hostname, endpoint.port)
    real_connect = socket.socket.connect
    refused: list[object] = []

    def guard(self, address):
        if not (isinstance(address, tuple) and tuple(address[:2]) == allowed):
            refused.append(address)
            raise ConnectionRefusedError(f"the test allows no connection to {address}")
        return real_connect(self, address)

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("LETTA_BASE_URL", raising=False)
        patch.setattr(socket.socket, "connect", guard)
        yield refused
    assert refused == [], f"a file-mode replay tried to connect to {refused}"


def saw_json(capsys, *argv: str) -> dict:
    assert main(["saw", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def hits_of(data: dict) -> list[tuple]:
    return [(h["entry_id"], h["rank"], h["global_rank"], h["score"]) for h in data["hits"]]
