"""The demo run's LLM tool calls: one handler per kind a node's call plan may hold.

Each handler makes one call of a node at time `t` in LLM turn `step` and returns its `Call`
(tool, args, result envelope, seconds taken): the memory it writes (a finding, survey papers,
a reproducibility event, the root's evaluation criteria), the artifacts it leaves in the node,
and for the memory reads (`search_memory`, `get_node_memory`) a `Read` answered once the run is
ranked. `DemoRun.execute` turns the outcome into trace_log lines and the automatic `Tool …`
entry (docs/ari-format.md §2.7, §3.9). The planted kinds (`leak`, `cousin`, `reject`,
`late_finding`, `storm`, `bracket_finding`, `japanese_note`) are where `demo.planted` put them.
Every handler draws from the run's rng in the order the generator always did: the output stays
byte-identical for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from ari_mem_tui.demo import text as T
from ari_mem_tui.demo.planted import STORM_CALLS
from ari_mem_tui.demo.records import Call, Read, dumps
from ari_mem_tui.demo.state import RunState
from ari_mem_tui.demo.tree import SimNode

COW_ERROR = "node_id does not match current node (CoW violation)"


def generate_ideas(run: RunState, node: SimNode, t: float, _step: int, _: str) -> Call:
    args = {"topic": T.TITLE, "n_ideas": 2}
    idea = {
        "ideas": T.IDEAS,
        "primary_metric": T.PRIMARY_METRIC,
        "higher_is_better": True,
        "metric_rationale": T.METRIC_RATIONALE,
    }
    ts = t + run.rng.uniform(20, 40)
    run.write(
        "",
        f"EVALUATION_CRITERIA: primary_metric={T.PRIMARY_METRIC} "
        f"higher_is_better=True rationale={T.METRIC_RATIONALE}",
        {"type": "evaluation_criteria", "node_id": node.id},
        ts + 0.2,
        "react_step",
    )
    first = T.IDEAS[0]
    plan = "; ".join(
        f"§{i + 1} {s.split('. ', 1)[-1].rstrip('.')}"
        for i, s in enumerate(first["experiment_plan"].split(". ")[1:4])
    )
    run.core_context = {
        "experiment_goal": T.EXPERIMENT_MD,
        "primary_metric": T.PRIMARY_METRIC,
        "higher_is_better": True,
        "metric_rationale": T.METRIC_RATIONALE,
        "hardware_spec": T.HARDWARE_SPEC,
        "selected_idea": f"{first['title']}: {first['description'][:400]} | Plan: {plan}",
    }
    return "generate_ideas", args, {"result": dumps(idea)}, ts - t


def survey(run: RunState, node: SimNode, t: float, step: int, _: str) -> Call:
    papers = run.rng.sample(T.SURVEY_PAPERS, k=min(5, run.rng.randint(3, 5)))
    query = T.fill("SpMV {m} CSR optimisation many-core", run.rng)
    result = {
        "papers": [
            {"title": p[0], "abstract": p[1], "year": 2010 + i} for i, p in enumerate(papers)
        ]
    }
    text = "SURVEY RESULTS:\n" + "\n".join(f"- [{p[0]}]: {p[1][:200]}…" for p in papers)
    if run.fallback(node, step):  # add_memory raised: ARI keeps a react copy instead
        meta = {"type": "survey_papers", "node_id": node.id}
        run.write("", text, meta, t + 9.0, "react_step")
    else:
        run.write(node.id, text, {"type": "survey_papers"}, t + 9.0)
    return "survey", {"query": query, "max_results": 5}, {"result": dumps(result)}, 8.5


def run_code(run: RunState, node: SimNode, _t: float, step: int, _: str) -> Call:
    code = T.fill(run.rng.choice(T.CODE_SNIPPETS), run.rng)
    run.content[node.id].artifacts.append(
        {"type": "code", "tool": "run_code", "content": code[:16000], "step": step}
    )
    if run.rng.random() < 0.08:
        env = {"error": "Tool 'run_code' failed after 3 attempts: timeout after 600 s"}
        return "run_code", {"code": code, "language": "c"}, env, 30.0
    stdout = T.fill(
        "matrix={m} threads={t} GFlops_per_s={gf:.2f} GB_per_s={bw:.1f}\n"
        "check: max_rel_err=3.1e-15 OK",
        run.rng,
    )
    if run.rng.random() < 0.1:
        stdout += "\n[red]WARN[/red] numa_alloc_onnode fell back to malloc"
    out = {"stdout": stdout, "stderr": "", "returncode": 0}
    return "run_code", {"code": code, "language": "c"}, {"result": dumps(out)}, 6.0


def storm(run: RunState, node: SimNode, _t: float, step: int, target: str) -> Call:
    """One point of the planted sweep (`demo.planted.plant_tool_storm`): a run_bash whose
    output quotes the starved reader's direction. No rng: the planting leaves the rest of the
    run as is."""
    point = run.planted.storm.setdefault("points", 0) + 1
    run.planted.storm["points"] = point
    idea = (run.directions[target] or "")[:160]
    cmd = f"./sweep.sh --point {point}"
    run.content[node.id].artifacts.append(
        {"type": "code", "tool": "run_bash", "content": cmd, "step": step}
    )
    out = {"stdout": f"sweep point {point}/{STORM_CALLS}: {idea}", "exit_code": 0}
    return "run_bash", {"command": cmd}, {"result": dumps(out)}, 0.4


def run_bash(run: RunState, node: SimNode, _t: float, step: int, _: str) -> Call:
    cmd = T.fill(run.rng.choice(T.BASH_COMMANDS), run.rng)
    run.content[node.id].artifacts.append(
        {"type": "code", "tool": "run_bash", "content": cmd, "step": step}
    )
    out = {
        "stdout": T.fill("{m}: {gf:.2f} GFlops/s, {bw:.1f} GB/s (median of 10)", run.rng),
        "exit_code": 0,
    }
    return "run_bash", {"command": cmd}, {"result": dumps(out)}, 4.0


def write_file(run: RunState, _node: SimNode, _t: float, _step: int, _: str) -> Call:
    path = run.rng.choice(["spmv.c", "bench.sh", "Makefile", "plot.py"])
    body = T.fill(run.rng.choice(T.CODE_SNIPPETS), run.rng)
    res = {"ok": True, "path": path, "bytes": len(body.encode())}
    return "write_file", {"path": path, "content": body}, {"result": dumps(res)}, 0.3


def read_file(run: RunState, _node: SimNode, _t: float, _step: int, _: str) -> Call:
    path = T.fill("results/{m}.csv", run.rng)
    body = T.fill("matrix,threads,gflops,gbs\n{m},{t},{gf:.2f},{bw:.1f}", run.rng)
    return "read_file", {"path": path}, {"result": body}, 0.2


def get_experiment_context(run: RunState, _node: SimNode, _t: float, _step: int, _: str) -> Call:
    return "get_experiment_context", {}, {"result": dumps(run.core_context)}, 0.2


def add_memory(
    run: RunState, node: SimNode, t: float, _step: int, _: str, text: str | None = None
) -> Call:
    text = text or T.fill(run.rng.choice(T.FINDINGS), run.rng)
    meta = {"type": "finding"}
    entry = run.write(node.id, text, meta, t + 0.15)
    res = {"ok": True, "id": entry.eid}
    return (
        "add_memory",
        {"node_id": node.id, "text": text, "metadata": meta},
        {"result": dumps(res)},
        0.4,
    )


def bracket_finding(run: RunState, node: SimNode, t: float, step: int, target: str) -> Call:
    text = (
        "Parent's numbers hold: metrics=[GFlops_per_s, GB_per_s] agree with results.csv. "
        "The harness prints [red]FAIL[/red] for skipped matrices and tags like [bold] "
        "and [/x] verbatim; they are not errors."
    )
    return add_memory(run, node, t, step, target, text=text)


def japanese_note(run: RunState, node: SimNode, t: float, step: int, target: str) -> Call:
    return add_memory(run, node, t, step, target, text=T.JAPANESE_NOTE)


def late_finding(run: RunState, node: SimNode, t: float, step: int, target: str) -> Call:
    """The finding of the planted late insert: the same idea as `target`'s direction."""
    idea = (run.directions[target] or "").rstrip(".")
    m = run.rng.choice(T.MATRICES)
    gain = run.rng.uniform(4.0, 12.0)
    text = f"Tried the same idea on this branch ({idea}): +{gain:.1f}% GFlops_per_s on {m}."
    call = add_memory(run, node, t, step, target, text=text)
    run.planted.late["entry"] = run.entries[-1]
    return call


