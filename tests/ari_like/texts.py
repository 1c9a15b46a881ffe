"""The words of the generated run: its experiment, directions, verdicts and tool outputs."""

from __future__ import annotations

import random

TITLE = "Sparse CSR SpMV on many-core CPUs"

GOAL = f"""# {TITLE}

We propose an implementation of CSR-format sparse matrix-vector multiplication (SpMV) tuned for
many-core CPUs, and we measure how close it gets to the memory-bandwidth roofline. The baseline
is a straightforward OpenMP loop over rows with a static schedule. The hypothesis is that row
blocking by nonzero count, a dynamic schedule with a tuned chunk size, and software prefetch of
the x vector together raise sustained throughput by at least 1.5x on matrices with skewed row
lengths, without hurting regular matrices.

## Setup
- Matrices: SuiteSparse webbase-1M, cage15, af_shell10, a 2D Laplacian (5-point) of 4M rows,
  and a synthetic power-law matrix (alpha = 1.8, 10M nonzeros).
- Hardware: one dual-socket node; report the number of threads used for every measurement.
- Compilers: gcc 13 with -O3 -march=native; icx when available.
- Each configuration runs 50 times after 5 warm-up runs; report the median and the IQR.

## Metrics
- Primary: GFlops_per_s (2 flops per nonzero), higher is better.
- Secondary: GB_per_s of effective bandwidth (matrix + vectors), and the fraction of the STREAM
  triad bandwidth reached.
- Correctness: the result vector must match a reference (scipy) within 1e-9 relative error.

## Plan
1. Baseline: static OpenMP, measure GFlops_per_s and GB_per_s on all matrices.
2. Row blocking by nonzero count so that each thread gets an equal share of nonzeros.
3. Dynamic scheduling: sweep the chunk size (16 to 4096 rows).
4. Software prefetch of x with a tuned distance; check it does not slow regular matrices.
5. Ablations of each component; validation with different seeds for the synthetic matrix.
6. Roofline plot: operational intensity vs achieved GFlops_per_s, with the STREAM ceiling.

## Deliverables
Source code, raw timing CSVs, the roofline figure, and a short report of what helped and why.
Threads must be pinned (OMP_PROC_BIND=close, OMP_PLACES=cores) for every run reported.
"""

# direction texts by key (the planner's words); "" is a node the planner gave no direction
DIRECTIONS = {
    "A": "Implement the static OpenMP baseline and measure GFlops_per_s and GB_per_s on all five "
    "matrices with pinned threads.",
    "B": "Balance rows by nonzero count (row blocking) so each thread gets an equal share of the "
    "nonzeros; compare with the static baseline.",
    "C": "Ablate the x-vector software prefetch: run with and without prefetch at distances 8, "
    "16 and 32 and report the throughput delta.",
    "D": "Validate the baseline correctness against the scipy reference on every matrix, "
    "including the power-law one, within 1e-9 relative error.",
    "same_A": "Sweep the dynamic schedule chunk size from 16 to 4096 rows on top of the baseline "
    "and keep the best chunk per matrix.",
    "same_B": "Add software prefetch of x to the row-blocked kernel with a tuned distance and "
    "measure GFlops_per_s on the skewed matrices.",
    "empty": "",
    "japanese": "スレッド数を変えてスケーリングを測定する",
    "debug": "Fix the mismatch on the power-law matrix: the reference check fails at row 3817 "
    "because of an integer overflow in the row pointer.",
    "deep": "Combine the best chunk size with row blocking and measure the fraction of STREAM "
    "triad bandwidth reached.",
    "roofline": "Draw the roofline: operational intensity against achieved GFlops_per_s with the "
    "STREAM ceiling for every configuration.",
    "seeds": "Re-run the best configuration with five different seeds for the synthetic matrix "
    "and report the median and IQR of GFlops_per_s.",
    "chunk": "Try guided scheduling instead of dynamic and compare the best chunk sizes on the "
    "Laplacian and webbase matrices.",
    "icx": "Rebuild with icx instead of gcc and compare GFlops_per_s of the row-blocked kernel "
    "with software prefetch on all matrices.",
}


def echo_parent(verdict: str, parent_id: str) -> str:
    """A direction that repeats its parent's verdict (the why-not planting of run.py: the
    child's start-up search finds the parent's RESULT SUMMARY, which Tier 1b already holds).
    It names the parent as its RESULT SUMMARY does (`node=<id>`): with five verdicts to draw
    from, an ancestor's may be the same words, and only this word puts the parent's first."""
    return f"Ablate on top of node={parent_id} and its result: {verdict}"


VERDICTS = [
    "Clear gain on the skewed matrices with a reproducible median; regular matrices unchanged.",
    "Modest improvement, within the IQR on two matrices; the trend is consistent.",
    "The baseline is sound and pinned; numbers match STREAM expectations.",
    "Strong result: the kernel reaches most of the triad bandwidth on the Laplacian.",
    "Mixed: faster on webbase, slower on cage15; needs a per-matrix choice.",
]

MATRICES = ["webbase-1M", "cage15", "af_shell10", "laplace2d", "powerlaw"]


def bash_output(rng: random.Random) -> tuple[str, dict[str, float]]:
    """A run_bash result: a small timing table and the metrics it gives."""
    rows, best = [], 0.0
    for name in MATRICES:
        gflops = round(rng.uniform(4.0, 21.0), 2)
        best = max(best, gflops)
        rows.append(f"{name:12} GFlops_per_s={gflops:.2f} GB_per_s={gflops * 6.1:.2f}")
    metrics = {"GFlops_per_s": best, "GB_per_s": round(best * 6.1, 2)}
    return "threads=48 OMP_PROC_BIND=close\n" + "\n".join(rows), metrics


def finding(rng: random.Random, direction: str) -> str:
    topic = direction.split(".")[0][:60] if direction else "the baseline"
    return (
        f"Finding: {topic} gives {rng.uniform(1.05, 1.9):.2f}x on powerlaw and "
        f"{rng.uniform(0.95, 1.1):.2f}x on laplace2d (median of 50 runs)."
    )
