"""Numbers past every range in a run's files (issue 31 item 2).

A JSON number can be any finite float (1e308, -1e308, 5e-324), an integer past a float's range
(under the 4,300-digit limit) or, as Python's json writes them, NaN and Infinity. Each case
here is a run's file damaged as hostile input damages it, and the command that failed on it.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.words import fmt_score
from ari_mem_tui.search.backends import recorded_backend
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.replay import replay
from tests.fuzz.damage import past_range
from tests.hostile_helpers import clean_stderr, fingerprint, run_cli

BIG = 1e308  # finite, but its hundredths are not: round(1e308 * 100) raised OverflowError
HUGE = 10**400  # an integer past a float's range (1.8e308), under the 4,300-digit limit


def strict_json(text: str) -> object:
    """JSON as a strict reader takes it: NaN and Infinity are refused."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is no JSON")

    return json.loads(text, parse_constant=refuse)


def with_one_score(small_ckpt: Path, dest: Path, score: float) -> tuple[Path, str]:
    """The small demo with `score` as the first result of one start-up search (a node's own,
    not an inheritance read); returns the run and the query of that search."""
    shutil.copytree(small_ckpt, dest)
    path = dest / "memory_access.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    event = next(
        e
        for e in events
        if e.get("op") == "read"
        and e.get("collection") == "node_scope"
        and e.get("results")
        and not e["query"].startswith("inherit")
        and not e["node_id"].endswith("_root")
    )
    event["results"][0]["score"] = score
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return dest, event["query"]


def test_a_score_past_a_hundredths_range_is_off_the_grid() -> None:
    assert recorded_backend([BIG, 0.99]) == "in_memory"  # was OverflowError
    assert recorded_backend([-BIG]) == "letta-substring"
    assert recorded_backend([1.0, 0.99, 0.98]) == "letta"
    assert fmt_score(BIG) == "1e+308"
    assert fmt_score(-BIG) == "-1e+308"
    assert fmt_score(0.99) == "0.99"
    assert fmt_score(0.125) == "0.125"


def test_one_huge_recorded_score_leaves_every_replay_working(
    small_ckpt: Path, tmp_path: Path
) -> None:
    """One access-log result with `"score": 1e308` made saw (every node) and health exit 3
    ("internal error: OverflowError", round(s * 100) judging the recorded backend). The score
    is kept as recorded: in saw's JSON as the number, in its text in short form."""
    ckpt, query = with_one_score(small_ckpt, tmp_path / "run", BIG)
    before = fingerprint(ckpt)
    loaded = load_checkpoint(ckpt)
    ranker = make_ranker(loaded, "bm25", cache_dir=tmp_path / "cache")
    shown = [
        node_id
        for node_id in loaded.nodes
        if (found := replay(loaded, node_id, ranker).recorded) is not None and found.query == query
    ]
    assert len(shown) == 1, shown
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    saw = ("saw", str(ckpt), shown[0], "--embedder", "bm25", "--no-letta")
    proc = run_cli(*saw, "--json", env=env)
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr[-2000:]
    recorded = strict_json(proc.stdout)["recorded"]  # type: ignore[index]
    assert recorded["hits"][0]["score"] == BIG
    assert recorded["backend"] == "in_memory"  # no Letta grid holds it
    proc = run_cli(*saw, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1e+308" in proc.stdout
    proc = run_cli("health", str(ckpt), "--embedder", "bm25", "--no-letta", env=env)
    clean_stderr(proc.stderr)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert fingerprint(ckpt) == before


def test_a_recent_run_opened_past_a_floats_range_is_left_out(
    small_ckpt: Path, tmp_path: Path
) -> None:
    """recent.json with `"opened": 1e400` written out as an integer made `runs` (no folder)
    exit 3 (math.isfinite of an int past a float's range: OverflowError). That row is left
    out as any row without a time is; the others are listed."""
    config = tmp_path / "config"
    config.mkdir()
    rows = [
        {"path": str(small_ckpt), "opened": 1780000000.5},
        {"path": str(tmp_path / "gone"), "opened": HUGE},
    ]
    (config / "recent.json").write_text(json.dumps({"runs": rows}))
    proc = run_cli("runs", "--json", env={"ARI_MEM_TUI_CONFIG_DIR": str(config)})
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed = strict_json(proc.stdout)["runs"]  # type: ignore[index]
    assert [r["path"] for r in listed] == [str(small_ckpt)]


def test_a_write_whose_metadata_holds_an_integer_of_4301_digits_leaves_the_run_readable(
    small_ckpt: Path, tmp_path: Path
) -> None:
    """Found by the fuzzer: one access-log write with `"metadata": {"step": 1000…0}` (4,301
    digits, one past Python's limit) made `summary` exit 3 (`internal error: ValidationError:
    Integer value out of range`) and every other command say `cannot read RUN` (exit 2): the
    reader keeps the line, but joining the write to its backup entry decoded its metadata
    again with msgspec alone. The run is read, its writes all counted."""
    dest = tmp_path / "run"
    shutil.copytree(small_ckpt, dest)
    path = dest / "memory_access.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"op": "write"' in line and b'"step": ' in line)
    lines[at] = re.sub(rb'"step": \d+', b'"step": 1' + b"0" * 4300, lines[at], count=1)
    path.write_bytes(b"".join(lines))
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    proc = run_cli("summary", str(dest), "--json", env=env)
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr[-2000:]
    counts = strict_json(proc.stdout)["counts"]  # type: ignore[index]
    assert counts["write_events"] == sum(1 for line in lines if b'"op": "write"' in line)
    proc = run_cli("health", str(dest), "--embedder", "bm25", env=env)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]


