"""What a demo node leaves when it ends: its metrics and eval_summary, and the entries ARI
writes then (docs/ari-format.md §3.10): a success its RESULT SUMMARY, the consolidation's
`experiment_result` and, more often than not, a `reflection` of next-step hints; a failure its
error log and a `failure_case`. Each draws from the run's rng in the generator's fixed order.
"""

from __future__ import annotations

from typing import Any

from ari_mem_tui.demo import text as T
from ari_mem_tui.demo.state import RunState
from ari_mem_tui.demo.tree import SimNode


def finish(run: RunState, node: SimNode, status: str) -> None:
    """End `node` as `status` ("success" or "failed")."""
    content = run.content[node.id]
    rid = {"run_id": run.run_id, "node_id": node.id}
    content.node_report_path = f"{run.run_id}/{node.id}/node_report.json"
    m = run.rng.choice(T.MATRICES)
    if status == "failed":
        _fail(run, node, m, rid)
    else:
        _succeed(run, node, m, rid)


def _fail(run: RunState, node: SimNode, m: str, rid: dict[str, str]) -> None:
    content = run.content[node.id]
    content.error_log = run.rng.choice(T.ERRORS)
    content.eval_summary = run.directions[node.id]
    content.artifacts.append({"type": "result", "stdout": content.error_log})
    failure = run.rng.choice(T.FAILURES)
    text = T.fill(failure, run.rng, nid=node.id, err=content.error_log, m=m)[:600]
    meta = {
        "type": "failure_case",
        "mem_kind": "failure_case",
        "metric_ptr": None,
        "artifact_refs": [{"path": "build.log", "sha256": run.sha(), "role": "log"}],
        "node_report_ref": rid,
    }
    content.conclusion = run.write(node.id, text, meta, node.end + run.rng.uniform(0.3, 1.2))


def _succeed(run: RunState, node: SimNode, m: str, rid: dict[str, str]) -> None:
    content = run.content[node.id]
    content.metrics = metrics = _metrics(run, node)
    gf, bw, score = metrics["GFlops_per_s"], metrics["GB_per_s"], metrics["_scientific_score"]
    content.has_real_data = True
    reason = (
        f"Measured {gf:.2f} GFlops_per_s and {bw:.1f} GB_per_s on {m} with real "
        f"timings; compared against the parent kernel."
    )
    content.eval_summary = f"{reason} [scientific_score={score:.2f}]"
    stdout = f"matrix={m} GFlops_per_s={gf} GB_per_s={bw}"
    content.artifacts.append({"type": "result", "stdout": stdout})
    mlist = ", ".join(f"{k}={v}" for k, v in metrics.items())
    label = "NodeLabel." + node.label.upper()
    summary = f"{reason} Direction: {run.directions[node.id] or T.TITLE}"[:300]
    end = node.end
    run.write(
        node.id,
        f"RESULT SUMMARY node={node.id} label={label}: metrics=[{mlist}] summary={summary}",
        {"type": "result_summary", "metrics": metrics},
        end - run.rng.uniform(1.0, 2.5),
    )
    template = run.rng.choice(T.HEADLINES)
    headline = T.fill(template, run.rng, label=node.label, m=m, gf=gf, bw=bw)[:600]
    meta = {
        "type": "experiment_result",
        "mem_kind": "experiment_result",
        "metric_ptr": {"name": "GFlops_per_s", "value": gf},
        "artifact_refs": [
            {"path": "spmv.c", "sha256": run.sha(), "role": "source"},
            {"path": f"results/{m}.csv", "sha256": run.sha(), "role": "data_output"},
        ],
        "node_report_ref": rid,
    }
    t = end + run.rng.uniform(0.3, 1.0)
    content.experiment_result = run.write(node.id, headline, meta, t)
    content.conclusion = content.experiment_result
    if run.rng.random() < 0.6:
        hints = "; ".join(T.fill(h, run.rng) for h in run.rng.sample(T.HINTS, 2))[:600]
        meta = {
            "type": "reflection",
            "mem_kind": "reflection",
            "metric_ptr": None,
            "artifact_refs": [],
            "node_report_ref": rid,
            "confidence": 0.4,
        }
        run.write(node.id, hints, meta, t + run.rng.uniform(0.2, 0.6))


def _metrics(run: RunState, node: SimNode) -> dict[str, Any]:
    """A finished node's metrics: its parent's GFlops_per_s, a little better or worse."""
    parent_gf = 6.0
    if node.parent is not None:
        parent_gf = run.content[node.parent.id].metrics.get("GFlops_per_s", 6.0)
    gf = round(max(1.0, parent_gf * run.rng.uniform(0.92, 1.25)), 2)
    bw = round(gf * 12 * run.rng.uniform(0.95, 1.05), 2)
    score = round(run.rng.uniform(0.35, 0.9), 2)
    return {
        "GFlops_per_s": gf,
        "GB_per_s": bw,
        "rows": run.rng.choice([1585478, 952203]),
        "_scientific_score": score,
        "_axis_scores": {
            "novelty": round(run.rng.uniform(0.2, 0.9), 2),
            "rigor": round(run.rng.uniform(0.3, 0.95), 2),
        },
        "_comparison_found": 1.0,
    }
