"""Every noun of the tool: the records read from ARI's files and the `Checkpoint` that holds them."""

from ari_mem_tui.model.checkpoint import Checkpoint, NodeRefError, Run  # noqa: E402  (records first)
from ari_mem_tui.model.records import (
    NODE_LABELS,
    NODE_STATUSES,
    AccessEvent,
    CoreBlocks,
    CowWrite,
    EntryKind,
    Hit,
    MemoryEntry,
    Missed,
    Node,
    Problem,
    RecordedSearch,
    Replay,
    Tier,
    TierLine,
    TraceCall,
)

__all__ = [
    "AccessEvent",
    "Checkpoint",
    "CoreBlocks",
    "CowWrite",
    "EntryKind",
    "Hit",
    "MemoryEntry",
    "Missed",
    "NODE_LABELS",
    "NODE_STATUSES",
    "Node",
    "NodeRefError",
    "Problem",
    "RecordedSearch",
    "Replay",
    "Run",
    "Tier",
    "TierLine",
    "TraceCall",
]