PAST_RANGE = [1e308, -1e308, HUGE, 2**64, 5e-324]


def every_number_past_range(dest: Path) -> Path:
    """The fuzzer's ARI-like seed run (in-memory backend, a rotated access log, the files ARI
    writes beside the memory) with every number of its JSON files, access logs and backup past
    a range in turn (as benchmarks/bench_hostile.py's numbers-past-range)."""
    from tests.ari_like import generate_in_memory
    from tests.fuzz.seeds import _extra_files

    generate_in_memory(dest)
    _extra_files(dest, rotate=True)
    count = [0]
    for name in (
        "tree.json",
        "nodes_tree.json",
        "idea.json",
        "settings.json",
        "meta.json",
        "results.json",
    ):
        path = dest / name
        if path.exists():
            path.write_text(json.dumps(past_range(json.loads(path.read_text()), PAST_RANGE, count)))
    for log in (dest / "memory_access.jsonl", dest / "memory_access.1.jsonl"):
        events = [
            past_range(json.loads(line), PAST_RANGE, count) for line in log.read_text().splitlines()
        ]
        log.write_text("".join(json.dumps(e) + "\n" for e in events))
    backup = dest / "memory_backup.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(backup.read_bytes()).splitlines()]
    body = "".join(json.dumps(past_range(r, PAST_RANGE, count)) + "\n" for r in records)
    backup.write_bytes(gzip.compress(body.encode()))
    return dest


async def test_an_entry_both_most_and_never_retrieved_is_two_rows_of_the_health_view(
    tmp_path: Path,
) -> None:
    """Found by the fuzzer's TUI driver: with every number of a run past a range, few entries
    are retrieved, and one retrieved by nobody is in both the Health view's lists (most
    retrieved, never retrieved by a descendant); its rows shared a key and the app crashed
    (DuplicateKey) when the numbers were shown. Each list's row is its own; Enter on either
    opens the entry."""
    from test_tui_health import open_health

    from ari_mem_tui.tui.screens.entry import EntryScreen
    from ari_mem_tui.tui.screens.health import ENTRY_ROWS
    from tests.tui_app_helpers import make_app, press, settle

    run = every_number_past_range(tmp_path / "run")
    app = make_app(run)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        both = {u.entry_id for u in screen.result.top_entries[:ENTRY_ROWS]}
        both &= {u.entry_id for u in screen.result.never_retrieved[:ENTRY_ROWS]}
        assert both, both  # the case: an entry in both lists (this run holds two)
        await press(pilot, "n")
        table = screen.query_one("#health-entries")
        keys = [table.plain_key(k.value) for k in table.rows]
        for entry in both:
            assert f"most|{entry}" in keys and f"never|{entry}" in keys
        entry = min(both)
        table.focus()
        table.move_cursor(row=keys.index(f"never|{entry}"))
        await press(pilot, "enter")
        assert isinstance(app.screen, EntryScreen)