def reject(run: RunState, _node: SimNode, _t: float, _step: int, target: str) -> Call:
    text = T.fill("Conclusion for the parent: block size {b} is best on {m}", run.rng)
    args = {"node_id": target, "text": text, "metadata": {"type": "finding"}}
    res = {"ok": False, "error": COW_ERROR}
    return "add_memory", args, {"result": dumps(res)}, 0.3


def repro(run: RunState, node: SimNode, t: float, step: int, _: str) -> Call:
    target = None
    for aid in reversed(node.ancestors):
        target = run.content[aid].experiment_result
        if target is not None:
            break
    if target is None:
        return run_bash(run, node, t, step, "")
    status = "rerun_failed" if node.failed else "rerun_passed"
    text = f"reproducibility: {target.eid} -> {status}"
    meta = {
        "type": "reproducibility_event",
        "mem_kind": "reproducibility_event",
        "metric_ptr": target.metadata.get("metric_ptr"),
        "artifact_refs": [
            {"path": "results/rerun.csv", "sha256": run.sha(), "role": "data_output"}
        ],
        "node_report_ref": {"run_id": run.run_id, "node_id": node.id},
        "repro_target_id": target.eid,
        "repro_status": status,
    }
    entry = run.write(node.id, text, meta, t + 0.2)
    args = {"node_id": node.id, "target_id": target.eid, "status": status}
    res = {"ok": True, "id": entry.eid}
    return "add_reproducibility_event", args, {"result": dumps(res)}, 0.4


