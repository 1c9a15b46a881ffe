"""Every noun of the tool: the records read from ARI's files and the `Checkpoint` that holds them."""

from ari_mem_tui.model.records import (
    NODE_LABELS,
    NODE_STATUSES,
    EntryKind,
    Problem,
    Node,
    MemoryEntry,
    CoreBlocks,
    AccessEvent,
    TraceCall,
    CowWrite,
    Hit,
    Missed,
    TierLine,
    Tier,
    RecordedSearch,
    Replay,
)
from ari_mem_tui.model.checkpoint import Checkpoint, NodeRefError  # noqa: E402  (records first)

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
    "Tier",
    "TierLine",
    "TraceCall",
]
