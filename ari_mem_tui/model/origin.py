"""Where a run ran, as far as its checkpoint hash goes: the candidates its files name
(checkpoint/origin.py gathers them) and which one a replay confirmed (search/run_hash.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ari_mem_tui.model.records import Record

THIS_PATH = "this path"
GIVEN = "--checkpoint-hash"
AGENT = "the Letta agent's name"


@dataclass(kw_only=True)
class Candidate(Record):
    """One hash the run may have had, and where it was found."""

    hash: str
    source: str  # "this path", "tree.json experiment_file", "ari_run_1781946000.log Checkpoint" …
    path: str = ""  # the checkpoint path it is the hash of ("" for a hash given or named)


@dataclass(kw_only=True)
class HashFinding(Record):
    """Which checkpoint hash a replay rebuilds the run's footers with, and what checked it.

    `found`: True when the hash reproduced recorded searches (`reproduced` of `probes`), False
    when no candidate did (the run's hash is then unknown: the path's is used, labelled a
    stand-in), None when nothing checked it (given with --checkpoint-hash, or no recorded
    search to reproduce)."""

    hash: str
    source: str
    path: str = ""
    found: bool | None = None
    reproduced: int = 0
    probes: int = 0
    tried: list[Candidate] = field(default_factory=list)
    note: str = ""

    def line(self) -> str:
        """`hash 3f2a… from tree.json experiment_file, verified on 5 of 5 recorded searches`."""
        where = "this path's" if self.source == THIS_PATH else f"from {self.source}"
        if self.source == GIVEN:
            where = "given with --checkpoint-hash"
        if self.found is True:
            return (
                f"hash {self.hash} {where}, verified on {self.reproduced} of {self.probes}"
                f" recorded {'search' if self.probes == 1 else 'searches'}"
            )
        if self.found is False:
            tried = ", ".join(f"{c.hash} ({c.source})" for c in self.tried) or "none"
            return (
                f"footer hash unknown: no candidate reproduced the recorded searches (tried"
                f" {tried}); replayed with {self.hash} ({where})"
            )
        why = f": {self.note}" if self.note else ""
        return f"hash {self.hash} {where}, unchecked{why}"