# LLM memory reads: the result is known only after ranking, so they finish in `on_done`
def search_memory(
    run: RunState,
    node: SimNode,
    t: float,
    _step: int,
    _target: str,
    scope: list[str] | None = None,
    query: str | None = None,
) -> Call:
    query = query or T.fill(
        run.rng.choice(
            [
                "cache blocking results on {m}",
                "GFlops_per_s {m} best kernel",
                "why did the build fail",
                "throughput on {m}",
                "NUMA first-touch speedup",
            ]
        ),
        run.rng,
    )
    scope = scope if scope is not None else list(node.ancestors)
    args = {"query": query, "ancestor_ids": scope, "limit": 5}
    run.queries.append(query)
    read = Read(round(t + 0.2, 6), "node_scope", query, scope, 5, "search")
    return "search_memory", args, read, 0.4


def leak(run: RunState, node: SimNode, t: float, step: int, target: str) -> Call:
    # the LLM quotes the sibling's conclusion: its typed entry written at the sibling's end
    other = run.content[target].conclusion
    query = other.text if other is not None else run.directions[target] or ""
    scope = [*node.ancestors, target]
    return search_memory(run, node, t, step, target, scope=scope, query=query[:200])


def get_node_memory(_run: RunState, node: SimNode, t: float, _step: int, target: str) -> Call:
    target = target or node.ancestors[-1]
    read = Read(round(t + 0.15, 6), "node_scope", "inherit:get_node_memory", [target], 0, "inherit")
    return "get_node_memory", {"node_id": target}, read, 0.4


def cousin(run: RunState, node: SimNode, t: float, step: int, target: str) -> Call:
    return get_node_memory(run, node, t, step, target)


# what a node's plan may hold (kind → the handler that makes that tool call and its outcome);
# every handler takes (run, node, t, step, target), whether it uses them all or not
TOOL_CALLS: dict[str, Callable[..., Call]] = {
    "generate_ideas": generate_ideas,
    "survey": survey,
    "run_code": run_code,
    "run_bash": run_bash,
    "storm": storm,
    "write_file": write_file,
    "read_file": read_file,
    "get_experiment_context": get_experiment_context,
    "add_memory": add_memory,
    "bracket_finding": bracket_finding,
    "japanese_note": japanese_note,
    "late_finding": late_finding,
    "reject": reject,
    "repro": repro,
    "search_memory": search_memory,
    "leak": leak,
    "get_node_memory": get_node_memory,
    "cousin": cousin,
}
