"""One string must not make a run unreadable (issue 22 §2).

A lone surrogate can reach us from any JSON file (`"\\ud800"` is valid JSON; msgspec refuses
it, json takes it): in a node's trace_log, in a memory text, in a node id. Every sink takes it:
text (shown as <U+D800>), JSON (written as its \\ud800 escape, read back exact), the run index
(strings UTF-8 cannot hold stored as their own msgpack extension), the TUI, the clipboard, the dossier. An integer of
4,301 digits in tree.json drops that value, not the tree.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from ari_mem_tui.checkpoint import index
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.dossier import export_dossier
from ari_mem_tui.search.embedded import make_ranker
from ari_mem_tui.search.replay import replay
from tests.hostile_helpers import clean_stderr, fingerprint, run_cli

TRACE = "step \ud800 one"
TEXT_TAIL = " lone \udfff here"


def with_surrogates(small_ckpt: Path, dest: Path) -> tuple[Path, str]:
    """The small demo with a lone surrogate in one node's id (everywhere it is named), in another
    node's trace_log and in a memory text. Returns (checkpoint, the surrogate id)."""
    shutil.copytree(small_ckpt, dest)
    nodes = json.loads((dest / "tree.json").read_text())["nodes"]
    old = next(n["id"] for n in nodes if n["id"].endswith("9755d4c1"))
    new = old[:-4] + "\udc00" + old[-3:]
    old_json, new_json = json.dumps(old)[1:-1], json.dumps(new)[1:-1]  # (ASCII: \udc00)
    for name in ("tree.json", "nodes_tree.json", "memory_access.jsonl"):
        path = dest / name
        path.write_text(path.read_text().replace(old_json, new_json))
    tree = json.loads((dest / "tree.json").read_text())
    tree["nodes"][2]["trace_log"] = [TRACE, "plain"]
    (dest / "tree.json").write_text(json.dumps(tree))
    lines = gzip.decompress((dest / "memory_backup.jsonl.gz").read_bytes()).decode().splitlines()
    records = [json.loads(line.replace(old_json, new_json)) for line in lines]
    first = next(r for r in records if r.get("kind") == "node_scope")
    first["text"] += TEXT_TAIL
    body = "".join(json.dumps(r) + "\n" for r in records)
    (dest / "memory_backup.jsonl.gz").write_bytes(gzip.compress(body.encode()))
    return dest, new


@pytest.fixture
def surrogate_run(small_ckpt: Path, tmp_path: Path) -> tuple[Path, str]:
    return with_surrogates(small_ckpt, tmp_path / "run")


COMMANDS = {
    "summary": (("summary",), 0),
    "audit": (("audit",), 1),  # the demo's planted leak
    "saw": (("saw", "9755", "--embedder", "bm25"), 0),
    "health": (("health", "--embedder", "bm25"), None),  # 0 or 1: starved nodes are data
}


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_takes_lone_surrogates(
    surrogate_run: tuple[Path, str], tmp_path: Path, command: str, json_out: bool
) -> None:
    ckpt, node_id = surrogate_run
    before = fingerprint(ckpt)
    args, code = COMMANDS[command]
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    for attempt in range(2):  # the second reopens (from the index, when it could be written)
        extra = ("--json",) if json_out else ()
        proc = run_cli(args[0], str(ckpt), *args[1:], *extra, "--no-letta", env=env)
        clean_stderr(proc.stderr)
        assert "internal error" not in proc.stderr, proc.stderr
        assert proc.returncode == code or (code is None and proc.returncode in (0, 1)), (
            attempt,
            proc.stderr[-2000:],
        )
        if json_out:
            data = json.loads(proc.stdout)  # the escapes read back as the exact strings
            assert data["schema"] == f"ari-mem-tui/{command}"
            if command == "saw":
                assert data["node_id"] == node_id
        else:
            assert "\ud800" not in proc.stdout and "\udc00" not in proc.stdout
            if command == "saw":
                assert "<U+DC00>" in proc.stdout  # the id, shown as its code point
    assert fingerprint(ckpt) == before


