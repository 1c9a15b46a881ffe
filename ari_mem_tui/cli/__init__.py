"""`ari-mem-tui`: the TUI by default, and the headless commands that script everything it shows.

Each subcommand is a thin shell over a library function, so the TUI and the CLI share one logic.
Imports are lazy: `ari-mem-tui demo --out` must not pay for Textual or onnxruntime.
"""

# ruff: noqa: PLC0415  (the lazy imports above: each command loads only what it needs)

from __future__ import annotations

import argparse
import atexit
import contextlib
import difflib
import os
import sys
import threading
from pathlib import Path
from typing import NoReturn

from ari_mem_tui import __version__
from ari_mem_tui.cli.exits import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    EXIT_UNREADABLE,
)
from ari_mem_tui.cli.options import DEFAULT_LIMIT
from ari_mem_tui.letta.options import DEFAULT_TIMEOUT
from ari_mem_tui.run import EMBEDDERS, LOCAL_EMBEDDERS
from ari_mem_tui.search.run_model import DEFAULT_DEADLINE, KEY_ENV


def add_letta_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("live Letta server (optional)")
    group.add_argument(
        "--letta-url",
        default=os.environ.get("LETTA_BASE_URL") or None,
        help="read memory and rankings from this Letta server (default: $LETTA_BASE_URL)",
    )
    group.add_argument(
        "--letta-api-key",
        default=os.environ.get("LETTA_API_KEY") or None,
        help="API key for the server (default: $LETTA_API_KEY); never printed",
    )
    group.add_argument("--letta-agent", help="agent name or id (default: ari_agent_<hash>)")
    group.add_argument(
        "--letta-timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT,
        help="seconds one call to the server may take in all, however it trickles"
        f" (default {DEFAULT_TIMEOUT:g})",
    )
    group.add_argument(
        "--checkpoint-hash",
        help="the run's 12-hex checkpoint hash, for a checkpoint copied from where it ran",
    )
    group.add_argument(
        "--no-letta",
        action="store_true",
        help="ignore $LETTA_BASE_URL and use the checkpoint's own files",
    )


MAX_HITS = 200  # as the TUI's limit box: ARI asks for 5 (40 in the paper pipeline's search)


