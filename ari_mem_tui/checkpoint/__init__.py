"""Readers for every file ARI writes into a checkpoint, and the `Checkpoint` aggregate."""

from ari_mem_tui.model import Checkpoint, NodeRefError

__all__ = ["Checkpoint", "NodeRefError"]
