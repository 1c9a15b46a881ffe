"""A run generated the way ARI's own code makes one: the fixture the replay and the audit are
judged on (the demo records its searches with the replay's own ranker, so agreement on it
proves nothing).

    run = generate_in_memory(tmp_path / "ckpt")              # ARI_MEMORY_BACKEND=in_memory
    run = record_letta_run(url, tmp_path / "ckpt")           # a live Letta 0.16.7 (live suite)
    run.path, run.planted                                    # the checkpoint and what it holds

Deterministic for a seed; the in-memory run takes well under a second, the Letta one a minute
or two (every passage is a real insert and every search a real `passages.search`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from tests.ari_like.backends import AccessLog, InMemoryBackend, LettaBackend
from tests.ari_like.files import write_checkpoint
from tests.ari_like.run import RUN_ID, START, Planted, Simulation

LETTA_EMBEDDING = "openai/text-embedding-3-small"  # the handle the live suite's server serves


@dataclass
class GeneratedRun:
    path: Path
    planted: Planted


def _simulate(sim: Simulation, out: Path, embedding: str) -> GeneratedRun:
    sim.run()
    sim.planted.readers = [
        (e.fields["ts"], e.fields.get("query") or "", e.reader)
        for e in sim.backend.log.events
        if e.fields["op"] == "read"
    ]
    write_checkpoint(sim, out, embedding, web=sim.workspace is not None)
    return GeneratedRun(path=out, planted=sim.planted)


def workspace_run(workspace: Path) -> Path:
    """Where ARI runs a checkpoint in `workspace`: checkpoints/<run_id>."""
    return Path(workspace) / "checkpoints" / RUN_ID


def generate_in_memory(out: Path, seed: int = 19) -> GeneratedRun:
    """The run recorded by ARI's in-memory backend, written to `out`."""
    rng, clock = random.Random(seed), [START]
    # the backend draws its uuids from its own stream: the run's timeline is the same for both
    backend = InMemoryBackend(clock, AccessLog(), random.Random(seed + 1))
    return _simulate(Simulation(backend, clock, rng), Path(out), "letta-default")


SIMULATED_EMBEDDING = "ollama/nomic-embed-text"  # a handle of no fixed dimension: 64 here
SIMULATED_DIM = 64


def generate_simulated_letta(workspace: Path, seed: int = 19) -> GeneratedRun:
    """The same run recorded against a SIMULATED Letta (tests/ari_like/simulated_letta.py:
    Letta's cosine ranking over the suite's deterministic embeddings, in-process), launched
    from ARI's web UI in `workspace`: its checkpoint is `workspace_run(workspace)`, and its
    files name that path where such a launch names it (files.write_launch_records; the node
    work dirs in its shell commands). The passage footers carry that path's hash; the server
    embedded with SIMULATED_EMBEDDING (64 numbers a vector: the suite's embedder is plain
    Python), which tests/fake_embeddings.py serves as `FakeEmbeddings(dim=SIMULATED_DIM)`."""
    import hashlib

    from tests.ari_like.simulated_letta import SimulatedLetta

    out = workspace_run(workspace)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_hash = hashlib.sha1(str(out.resolve()).encode("utf-8")).hexdigest()[:12]
    rng, clock = random.Random(seed), [START]
    server = SimulatedLetta(dim=SIMULATED_DIM)
    backend = LettaBackend(
        clock, AccessLog(), random.Random(seed + 1), server, ckpt_hash, SIMULATED_EMBEDDING
    )
    sim = Simulation(backend, clock, rng, workspace=str(Path(workspace).resolve()))
    run = _simulate(sim, out, SIMULATED_EMBEDDING)
    backend.verify_mirror()
    return run


def record_letta_run(url: str, out: Path, seed: int = 19, web: bool = False) -> GeneratedRun:
    """The same run recorded against the live Letta at `url`: a fresh agent named after the
    checkpoint's hash (of `out`'s resolved path, as ARI derives it), left on the server so
    `--letta-url` replays can use it. `web`: launched from ARI's web UI in the workspace
    `out` is `checkpoints/<run_id>` of (its files name the path, as `generate_simulated_letta`'s
    do)."""
    import hashlib

    from letta_client import Letta

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_hash = hashlib.sha1(str(out.resolve()).encode("utf-8")).hexdigest()[:12]
    client = Letta(base_url=url, timeout=120, max_retries=0)
    rng, clock = random.Random(seed), [START]
    backend = LettaBackend(
        clock, AccessLog(), random.Random(seed + 1), client, ckpt_hash, LETTA_EMBEDDING
    )
    workspace = str(out.resolve().parents[1]) if web else None
    run = _simulate(Simulation(backend, clock, rng, workspace=workspace), out, LETTA_EMBEDDING)
    backend.verify_mirror()
    return run