def hits_limit(text: str) -> int:
    """`--limit`: a number of hits ARI could ask for, said plainly when it is not one (0 and
    negative numbers used to fall back to 5 and 1 without a word)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_HITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hits from 1 to {MAX_HITS}")
    return value


def seconds(text: str) -> float:
    """A time budget: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _what_if_settings(text: str) -> str:
    """`--what-if`: checked here (argparse says what is wrong), read over `--limit` later."""
    from ari_mem_tui.what_if import SettingsError, parse_settings

    try:
        parse_settings(text)
    except SettingsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _limit_setting(text: str) -> tuple[str, int]:
    from ari_mem_tui.checkpoint.limits import parse_setting

    try:
        return parse_setting(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


CHECKPOINT_HELP = (
    "the run's checkpoint folder: where ARI wrote tree.json, memory_backup.jsonl.gz and"
    " memory_access.jsonl (its checkpoints/<run_id>/)"
)
EMBEDDER_HELP = (
    "the local ranker of replayed searches: auto (default: the run's own where known, i.e. ARI's"
    " in-memory rule for a run that backend recorded, else minilm), minilm (the first use over a"
    " run computes its vectors, ~140 texts/s, then cached), bm25 (lexical, at once), in-memory"
    " (ARI's in-memory backend rule)"
)
RUN_EMBEDDER_HELP = (
    "; or run: the run's own embedding model through its endpoint, ranked as its Letta server"
    " ranked (SENDS every memory text with ARI's footer, and the queries, to that endpoint;"
    " never a default)"
)


NODE_HELP = (
    "a node: its id or short id (the last 8 characters, as the tree shows it), else a unique"
    " start of either (node_ may be left out), else a unique part; any case. An ambiguous one"
    " lists the candidates"
)


def add_checkpoint_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", type=Path, metavar="CKPT", help=CHECKPOINT_HELP)


def add_embedder_option(parser: argparse.ArgumentParser) -> None:
    """--embedder among the local rankers (nothing is sent anywhere)."""
    parser.add_argument("--embedder", choices=LOCAL_EMBEDDERS, default=None, help=EMBEDDER_HELP)


def add_ranker_options(parser: argparse.ArgumentParser) -> None:
    """--embedder, and the run's embedding model behind `--embedder run` (the one ranker that
    sends anything: only when asked for, here or by the config file's "embedder": "run")."""
    parser.add_argument(
        "--embedder", choices=EMBEDDERS, default=None, help=EMBEDDER_HELP + RUN_EMBEDDER_HELP
    )
    group = parser.add_argument_group(
        "the run's embedding model (--embedder run)",
        f"The API key is read from ${KEY_ENV} only (never a flag, never printed).",
    )
    group.add_argument(
        "--embed-url",
        help="OpenAI-compatible endpoint (POST URL/embeddings); default: from the run's"
        " embedding handle (settings.json, or the agent's with --letta-url)",
    )
    group.add_argument("--embed-model", help="model name sent; default: the handle's")
    group.add_argument(
        "--embed-deadline",
        type=seconds,
        default=DEFAULT_DEADLINE,
        help=f"seconds for every vector the run needs, retries included (default"
        f" {DEFAULT_DEADLINE:g}); past it the local ranker answers",
    )


def add_export_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--export-dir",
        type=Path,
        help="where `e` writes dossiers (default: $ARI_MEM_TUI_EXPORT_DIR, else the config"
        " file's export_dir, else the user's data dir, e.g. ~/.local/share/ari-mem-tui/dossiers)",
    )


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    from ari_mem_tui.checkpoint.limits import LIMITS

    names = ", ".join(f"{limit.name} ({limit.default})" for limit in LIMITS.values())
    parser.add_argument(
        "--max",
        action="append",
        default=[],
        type=_limit_setting,
        metavar="NAME=N",
        help=f"raise or lower a limit on hostile input (repeatable): {names};"
        " also $ARI_MEM_TUI_MAX_<NAME>; see README, Limits",
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """What a command that replays a search takes: the ranker, a Letta server, the limits."""
    add_ranker_options(parser)
    add_letta_options(parser)
    add_limit_options(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ari-mem-tui",
        description="Browse the memory of an ARI run: what each node saw, and why.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p_open = sub.add_parser("open", help="open the TUI on a checkpoint (the default command)")
    p_open.add_argument(
        "checkpoint", type=Path, metavar="CKPT|DIR", help=CHECKPOINT_HELP + ", or a workspace"
    )
    p_open.add_argument(
        "node",
        nargs="?",
        metavar="NODE",
        help=NODE_HELP + "; by default on"
        " the first node with an audit finding, else the deepest completed node on the"
        " best-scoring lineage",
    )
    add_ranker_options(p_open)
    add_export_option(p_open)
    add_letta_options(p_open)
    add_limit_options(p_open)

    p_demo = sub.add_parser(
        "demo", help="generate the demo checkpoint and open it (with --out: write it and exit)"
    )
    p_demo.add_argument("--out", type=Path, help="write the checkpoint here and exit (no UI)")
    p_demo.add_argument("--nodes", type=int, default=40, help="number of nodes (default 40)")
    p_demo.add_argument("--entries", type=int, default=None, help="approximate entry count")
    p_demo.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    add_embedder_option(p_demo)
    p_demo.add_argument(
        "--recordings",
        choices=("auto", "minilm", "keywords"),
        default="auto",
        help="rank the recorded start-up searches with MiniLM, the default replay ranker, as of"
        " each read (once, ~140 texts/s; its vectors are cached for the TUI), or with the"
        " generator's instant keyword stand-in; auto: MiniLM up to 10,000 entries",
    )
    add_export_option(p_demo)

    p_saw = sub.add_parser(
        "saw",
        help="print what a node saw: its replayed search and context",
        description=(
            "What NODE saw at its start: ARI's start-up search replayed over the pool as of "
            "the node's start (entries written before it), with diagnostics, the recorded "
            "search beside it, and the context tiers. With the default MiniLM ranker a cold "
            "vector cache is filled first: one pass over every distinct memory text, about "
            "140 texts/s on two idle cores (a 5,000-entry run: ~35 s; 200,000: ~25 min), "
            "progress on stderr; cached afterwards. --embedder bm25 answers at once."
        ),
    )
    add_checkpoint_arg(p_saw)
    p_saw.add_argument("node", metavar="NODE", help=NODE_HELP)
    p_saw.add_argument("--json", action="store_true", help="machine-readable output")
    p_saw.add_argument("--query", help="search with this query (query source: custom)")
    p_saw.add_argument(
        "--why",
        metavar="ENTRY",
        help="why NODE did (not) see this entry (an entry id, a passage id or a unique part of"
        " its text): its start-up search step by step, the first failing step first, with"
        " its numbers; for a hit, its rank, score and the next entry out",
    )
    p_saw.add_argument(
        "--query-from",
        choices=["start", "now", "custom", "eval_summary"],
        default=None,
        help=(
            "start: the node's eval_summary at its start, i.e. its direction, ARI's own query "
            "(default); now: its eval_summary today (after evaluation, the verdict); custom: "
            "--query (eval_summary is an old name for now)"
        ),
    )
    p_saw.add_argument(
        "--limit",
        type=hits_limit,
        default=DEFAULT_LIMIT,
        help=f"number of hits, 1 to {MAX_HITS} (ARI: {DEFAULT_LIMIT})",
    )
    pool = p_saw.add_mutually_exclusive_group()
    pool.add_argument(
        "--as-of",
        action="store_true",
        help="rank the pool as of the node's start (the default; kept for scripts)",
    )
    pool.add_argument(
        "--now",
        action="store_true",
        help="rank today's whole pool instead, later writes included",
    )
    add_ranker_options(p_saw)
    add_letta_options(p_saw)
    add_limit_options(p_saw)

    p_audit = sub.add_parser(
        "audit",
        help="audit a run: scope leaks, violations, second-hand leaks, rejected writes (exit 1"
        " on leaks or violations)",
        description=(
            "Audit a run: reads that returned memory from outside the reader's lineage (leaks),"
            " searches whose scope is not the reader's lineage (scope violations), reads of an"
            " entry that kept a leak's result (second-hand leaks), writes ARI's copy-on-write"
            " guard rejected, and problems in the files. Exit status: 0 no leaks and no scope"
            " violations, 1 some (rejected writes alone do not count: they are the guard"
            " working; nor do second-hand leaks: each follows from a leak), 2 the run cannot"
            " be read."
        ),
    )
    add_checkpoint_arg(p_audit)
    p_audit.add_argument("--json", action="store_true", help="machine-readable output")
    add_letta_options(p_audit)
    add_limit_options(p_audit)

    p_load = sub.add_parser(
        "summary",
        help="load a checkpoint and print what it holds, and how far its replays reproduce"
        " its recorded searches",
    )
    add_checkpoint_arg(p_load)
    p_load.add_argument("--json", action="store_true", help="machine-readable output")
    add_ranker_options(p_load)
    add_letta_options(p_load)
    add_limit_options(p_load)

    p_runs = sub.add_parser(
        "runs", help="list the runs of a workspace (or its checkpoints/ folder), newest first"
    )
    p_runs.add_argument(
        "dir", type=Path, nargs="?", help="workspace folder (default: recently opened runs)"
    )
    p_runs.add_argument("--json", action="store_true", help="machine-readable output")
    p_runs.add_argument(
        "--scan",
        action="store_true",
        help="make the summary (leaks, scope violations, rejected writes, starved nodes) of"
        " every run that has none yet, reading each once, in parallel over the cores",
    )
    p_runs.add_argument(
        "--jobs", type=int, default=None, help="processes for --scan (default: one per core)"
    )
    add_limit_options(p_runs)

    p_health = sub.add_parser(
        "health",
        help="memory health of a run: nodes starved of their ancestors' memory (exit 1 if any)",
    )
    add_checkpoint_arg(p_health)
    p_health.add_argument("--json", action="store_true", help="machine-readable output")
    p_health.add_argument(
        "--limit",
        type=hits_limit,
        default=DEFAULT_LIMIT,
        help=f"hits per search, 1 to {MAX_HITS} (ARI: {DEFAULT_LIMIT})",
    )
    p_health.add_argument(
        "--all-entries", action="store_true", help="with --json: every entry's retrievals"
    )
    p_health.add_argument(
        "--what-if",
        type=_what_if_settings,
        metavar="SETTINGS",
        help="replay every node's start-up search under other memory settings too, beside the"
        " run's own: key=value,… of limit (1-200), overfetch, top_k (default max(overfetch,"
        " 40*limit)), ranker (own, minilm, bm25, in-memory), pool (start, now), drop"
        " (tool-auto: ARI's automatic `Tool …` entries, react: ReAct steps; several with +),"
        " e.g. limit=10,top_k=400,ranker=bm25,drop=tool-auto; what it leaves out is --limit's"
        " and ARI's. Exit 1 when a node is starved under them",
    )
    add_ranker_options(p_health)
    add_letta_options(p_health)
    add_limit_options(p_health)

    p_compare = sub.add_parser(
        "compare",
        help="two nodes side by side: their start-up searches and context (the TUI's m, then c)",
    )
    add_checkpoint_arg(p_compare)
    p_compare.add_argument("node_a", metavar="A", help=NODE_HELP)
    p_compare.add_argument("node_b", metavar="B", help="the other node, named as A is")
    p_compare.add_argument("--json", action="store_true", help="machine-readable output")
    add_run_options(p_compare)

    p_export = sub.add_parser(
        "export",
        help="write a node's dossier (Markdown + JSON), as the TUI's e writes it; or with"
        " --parquet DIR a run, or every run of a workspace, as Parquet tables",
    )
    p_export.add_argument(
        "checkpoint",
        type=Path,
        metavar="RUN|WORKSPACE",
        help=CHECKPOINT_HELP + "; with --parquet also a workspace (or its checkpoints/ folder)",
    )
    p_export.add_argument(
        "node", metavar="NODE", nargs="?", help=NODE_HELP + " (the dossier's; none with --parquet)"
    )
    p_export.add_argument(
        "--parquet",
        type=Path,
        metavar="DIR",
        help="write DIR/<run id>/{nodes,entries,reads,search_results,findings,health}.parquet"
        " from the run's files (docs/schema/parquet.md; needs the parquet extra: pip install"
        " 'ari-mem-tui[parquet]')",
    )
    p_export.add_argument(
        "--out",
        type=Path,
        help="the folder (default: as e, $ARI_MEM_TUI_EXPORT_DIR, else the config file's"
        " export_dir, else the user's data dir; never the checkpoint)",
    )
    p_export.add_argument("--json", action="store_true", help="name the files as JSON")
    add_run_options(p_export)

    p_writes = sub.add_parser(
        "writes", help="the copy-on-write log of a node, or of the whole run (the Writes tab)"
    )
    add_checkpoint_arg(p_writes)
    p_writes.add_argument("node", metavar="NODE", nargs="?", help=NODE_HELP + "; none: the run")
    out = p_writes.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="machine-readable output")
    out.add_argument(
        "--csv", action="store_true", help="the table's rows as CSV, every column whole"
    )
    p_writes.add_argument(
        "--filter", default="", metavar="TEXT", help="only rows holding TEXT (!TEXT: without)"
    )
    p_writes.add_argument(
        "--sort",
        metavar="COLUMN",
        help="sort by a column: time, result, by, tool, reason, source, text (as S in the TUI)",
    )
    p_writes.add_argument("--desc", action="store_true", help="with --sort: the largest first")
    add_letta_options(p_writes)
    add_limit_options(p_writes)

    p_schema = sub.add_parser(
        "schema",
        help="the JSON Schema of an output (summary, saw, audit, runs, health, dossier, compare,"
        " writes, export)",
        description=(
            "Print the JSON Schema of the output NAME (what its --json holds, field by field);"
            " without NAME, list the names. docs/schema/NAME.json holds the same text."
        ),
    )
    p_schema.add_argument("name", nargs="?", metavar="NAME", help="an output's name")

    p_serve = sub.add_parser(
        "serve", help="serve the TUI on a run or workspace to a web browser (textual-serve)"
    )
    p_serve.add_argument(
        "checkpoint", type=Path, metavar="CKPT|DIR", help=CHECKPOINT_HELP + ", or a workspace"
    )
    p_serve.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine)"
    )
    p_serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    add_embedder_option(p_serve)
    add_limit_options(p_serve)

    p_restore = sub.add_parser(
        "letta-restore",
        help="WRITES to a Letta server: load a checkpoint's memory backup into an agent",
    )
    add_checkpoint_arg(p_restore)
    p_restore.add_argument("--letta-url", default=os.environ.get("LETTA_BASE_URL") or None)
    p_restore.add_argument("--letta-api-key", default=os.environ.get("LETTA_API_KEY") or None)
    p_restore.add_argument("--agent", help="agent name (default: ari_agent_<hash>)")
    p_restore.add_argument(
        "--checkpoint-hash",
        help=(
            "the run's own hash (of the path where it ran): footers keep it, byte for byte, so"
            " Letta embeds and ranks the passages as ARI's; default: this path's hash"
        ),
    )
    p_restore.add_argument(
        "--reencode-footers",
        action="store_true",
        help=(
            "write this path's hash into the footers instead of --checkpoint-hash's (warns:"
            " the text Letta embeds changes, and rankings can differ from the recording)"
        ),
    )
    p_restore.add_argument(
        "--no-verify",
        action="store_true",
        help="skip reading every passage back to check it is on the server as written",
    )
    p_restore.add_argument(
        "--merge", action="store_true", help="add to an agent that already holds passages"
    )
    p_restore.add_argument(
        "--embedding",
        default="openai/text-embedding-3-small",
        help="embedding handle for a new agent (ARI's default)",
    )
    add_limit_options(p_restore)
    return parser


