"""ARI's passage encoding in Letta (§3.7): entry text, a separator line, and a JSON footer.

Letta has no metadata ARI uses, so every passage carries its own: `text + SEPARATOR + json`.
Decoding splits at the LAST separator (entry text may itself contain the separator) and never
raises: a footer that does not parse leaves the whole blob as text with no metadata, as ARI does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ari_mem_tui.letta.errors import LettaUnavailable

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
    ckpt_hash: str, node_id: str, metadata: dict[str, Any], ts: float
) -> dict[str, Any]:
    return {
        "collection": node_collection(ckpt_hash),
        "node_id": node_id,
        "ari_checkpoint": ckpt_hash,
        "kind": "node_scope",
        "ari_metadata": metadata,
        "ts": ts,
    }


def react_footer(ckpt_hash: str, metadata: dict[str, Any], ts: float) -> dict[str, Any]:
    return {
        "collection": react_collection(ckpt_hash),
        "ari_checkpoint": ckpt_hash,
        "kind": "react_step",
        "node_id": metadata.get("node_id") or "",
        "step": metadata.get("step"),
        "ari_metadata": metadata,
        "ts": ts,
    }


@dataclass
class DecodedPassage:
    text: str
    footer: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # why the footer was not usable; "" when it decoded

    @property
    def ok(self) -> bool:
        return not self.error


def decode_passage(blob: str) -> DecodedPassage:
    """Split a passage into (text, footer). Never raises."""
    if not isinstance(blob, str):
        return DecodedPassage(text=str(blob), error="passage text is not a string")
    head, sep, tail = blob.rpartition(SEPARATOR)
    if not sep:
        return DecodedPassage(text=blob, error="no <<<ARI_META>>> footer")
    try:
        footer = json.loads(tail)
    except (ValueError, RecursionError) as exc:
        return DecodedPassage(text=blob, error=f"footer is not JSON ({type(exc).__name__})")
    if not isinstance(footer, dict):
        return DecodedPassage(text=blob, error="footer is not a JSON object")
    return DecodedPassage(text=head, footer=footer)


HASH_RE = re.compile(r"^[0-9a-f]{12}$")  # ARI's checkpoint hash: sha256(path)[:12]


def given_hash(value: str | None) -> str | None:
    """--checkpoint-hash, validated (12 lower-case hex characters), or None."""
    if not value:
        return None
    given = value.strip().lower()
    if not HASH_RE.match(given):
        raise LettaUnavailable(
            f"--checkpoint-hash must be 12 hex characters (ARI's hash), not {given!r}"
        )
    return given
