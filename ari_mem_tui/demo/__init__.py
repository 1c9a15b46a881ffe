"""`ari-mem-tui demo`: write a synthetic ARI checkpoint in ARI's exact file formats.

The checkpoint tells one run of ARI's best-first tree search (`demo.tree`) with the memory and
telemetry its agent loop would leave (`demo.run`): `tree.json` (§2.1, §2.2), `nodes_tree.json`
as written during BFTS (§2.3), `results.json` (§2.4), `memory_backup.jsonl.gz` (§3, record order
of §3.1), `memory_access.jsonl` (§4.2), `experiment.md`, `idea.json`, `evaluation_criteria.json`.
A marker file `.ari_mem_tui_demo.json` (ignored by ARI) records the parameters, so a later run
may overwrite a previous demo but never a directory it did not write.

Recorded start-up searches: the generator ranks every read with a fast keyword stand-in. Given
a `record` callable (injected by the caller, as this package imports nothing of ours but the
wary reader of the tool's own files, checkpoint/cachefile.py: the CLI passes
`search.record.MiniLMRecorder`), the start-up searches are ranked again by it, as of
each read's time, and the access log is rewritten with those results; `settings.json` then
names the recorder's embedder as the run's Letta embedding handle, where ARI's dashboard keeps
it. So a replay with that ranker gives every recorded start-up search exactly, except the one
planted late insert (`demo.planted.plant_late_insert`), whose reader's recording differs.
A planted tool storm (`demo.planted.plant_tool_storm`) starves a node of its ancestors'
memory, and the what-if that leaves ARI's automatic `Tool …` entries out feeds it again.

Output is byte-identical for the same (nodes, seed, entries): one `random.Random(seed)`, a fixed
base epoch, no wall clock, passage ids drawn from the rng, gzip with mtime 0.

Size: about 50 entries per node by default (40 nodes → ~2,000 entries). Every started non-root
node gets its start-up reads up to 1,500 started nodes; bigger runs record them for 1,500 nodes
spread over the run (see `demo.run`). `--nodes 10000 --entries 200000` takes about 30 s on two
cores (the ranking uses inverted lists over the query words only).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import random
import re
import shutil
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from platformdirs import user_cache_dir

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.demo import text as T
from ari_mem_tui.demo.records import INSERT_S, PREVIEW, Entry, Read
from ari_mem_tui.demo.run import DemoRun
from ari_mem_tui.demo.tree import SimNode, Timeline
from ari_mem_tui.render.indented import indented

BASE_EPOCH = datetime(2026, 5, 28, 18, 5, 41, tzinfo=UTC).timestamp()
MARKER = ".ari_mem_tui_demo.json"
MARKER_KIND = "ari-mem-tui demo checkpoint"
DEMO_VERSION = 5  # bump when the output changes, so cached demos are regenerated
KEYWORDS = "keywords"  # the marker's `recorded_with` when no recorder ranked the searches
ENTRIES_PER_NODE = 50
DEMO_FILES = (
    "experiment.md",
    "idea.json",
    "evaluation_criteria.json",
    "tree.json",
    "nodes_tree.json",
    "results.json",
    "memory_backup.jsonl.gz",
    "memory_access.jsonl",
    "settings.json",
    MARKER,
)
EXPERIMENT_FILE = "/home/ari/experiments/spmv_csr/experiment.md"


class DemoTargetError(RuntimeError):
    """The output directory holds files that are not a previous demo."""


class Recorder(Protocol):
    """Ranks the demo's start-up searches as the run's Letta server would have answered them.

    Called with the written checkpoint and one dict per search (`ts`, `query`, `ancestor_ids`,
    `limit`, `unseen`: passage ids stamped before `ts` whose insert had not landed yet); returns
    each search's `results` rows as ARI's access log holds them (§4.2).
    """

    embedding_config: str  # the Letta embedding handle naming its embedder (settings.json)

    def __call__(
        self, checkpoint: Path, searches: list[dict[str, Any]]
    ) -> list[list[dict[str, Any]]]: ...


# ------------------------------------------------------------------------------ identifiers
def slugify(title: str) -> str:
    """ARI's run-id slug (§1.1): [A-Za-z0-9_-] kept, others `_`, cut to 80, `_` runs collapsed."""
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", title)[:80]
    return re.sub(r"_+", "_", slug)


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def run_id_for(start: float) -> str:
    stamp = datetime.fromtimestamp(start, UTC).strftime("%Y%m%d%H%M%S")
    return f"{stamp}_{slugify(T.TITLE)}"


