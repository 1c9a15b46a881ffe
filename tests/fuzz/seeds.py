"""The real runs the fuzzer damages, and their sound caches and answers.

Three runs in ARI's formats: the demo (8 nodes, seed 1: a planted leak, a rejected write, depth
3, Japanese and bracketed text), a run made the way ARI's own code makes one with its in-memory
backend (tests/ari_like), and the TUI tests' hand-made run. Each gets the files ARI writes beside
the memory that these do not have (settings.json, meta.json, an `ari_run_*.log`, a rotated
access log), so that every file a reader may open is there to damage. Each has a cache made by
the real commands (run index, kept audit, BM25 index, the run model's vectors, run counts) and
the answers those commands give with it, which a damaged cache must not change.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.runner import run_forked


@dataclass
class Seed:
    name: str
    run: Path
    nodes: list[str]
    cache: Path  # the sound cache of `run` (at this path: the run index is keyed by it)
    clean: dict[str, str] = field(default_factory=dict)  # command key -> its JSON answer
    letta_agent: str | None = None
    minilm: Path | None = None  # a cache holding MiniLM's vectors of the run's texts


def _extra_files(run: Path, rotate: bool) -> None:
    tree = json.loads((run / "tree.json").read_text())
    run_id = str(tree.get("run_id") or run.name)
    if not (run / "settings.json").exists():
        settings = {
            "letta_base_url": "http://localhost:8283",
            "letta_embedding_config": "openai/text-embedding-3-small",
        }
        (run / "settings.json").write_text(json.dumps(settings, indent=2))
    meta = {"checkpoint_dir": str(run), "parent_run_id": None, "run_id": run_id, "sub": [1, 2.5]}
    (run / "meta.json").write_text(json.dumps(meta, indent=2))
    (run / f"ari_run_{run_id[:15]}.log").write_text(
        f"Experiment: {run / 'experiment.md'}\nstep 1 of 3 ok\n"
        f"Run complete in 812.4 s | Checkpoint: {run}\n"
    )
    if not (run / "experiment.md").exists():
        (run / "experiment.md").write_text("# An experiment\n\nMeasure it.\n")
    if rotate:  # the oldest third of the access log as ARI's rotation leaves it
        log = run / "memory_access.jsonl"
        lines = log.read_bytes().splitlines(keepends=True)
        cut = len(lines) // 3
        (run / "memory_access.1.jsonl").write_bytes(b"".join(lines[:cut]))
        log.write_bytes(b"".join(lines[cut:]))


SEED_RUNS = ("demo", "ari-like", "tiny")


def make_runs(root: Path, names: tuple[str, ...] = SEED_RUNS) -> dict[str, Path]:
    """The seed runs under `root` (made once; kept between fuzz sessions)."""
    from ari_mem_tui.demo import write_demo
    from tests.ari_like import generate_in_memory
    from tests.tui_helpers import write_tiny_checkpoint

    makers: dict[str, Callable[[Path], object]] = {
        "demo": lambda p: write_demo(p, nodes=8, seed=1),
        "ari-like": lambda p: generate_in_memory(p),
        "tiny": write_tiny_checkpoint,
    }
    runs = {}
    for name in names:
        make = makers[name]
        run = root / "runs" / name
        if not (run / ".fuzz-seed-done").exists():
            shutil.rmtree(run, ignore_errors=True)
            make(run)
            _extra_files(run, rotate=name == "ari-like")
            (run / ".fuzz-seed-done").write_text("")
        runs[name] = run
    return runs


def node_ids(run: Path) -> list[str]:
    return [str(n["id"]) for n in json.loads((run / "tree.json").read_text())["nodes"]]


def sound_answers(
    seed: Seed, commands: dict[str, list[str]], env: dict[str, str], work: Path
) -> dict[str, str]:
    """Each command's JSON answer with the seed's cache: run twice (the first fills the cache),
    kept only where the two agree (an answer that moves by itself is no measure of a cache)."""
    from ari_mem_tui.cli import main

    answers: dict[str, str] = {}
    for key, argv in commands.items():
        seen = []
        for _ in range(2):
            outcome = run_forked(lambda argv=argv: main(argv), argv, env, work / "sound")
            seen.append(outcome.stdout if outcome.code in (0, 1) else None)
        if seen[0] is not None and seen[0] == seen[1]:
            answers[key] = seen[0]
    return answers
