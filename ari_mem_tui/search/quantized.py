"""Fast exact top-k over cached vectors: int8 scores with a proven error bound, exact rescoring.

A replay ranks the whole pool (200k × 384 floats, 300 MB) for one query, and a float32 mat-vec
reads all of it. Here every vector row x is also kept as int8 with its own scale s
(x̃ = s·round(x/s)), a quarter of the bytes, and the query as two int8 parts (q̃ = s₁c₁ + s₂c₂,
the second the first's rounding error: ‖q − q̃‖ is ~250x smaller than with one part).
onnxruntime's integer kernel gives both parts' dots with every row in a few milliseconds,
exactly (int32); the second part costs nothing measurable, as the kernel's time goes to reading
the rows. With the stored error of each row, ‖x − x̃‖, and the query's, ‖q − q̃‖, Cauchy–Schwarz
bounds the true score:

    |q·x − q̃·x̃| ≤ ‖q‖·‖x − x̃‖ + ‖q − q̃‖·‖x̃‖            (plus a margin for float rounding)

so every row lies in [lo, hi]. With τ a value that k rows' `lo` reach (`threshold`: at most the
k-th largest), a row whose `hi` is below τ is beaten by k rows outright and cannot be in the
top k (`candidates`). The few rows left are rescored exactly and sorted, ties by pool order
(`best_first`): the window is the one a full exact pass gives, ties included. Bounds can be
asked for the first rows only (the ranker keeps rows in write order, so a replay as of a time
reads a prefix: embedded.DistinctRows).

"Exact" is `exact_scores`: each row's products in float64 (a product of two float32 is exact
there), summed per row by numpy's fixed pairwise order, so a row's score never depends on which
other rows are scored with it. (A BLAS float32 mat-vec does not have that property: its result
for a row changes in the last bits with the number of rows, which would make "the float32
window" depend on how it was computed.)
"""

from __future__ import annotations

import threading

import numpy as np

ZERO_POINT = 128  # the query goes to the kernel as uint8 = int8 + 128; the kernel subtracts it
TAU_GROUPS = 4096  # groups of rows whose maxima give τ (see `threshold`)
QUERY_PARTS = 2  # int8 parts of a query: with one, its error doubled the bounds' width
_ROUNDING = 1e-5  # relative margin for the float32 arithmetic of the bounds (needs ~1e-6)
EXACT_CHUNK = 4096  # rows per block of a full exact pass (bounds its temporary float64 copy)
# rows per block of the kernel's int8 copy (see `to_blocks`); 32–48 measured fastest at 150k rows
KERNEL_BLOCK = 32
SMALL_ROWS = 8192  # up to this many rows numpy's product takes ~2 ms: onnxruntime stays unloaded


# ---- the integer kernel: one MatMulInteger node, onnxruntime's own int8 GEMM ----


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One protobuf field: varint for ints, length-delimited for bytes and strings."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor_info(name: str, elem_type: int, dims: list[int | str]) -> bytes:
    shape = b"".join(_field(1, _field(1, d) if isinstance(d, int) else _field(2, d)) for d in dims)
    tensor = _field(1, elem_type) + _field(2, shape)  # TypeProto.Tensor
    return _field(1, name) + _field(2, _field(1, tensor))  # ValueInfoProto


def matmul_integer_model(dim: int) -> bytes:
    """ONNX bytes of y[b, p, r] = (q[p, dim] − zp) · X[b, dim, r], uint8 × int8 → int32.

    Written field by field from onnx.proto (ModelProto 1 ir_version, 7 graph, 8 opset_import;
    GraphProto 1 node, 2 name, 11 input, 12 output; NodeProto 1 input, 2 output, 4 op_type):
    the onnx package would cost a second of import for these hundred bytes.
    """
    uint8, int8, int32 = 2, 3, 6
    node = b"".join(_field(1, name) for name in ("q", "x", "zp")) + _field(2, "y")
    node += _field(4, "MatMulInteger")
    graph = _field(1, node) + _field(2, "int8_scores")
    graph += _field(11, _tensor_info("q", uint8, ["parts", dim]))
    graph += _field(11, _tensor_info("x", int8, ["blocks", dim, "rows"]))
    graph += _field(11, _tensor_info("zp", uint8, []))
    graph += _field(12, _tensor_info("y", int32, ["blocks", "parts", "rows"]))
    opset = _field(1, "") + _field(2, 13)
    return _field(1, 8) + _field(2, "ari-mem-tui") + _field(7, graph) + _field(8, opset)


