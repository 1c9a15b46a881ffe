"""Second-hand leaks: an entry that keeps a leaking read's result (ARI's automatic `Tool …`
entry) carries another branch's memory; a later reader of it received that memory second-hand.

On small runs written file by file as ARI writes them: the stored result encoded as the agent
loop encodes it (the MCP text as FastMCP indents it, the envelope dumped with
ensure_ascii=False, cut at 1,000 characters), the trace_log call beside it, the access log's
read and write events. Then the reader of stored results alone, property-tested on every place
the cut can fall; and the audit's work on deep chains and long finding lists, counted (not
timed): linear in the run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pydantic_core
import pytest
from checkpoint_helpers import (
    T0,
    iso,
    node,
    read_event,
    scope,
    write_access,
    write_backup,
    write_event,
    write_tree,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from ari_mem_tui.audit import AuditReport, Finding, SecondHand, audit, findings_by_node
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.tool_entries import stored_read, stored_texts
from ari_mem_tui.cli import main
from ari_mem_tui.model.records import ParentChain
from ari_mem_tui.render.dossier import dossier_json
from ari_mem_tui.render.findings import findings_markdown, findings_text
from ari_mem_tui.render.report import AUDIT_ROWS, render_audit
from ari_mem_tui.search.embedded import BM25Ranker, Pool
from ari_mem_tui.search.replay import replay

ROOT_TEXT = "root: baseline CSR at 9.1 GFlops_per_s on webbase-1M"
C_TEXT = "c: the secret of branch c, NUMA first-touch gives 1.6x"


def mcp_text(value: dict) -> str:
    """What a memory-skill tool returning `value` sends (FastMCP's indented JSON)."""
    return pydantic_core.to_json(value, indent=2).decode()


def kept(tool: str, value: dict) -> str:
    """ARI's automatic entry of an LLM call of `tool` that returned `value` (agent/loop.py)."""
    return f"Tool {tool}: " + json.dumps({"result": mcp_text(value)}, ensure_ascii=False)[:1000]


def trace(tool: str, args: dict, value: dict) -> list[str]:
    """The call and result lines agent/loop.py appends to the caller's trace_log."""
    return [f"→ {tool}({json.dumps(args)})", "  ← " + str({"result": mcp_text(value)})]


def row(letta_id: str, node_id: str, text: str, score: float = 1.0) -> dict:
    return {"entry_id": letta_id, "node_id": node_id, "text": text, "metadata": {}, "score": score}


class Run:
    """root → a → b and root → c → d. a's LLM searches c's memory (a scope violation and a
    leak): its kept result quotes c's passage; a then searches its own lineage (root): that
    kept result quotes root's only. b, a's child, reads a's memory at its start (the
    inheritance burst, then its start-up search); d, c's child, reads a's memory by an LLM
    get_node_memory (a leak of its own)."""

    def __init__(self, path: Path, root_text: str = ROOT_TEXT) -> None:
        self.path, self.entries, self.events = path, [], []
        self.traces: dict[str, list[str]] = {n: [] for n in ("root", "a", "b", "c", "d", "e")}
        self.add("root", "p_root", root_text, 10)
        self.add("c", "p_c", C_TEXT, 150)
        rows = [row("p_root", "root", root_text, 1.0), row("p_c", "c", C_TEXT, 0.99)]
        self.llm_read("a", 200, "search_memory", {"query": "secret", "ancestor_ids": ["root", "c"], "limit": 5}, {"results": rows}, 1)  # fmt: skip
        self.tainted = self.entries[-1]["text"]
        rows = [row("p_root", "root", root_text)]
        self.llm_read("a", 210, "search_memory", {"query": "baseline", "ancestor_ids": ["root"], "limit": 5}, {"results": rows}, 2)  # fmt: skip
        self.lineage = self.entries[-1]["text"]

    def add(self, owner: str, letta_id: str, text: str, at: float, meta: dict | None = None):
        self.entries.append(scope(owner, text, T0 + at, meta))
        self.events.append(write_event(T0 + at + 0.1, owner, letta_id, text, meta))

    def llm_read(self, reader: str, at: float, tool: str, args: dict, value: dict, step: int):
        """An LLM read: its event (logged under the reader, the last writer), trace lines and
        automatic entry."""
        if tool == "get_node_memory":
            target = args["node_id"]
            results = [
                {"src_node_id": target, "entry_id": e["id"], "type": None}
                for e in self.rows_of(target, at)
            ]
            event = read_event(T0 + at, reader, "inherit:get_node_memory", [target], len(results), results)  # fmt: skip
        else:
            results = [{"entry_id": r["entry_id"], "src_node_id": r["node_id"], "score": r["score"]} for r in value["results"]]  # fmt: skip
            event = read_event(T0 + at, reader, args["query"], args["ancestor_ids"], args["limit"], results)  # fmt: skip
        self.events.append(event)
        self.traces[reader] += trace(tool, args, value)
        text = kept(tool, value)
        self.add(reader, f"p_{reader}{step}", text, at + 0.5, {"step": step, "tool": tool})

    def rows_of(self, owner: str, before: float) -> list[dict]:
        """`owner`'s entries written before `before`, with their passage ids."""
        ids = {(e["node_id"], e["ts"] - 0.1): e["entry_id"] for e in self.events if e["op"] == "write"}  # fmt: skip
        return [
            {"id": ids[owner, e["ts"]], "text": e["text"], "ts": e["ts"]}
            for e in self.entries
            if e["node_id"] == owner and e["ts"] < T0 + before
        ]

    def startup(self, reader: str, ancestors: list[str], at: float) -> None:
        """ARI's working context: a get_node_memory per ancestor, then the start-up search."""
        for i, target in enumerate(ancestors):
            rows = self.rows_of(target, at)
            results = [{"src_node_id": target, "entry_id": r["id"], "type": None} for r in rows]
            self.events.append(read_event(T0 + at + 0.01 * i, "", "inherit:get_node_memory", [target], len(rows), results))  # fmt: skip
        self.events.append(read_event(T0 + at + 0.1, "", f"direction of {reader}", ancestors, 5, []))  # fmt: skip

    def write(self, access_log: bool = True) -> Path:
        nodes = [
            node("root", created=T0),
            node("a", "root", ["root"], created=T0 + 100),
            node("c", "root", ["root"], created=T0 + 110),
            node("b", "a", ["root", "a"], created=T0 + 300),
            node("d", "c", ["root", "c"], created=T0 + 400),
            node("e", "a", ["root", "a"], created=T0 + 500),
        ]
        for n in nodes:
            n["trace_log"] = self.traces[n["id"]]
        write_tree(self.path, nodes)
        write_backup(self.path, sorted(self.entries, key=lambda e: e["ts"]))
        if access_log:
            write_access(self.path, sorted(self.events, key=lambda e: e["ts"]))
        return self.path


def standard(path: Path, **kwargs) -> Run:
    run = Run(path, **kwargs)
    # a reads its own memory again (its tainted entry included): a leak of its own, found as
    # such, not a second-hand one
    a_rows = [{"text": r["text"], "metadata": {}, "ts": r["ts"]} for r in run.rows_of("a", 250)]
    run.llm_read("a", 250, "get_node_memory", {"node_id": "a"}, {"entries": a_rows}, 3)
    run.startup("b", ["root", "a"], 300.5)
    a_rows = [{"text": r["text"], "metadata": {}, "ts": r["ts"]} for r in run.rows_of("a", 450)]
    run.llm_read("d", 450, "get_node_memory", {"node_id": "a"}, {"entries": a_rows}, 1)
    return run


def ids(report: AuditReport, ckpt) -> dict:
    """The second-hand findings as (reader, via node, origins, kept text)."""
    return {
        (f.node_id, f.via_node, tuple(f.origin_nodes), ckpt.entries_by_id[f.entry_id].text)
        for f in report.second_hand
    }


def test_a_kept_leaking_search_reaches_a_descendant_second_hand(tmp_path: Path) -> None:
    """GIVEN a's kept search result quoting c's passage, read by its child b at b's start
    THEN a's entry is tainted (origin c, by the logged leaking read) and b received c's memory
    second-hand, with the whole chain timed in order; a's kept search of its own lineage is
    not tainted, nor is anyone who read it; d, c's own child, read a's tainted entry but may
    read c's memory: no second-hand finding for d (its read of a is a leak of its own)."""
    run = standard(tmp_path / "run")
    ckpt = load_checkpoint(run.write())
    report = audit(ckpt)
    text = {t.entry_id: ckpt.entries_by_id[t.entry_id].text for t in report.tainted}
    by_text = {text[t.entry_id]: t for t in report.tainted}
    tainted = by_text[run.tainted]
    assert (tainted.node_id, tainted.origin_nodes, tainted.tool) == ("a", ["c"], "search_memory")
    assert tainted.read_ref == "memory_access.jsonl line 3 (trace_log)"
    assert tainted.read_ts == T0 + 200 and tainted.ts == T0 + 200.5
    assert [(p.node_id, p.letta_id, p.text) for p in tainted.passages] == [("c", "p_c", C_TEXT)]
    assert run.lineage not in by_text  # quotes root, a's ancestor, only
    # d's own kept get_node_memory of a quotes a's passages: tainted too, read by nobody
    assert {(t.node_id, tuple(t.origin_nodes)) for t in report.tainted} == {
        ("a", ("c",)),
        ("d", ("a",)),
    }
    assert ids(report, ckpt) == {("b", "a", ("c",), run.tainted)}
    [found] = report.second_hand
    assert found.tool == "get_node_memory" and found.ref.endswith("(inherit-burst)")
    assert found.leak_ts < found.entry_ts < found.ts == T0 + 300.51
    assert found.severity == "warning" and found.targets == ["c"]
    assert [p.text for p in found.passages] == [C_TEXT]
    assert [(f.node_id, f.targets) for f in report.leaks] == [("a", ["c"]), ("d", ["a"])]
    assert findings_by_node(report)["b"] == [found]  # b's own findings: only this


def test_a_passage_the_cut_left_out_is_not_carried(tmp_path: Path) -> None:
    """GIVEN the same leaking search, root's passage first and so long that the kept text is
    cut before c's row begins THEN the read is still a leak but a's entry carries nothing of
    c's: not tainted, and b received nothing second-hand."""
    long = ROOT_TEXT + " " + "x" * 1200
    run = standard(tmp_path / "run", root_text=long)
    assert "p_c" not in run.tainted and C_TEXT[:10] not in run.tainted  # the cut came first
    ckpt = load_checkpoint(run.write())
    report = audit(ckpt)
    assert ("a", ["c"]) in [(f.node_id, f.targets) for f in report.leaks]
    assert [t.node_id for t in report.tainted] == ["d"]
    assert report.second_hand == []


def test_a_passage_cut_inside_its_text_is_carried(tmp_path: Path) -> None:
    """GIVEN root's passage long enough that the cut falls inside c's text THEN the part of
    c's text that was kept is the quoted passage, and b received it second-hand."""
    meta = {"tool": "search_memory"}
    for pad in range(600, 1000, 5):
        run = standard(tmp_path / f"run{pad}", root_text=ROOT_TEXT + " " + "y" * pad)
        quoted = stored_read(run.tainted, meta).quoted
        if len(quoted) == 2 and 5 < len(quoted[1].text) < len(C_TEXT):
            break
    else:
        pytest.fail("no cut inside c's text")
    ckpt = load_checkpoint(run.write())
    report = audit(ckpt)
    tainted = next(t for t in report.tainted if t.node_id == "a")
    [passage] = tainted.passages
    assert C_TEXT.startswith(passage.text) and len(passage.text) < len(C_TEXT)
    assert ids(report, ckpt) == {("b", "a", ("c",), run.tainted)}


def test_a_kept_get_node_memory_is_judged_by_the_node_its_call_read(tmp_path: Path) -> None:
    """GIVEN a's LLM get_node_memory of root (its parent) and of c, root and c each holding an
    entry of the very same text (every node keeps the same get_experiment_context result) THEN
    only the kept read of c is tainted: a get_node_memory result names no node, and the entry
    is matched to the trace_log call whose result it keeps, not to any node holding its text."""
    run = Run(tmp_path / "run")
    same = 'Tool get_experiment_context: {"result": "{\\"primary_metric\\": \\"GFlops_per_s\\"}"}'
    run.add("root", "p_root_ctx", same, 20, {"step": 1, "tool": "get_experiment_context"})
    run.add("c", "p_c_ctx", same, 160, {"step": 1, "tool": "get_experiment_context"})
    for step, (target, at) in enumerate((("root", 220), ("c", 230)), start=3):
        rows = [{"text": r["text"], "metadata": {}, "ts": r["ts"]} for r in run.rows_of(target, at)]
        rows.sort(key=lambda r: r["ts"])
        run.llm_read("a", at, "get_node_memory", {"node_id": target}, {"entries": rows}, step)
    of_c = run.entries[-1]["text"]
    run.startup("b", ["root", "a"], 300.5)
    ckpt = load_checkpoint(run.write())
    report = audit(ckpt)
    texts = {ckpt.entries_by_id[t.entry_id].text: t for t in report.tainted if t.node_id == "a"}
    assert set(texts) == {run.tainted, of_c}
    assert texts[of_c].origin_nodes == ["c"] and texts[of_c].tool == "get_node_memory"
    assert {p.text for p in texts[of_c].passages} == {C_TEXT, same}
    assert ids(report, ckpt) == {("b", "a", ("c",), run.tainted), ("b", "a", ("c",), of_c)}


def test_an_entry_known_by_its_preview_only_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    """GIVEN a's kept get_node_memory of c missing from the backup (written after it): the run
    knows it by its write event's 200-character preview only THEN the preview still names the
    one call it can start, its node is c, and what it quotes of c's passage is tainted memory
    b received second-hand; the backup's copy of the same entry would say no more."""
    run = Run(tmp_path / "run")
    rows = [{"text": C_TEXT, "metadata": {}, "ts": T0 + 150}]
    run.llm_read("a", 230, "get_node_memory", {"node_id": "c"}, {"entries": rows}, 3)
    run.startup("b", ["root", "a"], 300.5)  # b's get_node_memory of a lists it
    [preview_only] = [e for e in run.entries if e["text"].startswith("Tool get_node_memory")]
    run.entries.remove(preview_only)  # not in the backup: its write event only
    ckpt = load_checkpoint(run.write())
    report = audit(ckpt)
    [entry] = [e for e in ckpt.entries_by_node["a"] if e.partial]
    assert entry.text == preview_only["text"][:200] and len(preview_only["text"]) > 200
    [tainted] = [t for t in report.tainted if t.entry_id == entry.id]
    assert tainted.origin_nodes == ["c"] and tainted.tool == "get_node_memory"
    [passage] = tainted.passages
    assert C_TEXT.startswith(passage.text) and passage.text
    assert ("b", "a", ("c",), entry.text) in ids(report, ckpt)


def test_what_a_read_handed_over_is_what_counts(tmp_path: Path) -> None:
    """GIVEN e, a's second child, whose LLM made three reads of its lineage: get_verified_context
    (the access log's bulk read: counts per node), search_research_memory (its event lists the
    search made inside, a's tainted entry first; its kind filter kept root's claim only) and
    search_memory (its event and result list the tainted entry) THEN e received c's memory
    second-hand by the last one only: get_verified_context hands over typed claims, never an
    automatic entry, and search_research_memory only what its filter kept."""
    run = Run(tmp_path / "run")
    claims = [{"entry_id": "p_root", "node_id": "root", "text": ROOT_TEXT}]
    value = {"claims": claims, "limitations": [], "usable_for_claims": []}
    counts = [{"src_node_id": n, "count": len(run.rows_of(n, 510))} for n in ("root", "a")]
    run.events.append(read_event(T0 + 510, "e", "inherit:bulk_get_node_memory", ["root", "a"], 3, counts))  # fmt: skip
    run.traces["e"] += trace("get_verified_context", {"ancestor_ids": ["root", "a"]}, value)
    listed = [
        {"entry_id": "p_a1", "src_node_id": "a", "score": 1.0},
        {"entry_id": "p_root", "src_node_id": "root", "score": 0.99},
    ]
    kept_rows = {"results": [row("p_root", "root", ROOT_TEXT)]}
    args = {"query": "secret", "ancestor_ids": ["root", "a"], "kinds": ["paper_claim"]}
    run.events.append(read_event(T0 + 520, "e", "secret", ["root", "a"], 40, listed))
    run.traces["e"] += trace("search_research_memory", args, kept_rows)
    found_rows = {"results": [row("p_a1", "a", run.tainted), row("p_root", "root", ROOT_TEXT)]}
    args = {"query": "secret", "ancestor_ids": ["root", "a"], "limit": 5}
    run.events.append(read_event(T0 + 530, "e", "secret", ["root", "a"], 5, listed))
    run.traces["e"] += trace("search_memory", args, found_rows)
    ckpt = load_checkpoint(run.write())
    report = audit(ckpt)
    e_reads = [ev for ev in ckpt.access_events if ev.reader == "e"]
    assert [ev.reader_how for ev in e_reads] == ["trace_log"] * 3
    assert ids(report, ckpt) == {("e", "a", ("c",), run.tainted)}
    [found] = report.second_hand
    assert (found.tool, found.ts) == ("search_memory", T0 + 530)


def test_without_an_access_log_the_trace_log_reads_stand_in(tmp_path: Path) -> None:
    """GIVEN no access log (ARI_MEMORY_ACCESS_LOG=off): the leak is seen in a's trace_log only,
    and b's LLM get_node_memory of a (in b's trace_log) returned the tainted entry THEN b
    received c's memory second-hand, said with b's trace_log call (untimed)."""
    run = Run(tmp_path / "run")
    a_rows = [{"text": r["text"], "metadata": {}, "ts": r["ts"]} for r in run.rows_of("a", 350)]
    run.llm_read("b", 350, "get_node_memory", {"node_id": "a"}, {"entries": a_rows}, 1)
    ckpt = load_checkpoint(run.write(access_log=False))
    report = audit(ckpt)
    [found] = report.second_hand
    assert (found.node_id, found.via_node, found.origin_nodes) == ("b", "a", ["c"])
    assert found.ref == "trace_log of b #0" and found.ts is None
    assert found.leak_ref == "trace_log of a #0" and found.leak_ts is None


def test_the_outputs_show_the_chain(tmp_path: Path, capsys) -> None:
    """`audit --json` lists second_hand with node_id, entry_id, via_node, origin_nodes and the
    chain's times; the text lists them apart from leaks and counts them in the verdict; the
    exit code is the leaks' (1), as without them; the Hits findings and the dossier of the
    reader show origin → leak → entry → reader."""
    run = standard(tmp_path / "run")
    path = run.write()
    assert main(["audit", str(path), "--json", "--no-letta"]) == 1
    data = json.loads(capsys.readouterr().out)
    [item] = data["second_hand"]
    assert {k: item[k] for k in ("node_id", "via_node", "origin_nodes")} == {
        "node_id": "b",
        "via_node": "a",
        "origin_nodes": ["c"],
    }
    assert item["entry_id"] in {t["entry_id"] for t in data["tainted"]}
    assert item["leak_ts"] == T0 + 200 and item["entry_ts"] == T0 + 200.5
    assert item["ts"] == T0 + 300.51 and item["kind"] == "second_hand"
    assert main(["audit", str(path), "--no-letta"]) == 1
    out = capsys.readouterr().out
    assert "Second-hand leaks (another branch's memory" in out
    assert "2 leaks, 1 scope violation, 1 second-hand leak, no rejected writes" in out
    ckpt = load_checkpoint(path)
    [finding] = findings_by_node(audit(ckpt))["b"]
    shown = findings_text([finding]).plain
    for line in (
        "⚠ second-hand leak b received memory of c second-hand",
        "origin  c: their memory, outside b's lineage",
        f"leak    a's search_memory at {iso_shown(T0 + 200)} · memory_access.jsonl line 3",
        f"reader  b's get_node_memory at {iso_shown(T0 + 300.51)} returned it",
        f"⚠ c {C_TEXT}",
    ):
        assert line in shown, shown
    markdown = "\n".join(findings_markdown([finding], lambda v, n=200: str(v)[:n]))
    assert "### second-hand leak: b received memory of c second-hand" in markdown
    assert f"| yes | c | p_c | {C_TEXT} |" in markdown
    dossier = dossier_json(replay(ckpt, "b", BM25Ranker(Pool(ckpt.entries))), ckpt)
    [kept] = dossier["findings"]  # (built through its output model: a field undeclared fails)
    assert (kept["kind"], kept["via_node"], kept["origin_nodes"]) == ("second_hand", "a", ["c"])


def iso_shown(ts: float) -> str:
    return iso(ts)[:19].replace("T", " ") + " UTC"


def test_second_hand_findings_alone_do_not_make_the_exit_code() -> None:
    report = AuditReport(
        second_hand=[SecondHand(severity="warning", kind="second_hand", explanation="x")]
    )
    assert not report.has_findings
    report.leaks = [Finding(severity="error", kind="leak", explanation="y")]
    assert report.has_findings


# ---------------------------------------------------------------- the reader of kept results

ROW_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=300
)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(ROW_TEXT, min_size=1, max_size=5), indent=st.booleans(), ascii_=st.booleans())
def test_the_quoted_passages_are_what_the_cut_kept(texts, indent, ascii_) -> None:
    """GIVEN a search result of any texts (quotes, backslashes, newlines, CJK, controls),
    encoded as ARI encodes it (or compact, or with ASCII escapes) and cut at every place
    THEN the quoted passages are the first rows, in order, each quoted text a prefix of its
    row's text, whole for every row but the last; longer cuts quote no less; uncut, every
    row is quoted whole."""
    rows = [row(f"p{i}", f"n{i}", t) for i, t in enumerate(texts)]
    inner = mcp_text({"results": rows}) if indent else json.dumps({"results": rows})
    full = "Tool search_memory: " + json.dumps({"result": inner}, ensure_ascii=ascii_)
    meta = {"step": 1, "tool": "search_memory"}
    seen = 0
    for cut in range(len("Tool search_memory: "), len(full) + 1, 7):
        stored = stored_read(full[:cut], meta)
        quoted = stored.quoted if stored is not None else ()  # None: not even `{"result": "`
        assert stored is not None or seen == 0
        assert [q.index for q in quoted] == list(range(len(quoted)))
        for q in quoted:
            assert texts[q.index].startswith(q.text) and q.node_id == f"n{q.index}"
        assert all(q.text == texts[q.index] for q in quoted[:-1])
        assert sum(len(q.text) for q in quoted) >= seen
        seen = sum(len(q.text) for q in quoted)
    assert [q.text for q in stored_read(full, meta).quoted] == texts