# ------------------------------------------------------------------------------ generation
def generate(nodes: int, seed: int, entries: int | None) -> tuple[Timeline, DemoRun]:
    rng = random.Random(seed)
    start = BASE_EPOCH + rng.randrange(0, 6 * 3600)
    timeline = Timeline(rng, nodes, start, run_id_for(start))
    timeline.run()
    total = entries if entries is not None else ENTRIES_PER_NODE * max(2, nodes)
    run = DemoRun(rng, timeline, total)
    run.build()
    run.resolve()
    return timeline, run


def node_dict(node: SimNode, run: DemoRun) -> dict[str, Any]:
    """One node exactly as ARI's `Node.to_dict` writes it (§2.2), keys in its order."""
    content = run.content[node.id]
    status = node.status(run.stop)
    direction = run.directions[node.id]
    done = status in ("success", "failed")
    name = f"root: {T.TITLE[:100]}" if node.parent is None else f"{node.label}: {direction[:48]}"
    return {
        "id": node.id,
        "parent_id": node.parent.id if node.parent else None,
        "depth": node.depth,
        "status": status,
        "retry_count": 0,
        "children": [c.id for c in node.children],
        "created_at": iso(node.created),
        "completed_at": iso(node.end) if done else "",
        "artifacts": content.artifacts,
        "metrics": content.metrics,
        "has_real_data": content.has_real_data,
        "eval_summary": content.eval_summary,
        "label": node.label,
        "raw_label": node.raw_label,
        "name": name,
        "error_log": content.error_log,
        "ancestor_ids": list(node.ancestors),
        "trace_log": content.trace,
        "original_direction": direction,
        "node_report_path": content.node_report_path if done else None,
    }


# ------------------------------------------------------------------------------ file writers
_SCALAR = json.JSONEncoder(ensure_ascii=False).encode


def write_json(path: Path, obj: Any) -> None:
    path.write_text(indented(obj) + "\n", encoding="utf-8")


def write_with_nodes(path: Path, head: dict[str, Any], nodes_text: str) -> None:
    """An indented object whose last key is "nodes", with the node list already encoded."""
    body = indented(head)[:-2]  # drop the closing "\n}"
    path.write_text(f'{body},\n  "nodes": {nodes_text}\n}}\n', encoding="utf-8")


def jsonl(obj: Any) -> str:
    return _SCALAR(obj) + "\n"


def backup_lines(run: DemoRun) -> list[str]:
    """§3.1 order: node groups by first entry (ts inside), react by ts, then the core seed."""
    groups: dict[str, list[Entry]] = {}
    react: list[Entry] = []
    for entry in run.entries:  # already in ts order
        if entry.kind == "node_scope":
            groups.setdefault(entry.node_id, []).append(entry)
        else:
            react.append(entry)
    lines = [
        jsonl(
            {
                "kind": "node_scope",
                "node_id": e.node_id,
                "text": e.text,
                "metadata": e.metadata,
                "ts": e.ts,
            }
        )
        for group in groups.values()
        for e in group
    ]
    lines += [
        jsonl({"kind": "react_step", "text": e.text, "metadata": e.metadata, "ts": e.ts})
        for e in react
    ]
    if run.core_context:
        lines.append(
            jsonl(
                {
                    "kind": "core_seed",
                    "persona": "",
                    "human": "",
                    "context": run.core_context,
                    "seeded_at": 0.0,
                }
            )
        )
    return lines


def write_gzip(path: Path, lines: list[str]) -> None:
    # filename="" and mtime=0 keep the gzip header free of names and clocks (byte-identical)
    with (
        path.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz,
        io.TextIOWrapper(gz, encoding="utf-8") as text,
    ):
        text.writelines(lines)


