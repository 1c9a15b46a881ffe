"""The commands behind `ari-mem-tui`: each turns its Namespace into typed options, calls the
library, prints through `render/` and returns an exit code from `cli.exits`.

Imports are lazy: `ari-mem-tui demo --out` must not pay for Textual or onnxruntime.
"""

# ruff: noqa: PLC0415  (the lazy imports above: each command loads only what it needs)

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ari_mem_tui.cli.after_output import later
from ari_mem_tui.cli.exits import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNREADABLE,
    console,
)
from ari_mem_tui.cli.options import embed_options, letta_options, run_options
from ari_mem_tui.model import Checkpoint, NodeRefError, Run
from ari_mem_tui.render.text import clean, json_text, say

if TYPE_CHECKING:
    from ari_mem_tui.render.progress import StatusLine
    from ari_mem_tui.search.progress import Progress


def unreadable(ckpt: Checkpoint) -> bool:
    """Nothing usable: no nodes and an error said why (not a directory, no tree at all)."""
    return not ckpt.nodes and any(p.severity == "error" for p in ckpt.problems)


def _refuse_unreadable(ckpt: Checkpoint, name: object) -> bool:
    if not unreadable(ckpt):
        return False
    from ari_mem_tui.render.summary import problem_line

    lines = [problem_line(p, ckpt) for p in ckpt.problems if p.severity == "error"]
    say(f"cannot read {name}: {'; '.join(lines)}")
    return True


def _after_answer(run: Run, report: object = None, keep_audit: bool = False) -> None:
    """Once the answer is out (cli/after_output.py): a first open's run index, and the run's
    summary (run_summary.py) with the command's audit when it made one, and that audit
    (`keep_audit`: a new one) kept beside them: in a process of its own when their folder can
    be written (else here, to say what cannot be cached)."""
    from ari_mem_tui.checkpoint.index import writable

    elsewhere = writable(run.checkpoint.path)
    later(run.save_index, elsewhere)
    make, store = run.save_summary, run.audit_store
    if make is not None:
        later(lambda: make(report), elsewhere)
    if keep_audit and store is not None:
        later(lambda: store.save(run.checkpoint, report), elsewhere)


def _open(args: argparse.Namespace, rank: bool = True, prefetch: bool = True) -> Run | None:
    """The run (from the files, or with memory from --letta-url), or None after a one-line
    message on stderr. `rank=False` builds no local ranker (commands that replay nothing);
    `prefetch=False` embeds no start-up query but the one asked for (`saw`)."""
    from ari_mem_tui.run import RANKER_STEP, open_run

    def announce(_n: int, _m: int, part: str) -> None:
        if part.startswith(RANKER_STEP):  # where the run ranker sends texts: before it does
            say(part.removeprefix(RANKER_STEP))

    try:
        run = open_run(run_options(args, rank=rank, prefetch_queries=prefetch), on_step=announce)
    except Exception as exc:  # noqa: BLE001 - any failure to open is "cannot be read", exit 2
        say(f"cannot read {args.checkpoint}: {exc}")
        return None
    return None if _refuse_unreadable(run.checkpoint, args.checkpoint) else run


PROGRESS_EVERY = 1.0  # seconds between progress lines: never silent for 2 s


