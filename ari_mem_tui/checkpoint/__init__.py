"""Readers for every file ARI writes into a checkpoint, and the `Checkpoint` aggregate."""

from ari_mem_tui.model.checkpoint import Checkpoint, NodeRefError

__all__ = ["Checkpoint", "NodeRefError"]