def access_events(run: DemoRun, rng: random.Random) -> list[tuple[float, dict[str, Any]]]:
    events: list[tuple[float, dict[str, Any]]] = []
    for entry in run.entries:
        ts = round(entry.ts + rng.uniform(*INSERT_S), 6)
        if entry.landed is not None:  # the planted late insert
            ts = entry.landed
        events.append(
            (
                ts,
                {
                    "ts": ts,
                    "node_id": entry.node_id if entry.kind == "node_scope" else "",
                    "op": "write",
                    "collection": entry.kind,
                    "entry_id": entry.eid,
                    "text_preview": entry.text[:PREVIEW],
                    "metadata": entry.metadata,
                },
            )
        )
    for read in run.reads:
        events.append((read.ts, read_event(read)))
    events.sort(key=lambda pair: pair[0])
    return events


def read_event(read: Read) -> dict[str, Any]:
    return {
        "ts": read.ts,
        "node_id": read.node_id or "",
        "op": "read",
        "collection": read.collection,
        "query": read.query,
        "ancestor_ids": read.ancestor_ids,
        "limit": read.limit,
        "results": read.results,
    }


def write_files(out: Path, timeline: Timeline, run: DemoRun, params: dict[str, Any]) -> None:
    experiment = T.EXPERIMENT_MD.encode("utf-8")
    (out / "experiment.md").write_bytes(experiment)
    write_json(
        out / "idea.json",
        {
            "ideas": T.IDEAS,
            "primary_metric": T.PRIMARY_METRIC,
            "higher_is_better": True,
            "metric_rationale": T.METRIC_RATIONALE,
        },
    )
    write_json(
        out / "evaluation_criteria.json",
        {
            "primary_metric": T.PRIMARY_METRIC,
            "higher_is_better": True,
            "metric_rationale": T.METRIC_RATIONALE,
        },
    )
    nodes = [node_dict(n, run) for n in timeline.nodes]
    nodes_text = indented(nodes, 1)  # shared by tree.json and nodes_tree.json
    head = {
        "run_id": timeline.run_id,
        "experiment_file": EXPERIMENT_FILE,
        "experiment_file_sha256": hashlib.sha256(experiment).hexdigest()[:16],
        "experiment_file_len": len(experiment),
        "created_at": iso(run.stop),
    }
    write_with_nodes(out / "tree.json", head, nodes_text)
    write_with_nodes(
        out / "nodes_tree.json", {"experiment_goal": T.EXPERIMENT_MD[:3000]}, nodes_text
    )
    keys = ("artifacts", "metrics", "has_real_data", "eval_summary", "status", "error_log")
    write_json(
        out / "results.json",
        {"run_id": timeline.run_id, "nodes": {n["id"]: {k: n[k] for k in keys} for n in nodes}},
    )
    write_gzip(out / "memory_backup.jsonl.gz", backup_lines(run))
    write_access_log(out, run, params["seed"])