class IntKernel:
    """q_int8 · x_int8 → int32 for every row of a blocked matrix (`to_blocks`); onnxruntime,
    else numpy (same integers).

    Up to `small_rows` rows numpy answers in about a millisecond, so the runtime is loaded only
    when more rows are asked for (`load`): a small run's `saw` never imports it (~0.05 s)."""

    def __init__(self, dim: int, small_rows: int | None = None) -> None:
        self.dim = dim
        self.small_rows = SMALL_ROWS if small_rows is None else small_rows
        self.session = None
        self.note = ""
        self._tried = False
        self._lock = threading.Lock()  # one run at a time: replays come from worker threads
        self._load_lock = threading.Lock()
        self._zp = np.array(ZERO_POINT, dtype=np.uint8)

    def load(self) -> None:
        """Create the onnxruntime session, once; when it cannot be, `note` says numpy answers."""
        with self._load_lock:
            if self._tried:
                return
            self._tried = True
            try:
                import onnxruntime as ort  # noqa: PLC0415 - lazy: ~0.3 s, only for big pools

                options = ort.SessionOptions()
                options.log_severity_level = 3
                options.intra_op_num_threads = 1  # 2 shared cores: one is plenty at this size
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self.session = ort.InferenceSession(
                    matmul_integer_model(self.dim),
                    sess_options=options,
                    providers=["CPUExecutionProvider"],
                )
            except Exception as exc:  # noqa: BLE001 - a broken runtime costs speed, not answers
                self.note = f"int8 kernel unavailable ({type(exc).__name__}); numpy used"

    def dots(self, parts: np.ndarray, blocks: np.ndarray) -> np.ndarray:
        """int32 dots of the int8 query `parts` (parts × dim) with every row of `blocks` (int8,
        blocks × dim × rows), padding rows included: blocks × parts × rows."""
        if blocks.size == 0:
            return np.zeros((0, len(parts), blocks.shape[2]), dtype=np.int32)
        if blocks.shape[0] * blocks.shape[2] <= self.small_rows:
            # float64 holds every product and partial sum exactly (|sum| ≤ dim·127·128 ≪ 2⁵³),
            # so BLAS's summation order changes nothing: the kernel's integers
            return np.matmul(parts.astype(np.float64), blocks.astype(np.float64)).astype(np.int32)
        self.load()
        if self.session is not None:
            shifted = (parts.astype(np.int16) + ZERO_POINT).astype(np.uint8)
            with self._lock:
                return self.session.run(None, {"q": shifted, "x": blocks, "zp": self._zp})[0]
        return np.einsum("bjr,pj->bpr", blocks, parts, dtype=np.int32, casting="unsafe")