def wait_for_vectors(
    ranker: object,
    show: bool = True,
    tty: bool | None = None,
    stream: TextIO | None = None,
    tip: str | None = None,
) -> None:
    """Block until an embedding ranker's vectors are ready, saying how far and how long.

    A cold vector cache costs one MiniLM pass over every distinct text (~140 texts/s on two
    idle cores): minutes on a big run. A line goes to stderr at least every `PROGRESS_EVERY`
    seconds (rewritten in place on a terminal): n of N texts, the rate and an ETA, and a last
    one at 100%.
    """
    from ari_mem_tui.render.progress import EMBEDDER_TIP, StatusLine, progress_line

    wait = getattr(ranker, "wait", None)
    if wait is None:
        return
    progress, own = _progress_of(ranker)
    stream = stream or sys.stderr
    line = StatusLine(stream, stream.isatty() if tty is None else tty)
    tip = EMBEDDER_TIP if tip is None else tip
    last_shown = time.monotonic() - PROGRESS_EVERY  # the first line at once
    shown = False
    told: str | None = None  # the ranker's failure, said once, on its own line
    with line:  # closed on any exit: an interrupt leaves no cursor hidden
        while not wait(0.2):
            if _new_failure(ranker, told):
                if show and shown:
                    line.close()  # off the progress line being rewritten
                told = _tell_failure(ranker)
                progress, own = _progress_of(ranker)  # the stand-in's counts from now on
            if own:
                progress.update(getattr(ranker, "done", 0), getattr(ranker, "total", 0))
            if not show or time.monotonic() - last_shown < PROGRESS_EVERY:
                continue
            last_shown = time.monotonic()
            line.show(progress_line(progress, tip=tip, **_progress_words(ranker)))
            shown = True
        if show and shown:
            if own:
                progress.update(getattr(ranker, "done", 0), getattr(ranker, "total", 0))
            if progress.total and progress.finished:  # the pass ends on its 100% line
                line.show(progress_line(progress, **_progress_words(ranker)))
            line.close()
    if _new_failure(ranker, told):
        _tell_failure(ranker)


def _progress_of(ranker: object) -> tuple[Progress, bool]:
    """The ranker's own Progress, else one the caller keeps from its done/total (True)."""
    from ari_mem_tui.search.progress import Progress

    progress = getattr(ranker, "progress", None)
    if isinstance(progress, Progress):
        return progress, False
    return Progress(clock=time.monotonic), True


def _progress_words(ranker: object) -> dict[str, str]:
    """What the vectors are being made for: the run's endpoint, or (the default) MiniLM."""
    label = getattr(ranker, "progress_label", "")
    if getattr(ranker, "error", None) is None and label:
        return {"what": label, "waiting": f"{label}: reading the vector cache"}
    return {}


def _new_failure(ranker: object, told: str | None) -> bool:
    """The run ranker has failed (and it has not been said yet)."""
    error = getattr(ranker, "error", None)
    run_model = str(getattr(ranker, "name", "")).startswith("run")
    return run_model and bool(error) and error != told


def _tell_failure(ranker: object) -> str:
    """Say the run ranker's failure in one line: the progress that follows is MiniLM's, which
    stands in, and the user knows why."""
    error = str(getattr(ranker, "error", ""))
    say(f"{error}; the local MiniLM ranker answers instead, labelled stand-in")
    return error


def _say_hash(ranker: object) -> None:
    """Where the footer hash the run's model embeds with came from, and what checked it: said
    once, on stderr, before the output, when it was searched for (not when given or named)."""
    finding = getattr(ranker, "hash_finding", None)
    if finding is not None and finding.found is not None:  # (searched for: found, or not)
        say(finding.line())


# ---------------------------------------------------------------- saw / audit / summary
def cmd_saw(args: argparse.Namespace) -> int:

    from ari_mem_tui.render.report import render_saw, saw_json
    from ari_mem_tui.search.replay import replay

    which, query = args.query_from, args.query
    if which == "custom" and not query:
        say("--query-from custom needs --query TEXT")
        return EXIT_UNREADABLE
    if query and which not in (None, "custom"):
        say(f"--query is a custom query: it cannot be combined with --query-from {which}")
        return EXIT_UNREADABLE
    run = _open(args, prefetch=False)  # one node's query: embedded when it is asked for
    if run is None:
        return EXIT_UNREADABLE
    _after_answer(run)
    ckpt = run.checkpoint
    try:
        node_id = ckpt.resolve_node(args.node)
    except NodeRefError as exc:
        say(exc)
        return EXIT_UNREADABLE
    if args.embedder != "bm25":
        wait_for_vectors(run.ranker)
    _say_hash(run.ranker)
    if args.why is not None:
        return _saw_why(args, run, node_id)
    result = replay(
        ckpt,
        node_id,
        run.ranker,
        query=query,
        limit=args.limit,
        as_of=not args.now,  # as of the node's start unless --now (--as-of: the default)
        query_from=which or "start",
    )
    if args.json:
        print(json_text(saw_json(result)))
    else:
        render_saw(console(), result, run.source_label)
    return EXIT_OK


