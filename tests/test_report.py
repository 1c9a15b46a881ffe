"""`ari-mem-tui saw` and `ari-mem-tui audit` end to end: checkpoint files on disk → CLI output."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from search_helpers import build_tree

from ari_mem_tui.cli import main
from ari_mem_tui.model import AccessEvent

PARENTS = [0, 0, 1, 2]
HOSTILE = "[red]not markup[/red] \x1b[2J cleared? \x07"


def write_checkpoint(path: Path, ckpt) -> Path:
    """Write a hand-built Checkpoint as ARI's files (tree.json + memory_backup.jsonl.gz)."""
    path.mkdir(parents=True, exist_ok=True)
    nodes = [n.as_data(exclude={"scope_reconstructed"}) for n in ckpt.nodes.values()]
    (path / "tree.json").write_text(json.dumps({"run_id": "20260101000000_t", "nodes": nodes}))
    lines = [
        json.dumps(
            {
                "kind": e.kind,
                "node_id": e.node_id,
                "text": e.text,
                "metadata": e.metadata,
                "ts": e.ts,
            }
        )
        for e in ckpt.entries
    ]
    with gzip.open(path / "memory_backup.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


@pytest.fixture
def ckpt_dir(tmp_path: Path) -> Path:
    ckpt = build_tree(PARENTS, [3, 3, 3, 3, 3], react=2, seed=5)
    records = [entry.as_record() for entry in ckpt.entries]  # (columns: edit a record)
    records[0].text = HOSTILE
    ckpt.entries = records
    return write_checkpoint(tmp_path / "ckpt", ckpt)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_saw_json_has_the_documented_keys_and_the_replay(capsys, ckpt_dir):
    code, out, _ = run_cli(capsys, "saw", str(ckpt_dir), "0003", "--json", "--embedder", "bm25")
    assert code == 0
    data = json.loads(out)
    for key in (
        "node_id",
        "query",
        "query_source",
        "params",
        "pool",
        "hits",
        "eligible",
        "missed",
        "recorded",
        "tiers",
        "core",
        "writes",
        "embedder",
        "as_of",
        "as_of_source",
        "query_field",
        "fallback",
    ):
        assert key in data
    assert data["node_id"] == "node_0003"
    assert (data["query"], data["query_source"]) == ("direction 3", "start")
    assert data["query_field"] == "original_direction"
    assert data["as_of_source"] in ("first start-up read", "created_at", "now: start unknown")
    assert data["params"] == {"limit": 5, "overfetch": 200, "top_k": 200}
    assert data["pool"]["size"] == 17 and data["pool"]["react_step"] == 2
    assert data["embedder"] == "bm25" and data["recorded"] is None
    assert data["eligible"] == 6
    assert {h["node_id"] for h in data["hits"]} <= {"node_root", "node_0001"}
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    assert set(data["core"]) >= {"persona", "human", "ari_context"}
    for hit in data["hits"]:
        assert set(hit) >= {"rank", "global_rank", "score", "entry_id", "node_id", "kind", "text"}


def test_saw_options_query_limit_as_of(capsys, ckpt_dir):
    code, out, _ = run_cli(
        capsys,
        "saw",
        str(ckpt_dir),
        "node_0003",
        "--json",
        "--embedder",
        "bm25",
        "--query",
        "kernel gpu",
        "--limit",
        "2",
        "--as-of",
    )
    assert code == 0
    data = json.loads(out)
    assert (data["query"], data["query_source"]) == ("kernel gpu", "custom")
    assert data["params"]["limit"] == 2 and len(data["hits"]) <= 2
    assert "as_of" in data


def test_saw_with_the_default_embedder_waits_for_minilm(capsys, ckpt_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ARI_MEM_TUI_CACHE", str(tmp_path / "cache"))
    code, out, _ = run_cli(capsys, "saw", str(ckpt_dir), "node_0004", "--json")
    assert code == 0
    assert json.loads(out)["embedder"] == "minilm"
    assert list((tmp_path / "cache" / "vectors" / "minilm").glob("seg-*.vec"))


def test_saw_human_output_never_interprets_memory_text(capsys, ckpt_dir):
    code, out, _ = run_cli(
        capsys,
        "saw",
        str(ckpt_dir),
        "node_0001",
        "--embedder",
        "bm25",
        "--query",
        "not markup cleared",
        "--limit",
        "5",
    )
    assert code == 0
    assert "[red]not markup[/red]" in out
    assert "\x1b[2J" not in out and "\x07" not in out
    assert "Hits" in out and "Tier 1b" in out


def test_the_writes_table_shows_a_hostile_tool_and_source_literally(ckpt_dir):
    from rich.console import Console

    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.model import CowWrite
    from ari_mem_tui.render.report import render_saw
    from ari_mem_tui.search.embedded import make_ranker
    from ari_mem_tui.search.replay import replay

    ckpt = load_checkpoint(ckpt_dir)
    result = replay(ckpt, "node_0003", make_ranker(ckpt, "bm25"))
    result.writes = [
        CowWrite(
            current_node="node_0003",
            target_node="node_0003",
            tool="[i]tool[/i]",
            accepted=True,
            source="[b]src[/b]",
        )
    ]
    console = Console(record=True, width=200, color_system=None)
    render_saw(console, result)
    out = console.export_text()
    assert "[i]tool[/i]" in out and "[b]src[/b]" in out


def test_the_writes_table_gives_an_accepted_write_one_line_and_a_rejection_its_reason(ckpt_dir):
    """At 80 columns a list of writes is scanned: an accepted write's text is cut to its row
    (it folded into 5-7 lines each), while a rejected one's reason is shown whole."""
    from rich.console import Console

    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.model import CowWrite
    from ari_mem_tui.render.report import render_saw
    from ari_mem_tui.search.embedded import make_ranker
    from ari_mem_tui.search.replay import replay

    ckpt = load_checkpoint(ckpt_dir)
    result = replay(ckpt, "node_0003", make_ranker(ckpt, "bm25"))
    long = "measured the kernel at 138.3 GB/s " * 6
    reason = "node_id does not match current node, so the write went nowhere (CoW violation)"

    def write(ts: float, accepted: bool, why: str | None = None) -> CowWrite:
        return CowWrite(
            ts=ts,
            current_node="node_0003",
            target_node="node_0003",
            tool="add_memory",
            accepted=accepted,
            source="s",
            text=long,
            reason=why,
        )

    result.writes = [write(1.0, True), write(2.0, False, reason)]
    console = Console(record=True, width=80, color_system=None)
    render_saw(console, result)
    table = console.export_text().split("Writes (copy-on-write log)")[1]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    accepted = [line for line in rows if "yes" in line]
    assert len(accepted) == 1 and "measured the kernel" in accepted[0]
    assert "…" in accepted[0]
    assert sum("measured" in line for line in rows) == 1  # not folded onto the next lines
    rejected = next(i for i, line in enumerate(rows) if "REJECTED" in line)
    folded = " ".join(" ".join(line.split("│")[-2].split()) for line in rows[rejected:])
    assert reason in folded


def test_saw_bad_node_and_unreadable_checkpoint_exit_2(capsys, ckpt_dir, tmp_path):
    code, out, err = run_cli(capsys, "saw", str(ckpt_dir), "nope", "--embedder", "bm25")
    assert code == 2 and out == ""
    assert "no node matches 'nope'" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "saw", str(tmp_path / "missing"), "x", "--embedder", "bm25")
    assert code == 2 and "cannot read" in err


def test_audit_exit_codes_and_json(capsys, ckpt_dir, tmp_path, monkeypatch):
    code, out, _ = run_cli(capsys, "audit", str(ckpt_dir), "--json")
    assert code == 0
    assert set(json.loads(out)) == {
        "schema",
        "schema_version",
        "problems",
        "scope_violations",
        "leaks",
        "rejected_writes",
        "unattributed",
        "second_hand",
        "tainted",
        "memory_source",
    }
    code, _, err = run_cli(capsys, "audit", str(tmp_path / "missing"))
    assert code == 2 and "cannot read" in err

    leaky = build_tree(PARENTS, [1] * 5)
    leaky.access_events = [
        AccessEvent(
            ts=1.0,
            op="read",
            query="inherit:get_node_memory",
            ancestor_ids=["node_0004"],
            reader="node_0003",
            reader_how="trace_log",
        )
    ]
    monkeypatch.setattr("ari_mem_tui.checkpoint.load.load_checkpoint", lambda _p, **_kw: leaky)
    # (the run loaded is not that of the files: the audit kept for the files must not stand in)
    monkeypatch.setenv("ARI_MEM_TUI_INDEX", "off")
    code, out, _ = run_cli(capsys, "audit", str(ckpt_dir), "--json")
    assert code == 1
    assert json.loads(out)["leaks"][0]["node_id"] == "node_0003"
    code, out, _ = run_cli(capsys, "audit", str(ckpt_dir))
    assert code == 1 and "node_0003" in out and "leak" in out


def test_saw_query_from_eval_summary_uses_todays_value(capsys, ckpt_dir):
    tree = json.loads((ckpt_dir / "tree.json").read_text())
    node = next(n for n in tree["nodes"] if n["id"] == "node_0003")
    node["eval_summary"] = "Measured 7.1 GFlops [scientific_score=0.61]"
    (ckpt_dir / "tree.json").write_text(json.dumps(tree))
    argv = ["saw", str(ckpt_dir), "0003", "--json", "--embedder", "bm25"]
    for spelling in ("now", "eval_summary"):  # eval_summary: the older name of now
        code, out, _ = run_cli(capsys, *argv, "--query-from", spelling)
        assert code == 0
        data = json.loads(out)
        assert (data["query"], data["query_source"]) == (node["eval_summary"], "now")
        assert data["query_field"] == "eval_summary"
    _, out, _ = run_cli(capsys, *argv)  # the default stays ARI's start-up query
    data = json.loads(out)
    assert (data["query_source"], data["query_field"]) == ("start", "original_direction")
    code, _, err = run_cli(capsys, *argv, "--query-from", "custom")
    assert code == 2 and "--query-from custom needs --query" in err
    code, out, _ = run_cli(capsys, *argv, "--query-from", "custom", "--query", "gpu kernel")
    assert code == 0 and json.loads(out)["query_source"] == "custom"


def test_headless_saw_on_a_cold_vector_cache_is_never_silent_for_2_s(monkeypatch):
    """n of N texts, the rate and an ETA on stderr at least every second of waiting, and a
    last line at 100%."""
    import io

    from ari_mem_tui.cli import commands as report

    clock = [0.0]

    def monotonic() -> float:
        return clock[0]

    class Building:
        done, total = 0, 0

        def wait(self, timeout: float) -> bool:
            clock[0] += timeout  # the wait takes its time, on the fake clock
            if clock[0] > 1.0:
                self.total = 1000
                self.done = min(1000, int((clock[0] - 1.0) * 100))  # 100 texts/s
            return self.done >= 1000

    monkeypatch.setattr(report.time, "monotonic", monotonic)
    err = io.StringIO()
    report.wait_for_vectors(Building(), stream=err, tty=False)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("loading MiniLM") and "--embedder bm25 answers at once" in lines[0]
    assert len(lines) >= 10  # ~11 s of fake waiting: a line every second
    assert any("texts/s" in line and "ETA" in line for line in lines)
    late = next(line for line in lines if "(54%)" in line)
    assert "540 of 1,000 texts" in late and "100 texts/s" in late and "ETA 5 s" in late
    assert "1,000 of 1,000 texts (100%)" in lines[-1] and "ETA" not in lines[-1]


def test_saw_help_says_what_a_cold_cache_costs(capsys):
    with pytest.raises(SystemExit):
        main(["saw", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "cold vector cache" in out and "--embedder bm25 answers at once" in out
    assert "--now" in out and "as of the node's start" in out


def test_saw_on_a_run_recorded_by_aris_in_memory_backend(capsys, tmp_path):
    """Keyword-overlap scores (§5.2) are shown as they are: no global ranks, backend named."""
    ckpt = build_tree([0], [4, 0])
    path = write_checkpoint(tmp_path / "ckpt", ckpt)
    events = []
    for i, entry in enumerate(ckpt.entries):
        events.append(
            {
                "ts": entry.ts + 0.01,
                "node_id": entry.node_id,
                "op": "write",
                "collection": "node_scope",
                "entry_id": f"3f2a9c1e-0000-4000-8000-00000000000{i}",
                "text_preview": entry.text[:200],
                "metadata": entry.metadata,
            }
        )
    scores = [0.25, 0.25, 0.25, 0.125]
    events.append(
        {
            "ts": 1500.0,
            "node_id": "node_root",
            "op": "read",
            "collection": "node_scope",
            "query": "direction 1",
            "ancestor_ids": ["node_root"],
            "limit": 5,
            "results": [
                {
                    "entry_id": f"3f2a9c1e-0000-4000-8000-00000000000{i}",
                    "src_node_id": "node_root",
                    "score": score,
                }
                for i, score in enumerate(scores)
            ],
        }
    )
    (path / "memory_access.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    argv = ["saw", str(path), "node_0001", "--embedder", "bm25"]
    code, out, _ = run_cli(capsys, *argv, "--json")
    assert code == 0
    rec = json.loads(out)["recorded"]
    assert rec["backend"] == "in_memory" and "keyword-overlap" in rec["ranker"]
    assert [(h["global_rank"], h["score"]) for h in rec["hits"]] == [(-1, s) for s in scores]
    assert all(h["text"] for h in rec["hits"])  # joined through the write events
    code, out, _ = run_cli(capsys, *argv)
    text = " ".join(out.split())
    assert "ARI's in-memory backend" in text and "0.125" in text
    recorded_table = out.split("Recorded start-up search")[1].split("difference")[0]
    rows = [
        line
        for line in recorded_table.splitlines()
        if line.startswith("│") and line.split("│")[1].strip().isdigit()
    ]
    assert len(rows) == 4 and all(line.split("│")[2].strip() == "?" for line in rows)


def test_a_shorter_progress_line_covers_the_longer_one_before_it():
    """On a terminal each line is rewritten in place: what a shorter line leaves of a longer
    one is blanked, so no stray characters ("…thiss") stay on screen."""
    import io

    from ari_mem_tui.render.progress import StatusLine

    out = io.StringIO()
    line = StatusLine(out, tty=True)
    line.show("loading MiniLM and its vector cache … 12 s; this")
    line.show("embedding: 5 of 9")
    line.close()
    screen = ""
    for part in out.getvalue().split("\r"):  # what a terminal shows: each \r rewrites
        screen = part + screen[len(part) :]
    assert screen.rstrip("\n").rstrip() == "embedding: 5 of 9"


def test_a_text_report_lists_every_rejected_write_and_the_first_accepted_ones():
    from ari_mem_tui.model import CowWrite
    from ari_mem_tui.render.report import WRITES_SHOWN, writes_shown

    def write(i: int, accepted: bool) -> CowWrite:
        return CowWrite(
            ts=float(i), current_node="n", target_node="n", tool="t", accepted=accepted, source="s"
        )

    writes = [write(i, accepted=i % 10 != 7) for i in range(40)]  # rejected: 7, 17, 27, 37
    shown = writes_shown(writes)
    assert [w.ts for w in shown if not w.accepted] == [7.0, 17.0, 27.0, 37.0]
    accepted = [w.ts for w in shown if w.accepted]
    assert len(shown) == WRITES_SHOWN and accepted == [w.ts for w in writes if w.accepted][:16]
    assert [w.ts for w in shown] == sorted(w.ts for w in shown)  # still in time order
    assert writes_shown(writes[:5]) == writes[:5]


def test_the_tui_diagnostics_line_counts_the_window_rows_in_words(ckpt_dir):
    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.search.embedded import make_ranker
    from ari_mem_tui.search.replay import replay
    from ari_mem_tui.tui.widgets.hits import diagnostics_text

    ckpt = load_checkpoint(ckpt_dir)
    result = replay(ckpt, "node_0003", make_ranker(ckpt, "bm25"))
    window = {"size": 9, "lineage": 5, "self": 0, "other_branches": 1, "react_step": 3}
    result.pool = {**result.pool, "window": window}
    line = diagnostics_text(result).plain
    assert "(5 lineage, 1 other branch, 3 react steps)" in line
    result.pool["window"] = {**window, "self": 2, "other_branches": 2, "react_step": 1}
    assert "(5 lineage, 2 own, 2 other branches, 1 react step)" in diagnostics_text(result).plain


def test_a_report_names_a_node_as_the_tui_does():
    """A table's node column: ARI's long root id is "root" and a long id its last 8
    characters, as in the TUI's tree (it showed "…_CPUs_root"); a short id stays whole."""
    from ari_mem_tui.render.report import short

    root = "node_20260528210232_We_propose_an_implementation_of_SpMV_for_many-core_CPUs_root"
    assert short(root) == "root"
    assert short("node_20260528213301_a_child_5d9dc9f8") == "5d9dc9f8"
    assert short("node_5d9dc9f8") == "node_5d9dc9f8" and short("node_0003") == "node_0003"