def write_access_log(out: Path, run: DemoRun, seed: int) -> None:
    rng = random.Random(seed * 7919 + 1)
    evs = access_events(run, rng)
    with (out / "memory_access.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(jsonl(ev) for _, ev in evs)


def write_settings(out: Path, embedding_config: str) -> None:
    """settings.json as ARI's dashboard saves it (`json.dumps(data, indent=2)`, no newline at
    the end), with only its Memory (Letta) card's keys: ARI saves the whole settings form; the
    demo has nothing true to say about the rest (LLM, SLURM, container)."""
    settings = {
        "letta_base_url": "http://localhost:8283",
        "letta_embedding_config": embedding_config,
    }
    (out / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")


def record_startup_searches(out: Path, run: DemoRun, seed: int, record: Recorder) -> list[str]:
    """Re-rank the start-up searches with `record`, rewrite the access log and settings.json;
    return the readers whose recorded search missed a late insert (where a replay differs)."""
    readers, reads = zip(*run.startup_searches(), strict=True)
    specs = [
        {
            "ts": read.ts,
            "query": read.query,
            "ancestor_ids": list(read.ancestor_ids or ()),
            "limit": read.limit,
            "unseen": [e.eid for e in run.planted.unseen(read)],
        }
        for read in reads
    ]
    answers = record(out, specs)
    for read, results in zip(reads, answers, strict=True):
        read.results = results
    write_access_log(out, run, seed)
    write_settings(out, record.embedding_config)
    return [reader for reader, spec in zip(readers, specs, strict=True) if spec["unseen"]]


def write_marker(
    out: Path, timeline: Timeline, run: DemoRun, params: dict[str, Any], recorded: dict[str, Any]
) -> None:
    """Last, so that a marker means a complete demo."""
    statuses: dict[str, int] = {}
    for node in timeline.nodes:
        status = node.status(run.stop)
        statuses[status] = statuses.get(status, 0) + 1
    counts = {
        "run_id": timeline.run_id,
        "nodes": len(timeline.nodes),
        "statuses": dict(sorted(statuses.items())),
        "max_depth": max(n.depth for n in timeline.nodes),
        "node_scope": sum(e.kind == "node_scope" for e in run.entries),
        "react_step": sum(e.kind == "react_step" for e in run.entries),
        "core_seed": int(bool(run.core_context)),
        "write_events": len(run.entries),
        "read_events": len(run.reads),
    }
    marker = {"kind": MARKER_KIND, "version": DEMO_VERSION, **params, **recorded, "counts": counts}
    if run.planted.storm:  # the planted tool storm (demo.planted.plant_tool_storm)
        marker["tool_storm"] = {
            "writer": run.planted.storm["writer"].id,
            "reader": run.planted.storm["reader"].id,
            "entries": run.planted.storm.get("points", 0),
            "what_if": "drop=tool-auto",
        }
    write_json(out / MARKER, marker)


# ------------------------------------------------------------------------------ public API
def read_marker(path: Path) -> dict[str, Any] | None:
    """The marker of a demo in `path`, or None: none there, or one that is no regular file (a
    FIFO would block the read forever), over `config-kib`, not JSON, not ours."""
    try:
        marker = cachefile.decode_json(cachefile.read_config(path / MARKER))
    except (OSError, cachefile.CacheMiss):
        return None
    return marker if isinstance(marker, dict) and marker.get("kind") == MARKER_KIND else None


def is_previous_demo(path: Path) -> bool:
    return read_marker(path) is not None


def is_current_demo(path: Path, recorded_with: str = KEYWORDS) -> bool:
    """Written completely (the marker is written last) by this version of the generator, its
    start-up searches recorded with `recorded_with` (an embedding handle, or KEYWORDS)."""
    marker = read_marker(path)
    return (
        marker is not None
        and marker.get("version") == DEMO_VERSION
        and marker.get("recorded_with") == recorded_with
    )


def prepare_target(out: Path) -> None:
    """Create `out`, or clear a previous demo in it; refuse any other non-empty directory."""
    if out.exists() and not out.is_dir():
        raise DemoTargetError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not is_previous_demo(out):
            raise DemoTargetError(
                f"{out} is not empty and is not a previous demo checkpoint; "
                "choose an empty or new directory"
            )
        for name in DEMO_FILES:
            (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)


def write_demo(
    out: Path,
    nodes: int = 40,
    seed: int = 7,
    entries: int | None = None,
    record: Recorder | None = None,
) -> Path:
    """Write the demo checkpoint for (nodes, seed, entries) into `out` and return `out`.

    With `record`, the start-up searches are recorded by it (see the module's docstring);
    without, by the generator's keyword stand-in. Raises `DemoTargetError` if `out` is a
    non-empty directory that is not a previous demo; whatever `record` raises propagates.
    """
    out = Path(out)
    prepare_target(out)
    timeline, run = generate(nodes, seed, entries)
    params = {"nodes": nodes, "seed": seed, "entries": entries}
    write_files(out, timeline, run, params)
    recorded: dict[str, Any] = {"recorded_with": KEYWORDS, "recordings_differ": []}
    if record is not None:
        differ = record_startup_searches(out, run, seed, record)
        recorded = {"recorded_with": record.embedding_config, "recordings_differ": differ}
    write_marker(out, timeline, run, params, recorded)
    return out


CACHE_ENV = "ARI_MEM_TUI_CACHE"  # as search.vector_cache and checkpoint.index (not imported)


def cache_root() -> Path:
    """$ARI_MEM_TUI_CACHE, else the user's cache dir: where every cache of ours lives."""
    chosen = os.environ.get(CACHE_ENV)
    return Path(chosen).expanduser() if chosen else Path(user_cache_dir("ari-mem-tui"))


def demo_checkpoint(nodes: int = 40, seed: int = 7, record: Recorder | None = None) -> Path:
    """The cached demo checkpoint for (nodes, seed), generated on first use (atomically), its
    start-up searches recorded by `record` (else the keyword stand-in). Where the cache cannot
    hold it (read-only, full), it is kept in a private folder of this user's in the temp dir,
    reused by the next run; only where that fails too is it generated in a new folder."""
    root = cache_root()
    try:
        return _cached_demo(root, nodes, seed, record)
    except OSError as exc:  # a read-only or full cache: the demo all the same, elsewhere
        try:
            path = _cached_demo(_spare_root(), nodes, seed, record)
        except OSError:
            path = Path(tempfile.mkdtemp(prefix="ari-mem-tui-demo-"))
            cost = f"it is generated again every time (this time in {path})"
            cachefile.cannot_cache("demo checkpoint", root, exc, cost)
            return write_demo(path, nodes=nodes, seed=seed, record=record)
        cachefile.cannot_cache("demo checkpoint", root, exc, f"it is kept in {path} instead")
        return path


def _cached_demo(root: Path, nodes: int, seed: int, record: Recorder | None) -> Path:
    """The demo in `root`, written there first when it is not (a temporary folder renamed into
    place); OSError when `root` cannot take it."""
    target = root / f"demo-n{nodes}-s{seed}"
    recorded_with = record.embedding_config if record is not None else KEYWORDS
    if is_current_demo(target, recorded_with):
        return target
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".demo-n{nodes}-s{seed}.tmp-"))
    try:
        write_demo(tmp, nodes=nodes, seed=seed, record=record)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except OSError:  # another process got there first
        shutil.rmtree(tmp, ignore_errors=True)
        if not is_current_demo(target, recorded_with):
            raise
    return target