def _saw_why(args: argparse.Namespace, run: Run, node_id: str) -> int:
    """`saw NODE --why ENTRY`: why the node did (not) see the entry, step by step."""
    from rich.console import Console

    from ari_mem_tui.render.why import why_json, why_text
    from ari_mem_tui.search.why import EntryRefError, NodeSearch, resolve_entry

    ckpt = run.checkpoint
    try:
        entry = resolve_entry(ckpt, args.why)
    except EntryRefError as exc:
        say(exc)
        return EXIT_UNREADABLE
    search = NodeSearch(
        ckpt,
        node_id,
        run.ranker,
        limit=args.limit,
        as_of=not args.now,
        query=args.query,
        query_from=args.query_from or "start",
    )
    answer = search.why(entry)
    if args.json:
        print(json_text(why_json(answer)))
    else:
        Console(highlight=False).print(why_text(answer))
    return EXIT_OK


def cmd_audit(args: argparse.Namespace) -> int:

    from ari_mem_tui.audit import kept_or_audit
    from ari_mem_tui.render.report import audit_json, render_audit

    run = _open(args, rank=False)
    if run is None:
        return EXIT_UNREADABLE
    # the audit kept beside the run index for these files (the TUI's, or an earlier `audit`'s):
    # a 10k-node run's audit is ~1 s, its kept copy a few milliseconds
    report, new = kept_or_audit(run.checkpoint, run.audit_store)
    _after_answer(run, report, keep_audit=new)
    if args.json:
        print(json_text(audit_json(report, run.source_label)))
    else:
        render_audit(console(), report, run.source_label)
    return EXIT_FINDINGS if report.has_findings else EXIT_OK


def cmd_summary(args: argparse.Namespace) -> int:
    """What the checkpoint holds; with --letta-url, memory and core blocks from the server.
    An unreadable checkpoint is still summarised (its problems say why), then exit 2."""

    from ari_mem_tui.render.summary import loaded, render, summary_json
    from ari_mem_tui.run import open_run
    from ari_mem_tui.run_check import replay_check

    options = run_options(args, rank=False)
    run = open_run(options)  # a Letta failure is one line, in main()
    check = None
    if loaded(run.checkpoint):  # (the check kept for these files, else made now and kept)
        check = replay_check(run, options, say=say, wait=wait_for_vectors)
    _after_answer(run)
    if args.json:
        data = summary_json(run.checkpoint, run.source_label, check)
        sys.stdout.write(json_text(data) + "\n")
    else:
        render(run.checkpoint, console(highlight=False), run.source_label, check)
    return EXIT_OK if loaded(run.checkpoint) else EXIT_UNREADABLE


# ---------------------------------------------------------------- compare / export / writes
def _nodes(run: Run, *refs: str) -> list[str] | None:
    """The nodes named (any unique part of an id), or None after a one-line message."""
    try:
        return [run.checkpoint.resolve_node(ref) for ref in refs]
    except NodeRefError as exc:
        say(exc)
        return None


def _replays(run: Run, node_ids: list[str], embedder: str | None) -> list:
    """Each node's default start-up search, as the TUI's compare and `e` make it."""
    from ari_mem_tui.search.replay import replay

    if embedder != "bm25":
        wait_for_vectors(run.ranker)
    return [replay(run.checkpoint, node_id, run.ranker) for node_id in node_ids]


