"""The CLI as people use it (issue 21 §6): node ids as typed, counts that add up, help that says
what a script needs, one mention of a path, and JSON that says what it is."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from ari_mem_tui.model import Checkpoint, Node, NodeRefError
from ari_mem_tui.run import EMBEDDERS, LOCAL_EMBEDDERS
from tests.hostile_helpers import clean_stderr, one_line_error, run_cli

IDS = ["node_9755d4c1", "node_19e0aa07", "node_20ab9100", "node_aa0b0c90", "node_b1c2d3e4"]


def checkpoint_of(ids: list[str]) -> Checkpoint:
    ckpt = Checkpoint(path=Path("."))
    ckpt.nodes = {nid: Node(id=nid) for nid in ids}
    return ckpt


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("node_9755d4c1", "node_9755d4c1"),  # the id
        ("9755d4c1", "node_9755d4c1"),  # the short id, as the tree shows it
        ("9755", "node_9755d4c1"),  # a start of the short id, without node_
        ("NODE_97", "node_9755d4c1"),  # a start of the id, any case
        ("b1", "node_b1c2d3e4"),  # a start beats a part elsewhere (aa0b0c90 holds no b1)
        ("d3e", "node_b1c2d3e4"),  # a unique part
    ],
)
def test_a_node_as_people_type_it(typed: str, meant: str) -> None:
    assert checkpoint_of(IDS).resolve_node(typed) == meant


def test_an_ambiguous_fragment_lists_its_candidates() -> None:
    """`0` used to pick the one id *ending* in 0 although three hold it: several matches are
    listed, at whichever tier they are found."""
    with pytest.raises(NodeRefError) as raised:
        checkpoint_of(IDS).resolve_node("0")
    message = str(raised.value)
    assert message.startswith("'0' matches 3 nodes: ")
    for nid in ("node_19e0aa07", "node_20ab9100", "node_aa0b0c90"):
        assert nid in message
    with pytest.raises(NodeRefError, match="'node_' matches 5 nodes"):
        checkpoint_of(IDS).resolve_node("node_")


def test_a_start_counts_before_a_part() -> None:
    """`9` is the start of one short id (9755d4c1) and a part of three others: the start wins,
    as a prefix does in git; an id merely ending in 9 is never picked over it."""
    ckpt = checkpoint_of([*IDS, "node_55555559"])
    assert ckpt.resolve_node("9") == "node_9755d4c1"
    assert ckpt.resolve_node("5555") == "node_55555559"


def test_saw_with_an_ambiguous_node_lists_it_in_one_line(small_ckpt: Path) -> None:
    line = one_line_error(run_cli("saw", str(small_ckpt), "e", "--embedder", "bm25"))
    assert re.search(r"'e' matches \d+ nodes: node_", line), line
    assert line.endswith("give more of the id")


def test_one_of_a_runs_files_given_for_the_run_names_the_run(
    small_ckpt: Path, tmp_path: Path
) -> None:
    """`ari-mem-tui run/tree.json` (a tab completion too far): the refusal says which folder is
    the run, for the CLI and the TUI alike; any other file is only "a file"."""
    given = small_ckpt / "tree.json"
    hint = f"a file, not a folder; the run is the folder holding it: {small_ckpt}"
    assert hint in one_line_error(run_cli("audit", str(given)))
    assert hint in one_line_error(run_cli(str(given)))
    lone = Path(shutil.copy(given, tmp_path / "copied-tree.json"))
    line = one_line_error(run_cli("audit", str(lone)))
    assert line.endswith("(a file, not a folder)"), line


def test_audit_counts_every_kind_and_its_help_says_when_it_exits_1(small_ckpt: Path) -> None:
    proc = run_cli("audit", str(small_ckpt), "--no-letta")
    assert proc.returncode == 1, proc.stderr
    last = proc.stdout.rstrip().splitlines()[-1]
    assert last == "2 leaks, 1 scope violation, 2 second-hand leaks, 1 rejected write"
    assert "Rejected writes (copy-on-write): 1" in proc.stdout
    help_text = " ".join(run_cli("audit", "--help").stdout.split())
    assert "Exit status: 0 no leaks and no scope violations, 1 some" in help_text
    assert "2 the run cannot be read" in help_text


@pytest.mark.parametrize("command", ["open", "saw", "audit", "summary", "health", "serve"])
def test_every_argument_and_the_embedder_have_help(command: str) -> None:
    text = " ".join(run_cli(command, "--help").stdout.split())
    assert "the run's checkpoint folder: where ARI wrote tree.json" in text
    if command in ("open", "saw", "health"):  # the run's own model may be asked for here
        choices = ",".join(EMBEDDERS)
        assert f"--embedder {{{choices}}} the local ranker of replayed searches" in text
        assert "run" in EMBEDDERS and "or run: the run's own embedding model through its" in text
    if command == "serve":  # a served TUI never sends memory anywhere on its own
        choices = ",".join(LOCAL_EMBEDDERS)
        assert f"--embedder {{{choices}}} the local ranker of replayed searches" in text
        assert "run" not in LOCAL_EMBEDDERS
    if command in ("open", "saw"):
        assert "its id or short id (the last 8 characters" in text


def test_one_root_is_a_root(small_ckpt: Path) -> None:
    proc = run_cli("summary", str(small_ckpt), "--no-letta")
    assert "nodes      8 (1 root)" in proc.stdout


@pytest.mark.parametrize("command", ["summary", "audit", "saw", "health"])
def test_an_error_names_the_path_once(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "no-such-run"
    extra = ("x",) if command == "saw" else ()
    proc = run_cli(command, str(missing), *extra)
    assert proc.returncode == 2
    said = proc.stderr + proc.stdout
    assert said.count(str(missing)) == 1, said  # summary: in its header, then not again
    assert "loaded nothing (no such folder)" in said


def first_hit(small_ckpt: Path) -> str:
    from ari_mem_tui.run import RunOptions, open_run
    from ari_mem_tui.search.replay import replay

    run = open_run(RunOptions(checkpoint=small_ckpt, embedder="bm25", index=False))
    return replay(run.checkpoint, "9755", run.ranker, with_tiers=False).hits[0].entry_id


def every_json(small_ckpt: Path, tmp_path: Path) -> dict[str, dict]:
    ws = tmp_path / "ws"
    shutil.copytree(small_ckpt, ws / "checkpoints" / "20260528191903_run")
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    outputs = {}
    for name, args in {
        "summary": ("summary", str(small_ckpt)),
        "saw": ("saw", str(small_ckpt), "9755", "--embedder", "bm25"),
        "audit": ("audit", str(small_ckpt)),
        "health": ("health", str(small_ckpt), "--embedder", "bm25"),
        "runs": ("runs", str(ws)),
        "compare": ("compare", str(small_ckpt), "9755", "1e2f", "--embedder", "bm25"),
        "writes": ("writes", str(small_ckpt)),
        "export": ("export", str(small_ckpt), "9755", "--embedder", "bm25", "--out", str(tmp_path)),
        # (the why of the node's first hit: every step and the hit's numbers)
        "why": (
            "saw",
            str(small_ckpt),
            "9755",
            "--embedder",
            "bm25",
            "--why",
            first_hit(small_ckpt),
        ),
        "health-what-if": (
            "health",
            str(small_ckpt),
            "--embedder",
            "bm25",
            "--what-if",
            "drop=react",
        ),
    }.items():
        proc = run_cli(*args, "--json", env=env)
        clean_stderr(proc.stderr)
        assert proc.returncode in (0, 1), proc.stderr
        outputs[name] = json.loads(proc.stdout)
    return outputs


TIME_FIELDS = {"ts", "as_of", "created", "last_change", "started", "start", "end", "recent"}


def times_in(value: object, path: str = "") -> list[tuple[str, object]]:
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in TIME_FIELDS:
                found.append((f"{path}.{key}", item))
            found += times_in(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            found += times_in(item, f"{path}[]")
    return found


def test_every_json_output_names_its_schema_and_gives_times_as_numbers(
    small_ckpt: Path, tmp_path: Path
) -> None:
    outputs = every_json(small_ckpt, tmp_path)
    for name, data in outputs.items():
        assert list(data)[:2] == ["schema", "schema_version"], name
        assert data["schema"] == f"ari-mem-tui/{name}" and data["schema_version"] == 1
        times = times_in(data)
        assert times or name in ("summary", "export"), name  # (export: the files' names)
        for where, value in times:  # epoch seconds, UTC: never a string
            assert value is None or isinstance(value, (int, float)), (name, where, value)
    assert isinstance(outputs["audit"]["leaks"][0]["ts"], float)


def test_readme_documents_every_json_field(small_ckpt: Path, tmp_path: Path) -> None:
    """Every key any JSON output holds (but the run's own data: metrics, core blocks, maps
    keyed by node or kind) is named in README's JSON section."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("## JSON output") :]
    section = section[: section.index("\n## ", 4)]
    free = {"metrics", "ari_context", "by_branch", "reads_by_attribution", "problems_by_severity",
            "access_summary", "statuses", "reads", "node", "params", "metadata", "counts_by_kind",
            "by_relation"}  # fmt: skip
    missing = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if f"`{key}`" not in section:
                    missing.add(key)
                if key not in free:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for data in every_json(small_ckpt, tmp_path).values():
        walk(data)
    assert not missing, sorted(missing)
