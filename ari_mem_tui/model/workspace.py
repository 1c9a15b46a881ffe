"""Nouns of a workspace: the runs found under a folder, and one run's headline numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ari_mem_tui.model.records import Problem, Record


@dataclass(kw_only=True)
class RunSummary(Record):
    """A run at a glance, as its first open found it (run_summary.py): kept beside its run
    index, so that listing a thousand runs reads a small file per run, never a run."""

    FLOATS = ("made",)
    made: float  # epoch: when it was made
    nodes: int = 0
    entries: int = 0
    leaks: int = 0  # the audit's findings
    scope_violations: int = 0
    rejected_writes: int = 0
    unattributed: int = 0  # reads whose reader the files cannot establish (not findings)
    problems: int = 0  # the load's problems (any severity)
    # starved nodes, judged on the recorded start-up searches (what each node really got):
    judged: int = 0  # nodes whose start-up search is recorded
    starved: int = 0  # of them, got fewer hits than their lineage held (health's rule)
    unjudged: int = 0  # nodes that searched but whose search is not in the access log
    # the replay check (search/check.py, kept beside the run index); None: unchecked
    replay_checked: int | None = None  # recorded searches replayed and compared
    replay_reproduced: int | None = None  # of them, reproduced
    replay_word: str = ""  # its verdict, in search/fidelity.py's words
    replay_ranker: str = ""  # what ranked the replays ("in-memory", "run:<model>" …)


@dataclass(kw_only=True)
class RunInfo(Record):
    """One run of a workspace, as the run picker and `ari-mem-tui runs` list it."""

    FLOATS = ("created", "last_change", "recent")
    run_id: str  # tree.json's run_id, else the folder name
    path: str  # absolute path of the checkpoint folder
    folder: str = ""  # the folder's name (ARI names it after the run id; a copy may not)
    created: float | None = None  # epoch: from the run id's stamp, else tree.json, else mtime
    created_source: str = ""  # "run_id" | "tree.json created_at" | "mtime"
    nodes: int | None = None  # None: no readable tree
    completed: int = 0  # status success
    failed: int = 0
    running: int = 0
    pending: int = 0
    entries: int | None = None  # memory records in the backup (node scope + react); None: none
    size: int = 0  # bytes of every file under the folder
    last_change: float | None = None  # newest mtime of any file under the folder
    live: bool = False  # a `.ari_pid` marker: the run may still be going
    recent: float | None = None  # when this tool last opened it (from the config dir)
    problems: list[Problem] = field(default_factory=list)
    summary: RunSummary | None = None  # None: never opened here (`runs --scan` makes it)


@dataclass(kw_only=True)
class Workspace(Record):
    """What a folder turned out to be: one run, a folder of runs, or neither (and why)."""

    path: str
    kind: Literal["run", "workspace", "none"]
    where: list[str] = field(default_factory=list)  # the folders the runs were found in
    runs: list[RunInfo] = field(default_factory=list)  # newest first
    message: str = ""  # for "none": the one line that says what the folder is not
