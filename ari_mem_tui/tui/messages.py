"""Messages from the panes and the thread workers to the screen or the app that handles them
(the main screen: the run's load and audit, a replay shown; the app: an entry or a node asked
for from any view), and the search keys they carry."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from textual.message import Message

if TYPE_CHECKING:
    import threading

    from textual.notifications import SeverityLevel

    from ari_mem_tui.audit import AuditReport
    from ari_mem_tui.checkpoint import Checkpoint
    from ari_mem_tui.model import Replay
    from ari_mem_tui.model.health import Health, WhatIf
    from ari_mem_tui.model.why import WhyAnswer
    from ari_mem_tui.model.workspace import RunInfo
    from ari_mem_tui.run import Run
    from ari_mem_tui.tui.rows import AuditRow, RowDetail


class SearchParams(NamedTuple):
    """How the chosen node's search is run; the Hits pane sets them, remembered across nodes."""

    query: str | None = None  # the custom query's text, when query_from is "custom"
    limit: int = 5
    as_of: bool = True  # the pool as of the node's start (what it saw), else today's
    query_from: str = "start"  # "start" | "now" | "custom"


class ReplayKey(NamedTuple):
    """One replay: a node and the search params it was run with (the replay cache's key)."""

    node_id: str
    query: str | None
    limit: int
    as_of: bool
    query_from: str

    @classmethod
    def of(cls, node_id: str, params: SearchParams) -> ReplayKey:
        return cls(node_id, *params)


class JumpToNode(Message):
    """Select this node in the tree (from a breadcrumb, the audit list, the palette…)."""

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id


class OpenEntry(Message):
    """Show a memory entry in full; `row` gives the fields of the table row it was opened from
    (shown above the entry), and is shown alone when the entry is not in the loaded memory."""

    def __init__(self, entry_id: str, row: RowDetail | None = None) -> None:
        super().__init__()
        self.entry_id = entry_id
        self.row = row


class ViewRow(Message):
    """Show a table row that is not a memory entry (a write, an audit finding) in full."""

    def __init__(self, row: RowDetail) -> None:
        super().__init__()
        self.row = row


class RerunSearch(Message):
    """Re-run the current node's search with another query, limit, pool or query source."""

    def __init__(
        self, query: str | None, limit: int, as_of: bool, query_from: str = "start"
    ) -> None:
        super().__init__()
        self.query = query
        self.limit = limit
        self.as_of = as_of
        self.query_from = query_from  # "start" | "now" | "custom" (then `query` is the text)


# ---------------------------------------------------------------- from the workers
# Workers run in threads and never touch a widget: they post one of these to the screen or widget
# that started them, which checks it against what is on screen now (a newer load or selection
# wins) before showing it.


class LoadStep(Message):
    """The load's part `n` of `m` (`part` names it) has started."""

    def __init__(self, n: int, m: int, part: str) -> None:
        super().__init__()
        self.n, self.m, self.part = n, m, part


class VectorProgress(Message):
    """`done` of `total` vectors computed (total 0: nothing to compute)."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total


class TreeRead(Message):
    """The tree alone was read (fast), before the run's memory; set `drawn` once it is shown."""

    def __init__(self, ckpt: Checkpoint, drawn: threading.Event) -> None:
        super().__init__()
        self.ckpt, self.drawn = ckpt, drawn


class RunLoaded(Message):
    """The run is open; `keep` keeps the place in the tree (reload, follow); `audit`, when
    the load audited it already (the app chooses the node to open on by its findings)."""

    def __init__(self, run: Run, keep: bool, audit: AuditDone | None = None) -> None:
        super().__init__()
        self.run, self.keep, self.audit = run, keep, audit


class LoadFailed(Message):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


class ReplayDone(Message):
    def __init__(self, key: ReplayKey, replay: Replay) -> None:
        super().__init__()
        self.key, self.replay = key, replay


class ReplayFailed(Message):
    def __init__(self, key: ReplayKey, error: Exception) -> None:
        super().__init__()
        self.key, self.error = key, error

    @property
    def text(self) -> str:
        return f"search for {self.key.node_id} failed: {type(self.error).__name__}: {self.error}"


class ReplayShown(Message):
    """The Hits, Saw and Core tabs now show this replay."""

    def __init__(self, replay: Replay) -> None:
        super().__init__()
        self.replay = replay


class VectorsReady(Message):
    """The ranker's vectors are all computed (MiniLM), or (`complete` False) more pools are:
    BM25 stand-ins whose pool is now embedded can be searched again."""

    def __init__(self, ranker: object, complete: bool = True) -> None:
        super().__init__()
        self.ranker, self.complete = ranker, complete


class AuditDone(Message):
    """The audit of `ckpt`: the Audit tab's rows, its verdict (`summary`: what the rows cannot
    say, tui/audit_rows.py), the findings per node; `fresh`: the report when it was audited now
    (not read from the audit kept for these files), to be kept."""

    def __init__(
        self,
        ckpt: Checkpoint,
        rows: list[AuditRow],
        summary: str,
        by_node: dict[str, list],
        fresh: AuditReport | None = None,
    ) -> None:
        super().__init__()
        self.ckpt, self.rows, self.summary, self.by_node = ckpt, rows, summary, by_node
        self.fresh = fresh


class CompareReady(Message):
    """Both nodes' default searches, for the compare screen."""

    def __init__(self, run: Run, a: Replay, b: Replay) -> None:
        super().__init__()
        self.run, self.a, self.b = run, a, b


class Notice(Message):
    """A toast from a worker (e.g. a failed compare)."""

    def __init__(self, text: str, severity: SeverityLevel = "information") -> None:
        super().__init__()
        self.text, self.severity = text, severity


class CheckpointChanged(Message):
    """Following: the checkpoint's files changed on disk (tui/follow.py)."""


class HealthProgress(Message):
    """The health view's worker: `done` of `total` nodes replayed."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total


class HealthDone(Message):
    """The health view's worker finished: its result, or the error that stopped it."""

    def __init__(self, result: Health | None, error: Exception | None = None) -> None:
        super().__init__()
        self.result, self.error = result, error


class WhatIfProgress(Message):
    """The Health view's what-if worker: `done` of `total` steps (both passes), or what it
    waits for (`text`: a ranker's vectors)."""

    def __init__(self, done: int, total: int, text: str = "") -> None:
        super().__init__()
        self.done, self.total, self.text = done, total, text


class WhatIfDone(Message):
    """The what-if worker finished: its result (None: stopped before it had one), or the
    error that stopped it."""

    def __init__(self, result: WhatIf | None, error: Exception | None = None) -> None:
        super().__init__()
        self.result, self.error = result, error


class WhyReady(Message):
    """The why view's worker answered (search/why.py), or failed with `error`."""

    def __init__(self, answer: WhyAnswer | None, error: str = "") -> None:
        super().__init__()
        self.answer, self.error = answer, error


class RunsCounted(Message):
    """The run picker's worker counted the nodes and entries of every run."""

    def __init__(self, runs: list[RunInfo]) -> None:
        super().__init__()
        self.runs = runs