def cmd_compare(args: argparse.Namespace) -> int:
    from ari_mem_tui.render.compare import compare_json, render_compare

    run = _open(args)
    ids = _nodes(run, args.node_a, args.node_b) if run is not None else None
    if run is None or ids is None:
        return EXIT_UNREADABLE
    a, b = _replays(run, ids, args.embedder)
    if args.json:
        sys.stdout.write(json_text(compare_json(run.checkpoint, a, b)) + "\n")
    else:
        render_compare(console(highlight=False), run.checkpoint, a, b)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """The node's dossier, the two files `e` writes, into --out (else the export folder); with
    --parquet, every run named as Parquet tables (`_export_parquet`)."""
    if args.parquet is not None:
        if args.node is not None or args.out is not None or args.json:
            say(
                "export --parquet writes whole runs: no NODE, --out or --json (those are a"
                " node's dossier: export RUN NODE)"
            )
            return EXIT_UNREADABLE
        given = _ranker_flags(args)
        if given:
            say(
                f"export --parquet reads the runs' files and replays what the access log did not"
                f" record with BM25 (the health table's ranker column names it): no {given}"
            )
            return EXIT_UNREADABLE
        return _export_parquet(args)
    if args.node is None:
        say("export needs NODE (a node's dossier) or --parquet DIR (the runs as Parquet tables)")
        return EXIT_UNREADABLE
    from ari_mem_tui.render import outputs
    from ari_mem_tui.render.dossier import export_dossier
    from ari_mem_tui.tui.config import export_dir

    run = _open(args)
    ids = _nodes(run, args.node) if run is not None else None
    if run is None or ids is None:
        return EXIT_UNREADABLE
    (replayed,) = _replays(run, ids, args.embedder)
    out_dir = args.out or export_dir(run.checkpoint.path)
    try:
        md_path, json_path = export_dossier(run.checkpoint, replayed, out_dir)
    except (OSError, ValueError) as exc:  # the checkpoint itself, an unwritable folder
        say(f"cannot write the dossier: {exc}")
        return EXIT_UNREADABLE
    if args.json:
        files = {"node_id": ids[0], "markdown": str(md_path), "json": str(json_path)}
        sys.stdout.write(json_text(outputs.output(outputs.ExportOutput, files)) + "\n")
    else:
        print(clean(str(md_path), False))
        print(clean(str(json_path), False))
    return EXIT_OK


def cmd_writes(args: argparse.Namespace) -> int:
    """The CoW log of NODE, else of the whole run: the Writes tab's table (--filter, --sort:
    the TUI's `/` and `S`, render/table.py), or all of every write (--json, --csv)."""
    from ari_mem_tui.render.table import TableView
    from ari_mem_tui.render.writes import (
        WRITE_COLUMNS,
        node_or_run_writes,
        render_writes,
        write_rows,
        writes_csv,
        writes_json,
    )

    column = (args.sort or "").strip()
    if column and column not in WRITE_COLUMNS:
        say(f"--sort {column!r}: no such column; the columns: {', '.join(WRITE_COLUMNS)}")
        return EXIT_UNREADABLE
    run = _open(args, rank=False)
    if run is None:
        return EXIT_UNREADABLE
    ids = _nodes(run, args.node) if args.node else [None]
    if ids is None:
        return EXIT_UNREADABLE
    node_id = ids[0]
    writes = node_or_run_writes(run.checkpoint, node_id)
    view = TableView(args.filter, column or None, args.desc)
    if args.json:
        if view.active:  # the rows the table would show, in its order, every field
            writes = [writes[int(key)] for key, _ in view.apply(WRITE_COLUMNS, write_rows(writes))]
        sys.stdout.write(json_text(writes_json(run.checkpoint, node_id, writes)) + "\n")
    elif args.csv:
        sys.stdout.write(writes_csv(writes, view))
    else:
        render_writes(console(highlight=False), node_id, writes, view)
    return EXIT_OK


# ---------------------------------------------------------------- runs / health
def cmd_runs(args: argparse.Namespace) -> int:

    from ari_mem_tui.render.runs import render_runs, runs_json
    from ari_mem_tui.workspace import recent_workspace, scan

    ws = recent_workspace() if args.dir is None else scan(args.dir)
    if ws.kind == "none":
        say(ws.message)
        return EXIT_UNREADABLE
    if getattr(args, "scan", False):
        _scan_summaries(ws, args.jobs)
    if args.json:
        sys.stdout.write(json_text(runs_json(ws)) + "\n")
    elif not ws.runs:
        say("no recently opened runs yet: give a workspace folder (ari-mem-tui runs DIR)")
    else:
        render_runs(console(highlight=False), ws)
    return EXIT_OK


