"""Phrase banks for the demo checkpoint: the research story the synthetic ARI run tells.

The run tunes a CSR sparse matrix-vector product (SpMV) on a many-core CPU, the kind of
experiment ARI's own tests and docs use. Everything here is plain data plus small pickers that
draw from a `random.Random`, so the generator stays deterministic for a seed. Some texts are
English, as the run's story; one planted note is Japanese and some texts hold square brackets
(`metrics=[...]`, `[red]`, `[/x]`, `[bold]`), because real memory holds both and a browser must
show them as data.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from functools import lru_cache

TITLE = "We propose an implementation of CSR-format SpMV tuned for many-core CPUs"

EXPERIMENT_MD = """# CSR SpMV on many-core CPUs

We propose an implementation of CSR-format sparse matrix-vector multiplication (SpMV) tuned for
many-core CPUs, and measure how far it gets towards the memory-bandwidth roofline.

## Goal
Maximise sustained GFlops_per_s of y = A·x for the SuiteSparse matrices listed below, with 48
OpenMP threads on one dual-socket node. Report GB_per_s next to GFlops_per_s so every claim can be
checked against the STREAM bandwidth of the machine.

## Matrices
cage15, ldoor, nlpkkt120, Queen_4147, HV15R, webbase-1M.

## Constraints
- Plain C11 + OpenMP, compiled with gcc -O3 -march=native.
- Correctness: max |y - y_ref| / |y_ref| < 1e-12 against a serial reference.
- 10 timed repetitions after 2 warm-ups; report the median.

