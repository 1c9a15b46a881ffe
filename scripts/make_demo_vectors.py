"""Write `ari_mem_tui/data/demo-vectors.npz`: MiniLM's vectors of every text the default demo
embeds, shipped so that the first `demo` opens with MiniLM ready instead of computing them.

The default demo (`ari-mem-tui demo`: 40 nodes, seed 7) is generated from its seed, so its texts
are known in advance: every distinct memory text, and each node's start-up query as of its
start and as of now. Each is embedded here by the real model (search/embedder.py), and stored
as float16 (half the bytes; the rounding moves a cosine by ~1e-4 at most) under the sha1 key
the vector cache uses. Run it again whenever the demo's texts or the model change, and paste
the printed sha256 into `search/shipped.py` (the loader refuses a file that does not match).

    python scripts/make_demo_vectors.py
"""

from __future__ import annotations

import hashlib
import io
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.demo import write_demo
from ari_mem_tui.search.embedder import MiniLMEmbedder
from ari_mem_tui.search.shipped import SHIPPED_PATH, demo_texts
from ari_mem_tui.search.vector_cache import text_key


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="demo-vectors-") as work:
        ckpt = load_checkpoint(write_demo(Path(work) / "demo"), use_index=False)
    texts = demo_texts(ckpt)
    print(f"{len(texts):,} distinct texts; embedding with MiniLM …", flush=True)
    vecs = MiniLMEmbedder().embed(texts)
    keys = np.array([text_key(t) for t in texts], dtype="U40")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, keys=keys, vecs=vecs.astype(np.float16))
    data = buffer.getvalue()
    SHIPPED_PATH.write_bytes(data)
    print(f"wrote {SHIPPED_PATH.relative_to(ROOT)}: {len(data):,} bytes")
    print(f"SHIPPED_SHA256 = {hashlib.sha256(data).hexdigest()!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