def _scan_summaries(ws: object, jobs: int | None) -> None:
    """`runs --scan`: the missing summaries made in parallel, a progress line on stderr (n of
    N, rate, ETA) at least every second, and what was made in one line."""
    from ari_mem_tui.render.progress import StatusLine, progress_line
    from ari_mem_tui.search.progress import Progress
    from ari_mem_tui.workspace import make_summaries, missing_summaries

    missing = missing_summaries(ws)  # type: ignore[arg-type]
    if not missing:
        return
    runs = Progress(unit="runs", clock=time.monotonic)
    line = StatusLine(sys.stderr, sys.stderr.isatty())
    last = [0.0]

    def progress(done: int, total: int) -> None:
        runs.update(done, total)
        if time.monotonic() - last[0] >= PROGRESS_EVERY or runs.finished:
            last[0] = time.monotonic()
            line.show(progress_line(runs, "run summaries", waiting="run summaries"))

    with line:  # closed on any exit: an interrupt leaves no cursor hidden
        progress(0, len(missing))
        made = make_summaries(missing, jobs, progress)
    from ari_mem_tui.render.words import plural

    failed = len(missing) - made
    tail = f"; {plural(failed, 'run')} could not be read whole" if failed else ""
    say(f"made the summaries of {plural(made, 'run')}{tail}")


def _ranker_flags(args: argparse.Namespace) -> str:
    """The ranker and Letta flags given on the command line (a Parquet export takes none)."""
    return ", ".join("--" + key.replace("_", "-") for key in getattr(args, "ranker_flags", []))


def _export_parquet(args: argparse.Namespace) -> int:
    """`export RUN|WORKSPACE --parquet DIR`: every run as Parquet tables, one folder each."""
    from ari_mem_tui.checkpoint.cachefile import inside
    from ari_mem_tui.render.parquet import ParquetUnavailable, export
    from ari_mem_tui.render.progress import StatusLine, progress_line
    from ari_mem_tui.search.progress import Progress
    from ari_mem_tui.workspace import scan

    found = scan(args.checkpoint, counts=False)
    if found.kind == "none":
        say(found.message)
        return EXIT_UNREADABLE
    out = Path(args.parquet)
    if any(inside(out, run.path) for run in found.runs):
        say(f"{out}: inside a run; runs are read-only to this tool, give another folder")
        return EXIT_UNREADABLE
    runs = Progress(unit="runs", clock=time.monotonic)
    line = StatusLine(sys.stderr, sys.stderr.isatty())

    def progress(done: int, total: int) -> None:
        runs.update(done, total)
        if total > 1:
            line.show(progress_line(runs, "Parquet export", waiting="Parquet export"))

    try:
        with line:  # closed before anything is said, and on an interrupt
            folders = export(Path(args.checkpoint), out, progress)
    except ParquetUnavailable as exc:
        say(exc)
        return EXIT_UNREADABLE
    except OSError as exc:
        say(f"cannot write {out}: {exc.strerror or exc}")
        return EXIT_UNREADABLE
    for folder in folders:
        print(clean(str(folder), False))
    return EXIT_OK if folders else EXIT_UNREADABLE


def cmd_health(args: argparse.Namespace) -> int:

    from ari_mem_tui.health import compute_health
    from ari_mem_tui.render.health import health_json, render_health

    run = _open(args)
    if run is None:
        return EXIT_UNREADABLE
    _after_answer(run)
    if args.embedder != "bm25":
        wait_for_vectors(run.ranker)
    progress, line = _health_progress()
    with line:  # closed on any exit: an interrupt leaves no cursor hidden
        if args.what_if is not None:
            return _what_if(args, run, progress, line)
        report = compute_health(
            run.checkpoint,
            run.ranker,
            limit=args.limit,
            progress=progress,
            all_entries=args.all_entries,
        )
    if report.fidelity is not None:  # exact only as far as a kept replay check says (summary)
        from ari_mem_tui.run_check import kept_check
        from ari_mem_tui.search.fidelity import with_check

        with_check(report.fidelity, kept_check(run, run.ranker))
    if args.json:
        sys.stdout.write(json_text(health_json(report)) + "\n")
    else:
        render_health(console(highlight=False), report)
    return EXIT_FINDINGS if report.starved else EXIT_OK