def _spare_root() -> Path:
    """This user's folder in the temp dir (made private when new), for a demo the cache cannot
    hold: one copy, where a new folder at each run filled the temp dir. OSError when the name
    is taken by anything but a private folder of this user's (a shared temp dir: another user
    could have put it there)."""
    folder = Path(tempfile.gettempdir()) / f"ari-mem-tui-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise OSError(f"{folder} is not a private folder of this user's")
    return folder


def summary(path: Path) -> str:
    """One paragraph: what the demo checkpoint at `path` holds (from its marker file)."""
    marker = json.loads((path / MARKER).read_text(encoding="utf-8"))
    c = marker["counts"]
    status_text = ", ".join(f"{v} {k}" for k, v in c["statuses"].items())
    recorded_with = marker.get("recorded_with", KEYWORDS)
    if recorded_with == KEYWORDS:
        recorded = "start-up searches ranked by the generator's keyword stand-in"
    else:
        differ = ", ".join(marker.get("recordings_differ") or [])
        late = (
            f"a late insert makes them differ from a replay at: {differ}"
            if differ
            else "too few nodes for the planted late insert: every replay agrees"
        )
        recorded = f"start-up searches recorded with {recorded_with} as of each read ({late})"
    storm = marker.get("tool_storm")
    if storm:
        recorded += (
            f"; node {storm['writer']}'s {storm['entries']} automatic Tool entries crowd node"
            f" {storm['reader']}'s ancestors out of its window (health --what-if"
            f" {storm['what_if']})"
        )
    return (
        f"Demo checkpoint {c['run_id']}: {c['nodes']} nodes ({status_text}; depth "
        f"{c['max_depth']}), {c['node_scope']} node-scope entries, {c['react_step']} react "
        f"steps, {c['core_seed']} core seed, {c['write_events']} write and {c['read_events']} "
        f"read events in the access log; {recorded}. Written to {path}"
    )