def to_blocks(codes: np.ndarray, block: int = KERNEL_BLOCK) -> np.ndarray:
    """int8 rows (n × dim) as blocks × dim × `block`, each block a transposed run of rows, the
    last padded with zero rows.

    The kernel reads its right operand in column panels. Transposed whole (dim × n), a panel is
    a few bytes from each of `dim` rows n bytes apart: scattered reads, twice as slow at 150k
    rows. Blocked, a panel is one contiguous block, and the first m rows are the first
    ⌈m/block⌉ blocks: a slice of a C-contiguous array, which onnxruntime reads in place.
    """
    count = -(-len(codes) // block)
    padded = np.zeros((count * block, codes.shape[1]), dtype=np.int8)
    padded[: len(codes)] = codes
    return np.ascontiguousarray(padded.reshape(count, block, codes.shape[1]).transpose(0, 2, 1))


# ---- quantised rows and their bounds ----


def quantize_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(int8 rows, scale, ‖x − x̃‖, ‖x̃‖) per row; a zero row gets scale 1 and no error."""
    matrix = np.asarray(matrix, dtype=np.float32)
    peak = np.abs(matrix).max(axis=1) if len(matrix) else np.zeros(0, np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float64)
    codes = np.empty(matrix.shape, dtype=np.int8)
    err = np.empty(len(matrix), dtype=np.float64)
    norm = np.empty(len(matrix), dtype=np.float64)
    for start in range(0, len(matrix), EXACT_CHUNK):
        block = matrix[start : start + EXACT_CHUNK].astype(np.float64)
        s = scale[start : start + EXACT_CHUNK, None]
        q = np.clip(np.rint(block / s), -127, 127)
        codes[start : start + EXACT_CHUNK] = q
        approx = q * s
        err[start : start + EXACT_CHUNK] = np.sqrt(((block - approx) ** 2).sum(axis=1))
        norm[start : start + EXACT_CHUNK] = np.sqrt((approx**2).sum(axis=1))
    return codes, scale, err, norm


def quantize_query(query: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(int8 codes, scale per part, ‖q − q̃‖, ‖q‖) of one query vector, q̃ = Σ scale·codes: each
    part quantises what the parts before it left."""
    rest = np.asarray(query, dtype=np.float32).astype(np.float64)
    norm = float(np.sqrt((rest**2).sum()))
    codes = np.zeros((QUERY_PARTS, len(rest)), dtype=np.int8)
    scales = np.ones(QUERY_PARTS)
    for part in range(QUERY_PARTS):
        peak = float(np.abs(rest).max()) if len(rest) else 0.0
        if peak > 0:
            scales[part] = peak / 127.0
        codes[part] = np.clip(np.rint(rest / scales[part]), -127, 127)
        rest = rest - codes[part] * scales[part]
    return codes, scales, float(np.sqrt((rest**2).sum())), norm


def exact_scores(
    matrix: np.ndarray, query: np.ndarray, rows: np.ndarray | None = None
) -> np.ndarray:
    """The exact score of `rows` (all when None): float64 products, fixed per-row summation."""
    q64 = np.asarray(query, dtype=np.float64)
    if rows is not None:
        block = matrix[rows]
        return (block.astype(np.float64) * q64).sum(axis=1) if len(block) else np.zeros(0)
    out = np.empty(len(matrix), dtype=np.float64)
    for start in range(0, len(matrix), EXACT_CHUNK):
        block = matrix[start : start + EXACT_CHUNK].astype(np.float64)
        out[start : start + EXACT_CHUNK] = (block * q64).sum(axis=1)
    return out


class Int8Index:
    """The distinct vectors (float32, kept for exact scores) and their int8 copy with bounds.

    The int8 copy is made when bounds are first asked for, or at once past SMALL_ROWS rows (in
    the background build, not at the first query): a small pool is ranked by a full exact pass
    (`small`), for which quantising its rows would cost more than the pass itself."""

    def __init__(self, matrix: np.ndarray, kernel: IntKernel | None = None) -> None:
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.kernel = kernel or IntKernel(self.matrix.shape[1])
        self._lock = threading.Lock()
        self._quantized: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        if not self.small(len(self.matrix)):
            self._quantize()
            self.kernel.load()  # here (a background build) rather than at the first query

    def small(self, rows: int) -> bool:
        """Whether a pool of `rows` rows is ranked by a full exact pass."""
        return rows <= self.kernel.small_rows

    def _quantize(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(blocks, scale, err_term, norm_term) of the rows, made once."""
        with self._lock:
            if self._quantized is None:
                codes, scale, err, norm = quantize_rows(self.matrix)
                # per-row terms of the bound: ‖q‖·err_term + ‖q − q̃‖·norm_term (float32 is enough
                # with the rounding margin folded in; |x| ≤ ‖x̃‖ + ‖x − x̃‖)
                full = norm + err
                self._quantized = (
                    to_blocks(codes),
                    scale.astype(np.float32),
                    (err + _ROUNDING * full).astype(np.float32),
                    (norm + _ROUNDING * full).astype(np.float32),
                )
            return self._quantized

    def __len__(self) -> int:
        return len(self.matrix)

    def bounds(self, query: np.ndarray, rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) float32 for each of the first `rows` rows (all when None): the exact score
        lies between them. Only those rows are read."""
        blocks, scale, err_term, norm_term = self._quantize()
        n = len(self) if rows is None else min(rows, len(self))
        q_codes, q_scales, q_err, q_norm = quantize_query(query)
        dots = self.kernel.dots(q_codes, blocks[: -(-n // blocks.shape[2])])
        # Σ scale·dot over the parts (the float32 rounding is within the margin's _ROUNDING)
        approx = np.einsum("bpr,p->br", dots.astype(np.float32), q_scales.astype(np.float32))
        approx = approx.reshape(-1)[:n]
        approx *= scale[:n]
        margin = err_term[:n] * np.float32(q_norm * (1 + _ROUNDING))
        margin += norm_term[:n] * np.float32(q_err * (1 + _ROUNDING) + _ROUNDING * q_norm)
        return approx - margin, approx + margin

    def exact(self, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        return exact_scores(self.matrix, query, rows)


def candidates(lo: np.ndarray, hi: np.ndarray, k: int) -> np.ndarray:
    """Rows that may be among the k best: those whose `hi` reaches a τ that at least k rows'
    `lo` reach. Any other row is beaten outright by those k rows."""
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k >= len(lo):
        return np.arange(len(lo))
    return np.flatnonzero(hi >= threshold(lo, k))


def threshold(lo: np.ndarray, k: int) -> float:
    """A value at least k of `lo` reach, close below the k-th largest.

    The k-th largest of the maxima of TAU_GROUPS groups: each maximum is a distinct row's lo, so
    k groups give k rows. Selecting among 4096 maxima instead of all rows saves ~0.4 ms at 77k
    rows; τ is lower only where the best rows share a group (~5 of 200 at random). Groups are
    strided (rows i, i + G, …), not runs: rows are in write order, and the rows a query likes
    were often written together.
    """
    per_group = len(lo) // TAU_GROUPS
    if per_group < 2 or k > TAU_GROUPS // 8:  # too few rows, or too many collisions in groups
        return float(np.partition(lo, len(lo) - k)[len(lo) - k])
    maxima = lo[: per_group * TAU_GROUPS].reshape(per_group, TAU_GROUPS).max(axis=0)
    return float(np.partition(maxima, TAU_GROUPS - k)[TAU_GROUPS - k])


def best_first(ids: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """The k `ids` with the best exact `scores`, best first, ties by lower id."""
    return ids[np.lexsort((ids, -scores))[:k]]
