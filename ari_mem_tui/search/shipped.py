"""MiniLM vectors shipped with the package: a warm start of the vector cache for known texts.

The default demo is generated from its seed, so every text it embeds is known in advance;
`scripts/make_demo_vectors.py` embeds them with the real model and stores them (float16, keyed
as the vector cache keys texts) in `data/demo-vectors.npz`. A ranker missing a vector looks here
before it computes one: the first `demo` then ranks with MiniLM at once instead of after ~2,000
texts at ~140 texts/s. The file is checked against a pinned sha256 before any of it is used; a
missing or altered file is ignored (the vectors are then computed, as for any other run).
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ari_mem_tui.search.embedder import DIM
from ari_mem_tui.search.startup import node_query

SHIPPED_PATH = Path(str(resources.files("ari_mem_tui") / "data" / "demo-vectors.npz"))
SHIPPED_SHA256 = "0d8ad62eb48a19c0d47316d1a618ecf1ca9e03009a327bba7aa544a47c648a83"


@functools.cache
def shipped_vectors() -> dict[str, np.ndarray]:
    """Text key -> float32 vector, from the checked package file; empty when it is missing or
    does not match its pinned hash (once per process)."""
    try:
        data = SHIPPED_PATH.read_bytes()
    except OSError:
        return {}
    if hashlib.sha256(data).hexdigest() != SHIPPED_SHA256:
        return {}
    try:
        import io  # noqa: PLC0415 - only when the file is there and checked

        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            keys = [str(k) for k in npz["keys"]]
            vecs = np.asarray(npz["vecs"], dtype=np.float32)
    except (OSError, ValueError, KeyError):
        return {}
    if vecs.shape != (len(keys), DIM):
        return {}
    return dict(zip(keys, vecs, strict=True))


def demo_texts(ckpt: Any) -> list[str]:
    """Every text a ranker embeds for a demo run: the distinct memory texts, each node's
    start-up query as of its start and as of now, and the queries its access log records."""
    texts = ckpt.entries.texts()
    for node in ckpt.nodes.values():
        texts += [node_query(ckpt, node, which)[0] for which in ("start", "now")]
    events = ckpt.access_events
    texts += [events.strings[events.query[row]] for row in events.rows_of_op("read")]
    return list(dict.fromkeys(t for t in texts if t))
