"""The default demo's vectors shipped as package data (search/shipped.py): checked by hash,
covering every text the demo embeds, and MiniLM's own vectors (a sample recomputed here)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.search import shipped
from ari_mem_tui.search.embedder import MiniLMEmbedder
from ari_mem_tui.search.vector_cache import text_key


def test_the_shipped_file_matches_its_pin_and_covers_the_default_demo(demo_ckpt: Path) -> None:
    vectors = shipped.shipped_vectors()
    assert vectors, "the shipped file is missing or does not match SHIPPED_SHA256"
    texts = shipped.demo_texts(load_checkpoint(demo_ckpt))
    assert len(texts) > 1000
    assert all(text_key(t) in vectors for t in texts)


def test_a_sample_recomputed_by_minilm_equals_the_shipped_vectors(demo_ckpt: Path) -> None:
    """float16 keeps 11 bits: each component within its rounding of MiniLM's float32."""
    texts = shipped.demo_texts(load_checkpoint(demo_ckpt))
    sample = texts[:: max(1, len(texts) // 24)]
    fresh = MiniLMEmbedder().embed(sample)
    stored = np.stack([shipped.shipped_vectors()[text_key(t)] for t in sample])
    assert np.all(np.abs(stored - fresh) <= np.abs(fresh) * 2.0**-11 + 1e-6)
    cosines = np.sum(stored * fresh, axis=1) / np.linalg.norm(stored, axis=1)
    assert cosines.min() > 0.99999


def test_an_altered_file_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    altered = tmp_path / "demo-vectors.npz"
    shutil.copyfile(shipped.SHIPPED_PATH, altered)
    data = bytearray(altered.read_bytes())
    data[len(data) // 2] ^= 1
    altered.write_bytes(bytes(data))
    monkeypatch.setattr(shipped, "SHIPPED_PATH", altered)
    shipped.shipped_vectors.cache_clear()
    try:
        assert shipped.shipped_vectors() == {}
    finally:
        shipped.shipped_vectors.cache_clear()
