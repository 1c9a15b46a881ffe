"""A SIMULATED Letta 0.16.7 server, in-process, for the fast suite: the generator's
`LettaBackend` talks to it through the few `letta-client` calls it makes, and it ranks as
Letta ranks (read in its source, `build_agent_passage_query`): every passage of the agent,
footer included, embedded through the run's endpoint, ordered by cosine distance to the
query's vector, `top_k` first. Its embedding endpoint is the suite's own deterministic one
(`embed` of scripts/letta/embed_server.py, which tests/fake_embeddings.py serves over HTTP
and the live suite's real Letta embeds with), its vectors rounded to float32 as the endpoint
sends them.

It stands in for the real server only where speed is needed: a run recorded against it can be
replayed from its files with `--embedder run` through tests/fake_embeddings.py, so the footer
hash, a moved copy and the replay check are judged in seconds. The live suite records the same
run against a real Letta (tests/test_ari_like_live.py).
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "letta"))
from embed_server import embed


@dataclass
class _Passage:
    id: str
    text: str
    created_at: str
    vector: np.ndarray


@dataclass
class SimulatedLetta:
    """The client surface LettaBackend uses: `agents.create`, `agents.passages.create /
    search / list`, `agents.blocks.update`. One agent at a time (a run has one)."""

    dim: int
    passages: list[_Passage] = field(default_factory=list)
    blocks: dict[str, str] = field(default_factory=dict)
    rng_seed: int = 0

    def __post_init__(self) -> None:
        self._ids = np.random.default_rng(self.rng_seed)
        self.agents = SimpleNamespace(
            create=self._create_agent,
            passages=SimpleNamespace(create=self._insert, search=self._search, list=self._list),
            blocks=SimpleNamespace(update=self._update_block),
        )

    def vector(self, text: str) -> np.ndarray:
        vec = np.asarray(embed(text if text.strip() else " ", self.dim), dtype=np.float32)
        return vec.astype(np.float64)

    def _create_agent(self, **kwargs: Any) -> Any:
        return SimpleNamespace(
            id=f"agent-{uuid.UUID(int=int(self._ids.integers(2**62)))}", **kwargs
        )

    def _insert(self, agent_id: str, text: str, created_at: str) -> list[Any]:
        del agent_id
        pid = f"passage-{uuid.UUID(int=int(self._ids.integers(2**62)), version=4)}"
        self.passages.append(_Passage(pid, text, created_at, self.vector(text)))
        return [SimpleNamespace(id=pid)]

    def _search(self, agent_id: str, query: str, top_k: int) -> Any:
        """`ORDER BY embedding <=> query LIMIT top_k` over every passage (ties: pool order,
        which the embedder never makes); a blank query finds nothing."""
        del agent_id
        if not query.strip() or not self.passages:
            return SimpleNamespace(results=[])
        rows = np.stack([p.vector for p in self.passages])
        q = self.vector(query)
        distance = 1.0 - rows @ q / np.sqrt((rows * rows).sum(axis=1) * (q @ q))
        order = np.argsort(distance, kind="stable")[:top_k]
        found = [
            SimpleNamespace(id=self.passages[i].id, content=self.passages[i].text) for i in order
        ]
        return SimpleNamespace(results=found)

    def _list(self, agent_id: str, limit: int, after: str | None, ascending: bool) -> list[Any]:
        del agent_id, ascending
        ids = [p.id for p in self.passages]
        start = ids.index(after) + 1 if after in ids else 0
        return [SimpleNamespace(id=p.id, text=p.text) for p in self.passages[start : start + limit]]

    def _update_block(self, label: str, agent_id: str, value: str) -> None:
        del agent_id
        self.blocks[label] = value