def test_the_model_keeps_the_surrogates_exact_and_the_dossier_takes_them(
    surrogate_run: tuple[Path, str], tmp_path: Path
) -> None:
    ckpt_dir, node_id = surrogate_run
    ckpt = load_checkpoint(ckpt_dir, use_index=False)
    assert node_id in ckpt.nodes
    assert TRACE in list(ckpt.nodes.values())[2].trace_log
    assert any(e.text.endswith(TEXT_TAIL) for e in ckpt.entries)
    result = replay(ckpt, node_id, make_ranker(ckpt, "bm25", cache_dir=tmp_path / "cache"))
    md_path, json_path = export_dossier(ckpt, result, tmp_path / "dossiers")
    assert "<U+DC00>" in md_path.read_text(encoding="utf-8")
    assert json.loads(json_path.read_text(encoding="utf-8"))["replay"]["node_id"] == node_id


def test_runs_lists_a_run_with_surrogates(surrogate_run: tuple[Path, str], tmp_path: Path) -> None:
    ckpt, _ = surrogate_run
    for extra in ((), ("--json",)):
        proc = run_cli("runs", str(ckpt.parent), *extra, env={"ARI_MEM_TUI_CACHE": str(tmp_path)})
        clean_stderr(proc.stderr)
        assert proc.returncode == 0 and "run" in proc.stdout, proc.stderr


