"""Where a run ran: the checkpoint paths its own files name, each a candidate for its hash.

ARI writes `sha1(str(checkpoint_dir.resolve()))[:12]` (§1.3) into every passage footer, and its
Letta server embedded those texts; a run copied elsewhere hashes differently, and a replay that
rebuilds the footers with the copy's hash ranks other texts. The hash itself is written nowhere,
but the run's files often name the path it ran at (§1.3, read in ARI's source at e41c806):

| where | what ARI writes there | written by |
|---|---|---|
| tree.json `experiment_file` | `str(experiment)`: `<checkpoint>/experiment.md` for a launch from the web UI; whatever the user typed for a CLI run | cli/run.py, cli/bfts_loop.py `_save_checkpoint` |
| `ari_run_<ts>.log` | the run's stdout (web-UI launches): a Rich panel `Experiment: <file>`, the closing panel `… Checkpoint: <dir>` and the paper stage's plain `  Checkpoint: <dir>`; Rich wraps a long path over the panel's lines (80 columns when stdout is a file) | cli/run.py, core.py |
| `meta.json` `checkpoint_dir` | `str(<checkpoint>)` for sub-experiments and wizard launches | viz/api_experiment.py |
| `ari.log` | JSON lines; the paper stage logs `Starting paper pipeline (config_path=…, checkpoint=<dir>)` | core.py |
| trace_log tool arguments | the node's work dir `<root>/experiments/<run_id>/<node>`, which the prompt tells the model to `cd` into; the checkpoint is then `<root>/checkpoints/<run_id>` | agent/loop.py, paths.py |

Each is a guess until a replay checks it (search/run_hash.py): candidates are only gathered
here. A relative path cannot be resolved without the run's working directory: it is no
candidate. Every file is read as any input is (regular files only, within the size limits),
and what cannot be read is skipped: a candidate is worth nothing that a problem would cost.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ari_mem_tui.checkpoint.limits import current
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.origin import THIS_PATH, Candidate

HEAD_BYTES = 1 << 16  # tree.json: save_tree_json writes run_id, then experiment_file, first
TRACE_NODES = 200  # trace logs looked at for a work dir, at most (the first names it, mostly)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\([AB]")
PANEL_LINE = re.compile(r"^│ (.*) │$")  # a Rich panel's content line (one space of padding)
LABELLED = re.compile(r"(?:^|\s)(Experiment|Checkpoint): ?(\S*)\s*$")
PAPER_START = re.compile(r"Starting paper pipeline \(config_path=.*, checkpoint=(.+)\)$")
WORK_DIR = re.compile(r"(/[^\s\"'\\`;|&<>]*?)/experiments/[^/\s\"'\\`;|&<>]+/node_[0-9A-Za-z_]+")


def path_hash(path: str) -> str:
    """ARI's `_ckpt_hash` of a path as written in a file of the run: the path is where the run
    ran, resolved there, so it is hashed as it is (resolving it here would follow this
    machine's symlinks)."""
    return hashlib.sha1(str(PurePosixPath(path)).encode("utf-8")).hexdigest()[:12]


def hash_candidates(ckpt: Checkpoint, traces: bool = True) -> list[Candidate]:
    """This path's hash, then each path the run's files name (see the module doc), one per
    hash, in that order; `traces=False` leaves out the trace logs (the one costly source)."""
    found = [Candidate(hash=checkpoint_hash(ckpt.path), source=THIS_PATH, path=str(ckpt.path))]
    sources = [_tree_file, _run_logs, _meta_file, _ari_log]
    if traces:
        sources.append(_trace_work_dirs)
    seen = {found[0].hash}
    for source in sources:
        for candidate in source(ckpt):
            if candidate.hash not in seen:
                seen.add(candidate.hash)
                found.append(candidate)
    return found


def _candidate(path: str | None, source: str) -> Candidate | None:
    """The candidate of an absolute path (a relative one names no place: None)."""
    if not path or not path.startswith("/") or "\x00" in path:
        return None
    clean = str(PurePosixPath(path))
    return Candidate(hash=path_hash(clean), source=source, path=clean)


def _experiment_parent(path: str | None, source: str) -> Candidate | None:
    """A launch from ARI's web UI runs `<checkpoint>/experiment.md`: its folder."""
    if not path or not path.startswith("/"):
        return None
    return _candidate(str(PurePosixPath(path).parent), source)


# ---------------------------------------------------------------- the sources


def _tree_file(ckpt: Checkpoint) -> Iterator[Candidate]:
    """tree.json's `experiment_file`, from its head (ARI writes it second, after run_id)."""
    head = _read_head(Path(ckpt.path) / "tree.json", HEAD_BYTES)
    match = re.search(rb'"experiment_file"\s*:\s*("(?:[^"\\]|\\.)*")', head)
    if match is None:
        return
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return
    if isinstance(value, str):
        found = _experiment_parent(value, "tree.json experiment_file")
        if found is not None:
            yield found


def _run_logs(ckpt: Checkpoint) -> Iterator[Candidate]:
    """`ari_run_<ts>.log`: `Checkpoint:` lines name the folder, `Experiment:` its file."""
    for log in _files(Path(ckpt.path), "ari_run_*.log"):
        lines = [ANSI.sub("", line) for line in _lines(log)]
        for label, value in panel_values(lines):
            if label == "Checkpoint":
                found = _candidate(value, f"{log.name} Checkpoint")
            else:
                found = _experiment_parent(value, f"{log.name} Experiment")
            if found is not None:
                yield found


def panel_values(lines: list[str]) -> Iterator[tuple[str, str]]:
    """(label, value) of each `Experiment:` / `Checkpoint:` line, a value Rich wrapped over a
    panel's lines joined again: a path too long for its line starts on the next one, and each
    full line of it (no space left before the border) goes on to the next."""
    rows = [_panel_content(line) for line in lines]
    for i, (content, width) in enumerate(rows):
        match = LABELLED.search(content)
        if match is None:
            continue
        label, value = match.group(1), match.group(2)
        at = i
        if not value and width and i + 1 < len(rows) and rows[i + 1][1]:
            at, value = i + 1, rows[i + 1][0].strip()
        while width and at + 1 < len(rows) and _full(rows[at]) and rows[at + 1][1]:
            more = rows[at + 1][0].strip()
            if not more or " " in more:
                break
            at += 1
            value += more
        if value:
            yield label, value


def _panel_content(line: str) -> tuple[str, int]:
    """(content, inner width) of a panel line; (the line, 0) of any other line."""
    line = line.rstrip("\r\n")
    match = PANEL_LINE.match(line)
    if match is None:
        return line, 0
    return match.group(1), len(match.group(1))


def _full(row: tuple[str, int]) -> bool:
    content, width = row
    return bool(width) and len(content.rstrip()) == width


def _meta_file(ckpt: Checkpoint) -> Iterator[Candidate]:
    data = _read_head(Path(ckpt.path) / "meta.json", current().config_bytes)
    try:
        value = json.loads(data) if data else None
    except (ValueError, RecursionError):
        return
    if isinstance(value, dict) and isinstance(value.get("checkpoint_dir"), str):
        found = _candidate(value["checkpoint_dir"], "meta.json checkpoint_dir")
        if found is not None:
            yield found


def _ari_log(ckpt: Checkpoint) -> Iterator[Candidate]:
    """ari.log's paper-stage line (JSON lines by default; plain text with `format: text`)."""
    for line in _lines(Path(ckpt.path) / "ari.log"):
        if "Starting paper pipeline" not in line:
            continue
        message = line.strip()
        if message.startswith("{"):
            try:
                record = json.loads(message)
            except (ValueError, RecursionError):
                continue
            message = record.get("msg", "") if isinstance(record, dict) else ""
        match = PAPER_START.search(str(message).strip())
        if match is not None:
            found = _candidate(match.group(1), "ari.log checkpoint=")
            if found is not None:
                yield found


def _trace_work_dirs(ckpt: Checkpoint) -> Iterator[Candidate]:
    """A node's work dir in its tool calls: `<root>/experiments/<run>/<node>` is run from
    `<root>/checkpoints/<run_id>` (paths.py), the run id tree.json gives."""
    run_id = ckpt.run_id or Path(ckpt.path).name
    looked = 0
    for node in ckpt.nodes.values():
        lines = node.trace_lines()
        if not lines:
            continue
        looked += 1
        for line in lines:
            if not line.startswith("→ "):
                continue
            match = WORK_DIR.search(line)
            if match is not None:
                root = match.group(1)
                found = _candidate(f"{root}/checkpoints/{run_id}", f"trace_log of {node.id}")
                if found is not None:
                    yield found
                    return
        if looked >= TRACE_NODES:
            return


# ---------------------------------------------------------------- reading, warily


def _files(folder: Path, pattern: str) -> list[Path]:
    try:
        return sorted(folder.glob(pattern))
    except OSError:
        return []


def _open_regular(path: Path) -> int | None:
    """A read-only descriptor of `path` when it is a regular file (never a FIFO that would block
    or a device that never ends), else None."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _read_head(path: Path, size: int) -> bytes:
    fd = _open_regular(path)
    if fd is None:
        return b""
    with open(fd, "rb", buffering=0) as handle:
        try:
            return handle.read(size) or b""
        except OSError:
            return b""


def _lines(path: Path) -> Iterator[str]:
    """The lines of a text file, within the file-mib limit, each within line-mib (a longer
    one is cut there); undecodable bytes as U+FFFD."""
    fd = _open_regular(path)
    if fd is None:
        return
    limits = current()
    budget = limits.file_bytes
    with open(fd, "rb") as handle:
        while budget > 0:
            try:
                raw = handle.readline(min(limits.line_bytes, budget))
            except OSError:
                return
            if not raw:
                return
            budget -= len(raw)
            yield raw.decode("utf-8", "replace")
