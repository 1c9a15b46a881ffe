"""Why a node did (not) see an entry (search/why.py, `saw NODE --why ENTRY`), judged on the run
ARI's own rules make (tests/ari_like, recorded by ARI's in-memory backend) against a brute-force
replay written here from the format doc alone: every (node, entry) pair's steps, reasons and
numbers; on a windowed ranker too (BM25 over the same files: the window reasons); and on the
40-node demo, every entry's verdict against the Hits, missed and scope lists of the node."""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from ari_mem_tui.cli import main
from ari_mem_tui.render.why import why_text
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.search.replay import checkpoint_hash, eligible_entries
from ari_mem_tui.search.why import EntryRefError, NodeSearch, resolve_entry
from tests.ari_like import generate_in_memory
from tests.ari_like.backends import keyword_score

LIMIT, TOP_K, DEDUPE = 5, 200, 120


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    return generate_in_memory(tmp_path_factory.mktemp("why") / "ckpt")


@pytest.fixture(scope="module")
def run(generated):
    return open_run(RunOptions(checkpoint=generated.path, index=False))


class Raw:
    """The run as its files hold it, read here with json alone: the brute force's input."""

    def __init__(self, path: Path) -> None:
        tree = json.loads((path / "tree.json").read_text(encoding="utf-8"))
        self.nodes = {n["id"]: n for n in tree["nodes"]}
        with gzip.open(path / "memory_backup.jsonl.gz", "rt", encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        self.records = [r for r in records if r["kind"] in ("node_scope", "react_step")]
        self.records.sort(key=lambda r: r["ts"])  # the in-memory store's insertion order
        lines = (path / "memory_access.jsonl").read_text(encoding="utf-8").splitlines()
        self.events = [json.loads(line) for line in lines if line.strip()]

    def owner(self, record: dict) -> str:
        return record.get("node_id") or record["metadata"].get("node_id") or ""

    def lineage(self, node_id: str) -> list[str]:
        return [*self.nodes[node_id]["ancestor_ids"], node_id]

    def query(self, node_id: str, at: float) -> str:
        return next(
            e["query"]
            for e in self.events
            if e["op"] == "read"
            and e["ts"] == at
            and e["ancestor_ids"] == self.nodes[node_id]["ancestor_ids"]
        )


def brute_in_memory(raw: Raw, node_id: str, start: float, query: str) -> dict[int, dict]:
    """Every record's steps for `node_id`, as ARI's in-memory backend decides them: the node
    store as of the search, its ancestors' entries scored by the share of query words in the
    lower-cased text (zero dropped), sorted by score, ties in insertion order, the first five;
    Tier 2 skips a hit whose first 120 characters are among the ancestors' RESULT SUMMARYs'."""
    anc = raw.nodes[node_id]["ancestor_ids"]
    pool = [r for r in raw.records if r["kind"] == "node_scope" and r["ts"] < start]
    scored = [(keyword_score(r["text"], query), r) for r in pool if r["node_id"] in anc]
    kept = [r for s, r in sorted(scored, key=lambda p: -p[0]) if s > 0]
    rank = {id(r): i + 1 for i, r in enumerate(kept)}
    keys: dict[str, dict] = {}
    for aid in anc:
        for r in pool:
            if r["node_id"] == aid and r["metadata"].get("type") == "result_summary":
                keys.setdefault(r["text"].strip()[:DEDUPE], r)
    out = {}
    for r in raw.records:
        writer = raw.owner(r)
        steps: dict[str, tuple[str, str]] = {}
        steps["time"] = (
            ("pass", "before")
            if r["ts"] < start
            else ("fail", "own-after-search" if writer == node_id else "after-start")
        )
        steps["searchable"] = (
            ("pass", "node-scope") if r["kind"] == "node_scope" else ("fail", "react-store")
        )
        if writer in anc:
            steps["scope"] = ("pass", "ancestor")
        elif writer == node_id:
            steps["scope"] = ("fail", "own")
        elif writer not in raw.nodes:
            steps["scope"] = ("fail", "no-node")
        elif node_id in raw.lineage(writer):
            steps["scope"] = ("fail", "descendant")
        else:
            steps["scope"] = ("fail", "other-branch")
        score = keyword_score(r["text"], query)
        if r["ts"] < start and r["kind"] == "node_scope":
            steps["match"] = ("pass", "words found") if score > 0 else ("fail", "no-word")
        eligible = all(steps[k][0] == "pass" for k in ("time", "searchable", "scope"))
        if eligible and score > 0:
            steps["limit"] = ("pass", "") if rank[id(r)] <= LIMIT else ("fail", "past-limit")
        hit = eligible and score > 0 and rank[id(r)] <= LIMIT
        if hit:
            held = r["text"].strip()[:DEDUPE] in keys
            steps["context"] = ("fail", "in-tier-1b") if held else ("pass", "")
        verdict = next((k for k, (status, _) in steps.items() if status == "fail"), "seen")
        out[id(r)] = {
            "record": r,
            "steps": steps,
            "verdict": verdict,
            "score": score,
            "rank": rank.get(id(r)),
            "kept": kept,
            "holder": keys.get(r["text"].strip()[:DEDUPE]),
        }
    return out


@pytest.fixture(scope="module")
def entries_by_record(run):
    return {(e.kind, e.ts, e.text): e for e in run.checkpoint.entries}


def searched_nodes(generated) -> list[str]:
    """The nodes whose start-up search is known for certain (the two siblings that searched
    together are assigned by an assumption the replay says it made: left out)."""
    together = {
        n for p in generated.planted.same_direction if p["order"] == "together" for n in p.values()
    }
    return [n for n in generated.planted.startup if n not in together]


def test_every_pair_of_the_in_memory_run_gets_the_brute_force_steps(
    generated, run, entries_by_record
):
    """GIVEN the run ARI's in-memory backend recorded, WHEN every searched node is asked why
    about every entry, THEN each step's status and reason are the brute force's, the verdict
    is its first failing step, and the numbers are its numbers: every reason of the in-memory
    backend is met (the planted echo gives Tier 2's dedupe)."""
    ckpt, raw = run.checkpoint, Raw(generated.path)
    found: Counter[tuple[str, str]] = Counter()
    for node_id in searched_nodes(generated):
        start = generated.planted.startup_ts[node_id]
        query = raw.query(node_id, start)
        search = NodeSearch(ckpt, node_id, run.ranker)
        assert search.result.query == query and search.before == start
        for want in brute_in_memory(raw, node_id, start, query).values():
            record = want["record"]
            entry = entries_by_record[(record["kind"], record["ts"], record["text"])]
            got = search.why(entry)
            where = (node_id, entry.id, record["text"][:40])
            steps = {s.key: (s.status, s.reason) for s in got.steps if s.status != "n/a"}
            for key, (status, reason) in want["steps"].items():
                assert steps[key][0] == status, (where, key)
                if reason:
                    assert steps[key][1] == reason, (where, key)
            assert set(steps) - set(want["steps"]) <= {"searched"}, where
            assert got.verdict == want["verdict"], where
            verdict = got.verdict
            found[(verdict, want["steps"][verdict][1] if verdict != "seen" else "")] += 1
            check_numbers(got, want, start, raw, ckpt)
    assert set(found) == {
        ("time", "after-start"),
        ("time", "own-after-search"),
        ("searchable", "react-store"),
        ("scope", "other-branch"),
        ("match", "no-word"),
        ("limit", "past-limit"),
        ("context", "in-tier-1b"),
        ("seen", ""),
    }, found


def check_numbers(got, want, start, raw, ckpt) -> None:
    record, verdict = want["record"], got.verdict
    step = got.step(verdict) if verdict != "seen" else None
    if verdict == "time":
        assert (step.numbers["written"], step.numbers["search"]) == (record["ts"], start)
        assert step.numbers["after_s"] == pytest.approx(record["ts"] - start)
    if got.step("scope").reason == "other-branch":
        mine, theirs = raw.lineage(got.node_id), raw.lineage(raw.owner(record))
        common = [a for a, b in zip(mine, theirs, strict=False) if a == b]
        numbers = got.step("scope").numbers
        assert numbers["common_ancestor"] == common[-1]
        assert (numbers["node_lineage"], numbers["writer_lineage"]) == (mine, theirs)
    if verdict == "match":
        assert step.numbers["words"] == [w.lower() for w in got.query.split()]
        assert step.numbers["found"] == [] and step.numbers["score"] == 0.0
    if verdict == "limit":
        last = want["kept"][LIMIT - 1]
        assert step.numbers["rank"] == want["rank"] and step.numbers["score"] == want["score"]
        assert step.numbers["last_hit"]["rank"] == LIMIT
        assert step.numbers["last_hit"]["score"] == keyword_score(last["text"], got.query)
    if verdict == "context":
        holder = ckpt.entries_by_id[step.numbers["tier_1b_entry"]]
        assert (holder.ts, holder.text) == (want["holder"]["ts"], want["holder"]["text"])
    if verdict in ("seen", "context"):
        assert got.hit["rank"] == want["rank"] and got.hit["score"] == want["score"]
        kept = want["kept"]
        out = got.hit["next_out"]
        if len(kept) > LIMIT:
            nxt = ckpt.entries_by_id[out["entry_id"]]
            assert (nxt.ts, nxt.text) == (kept[LIMIT]["ts"], kept[LIMIT]["text"])
            assert out["rank"] == LIMIT + 1
            assert out["score"] == keyword_score(kept[LIMIT]["text"], got.query)
        else:
            assert out is None


def test_the_planted_echo_is_dropped_from_the_context_by_tier_1b(generated, run):
    """The planted node's direction repeats its parent's verdict: its first hit is the
    parent's RESULT SUMMARY, which ARI returned but Tier 2 skipped (Tier 1b holds it)."""
    node_id = generated.planted.echo_parent
    search = NodeSearch(run.checkpoint, node_id, run.ranker)
    first = run.checkpoint.entries_by_id[search.result.hits[0].entry_id]
    parent = run.checkpoint.nodes[node_id].parent_id
    assert first.node_id == parent and first.text.startswith("RESULT SUMMARY")
    answer = search.why(first)
    assert answer.verdict == "context" and answer.hit["rank"] == 1
    assert answer.step("context").numbers["tier_1b_entry"] == first.id
    assert answer.recorded == {"returned": True, "rank": 1, "score": answer.hit["score"]}


def test_a_root_and_a_node_that_never_started_made_no_search(generated, run):
    ckpt = run.checkpoint
    entry = ckpt.entries[0]
    root = NodeSearch(ckpt, generated.planted.nodes["R"], run.ranker).why(entry)
    assert (root.verdict, root.step("searched").reason) == ("searched", "root")
    pending = NodeSearch(ckpt, generated.planted.nodes["D1b"], run.ranker).why(entry)
    assert (pending.verdict, pending.step("searched").reason) == ("searched", "never-started")


def test_the_window_reasons_on_a_windowed_ranker_are_the_full_rankings(demo_ckpt):
    """GIVEN the demo ranked by BM25 (windowed; its pools outgrow the window, which the
    in-memory run's 227 entries never do), WHEN every node is asked about every entry its
    post-filter keeps, THEN an entry whose global rank in the as-of pool is past top_k is
    "below the window" with that rank and the window's rows counted by writer, and one
    inside it is a hit or past the limit by its rank among the kept rows, its score ARI's of
    its global rank: the numbers a full sort of every pool entry's score gives (ties in pool
    order)."""
    opened = open_run(RunOptions(checkpoint=demo_ckpt, embedder="bm25", index=False))
    ckpt, bm25 = opened.checkpoint, opened.ranker
    ckpt_hash = checkpoint_hash(ckpt)
    below = within = past = 0
    for node in ckpt.nodes.values():
        if not node.ancestor_ids:
            continue
        search = NodeSearch(ckpt, node.id, bm25)
        if node.status == "pending" and search.result.recorded is None:
            continue  # (never started: no search, `searched` fails first)
        start = search.before
        scores = bm25.scores(search.result.query)
        rows = [
            i for i, e in enumerate(ckpt.entries) if e.ts is None or start is None or e.ts < start
        ]
        order = sorted(rows, key=lambda i: (-scores[i], i))
        glob = {ckpt.entries[i].id: g for g, i in enumerate(order)}
        window = [ckpt.entries[i] for i in order[:TOP_K]]
        filled = Counter(e.node_id or "" for e in window)
        anc = set(node.ancestor_ids)
        kept = [e.id for e in window if e.kind == "node_scope" and e.node_id in anc]
        for entry in eligible_entries(ckpt, node.ancestor_ids, ckpt_hash, start):
            got = search.why(entry)
            g = glob[entry.id]
            if g >= TOP_K:
                below += 1
                step = got.step("window")
                assert got.verdict == "window" and step.numbers["global_rank"] == g
                assert step.numbers["pool"] == len(rows) and step.numbers["top_k"] == TOP_K
                by_node: Counter[str] = Counter()
                for row in step.numbers["filled_by"]:  # (a node's react steps: a row apart)
                    by_node[row["node_id"]] += row["rows"]
                assert by_node == filled
                assert sum(step.numbers["by_relation"].values()) == TOP_K
            else:
                r = kept.index(entry.id) + 1
                assert got.step("window").numbers["global_rank"] == g
                if r > LIMIT:
                    past += 1
                    assert got.verdict == "limit" and got.step("limit").numbers["rank"] == r
                    score = round(max(0.0, 1 - 0.01 * g), 2)
                    assert got.step("limit").numbers["score"] == score
                else:
                    within += 1
                    assert got.hit is not None and got.hit["global_rank"] == g
    assert below > 100 and within > 100 and past > 100, (below, within, past)


def test_every_entry_of_the_40_node_demo_agrees_with_the_hits_missed_and_scope_lists(demo_ckpt):
    """GIVEN the default demo and its own ranker (MiniLM), WHEN every node that searched is
    asked why about every entry of the run, THEN the verdict is "seen" or "context" exactly
    for the node's hits (at their rank), "window" exactly for its missed list, "limit" for
    the rest of its scope list (eligible entries), and a structural step for every entry
    outside that list."""
    opened = open_run(RunOptions(checkpoint=demo_ckpt, index=False))
    ckpt, ranker = opened.checkpoint, opened.ranker
    ranker.wait()
    ckpt_hash = checkpoint_hash(ckpt)
    verdicts: Counter[str] = Counter()
    searched = 0
    for node in ckpt.nodes.values():
        search = NodeSearch(ckpt, node.id, ranker)
        result = search.result
        if not node.ancestor_ids or (node.status == "pending" and result.recorded is None):
            continue
        searched += 1
        hits = {h.entry_id: h.rank for h in result.hits}
        missed = {m.entry_id for m in result.missed}
        scope = {e.id for e in eligible_entries(ckpt, node.ancestor_ids, ckpt_hash, result.as_of)}
        assert len(scope) == result.eligible
        for entry in ckpt.entries:
            got = search.why(entry)
            verdicts[got.verdict] += 1
            if entry.id in hits:
                assert got.verdict in ("seen", "context") and got.hit["rank"] == hits[entry.id]
            elif entry.id in missed:
                assert got.verdict == "window", (node.id, entry.id)
            elif entry.id in scope:
                assert got.verdict == "limit", (node.id, entry.id)
            else:
                assert got.verdict in ("time", "searchable", "scope"), (node.id, entry.id)
    assert searched >= 30 and {"seen", "window", "limit", "time", "scope"} <= set(verdicts)


def test_an_entry_is_named_by_id_passage_id_or_a_unique_part_of_its_text(run):
    ckpt = run.checkpoint
    texts = Counter(e.text for e in ckpt.entries)
    entry = next(  # a RESULT SUMMARY no other entry quotes
        e
        for e in ckpt.entries
        if e.text.startswith("RESULT SUMMARY") and sum(e.text[:60] in t for t in texts) == 1
    )
    assert resolve_entry(ckpt, entry.id) == entry
    assert resolve_entry(ckpt, entry.letta_id) == entry
    assert resolve_entry(ckpt, entry.letta_id[:13]) == entry
    assert resolve_entry(ckpt, entry.text[:60]) == entry
    assert resolve_entry(ckpt, entry.text[:60].upper()) == entry
    with pytest.raises(EntryRefError, match=r"'RESULT SUMMARY' matches \d+ entries: .* …"):
        resolve_entry(ckpt, "RESULT SUMMARY")
    with pytest.raises(EntryRefError, match="no entry matches 'no such words anywhere'"):
        resolve_entry(ckpt, "no such words anywhere")


def test_saw_why_prints_the_chain_and_its_json_carries_every_step(generated, capsys):
    node_id = generated.planted.echo_parent
    path = str(generated.path)
    assert main(["saw", path, node_id, "--why", "Ablate on top", "--json"]) == 2
    err = capsys.readouterr().err  # (a direction is no entry: ARI stores no start-up query)
    assert "no entry matches 'Ablate on top'" in err and err.count("\n") == 1
    ckpt = open_run(RunOptions(checkpoint=generated.path, index=False)).checkpoint
    parent = ckpt.nodes[node_id].parent_id
    summary = next(e for e in ckpt.entries_by_node.get(parent, []) if "RESULT SUMMARY" in e.text)
    assert main(["saw", path, node_id, "--why", summary.id, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "ari-mem-tui/why" and data["verdict"] == "context"
    assert [s["key"] for s in data["steps"]] == [
        "searched", "time", "searchable", "scope", "window", "match", "limit", "context"
    ]  # fmt: skip
    assert data["headline"].startswith("node ") and "Tier 1b" in data["headline"]
    assert all(s["says"] for s in data["steps"])
    assert main(["saw", path, node_id, "--why", summary.id]) == 0
    text = capsys.readouterr().out
    assert "seen by ARI but dropped from the context" in text
    assert "✗ in the context" in text and "in the window" not in text  # (no window here)
    assert main(["saw", path, node_id, "--why", "RESULT SUMMARY"]) == 2
    assert "matches" in capsys.readouterr().err


def test_a_letta_server_s_window_and_its_whole_ranking(small_ckpt):
    """GIVEN a Letta server holding the run as ARI left it (the fake: its own ranking), WHEN
    every node is asked about every entry its post-filter keeps, THEN the window and limit
    steps are the server's: an entry past its top_k window has the global rank the server's
    whole ranking gives (asked for once, as the server knows no rank past its window), one
    inside it is kept or past the limit by its place among the kept rows."""
    from datetime import UTC, datetime

    from fake_letta import SEPARATOR, FakeLetta
    from letta_helpers import as_original_server, letta_args

    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.letta.source import open_letta_run

    with FakeLetta() as fake:
        agent = as_original_server(fake, small_ckpt)
        ckpt = load_checkpoint(small_ckpt)
        run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt))
        ckpt_hash = checkpoint_hash(ckpt)
        below = inside = 0
        for node in ckpt.nodes.values():
            if not node.ancestor_ids or node.status == "pending":
                continue
            search = NodeSearch(ckpt, node.id, run.ranker)
            end = datetime.fromtimestamp(search.before, tz=UTC).isoformat()
            _, status, body = fake.route(
                "GET",
                f"/v1/agents/{agent}/archival-memory/search",
                {"query": [search.result.query], "top_k": ["100000"], "end_datetime": [end]},
                None,
            )
            assert status == 200
            order = [row["id"] for row in body["results"]]
            glob = {pid: g for g, pid in enumerate(order)}
            footers = [
                json.loads(row["content"].rpartition(SEPARATOR)[2]) for row in body["results"]
            ]
            kept = [
                pid
                for pid, f in zip(order[:TOP_K], footers[:TOP_K], strict=True)
                if f["kind"] == "node_scope" and f["node_id"] in node.ancestor_ids
            ]
            for entry in eligible_entries(ckpt, node.ancestor_ids, ckpt_hash, search.before):
                got, g = search.why(entry), glob[entry.letta_id]
                if g >= TOP_K:
                    below += 1
                    assert (
                        got.verdict == "window" and got.step("window").numbers["global_rank"] == g
                    )
                else:
                    inside += 1
                    rank = kept.index(entry.letta_id) + 1
                    assert (got.verdict == "limit") == (rank > LIMIT)
                    assert got.step("limit").numbers["rank"] == rank
    assert below and inside


class _Elsewhere:
    """An entry as another checkpoint's passage shows it (its footer's ari_checkpoint hash)."""

    def __init__(self, entry, footer: str) -> None:
        self._entry, self.ari_checkpoint = entry, footer

    def __getattr__(self, name: str):
        return getattr(self._entry, name)


def test_another_checkpoint_s_passage_is_not_searchable_and_says_both_hashes(demo_ckpt):
    """GIVEN a hit of a node, WHEN the same passage carries another checkpoint's footer hash
    (a Letta server shared by two runs), THEN ARI's post-filter drops it: the verdict is
    "searchable", reason "other-checkpoint", with both hashes, and the text names them."""
    opened = open_run(RunOptions(checkpoint=demo_ckpt, embedder="bm25", index=False))
    ckpt = opened.checkpoint
    ckpt.checkpoint_hash = ours = "5ca1ab1e0000"  # (as a Letta server's footers tell it)
    node_id, search = next(
        (n.id, s)
        for n in ckpt.nodes.values()
        if n.ancestor_ids and (s := NodeSearch(ckpt, n.id, opened.ranker)).result.hits
    )
    hit = ckpt.entries_by_id[search.result.hits[0].entry_id]
    assert search.why(hit).verdict == "seen"
    got = search.why(_Elsewhere(hit, "0123456789abcdef"))
    step = got.step("searchable")
    assert got.verdict == "searchable" and step.reason == "other-checkpoint"
    assert step.numbers == {"entry_checkpoint": "0123456789abcdef", "run_checkpoint": ours}
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(why_text(got))
    text = console.export_text()
    assert "another checkpoint's passage (ari_checkpoint 0123456789abcdef, this run's " in text
    assert node_id in got.node_id