def _health_progress() -> tuple[Callable[[int, int], None], StatusLine]:
    """`n of N nodes` on stderr while health replays (a terminal only), and its line."""
    from ari_mem_tui.render.progress import StatusLine, progress_line
    from ari_mem_tui.search.progress import Progress

    show = sys.stderr.isatty()
    nodes, line = Progress(unit="nodes"), StatusLine(sys.stderr, tty=True)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        nodes.update(done, total)
        if show and (time.monotonic() - last[0] >= 0.2 or nodes.finished):
            last[0] = time.monotonic()
            line.show(progress_line(nodes, "memory health", waiting="memory health"))

    return progress, line


def _what_if(
    args: argparse.Namespace, run: Run, progress: Callable[[int, int], None], line: StatusLine
) -> int:
    """`health --what-if SETTINGS`: the run's own health and the same run under SETTINGS."""
    from rich.console import Console

    from ari_mem_tui.render.what_if import render_what_if, what_if_json
    from ari_mem_tui.what_if import Settings, parse_settings, ranker_for, what_if

    own = Settings(limit=args.limit)
    settings = parse_settings(args.what_if, base=own)
    ranker = ranker_for(run, settings)
    if ranker is not run.ranker and settings.ranker != "bm25":
        wait_for_vectors(ranker)
    from ari_mem_tui.run_check import kept_check

    result = what_if(
        run.checkpoint,
        run.ranker,
        settings,
        ranker,
        own=own,
        progress=progress,
        all_entries=args.all_entries,
        check=kept_check(run, run.ranker),
    )
    line.close()
    if args.json:
        sys.stdout.write(json_text(what_if_json(result)) + "\n")
    else:
        render_what_if(Console(highlight=False), result)
    return EXIT_FINDINGS if result.what_if.starved else EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """The JSON Schema of one output, or the outputs' names, one a line, with what each is."""
    from ari_mem_tui.render.outputs import OUTPUTS, json_schema

    if args.name is None:
        for name, model in OUTPUTS.items():
            sys.stdout.write(f"{name:8} {(model.__doc__ or '').splitlines()[0]}\n")
        return EXIT_OK
    if args.name not in OUTPUTS:
        say(f"no output is named {args.name!r}; the outputs: {', '.join(OUTPUTS)}")
        return EXIT_UNREADABLE
    sys.stdout.write(json_text(json_schema(args.name)) + "\n")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from ari_mem_tui.tui.serve import ServeError, exposure_warning, listen, serve
    from ari_mem_tui.workspace import scan

    path = Path(args.checkpoint)
    found = scan(path, counts=False)
    if found.kind == "none":
        say(found.message)
        return EXIT_UNREADABLE
    try:
        sock = listen(args.host, args.port)  # before any banner: a busy port is one line
    except ServeError as exc:
        say(exc)
        return EXIT_UNREADABLE
    warning = exposure_warning(args.host, args.port)
    if warning:
        say(warning)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        clean(f"serving {path} at http://{host}:{args.port}/ (Ctrl+C stops)", multiline=False),
        file=sys.stderr,
        flush=True,
    )
    serve(path, sock, args.embedder)
    return EXIT_OK