def entry() -> NoReturn:
    """The process's entry (`ari-mem-tui`, `python -m ari_mem_tui`): `main`, then the end of
    the process without the interpreter's teardown, which frees every object one by one
    (0.3 s after a 10k-node first open's answer; the kernel takes the heap back at once), once
    the exit handlers ran and the streams are flushed. With a thread still alive (it would be
    cut off), the usual end."""
    code = main()
    if threading.active_count() > 1:
        raise SystemExit(code)
    atexit._run_exitfuncs()  # (logging's flush, multiprocessing's and weakref's finalizers)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # (a reader gone, a stream closed)
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    # numpy's OpenBLAS starts a thread per core when imported: ~40 ms of a small run's `saw` on
    # two cores, for nothing (what we multiply is vectors and exact integers: no thread count
    # changes a result, and onnxruntime has its own). A user's own setting is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # `ari-mem-tui CKPT` means `ari-mem-tui open CKPT`
    first = 1 if argv[:1] == ["--debug"] else 0
    if len(argv) > first and not argv[first].startswith("-") and argv[first] not in COMMANDS:
        word = argv[first]
        close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.7)
        if close and not Path(word).exists():  # `summry CKPT` is a typo, not a folder
            from ari_mem_tui.render.text import say

            say(f"unknown command {word!r}: did you mean {close[0]!r}? (see --help)")
            return EXIT_UNREADABLE
        argv.insert(first, "open")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    if hasattr(args, "embedder"):
        from ari_mem_tui.cli.options import settle_embedder

        settle_embedder(args)  # the flag, else the config file's choice, else auto
    if getattr(args, "max", None):
        from ari_mem_tui.checkpoint.limits import apply

        apply(args.max)  # into the environment: a served TUI's child process reads it too
    code = _answer(args)
    _say_cache_notes()
    return _after_output(args, code)


