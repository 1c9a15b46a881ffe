"""ARI's passage encoding in Letta (docs/ari-format.md §3.7): entry text, a separator line, a JSON footer.

Letta has no metadata ARI uses, so every passage carries its own: `text + SEPARATOR + json`,
the footer's keys sorted, non-ASCII kept. Letta embeds that whole text, footer included, so
`passage_text` is what a restore writes and what the run's embedding model was given: the one
encoder for both. Decoding (which may fail on foreign input) lives with the Letta reader.
"""

from __future__ import annotations

import json
from typing import Any

from ari_mem_tui.model import EntryView, MemoryEntry

SEPARATOR = "\n<<<ARI_META>>>\n"


def node_collection(ckpt_hash: str) -> str:
    return f"ari_node_{ckpt_hash}"


def react_collection(ckpt_hash: str) -> str:
    return f"ari_react_{ckpt_hash}"


def agent_name(ckpt_hash: str) -> str:
    return f"ari_agent_{ckpt_hash}"


def encode_passage(text: str, footer: dict[str, Any]) -> str:
    """The passage text ARI writes: sorted keys, non-ASCII kept, odd values stringified."""
    return text + SEPARATOR + json.dumps(footer, sort_keys=True, ensure_ascii=False, default=str)


def node_footer(
    ckpt_hash: str, node_id: str, metadata: dict[str, Any], ts: float | None
) -> dict[str, Any]:
    return {
        "collection": node_collection(ckpt_hash),
        "node_id": node_id,
        "ari_checkpoint": ckpt_hash,
        "kind": "node_scope",
        "ari_metadata": metadata,
        "ts": ts,
    }


def react_footer(ckpt_hash: str, metadata: dict[str, Any], ts: float | None) -> dict[str, Any]:
    return {
        "collection": react_collection(ckpt_hash),
        "ari_checkpoint": ckpt_hash,
        "kind": "react_step",
        "node_id": metadata.get("node_id") or "",
        "step": metadata.get("step"),
        "ari_metadata": metadata,
        "ts": ts,
    }


def passage_text(entry: MemoryEntry | EntryView, ckpt_hash: str) -> str:
    """The passage ARI would have written for this entry, byte for byte."""
    if entry.kind == "node_scope":
        footer = node_footer(ckpt_hash, entry.node_id, entry.metadata, entry.ts)
    else:
        footer = react_footer(ckpt_hash, entry.metadata, entry.ts)
    return encode_passage(entry.text, footer)
