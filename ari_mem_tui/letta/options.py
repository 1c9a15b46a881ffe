"""How to reach a Letta server: the one typed set of options every Letta reader takes."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TIMEOUT = 10.0  # seconds one call may take in all; a top_k 200 search takes ~0.5 s


@dataclass(frozen=True)
class LettaOptions:
    url: str
    api_key: str | None = None  # never printed
    agent: str | None = None  # name or id; default ari_agent_<checkpoint hash>
    timeout: float = DEFAULT_TIMEOUT  # seconds one call may take in all
    checkpoint_hash: str | None = None  # for a checkpoint copied from where it ran