def _answer(args: argparse.Namespace) -> int:
    """The command, its answer written and stdout closed (cli/after_output.py); its exit code."""
    from ari_mem_tui.cli.after_output import close_stdout
    from ari_mem_tui.letta.errors import LettaUnavailable
    from ari_mem_tui.render.text import say

    try:
        code = _dispatch(args)
        close_stdout()  # the answer is out: a pipe's reader is not kept waiting for the rest
        return code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `… --json | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return EXIT_PIPE
    except LettaUnavailable as exc:  # server down, not Letta, key refused, agent missing ...
        say(exc)
        return EXIT_UNREADABLE
    except Exception as exc:  # a bug of ours: one line and exit 3, not a traceback
        if args.debug:
            raise
        _internal(exc)
        return EXIT_INTERNAL


def _after_output(args: argparse.Namespace, code: int) -> int:
    """What the command left until its answer was out (the run index of a first open), in a
    process of its own where it can be (cli/after_output.py `detach`); not after Ctrl+C or a
    bug."""
    from ari_mem_tui.cli.after_output import detach, forget

    if code in (EXIT_INTERRUPTED, EXIT_INTERNAL):
        forget()
        return code
    if detach(lambda: _work_left(args, EXIT_OK)):
        return code
    return _work_left(args, code)


def _work_left(args: argparse.Namespace, code: int) -> int:
    """Run what the command left; its own failure is a bug of ours: one line, exit 3."""
    from ari_mem_tui.cli.after_output import forget, run_later

    try:
        run_later()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.debug:
            raise
        _internal(exc)
        return EXIT_INTERNAL
    finally:
        forget()
        _say_cache_notes()
    return code


def _internal(exc: BaseException) -> None:
    from ari_mem_tui.render.text import say

    what = f"{type(exc).__name__}: {exc}"[:300]
    say(f"internal error: {what} (please report it; --debug shows the traceback)")


def _say_cache_notes() -> None:
    """What was wrong with the tool's own caches and settings (each rebuilt or ignored), once."""
    from ari_mem_tui.checkpoint.cachefile import take_notes
    from ari_mem_tui.render.text import say

    for note in take_notes():
        say(note)


def _dispatch(args: argparse.Namespace) -> int:
    from ari_mem_tui.cli import commands

    return int(getattr(commands, COMMANDS[args.command])(args))


COMMANDS = {
    "demo": "cmd_demo",
    "summary": "cmd_summary",
    "saw": "cmd_saw",
    "audit": "cmd_audit",
    "letta-restore": "cmd_letta_restore",
    "runs": "cmd_runs",
    "health": "cmd_health",
    "serve": "cmd_serve",
    "schema": "cmd_schema",
    "open": "cmd_open",
    "compare": "cmd_compare",
    "export": "cmd_export",
    "writes": "cmd_writes",
}