# ---------------------------------------------------------------- letta-restore
def cmd_letta_restore(args: argparse.Namespace, err: TextIO | None = None) -> int:
    from ari_mem_tui.letta.api import LettaConnection
    from ari_mem_tui.letta.errors import LettaUnavailable
    from ari_mem_tui.letta.restore import (
        WRITE_TIMEOUT,
        Refused,
        plan_restore,
        restore,
        verify_restore,
    )
    from ari_mem_tui.model.secrets import mask, remember, safe_url, url_secrets
    from ari_mem_tui.render.words import plural

    err = err or sys.stderr
    remember(args.letta_api_key, *url_secrets(args.letta_url or ""))

    def tell(line: str) -> None:
        print(mask(clean(line, multiline=False)), file=err, flush=True)

    try:
        plan = plan_restore(
            args.checkpoint,
            args.letta_url,
            args.agent,
            args.checkpoint_hash,
            reencode=getattr(args, "reencode_footers", False),
        )
    except LettaUnavailable as exc:
        tell(f"ari-mem-tui letta-restore: {exc}")
        return EXIT_UNREADABLE
    for problem in plan.problems:
        tell(f"warning: {problem.line()}")
    for warning in plan.warnings:
        tell(f"warning: {warning}")
    nodes = sum(1 for e in plan.entries if e.kind == "node_scope")
    seed = "and the core blocks" if plan.core_seed is not None else "(no core seed in the backup)"
    tell(
        f"letta-restore WRITES to the Letta server at {safe_url(plan.url)}: agent {plan.agent},"
        f" {nodes} node-scope + {len(plan.entries) - nodes} react passages {seed}"
    )
    conn = LettaConnection(plan.url, api_key=args.letta_api_key, timeout=WRITE_TIMEOUT)
    started = time.monotonic()
    try:
        agent_id, written = restore(
            plan, conn, merge=args.merge, embedding=args.embedding, say=tell
        )
    except Refused as exc:
        tell(f"ari-mem-tui letta-restore: {exc}")
        return EXIT_REFUSED
    except LettaUnavailable as exc:
        tell(f"ari-mem-tui letta-restore: {exc}")
        return EXIT_UNREADABLE
    elapsed = time.monotonic() - started
    how = {"given": "the run's, given", "path": "this path's", "re-encoded": "re-encoded"}
    tell(
        f"restored {written} passages into {plan.agent} ({agent_id}) at {safe_url(plan.url)}"
        f" in {elapsed:.1f} s; checkpoint hash {plan.ckpt_hash}"
        f" ({how.get(plan.hash_source, plan.hash_source)});"
        f" {plural(len(plan.problems), 'backup problem')}"
    )
    if getattr(args, "no_verify", False):
        return EXIT_OK
    try:
        missing = verify_restore(plan, conn, agent_id)
    except LettaUnavailable as exc:
        tell(f"ari-mem-tui letta-restore: written, but could not read back to verify: {exc}")
        return EXIT_UNREADABLE
    if missing:
        tell(
            f"warning: read back, {len(missing)} of {written} passages are not on the server as"
            f" written (first: {missing[0]})"
        )
        return EXIT_UNREADABLE
    tell(f"read back: all {written} passages byte for byte as written, footers included")
    return EXIT_OK


# ---------------------------------------------------------------- the TUI and the demo
def run_openers(args: argparse.Namespace):
    """The TUI's opener for a run, with `args`' options; remembers the run as recently opened
    (the config dir) when called."""
    from ari_mem_tui.run import open_run
    from ari_mem_tui.workspace import remember_run

    def openers(run_path: Path):
        # the index of a first open is written once the run is on screen (Run.save_index)
        options = dataclasses.replace(run_options(args), checkpoint=run_path, index_behind=True)
        remember_run(run_path)

        def opener(progress) -> Run:  # a tui.workers.LoadProgress, or a plain ProgressFn
            step, tree = getattr(progress, "step", None), getattr(progress, "tree", None)
            return open_run(options, step, progress, tree)

        return opener

    return openers


NO_TERMINAL = (
    "the TUI needs a terminal, and stdin or stdout is not one; without one use summary, saw, "
    "audit or health (--json), or demo --out DIR"
)