## 日本語メモ
帯域律速のカーネルなので、GFlops_per_s だけでなく GB_per_s も必ず報告すること。
"""

# the one Japanese memory entry (planted beside the bracket finding): wide characters as data
JAPANESE_NOTE = (
    "日本語メモ: 帯域律速のカーネルなので、GFlops_per_s だけでなく GB_per_s も必ず報告すること"
)

PRIMARY_METRIC = "GFlops_per_s"
METRIC_RATIONALE = (
    "SpMV is memory bound; GFlops_per_s at a fixed nnz is the throughput users care about, and "
    "GB_per_s checks it against the STREAM roofline."
)

IDEAS = [
    {
        "title": "Roofline-guided CSR SpMV",
        "description": (
            "Start from a row-parallel CSR kernel, then add cache blocking of x, row reordering "
            "by length and explicit SIMD, measuring each step against the STREAM roofline."
        ),
        "experiment_plan": (
            "1. Baseline kernel and harness. 2. Scheduling study. 3. Cache blocking of x. "
            "4. SIMD gathers. 5. Ablations of each step. 6. Re-run the best kernel on fresh inputs."
        ),
        "primary_metric": PRIMARY_METRIC,
    },
    {
        "title": "CSR5-style tiled SpMV",
        "description": "Tile the nonzeros into fixed-size 2D tiles to balance irregular rows.",
        "experiment_plan": "1. Port CSR5 tiling. 2. Tune tile width. 3. Compare with CSR.",
        "primary_metric": PRIMARY_METRIC,
    },
]

HARDWARE_SPEC = {
    "scheduler": "slurm",
    "container": "apptainer",
    "partitions": [
        {"name": "cpu", "nodes": "16", "cpus": "96", "memory": "512000", "state": "up"},
        {"name": "debug", "nodes": "2", "cpus": "96", "memory": "512000", "state": "up"},
    ],
}

MATRICES = ["cage15", "ldoor", "nlpkkt120", "Queen_4147", "HV15R", "webbase-1M"]
SCHEDULES = ["static", "dynamic,64", "guided", "static,256"]

DRAFTS = [
    "Implement a CSR SpMV baseline with static scheduling over rows; measure GFlops_per_s on {m}",
    "Baseline CSR SpMV with OpenMP schedule({s}) over rows; measure GFlops_per_s on {m}",
    "Row-parallel CSR kernel with a merge-path split of nonzeros across {t} threads, on {m}",
    "Naive CSR SpMV plus a roofline harness (STREAM triad) to bound GB_per_s on {m}",
]
IMPROVES = [
    "Add cache blocking of x with block size {b} to the parent kernel; check {m} first",
    "Sort rows by length into {k} bins before the parallel loop to fix load imbalance on {m}",
    "Use AVX-512 gathers with {u}-way unrolling of the inner loop; keep schedule({s})",
    "NUMA-aware first-touch allocation of val/col_idx across both sockets, {t} threads",
    "Keep x in L2 by tiling it into blocks of {b} entries to raise throughput on {m}",
    "Prefetch col_idx {d} iterations ahead and switch to schedule({s}) on {m}",
    "Compress col_idx to 16-bit deltas inside blocks of {b} columns to cut traffic on {m}",
]
DEBUGS = [
    "Fix the segfault in the parent: row_ptr overflows int32 for nnz > 2^31 on {m}",
    "Fix the compile error: the parent forgot -fopenmp and the pragma was ignored",
    "Fix wrong results on {m}: the reduction over split rows double-counts the boundary row",
    "Fix the parent's timeout: read {m} through mmap so the run ends within 10 minutes",
]
ABLATIONS = [
    "Ablate the unrolling factor ({u} vs 1) keeping everything else fixed on {m}",
    "Remove NUMA first-touch to measure its share of the speedup on {m}",
    "Ablate cache blocking: block size {b} vs no blocking, schedule({s}), {m}",
    "Ablate row binning ({k} bins vs none) on the irregular matrix {m}",
]
VALIDATIONS = [
    "Re-run the best kernel on {m} with fresh inputs and confirm GFlops_per_s within 5%",
    "Check reproducibility: repeat the {m} measurement 3 times on inputs from another seed",
    "Validate correctness of the best kernel against MKL mkl_sparse_d_mv on {m}",
]
OTHERS = ["Replicate the parent's headline number on a second node of the cpu partition ({m})"]

BANK = {
    "draft": DRAFTS,
    "improve": IMPROVES,
    "debug": DEBUGS,
    "ablation": ABLATIONS,
    "validation": VALIDATIONS,
    "other": OTHERS,
}

ERRORS = [
    "Max ReAct steps exceeded",
    "run_code: exit 139 (Segmentation fault) in spmv_kernel",
    "gcc: error: unrecognized command-line option '-mavx512fx'",
    "Timeout: job exceeded 600 s wall time",
]

SURVEY_PAPERS = [
    (
        "CSR5: An Efficient Storage Format for Cross-Platform SpMV",
        (
            "CSR5 tiles nonzeros "
            "into 2D tiles so that irregular rows do not serialise; it reports 1.2-2x over CSR."
        ),
    ),
    (
        "Merge-based Parallel Sparse Matrix-Vector Multiplication",
        (
            "Merrill and Garland split "
            "the merge path of row_ptr and nonzeros evenly, which makes SpMV insensitive to row skew."
        ),
    ),
    (
        "Roofline: An Insightful Visual Performance Model",
        (
            "Attainable performance is bounded by "
            "peak compute and by bandwidth times arithmetic intensity; SpMV sits far left."
        ),
    ),
    (
        "Optimization of Sparse Matrix-Vector Multiplication on Emerging Multicore Platforms",
        "Williams et al. combine register blocking, cache blocking and NUMA placement.",
    ),
    (
        "Auto-tuning sparse matrix-vector multiplication",
        (
            "Picks the storage format and the thread assignment from the distribution of row "
            "lengths; up to 1.8x over CSR."
        ),
    ),
    (
        "SELL-C-sigma: a unified sparse matrix format",
        (
            "Sorting rows within windows of sigma "
            "and padding chunks of C rows makes SpMV SIMD friendly on wide vector units."
        ),
    ),
]

FINDINGS = [
    (
        "Cache blocking of x only helps when the column span of a block fits in L2; {m} gains "
        "{g:.1f}% at block {b}."
    ),
    (
        "Row binning removes the tail: the slowest thread now takes {p}% longer than the median "
        "instead of 3x on {m}."
    ),
    (
        "GB_per_s saturates at {bw:.1f} with {t} threads, close to STREAM triad; more threads "
        "will not help."
    ),
    (
        "The log prints [red]WARN[/red] lines from the allocator; they are harmless. Do not parse "
        "metrics=[...] out of stdout, read results.csv instead."
    ),
    "Access to x is random on {m}, so software prefetch barely helps ({g:.1f}%).",
    (
        "Rich-style tags like [bold] or [/x] in program output are literal text, not markup; the "
        "harness echoes them verbatim."
    ),
    "Unrolling beyond {u} makes no difference; the kernel is bandwidth bound at {bw:.1f} GB/s.",
]

HEADLINES = [
    "{label} on {m}: {gf:.2f} GFlops_per_s at {bw:.1f} GB_per_s",
    "{m}: reached {gf:.2f} GFlops_per_s ({pct}% of roofline)",
    "{m}: {gf:.2f} GFlops_per_s sustained, {bw:.1f} GB_per_s of bandwidth",
]
HINTS = [
    "try a larger x block for {m}",
    "check NUMA placement of y",
    "ablate the prefetch distance",
    "validate on a second matrix before claiming the speedup",
    "combine with sorting rows by length next",
]
FAILURES = [
    "node {nid} failed: {err}",
    "build failed for the AVX-512 variant on {m}; gather intrinsics need -mavx512f",
    "the measurement on {m} timed out: {err}",
]

CODE_SNIPPETS = [
    (
        "#pragma omp parallel for schedule({s})\nfor (int i = 0; i < n; i++) {{\n  double sum = 0;\n"
        "  for (int k = row_ptr[i]; k < row_ptr[i+1]; k++) sum += val[k] * x[col_idx[k]];\n"
        "  y[i] = sum;\n}}"
    ),
    (
        "for (int jb = 0; jb < n; jb += {b}) {{\n  /* block of x columns [jb, jb+{b}) */\n"
        "  spmv_block(A, x + jb, y, jb, {b});\n}}"
    ),
    (
        "__m512d acc = _mm512_setzero_pd();\n__m512i idx = _mm512_loadu_si512(col_idx + k);\n"
        "acc = _mm512_fmadd_pd(_mm512_loadu_pd(val + k), _mm512_i32gather_pd(idx, x, 8), acc);"
    ),
    "import numpy as np, scipy.sparse as sp\nA = sp.load_npz('{m}.npz')\nprint(A.nnz, A.shape)",
]
BASH_COMMANDS = [
    "gcc -O3 -march=native -fopenmp spmv.c -o spmv && OMP_NUM_THREADS={t} ./spmv {m}.mtx",
    "srun -p cpu -c 96 ./spmv --matrix {m}.mtx --reps 10",
    "likwid-perfctr -C 0-{t1} -g MEM ./spmv {m}.mtx | tail -n 5",
    "ls -la results/ && head -n 3 results/{m}.csv",
]


def _threads(rng: random.Random) -> int:
    return rng.choice([24, 32, 48, 96])


# one drawer per placeholder; `fill` draws only the ones a template uses (cheap at 200k entries)
DRAWERS: dict[str, Callable[[random.Random], object]] = {
    "m": lambda r: r.choice(MATRICES),
    "s": lambda r: r.choice(SCHEDULES),
    "t": _threads,
    "t1": lambda r: _threads(r) - 1,
    "b": lambda r: r.choice([256, 512, 1024, 2048, 4096]),
    "k": lambda r: r.choice([4, 8, 16]),
    "u": lambda r: r.choice([2, 4, 8]),
    "d": lambda r: r.choice([8, 16, 32, 64]),
    "g": lambda r: r.uniform(-3.0, 28.0),
    "p": lambda r: r.randint(5, 40),
    "bw": lambda r: r.uniform(80.0, 190.0),
    "gf": lambda r: r.uniform(4.0, 28.0),
    "pct": lambda r: r.randint(40, 92),
}


@lru_cache(maxsize=256)
def _fields(template: str) -> tuple[str, ...]:
    names = (name for _, name, _, _ in string.Formatter().parse(template) if name)
    return tuple(dict.fromkeys(names))


def fill(template: str, rng: random.Random, **extra: object) -> str:
    """Fill a template's placeholders with plausible parameter values drawn from `rng`."""
    values = {
        name: extra[name] if name in extra else DRAWERS[name](rng) for name in _fields(template)
    }
    return template.format(**values)
