"""Where a checkpoint's files live, and the identity ARI derives from its path (§1.1, §1.3)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ari_mem_tui.checkpoint.backup import BACKUP_FILE

# files whose presence makes a folder a run (the tree, the memory, the telemetry)
RUN_FILES = ("tree.json", "nodes_tree.json", BACKUP_FILE, "memory_access.jsonl")


def checkpoint_hash(path: Path | str) -> str:
    """ARI's `_ckpt_hash`: first 12 hex of SHA-1 of the resolved absolute path string (§1.3).

    Symlinks are followed like ARI does, so a copied checkpoint gets a different hash.
    """
    try:
        resolved = Path(os.path.expanduser(str(path))).resolve()
    except (OSError, RuntimeError):  # a symlink loop: nothing to follow, hash what was given
        resolved = Path(os.path.abspath(os.path.expanduser(str(path))))
    return hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:12]


def workspace_root(ckpt: Path) -> Path:
    """The parent of the outermost ancestor named `checkpoints`, else the checkpoint's parent."""
    resolved = ckpt.resolve()
    outermost: Path | None = None
    for parent in resolved.parents:
        if parent.name == "checkpoints":
            outermost = parent
    return outermost.parent if outermost is not None else resolved.parent


def display_name(ckpt: Path, path: Path) -> str:
    """A file's name for problem lines: relative to the checkpoint when it lies inside it."""
    try:
        return path.relative_to(ckpt).as_posix()
    except ValueError:
        return str(path)


def is_run(path: Path) -> bool:
    """A folder holding any file ARI writes at a checkpoint's root (or a legacy node tree)."""
    try:
        if not path.is_dir():
            return False
        if any((path / name).is_file() for name in RUN_FILES):
            return True
        return any(path.glob("node_*/tree.json"))
    except OSError:
        return False


def not_a_folder(path: Path) -> str:
    """Why a file given as the checkpoint is not one, and which folder is when it is one of a
    run's files (tree.json given for its run)."""
    parent = path.parent
    if path.name in RUN_FILES or is_run(parent):
        return f"a file, not a folder; the run is the folder holding it: {parent}"
    return "a file, not a folder"