def no_terminal() -> bool:
    """True when the TUI would have no terminal to draw on (stdin or stdout redirected: it would
    wait for keys that never come, burning a core) and no other driver was asked for
    (textual-serve runs the app on pipes with its web driver, named in TEXTUAL_DRIVER)."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return False
    return not (sys.stdin.isatty() and sys.stdout.isatty())


def cmd_open(args: argparse.Namespace) -> int:
    """`ari-mem-tui CKPT|DIR`: the TUI on a run, or on a workspace's run picker (also the end
    of `demo`, whose args lack Letta options). A folder that is neither, or no terminal to draw
    on: one line, exit 2."""
    from ari_mem_tui.workspace import scan

    path = Path(args.checkpoint)
    found = scan(path, counts=False)
    if found.kind == "none":
        say(found.message)
        return EXIT_UNREADABLE
    if no_terminal():
        say(NO_TERMINAL)
        return EXIT_UNREADABLE
    if sys.stderr.isatty():  # Textual's first frame is ~0.5 s of imports away: never blank
        print(clean(f"ari-mem-tui: opening {path} …", False), file=sys.stderr, flush=True)
    from ari_mem_tui.tui.app import run_app

    openers = run_openers(args)
    export_to = getattr(args, "export_dir", None)
    embed = embed_options(args)  # where `R` would send texts, if asked
    if found.kind == "workspace":
        return run_app(
            None,
            title=str(path),
            export_to=export_to,
            workspace=path,
            run_factory=openers,
            embed=embed,
        )
    return run_app(
        openers(path),
        title=str(path),
        export_to=export_to,
        initial_node=getattr(args, "node", None),
        embed=embed,
    )


RECORD_MAX_ENTRIES = 10_000  # `--recordings auto`: MiniLM up to this many entries (~70 s cold)


def demo_recorder(args: argparse.Namespace, entries: int) -> object | None:
    """What records the demo's start-up searches: MiniLM (the default replay ranker) up to
    RECORD_MAX_ENTRIES entries or with `--recordings minilm`; else None, the generator's
    keyword stand-in (a 10,000-node demo would take an hour of MiniLM)."""
    choice = getattr(args, "recordings", "auto")
    if choice == "keywords" or (choice == "auto" and entries > RECORD_MAX_ENTRIES):
        return None
    from ari_mem_tui.search.record import MiniLMRecorder

    def wait(ranker: object) -> None:
        say(
            "recording the demo's start-up searches with MiniLM (its vectors are cached for the TUI)"
        )
        wait_for_vectors(ranker, tip="; demo --recordings keywords skips this")

    return MiniLMRecorder(wait=wait)


def cmd_demo(args: argparse.Namespace) -> int:
    from ari_mem_tui.demo import (
        ENTRIES_PER_NODE,
        DemoTargetError,
        demo_checkpoint,
        summary,
        write_demo,
    )
    from ari_mem_tui.search.record import RecorderUnavailable

    nodes, seed, entries = int(args.nodes), int(args.seed), args.entries
    if args.out is None and no_terminal():  # before minutes of generating what cannot be shown
        say(NO_TERMINAL)
        return EXIT_UNREADABLE
    if nodes < 2:
        say("ari-mem-tui demo: --nodes must be at least 2")
        return EXIT_UNREADABLE
    if entries is not None and entries < 0:
        say("ari-mem-tui demo: --entries must be 0 or more")
        return EXIT_UNREADABLE
    if entries is not None and args.out is None:
        say("ari-mem-tui demo: --entries needs --out (the cache holds default sizes only)")
        return EXIT_UNREADABLE
    record = demo_recorder(args, entries if entries is not None else ENTRIES_PER_NODE * nodes)

    def make(record: object | None) -> Path:
        if args.out is not None:
            return write_demo(
                Path(args.out), nodes=nodes, seed=seed, entries=entries, record=record
            )
        return demo_checkpoint(nodes=nodes, seed=seed, record=record)

    try:
        try:
            path = make(record)
        except RecorderUnavailable as exc:
            say(
                f"ari-mem-tui demo: {exc}; its start-up searches keep the keyword stand-in's ranking"
            )
            path = make(None)
    except DemoTargetError as exc:
        say(f"ari-mem-tui demo: {exc}")
        return EXIT_UNREADABLE
    if args.out is not None:
        print(summary(path))
        return EXIT_OK
    try:
        import ari_mem_tui.tui.app  # noqa: F401  (Textual may be missing from a slim install)
    except ImportError:
        print(summary(path))
        return EXIT_OK
    args.checkpoint = path
    return cmd_open(args)


__all__ = [
    "cmd_audit",
    "cmd_compare",
    "cmd_demo",
    "cmd_export",
    "cmd_health",
    "cmd_letta_restore",
    "cmd_open",
    "cmd_runs",
    "cmd_saw",
    "cmd_schema",
    "cmd_serve",
    "cmd_summary",
    "cmd_writes",
    "letta_options",
]