def test_only_the_agent_loops_own_entries_are_read() -> None:
    """The text alone is not enough (an LLM's add_memory may say anything): the metadata's tool
    must be the read's; an error envelope holds no result; ARI's encoding is matched both ways."""
    value = {"results": [row("p1", "n1", "words")]}
    text = kept("search_memory", value)
    assert stored_read(text, {"step": 2, "tool": "search_memory"}) is not None
    assert stored_read(text, {"type": "finding"}) is None
    assert stored_read(text, {"tool": "get_node_memory"}) is None
    error = "Tool search_memory: " + json.dumps({"error": "Tool 'search_memory' failed"})
    assert stored_read(error, {"tool": "search_memory"}) is None
    assert text in stored_texts("search_memory", mcp_text(value))
    entries = kept("get_node_memory", {"entries": [{"text": "é", "metadata": {}, "ts": 1.5}]})
    [q] = stored_read(entries, {"tool": "get_node_memory"}, node_read="n7").quoted
    assert (q.node_id, q.letta_id, q.text) == ("n7", None, "é")


# ---------------------------------------------------------------- work, counted (not timed)


def deep_chain(path: Path, depth: int) -> Path:
    """A chain without ancestor_ids whose every node searched its parent's memory once (an
    LLM call in its trace_log): every read is judged against a rebuilt lineage."""
    nodes = []
    for i in range(depth):
        value = {"results": [row(f"p{i - 1}", f"n{i - 1}", "x")]} if i else {"results": []}
        args = {"query": "q", "ancestor_ids": [f"n{i - 1}"] if i else [], "limit": 5}
        nodes.append(
            {
                "id": f"n{i}",
                "parent_id": f"n{i - 1}" if i else None,
                "status": "success",
                "trace_log": trace("search_memory", args, value),
            }
        )
    path.mkdir()
    (path / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    return path


def test_the_audit_walks_a_deep_chain_once(tmp_path: Path, monkeypatch) -> None:
    """GIVEN chains of 300 and 600 nodes without ancestor_ids, each node's read judged THEN the
    audit walks no parent links (its ancestor test is numbered once): it was every read's
    whole lineage, 45k and 180k links, quadratic (a 20,000-deep chain: 200 million, 43 s)."""
    walked = [0]
    up = ParentChain._up

    def counted(self):
        for item in up(self):
            walked[0] += 1
            yield item

    monkeypatch.setattr(ParentChain, "_up", counted)
    steps = []
    for depth in (300, 600):
        ckpt = load_checkpoint(deep_chain(tmp_path / f"chain{depth}", depth), use_index=False)
        walked[0] = 0
        report = audit(ckpt)
        assert report.leaks == [] and report.scope_violations == []
        steps.append(walked[0])
    assert steps[0] <= 300 and steps[1] <= 600, steps  # linear at most (it is 0)


def test_the_text_audit_lays_out_a_bounded_table(tmp_path: Path) -> None:
    """GIVEN 300 and 3,000 unattributed reads THEN the text lists AUDIT_ROWS of each and counts
    the rest: the same table rows for both (a Rich row ~0.5 ms: 20,000 of them made the text
    audit ten times the --json one)."""
    lines = []
    for n in (300, 3000):
        report = AuditReport(
            unattributed=[
                Finding(severity="info", kind="unattributed", explanation=f"read {i}", ref="x")
                for i in range(n)
            ]
        )
        out = io.StringIO()
        render_audit(Console(file=out, width=100), report)
        text = out.getvalue()
        assert f"read {AUDIT_ROWS - 1} " in text and f"read {AUDIT_ROWS} " not in text
        assert f"{AUDIT_ROWS:,} of {n:,} shown; all: `ari-mem-tui audit CKPT --json`" in text
        lines.append(text.count("\n"))
    assert lines[0] == lines[1]
