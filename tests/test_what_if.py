"""What if (what_if.py, `health --what-if`): every node's start-up search under other memory
settings beside the run's own. Under the run's own settings its side is `health --json` byte
for byte; under others, every node's hits, eligible counts and windows are those of a
brute-force replay written here (a full sort of every pool entry's score, the entries left out
removed first), on the run built so that nodes starve (tests/health_helpers.py: its numbers by
hand) and on the 40-node demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from health_helpers import A1, A2, ROOT, B, C, write_starved_run

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main
from ari_mem_tui.health import compute_health
from ari_mem_tui.render.text import json_text
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.replay import checkpoint_hash, eligible_entry
from ari_mem_tui.search.startup import node_query, start_time
from ari_mem_tui.what_if import Settings, SettingsError, parse_settings, what_if
from tests.ari_like import generate_in_memory


@pytest.fixture(scope="module")
def starved_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_starved_run(tmp_path_factory.mktemp("what_if") / "20260101000000_starved")


def cli_json(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    ("embedder", "settings"),
    [
        ("bm25", "limit=5"),
        ("bm25", "ranker=bm25,top_k=200,pool=start"),
        ("bm25", "overfetch=100"),  # max(100, 40·5) is still 200: the same window
        ("in-memory", "ranker=own,limit=5"),
    ],
)
def test_the_run_s_own_settings_give_health_json_byte_for_byte(
    capsys, starved_dir, embedder, settings
):
    """GIVEN the run's own settings spelt several ways, WHEN `health --what-if` runs, THEN
    both sides of its JSON, written alone, are what `health --json` prints, byte for byte
    (recorded hits included), and nothing changed."""
    base = [str(starved_dir), "--no-letta", "--embedder", embedder, "--json"]
    code, health = cli_json(capsys, "health", *base)
    code_w, out = cli_json(capsys, "health", *base, "--what-if", settings)
    data = json.loads(out)
    assert data["schema"] == "ari-mem-tui/health-what-if" and data["same"] is True
    assert json_text(data["what_if"]) + "\n" == health
    assert json_text(data["own"]) + "\n" == health
    assert data["changes"]["nodes"] == [] and data["changes"]["hits_gained"] == 0
    assert code_w == code


@pytest.mark.parametrize("checked", [False, True], ids=["no-check", "kept-check"])
def test_the_run_s_own_ranker_gives_health_json_byte_for_byte(capsys, tmp_path, checked):
    """GIVEN a run ARI's in-memory backend recorded, ranked by its own rule (health's ranker
    line says "summary checks it", or, once `summary` kept its replay check, "exact: …, 26 of
    26 recorded searches reproduced"), WHEN `health --what-if limit=5` runs, THEN both sides
    are `health --json` byte for byte: each side's ranker line says what health's says (they
    said "unchecked" beside health's "exact")."""
    run = generate_in_memory(tmp_path / "ckpt").path
    base = [str(run), "--no-letta", "--json"]
    if checked:
        assert main(["summary", *base]) == 0
    capsys.readouterr()
    code, health = cli_json(capsys, "health", *base)
    label = json.loads(health)["fidelity"]["label"]
    assert label.startswith("exact: ARI's in-memory" if checked else "run's ranker, unchecked")
    code_w, out = cli_json(capsys, "health", *base, "--what-if", "limit=5")
    data = json.loads(out)
    assert data["same"] is True
    assert json_text(data["own"]) + "\n" == health
    assert json_text(data["what_if"]) + "\n" == health
    assert code_w == code
    _, out = cli_json(capsys, "health", *base, "--what-if", "limit=3")
    other = json.loads(out)  # other settings, the same ranker: it is the run's own
    assert other["what_if"]["fidelity"] == data["what_if"]["fidelity"]
    assert not any("not the run's own" in note for note in other["notes"]), other["notes"]


def test_a_wider_window_feeds_the_starved_nodes_by_hand(starved_dir):
    """GIVEN the starved run (health_helpers: A1's window is B's and the react steps', A2's
    logged search returned 1 of its 5), WHEN top_k is 300 (the whole pool), THEN A1 reaches
    and gets root's 3 entries and A2 its 5 (replayed: the recording answers ARI's settings
    only), both no longer starved; B and C are as they were."""
    ckpt = load_checkpoint(starved_dir)
    from ari_mem_tui.search.embedded import make_ranker

    bm25 = make_ranker(ckpt, "bm25")
    result = what_if(ckpt, bm25, parse_settings("top_k=300"))
    changes = result.changes
    assert (changes.starved_own, changes.starved_what_if) == (2, 0)
    assert set(changes.no_longer_starved) == {A1, A2} and changes.newly_starved == []
    by_node = {n.node_id: n for n in changes.nodes}
    a1, a2 = by_node[A1], by_node[A2]
    ids = {e.id: e for e in ckpt.entries}
    assert (a1.hits_own, a1.hits_what_if, a1.reached_own, a1.reached_what_if) == (0, 3, 0, 3)
    assert sorted(ids[e].node_id for e in a1.gained) == [ROOT] * 3 and a1.lost == []
    assert (a2.hits_own, a2.hits_what_if, a2.eligible_what_if) == (1, 5, 5)
    assert sorted(ids[e].node_id for e in a2.gained) == sorted([ROOT] * 3 + [A1])
    assert a2.lost == []
    assert B not in by_node and C not in by_node
    side = {n.node_id: n for n in result.what_if.nodes}
    assert side[A2].hits_source == "replayed" and result.what_if.recorded == 0
    assert (side[A1].window, side[A1].share_other) == (255, round(250 / 255, 4))
    assert changes.hits_gained == 7 and changes.hits_lost == 0
    depth1 = next(d for d in changes.by_depth if d.label == "depth 1")
    assert (depth1.starved_own, depth1.starved_what_if) == (1, 0)
    assert (depth1.reached_own, depth1.reached_what_if) == (round(6 / 9, 4), 1.0)


def test_leaving_out_react_steps_frees_two_rows_only(starved_dir):
    """drop=react: A1's window loses the two ReAct steps to B's next two entries: still
    starved, its window now all other branches'."""
    ckpt = load_checkpoint(starved_dir)
    from ari_mem_tui.search.embedded import make_ranker

    result = what_if(ckpt, make_ranker(ckpt, "bm25"), parse_settings("drop=react"))
    side = {n.node_id: n for n in result.what_if.nodes}
    assert (side[A1].window, side[A1].react, side[A1].other_branches) == (200, 0, 200)
    assert side[A1].starved and A1 not in result.changes.no_longer_starved
    assert result.what_if.drop == ["react"]
    assert any("ReAct steps" in note for note in result.notes)


@pytest.mark.parametrize(
    "text",
    ["limit=3,top_k=60,drop=tool-auto", "limit=8,drop=tool-auto+react", "pool=now,limit=4"],
)
def test_every_node_of_the_demo_is_the_brute_force_replay(demo_ckpt, text):
    """GIVEN the 40-node demo ranked by BM25, WHEN the settings change (a smaller window,
    ARI's automatic Tool entries and ReAct steps left out, today's pool), THEN each node's
    hits (ids, in order), eligible count, reached, window rows, tool rows and starved flag
    are a brute-force replay's: every pool entry scored, the entries left out removed, the
    rest sorted (ties in pool order), the first top_k post-filtered by ARI's rule."""
    opened = open_run(RunOptions(checkpoint=demo_ckpt, embedder="bm25", index=False))
    ckpt, bm25 = opened.checkpoint, opened.ranker
    settings = parse_settings(text)
    hits: dict[str, list[str]] = {}
    report = compute_health(ckpt, bm25, search=settings.search(recorded=False), hits=hits)
    entries = list(ckpt.entries)
    dropped = [
        ("tool-auto" in settings.drop and is_tool_entry(e))
        or ("react" in settings.drop and e.kind == "react_step")
        for e in entries
    ]
    assert any(dropped) == bool(settings.drop)
    ckpt_hash = checkpoint_hash(ckpt)
    checked = 0
    for row in report.nodes:
        node = ckpt.nodes[row.node_id]
        if not row.searched:
            continue
        started, _ = start_time(ckpt, node)
        before = started if settings.pool == "start" else None
        scores = bm25.scores(node_query(ckpt, node)[0])
        pool = [
            i
            for i, e in enumerate(entries)
            if not dropped[i] and (before is None or e.ts is None or e.ts < before)
        ]
        window = sorted(pool, key=lambda i: (-scores[i], i))[: settings.window]
        scope = set(node.ancestor_ids)
        kept = [entries[i].id for i in window if eligible_entry(entries[i], scope, ckpt_hash)]
        eligible = sum(1 for i in pool if eligible_entry(entries[i], scope, ckpt_hash))
        assert hits[row.node_id] == kept[: settings.limit], row.node_id
        assert (row.eligible, row.reached, row.window) == (eligible, len(kept), len(window))
        assert row.tool == sum(1 for i in window if is_tool_entry(entries[i]))
        assert row.starved == (
            eligible > 0 and len(kept[: settings.limit]) < min(settings.limit, eligible)
        )
        checked += 1
    assert checked >= 30 and report.pool == settings.pool and report.limit == settings.limit


def is_tool_entry(entry) -> bool:
    """ARI's automatic tool-call entry, by the format doc (§3.9): node-scope, `Tool <name>: …`,
    `{"step", "tool"}` metadata."""
    meta = entry.metadata
    return (
        entry.kind == "node_scope"
        and entry.text.startswith("Tool ")
        and "step" in meta
        and "tool" in meta
    )


def test_settings_are_parsed_or_refused_with_what_they_may_be():
    s = parse_settings("limit=10, top_k=400 ,ranker=bm25,drop=tool-auto,drop=react,pool=now")
    assert s == Settings(
        limit=10, top_k=400, ranker="bm25", pool="now", drop=("tool-auto", "react")
    )
    assert s.window == 400 and parse_settings("limit=10").window == 400
    assert parse_settings("overfetch=50").window == 200 and parse_settings("").window == 200
    # (top_k=400 is ARI's window for limit 10: not said again)
    assert s.text() == "limit=10,ranker=bm25,pool=now,drop=tool-auto+react"
    assert parse_settings("top_k=300").text() == "top_k=300"
    for bad, said in [
        ("limit=0", "limit='0': a whole number from 1 to 200"),
        ("limit=x", "limit='x': a whole number from 1 to 200"),
        ("ranker=gpt", "ranker='gpt': one of own, minilm, bm25, in-memory"),
        ("pool=yesterday", "pool='yesterday': one of start, now"),
        ("drop=survey", "drop='survey': one of tool-auto"),
        ("window=3", "'window=3' is not a what-if setting"),
        ("limit", "'limit' is not a what-if setting"),
        ("limit=3,limit=4", "limit is given twice"),
    ]:
        with pytest.raises(SettingsError, match=said.replace("(", r"\(").replace(")", r"\)")):
            parse_settings(bad)


def test_a_bad_what_if_is_one_line_and_exit_2(capsys, starved_dir):
    with pytest.raises(SystemExit) as exited:
        main(["health", str(starved_dir), "--what-if", "ranker=gpt"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "ranker='gpt': one of own, minilm, bm25, in-memory" in err


def test_the_text_says_both_settings_and_what_changed(capsys, starved_dir):
    code = main(
        ["health", str(starved_dir), "--no-letta", "--embedder", "bm25", "--what-if", "top_k=300"]
    )
    out = capsys.readouterr().out.replace("\n", "")  # (as one line: Rich wraps at 80)
    assert code == 0  # nobody starved under the what-if settings
    assert "what if: limit 5, top_k 300, ranker bm25, pool as of each start" in out
    assert "own:     limit 5, top_k 200, ranker bm25" in out
    assert "starved: 2 → 0 (2 nodes no longer starved, 0 newly starved)" in out
    assert "hits: +7 gained, −0 lost over 2 nodes" in out
    assert "no longer starved" in out and "a1a1a1a1" in out and "a2a2a2a2" in out


def test_what_a_what_if_leaves_out_is_the_runs_limit(capsys, starved_dir):
    """`--limit 3 --what-if drop=react`: both sides search with 3 hits; only the drop differs."""
    argv = [str(starved_dir), "--no-letta", "--embedder", "bm25", "--json", "--limit", "3"]
    main(["health", *argv, "--what-if", "drop=react"])
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["limit"] == data["own_settings"]["limit"] == 3
    assert (data["settings"]["drop"], data["own_settings"]["drop"]) == (["react"], [])
    assert data["what_if"]["limit"] == data["own"]["limit"] == 3 and data["same"] is False
