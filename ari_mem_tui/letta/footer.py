"""ARI's passages read back from Letta (§3.7): the encoding is checkpoint/passages.py's.

Decoding splits at the LAST separator (entry text may itself contain the separator) and never
raises: a footer that does not parse leaves the whole blob as text with no metadata, as ARI does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ari_mem_tui.checkpoint.passages import (
    SEPARATOR,
    agent_name,
    encode_passage,
    node_collection,
    node_footer,
    react_collection,
    react_footer,
)
from ari_mem_tui.letta.errors import LettaUnavailable

# the encoding is the checkpoint format's (checkpoint/passages.py); named here for the readers
__all__ = [
    "SEPARATOR",
    "DecodedPassage",
    "agent_name",
    "decode_passage",
    "encode_passage",
    "given_hash",
    "node_collection",
    "node_footer",
    "react_collection",
    "react_footer",
]


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