async def test_the_tui_shows_and_copies_a_surrogate_id(
    surrogate_run: tuple[Path, str], tmp_path: Path
) -> None:
    from tests.tui_app_helpers import make_app, settle

    ckpt, node_id = surrogate_run
    app = make_app(ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.jump_to(node_id)
        await settle(pilot)
        assert app.current_id == node_id
        await pilot.press("y")  # was: UnicodeEncodeError, a traceback and exit 0
        await pilot.pause(0.2)
        assert app.last_copied == node_id.replace("\udc00", "<U+DC00>")
        toasts = [n.message for n in app._notifications]
        assert any("1 control character shown as symbols" in t for t in toasts), toasts
        await pilot.press("5")
        await settle(pilot)
        assert app.is_running


def test_an_integer_of_4301_digits_drops_that_value_not_the_tree(
    small_ckpt: Path, tmp_path: Path
) -> None:
    ckpt = tmp_path / "run"
    shutil.copytree(small_ckpt, ckpt)
    for name in ("tree.json", "nodes_tree.json"):  # the tree and its fallback alike
        text = (ckpt / name).read_text()
        (ckpt / name).write_text(
            text.replace('"retry_count": 0', '"retry_count": ' + "9" * 4301, 1)
        )
    proc = run_cli("summary", str(ckpt), "--no-letta", env={"ARI_MEM_TUI_CACHE": str(tmp_path)})
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert "tree from  tree.json" in proc.stdout and "nodes      8 (1 root)" in proc.stdout
    assert "read 1 integer as null (the first has 4,301 digits)" in proc.stdout
    loaded = load_checkpoint(ckpt, use_index=False)
    assert len(loaded.nodes) == 8
    assert sum(n.retry_count is None for n in loaded.nodes.values()) == 1


def test_a_run_with_lone_surrogates_in_its_tree_is_indexed_and_reopens_the_same(
    surrogate_run: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree's strings go into the index's msgpack body, whose strings must be UTF-8: a
    surrogate id once made the whole run unindexable (every open a full load, unsaid)."""
    from ari_mem_tui.audit import audit
    from ari_mem_tui.render.report import audit_json
    from ari_mem_tui.render.summary import summary_json

    monkeypatch.setenv(index.INDEX_ENV, str(tmp_path / "index"))
    ckpt_dir, node_id = surrogate_run
    fresh = load_checkpoint(ckpt_dir, use_index=False)
    assert index.save(fresh, index.run_key(ckpt_dir, fresh.run_id))
    again = index.load(ckpt_dir)
    assert again is not None and node_id in again.nodes
    assert again.nodes[node_id].id == node_id
    assert json.dumps(summary_json(again)) == json.dumps(summary_json(fresh))
    audits = [audit_json(audit(c), "files") for c in (again, fresh)]
    assert json.dumps(audits[0]) == json.dumps(audits[1]) and audits[0]["leaks"]


HUGE = 10**400  # 401 digits: under the 4,300-digit limit, past a float's range (1.8e308)


def with_huge(small_ckpt: Path, dest: Path, where: str, value: object = HUGE) -> Path:
    """The small demo with `value` as one access-log ts, one backup ts, or every recorded
    score."""
    shutil.copytree(small_ckpt, dest)
    if where == "backup ts":
        path = dest / "memory_backup.jsonl.gz"
        records = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
        next(r for r in records if r.get("kind") == "node_scope")["ts"] = value
        body = "".join(json.dumps(r) + "\n" for r in records)
        path.write_bytes(gzip.compress(body.encode()))
        return dest
    path = dest / "memory_access.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    if where == "access ts":
        events[0]["ts"] = value
    else:
        for event in events:
            for row in event.get("results") or []:
                row["score"] = value
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return dest


@pytest.mark.parametrize("where", ["access ts", "backup ts", "recorded score"])
def test_an_integer_past_a_floats_range_is_no_number_not_an_unreadable_run(
    small_ckpt: Path, tmp_path: Path, where: str
) -> None:
    """`float(10**400)` raises OverflowError: one such ts made every command but summary say
    `cannot read` the run (summary: internal error, exit 3), and one such recorded score did
    it to saw and health. It is no number, as a string would be, and the rest is read."""
    ckpt = with_huge(small_ckpt, tmp_path / "run", where)
    before = fingerprint(ckpt)
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    outputs = {}
    for command, (args, _) in COMMANDS.items():
        proc = run_cli(args[0], str(ckpt), *args[1:], "--json", "--no-letta", env=env)
        clean_stderr(proc.stderr)
        assert "internal error" not in proc.stderr and "cannot read" not in proc.stderr
        assert proc.returncode in (0, 1), (command, proc.stderr[-2000:])
        outputs[command] = json.loads(proc.stdout)
    problems = outputs["summary"]["problems"]
    if where == "access ts":
        said = [
            p for p in problems if p["file"] == "memory_access.jsonl" and p["where"] == "line 1"
        ]
        assert said and "is not a number" in said[0]["why"], problems
    elif where == "backup ts":
        said = [p for p in problems if p["file"] == "memory_backup.jsonl.gz"]
        assert said and "is not a number; kept without ts" in said[0]["why"], problems
        assert outputs["summary"]["counts"]["entries"] == 398  # the record is kept
    else:
        assert outputs["saw"]["recorded"] is not None
    assert fingerprint(ckpt) == before


def strict_json(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is no JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["NaN", "Infinity"])
def test_a_recorded_score_that_is_no_finite_number_reads_0(
    small_ckpt: Path, tmp_path: Path, value: float
) -> None:
    """ARI's own json writes a NaN score as `NaN`: saw printed it into its JSON (no JSON
    reader takes it) and failed with exit 3 in text (`round(NaN)`); Infinity failed saw and
    health (judging the recorded ranker). An odd score reads 0.0, as a string does."""
    ckpt = with_huge(small_ckpt, tmp_path / "run", "recorded score", value)
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    for command in ("saw", "health"):
        args, _ = COMMANDS[command]
        for extra in (("--json",), ()):
            proc = run_cli(args[0], str(ckpt), *args[1:], *extra, "--no-letta", env=env)
            clean_stderr(proc.stderr)
            assert "internal error" not in proc.stderr, proc.stderr[-2000:]
            assert proc.returncode in (0, 1), (command, extra, proc.stderr[-2000:])
            if extra:
                data = strict_json(proc.stdout)
                if command == "saw":
                    assert {h["score"] for h in data["recorded"]["hits"]} == {0.0}
