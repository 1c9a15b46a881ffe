"""Findings where the node is: `audit --json` lists what each flagged read returned (entry ids,
source nodes, texts joined from the backup), and the dossier carries the node's findings."""

from __future__ import annotations

import json
from pathlib import Path

from ari_mem_tui.audit import audit, findings_by_node
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main
from ari_mem_tui.render.findings import findings_text, glyph_kinds
from ari_mem_tui.render.text import preview


def test_audit_json_lists_the_passages_each_leak_returned(small_ckpt: Path, capsys) -> None:
    assert main(["audit", str(small_ckpt), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    ckpt = load_checkpoint(small_ckpt)
    search = next(f for f in data["leaks"] if f["tool"] == "search_memory")
    assert search["kind"] == "leak" and search["query"] and search["scope"] and search["ts"]
    leaked = [p for p in search["passages"] if p["outside"]]
    assert leaked and all(p["node_id"] in search["targets"] for p in leaked)
    allowed = {*ckpt.nodes[search["node_id"]].ancestor_ids, search["node_id"]}
    for passage in search["passages"]:
        entry = ckpt.entries_by_id[passage["entry_id"]]  # joined: our id, the backup's text
        assert passage["text"] == entry.text and passage["node_id"] == entry.node_id
        assert passage["letta_id"] == entry.letta_id
        assert passage["outside"] == (entry.node_id not in allowed)
    inherit = next(f for f in data["leaks"] if f["tool"] == "get_node_memory")
    assert inherit["query"] == "inherit:get_node_memory" and inherit["passages"]
    assert all(p["outside"] and p["text"] for p in inherit["passages"])
    rejected = data["rejected_writes"][0]
    assert rejected["kind"] == "rejected_write" and rejected["text"] and "CoW" in rejected["reason"]


def test_findings_by_node_and_their_text(small_ckpt: Path) -> None:
    ckpt = load_checkpoint(small_ckpt)
    report = audit(ckpt)
    by_node = findings_by_node(report)
    reader = report.leaks[0].node_id
    assert glyph_kinds(by_node[reader])[0] == "read"
    writer = report.rejected_writes[0].node_id
    assert "rejected" in glyph_kinds(by_node[writer])  # also when it read outside its lineage
    both = [f for f in by_node[reader] if f.kind != "rejected_write"] + by_node[writer]
    assert glyph_kinds(both) == ("read", "rejected")
    assert glyph_kinds([]) == ()
    text = findings_text(by_node[reader]).plain
    leak = next(f for f in by_node[reader] if f.kind == "leak" and f.passages)
    outside = next(p for p in leak.passages if p.outside)
    assert "⚠ leak" in text and "query:" in text and "from outside the lineage" in text
    assert preview(outside.text, 300)[:30] in text  # the leaked passage's own text


def test_the_dossier_carries_the_nodes_findings(small_ckpt: Path, tmp_path: Path) -> None:
    from ari_mem_tui.render.dossier import dossier_json, dossier_markdown
    from ari_mem_tui.search.embedded import BM25Ranker, Pool
    from ari_mem_tui.search.replay import replay

    ckpt = load_checkpoint(small_ckpt)
    reader = audit(ckpt).leaks[0].node_id
    result = replay(ckpt, reader, BM25Ranker(Pool(ckpt.entries)))
    md = dossier_markdown(result, ckpt)
    assert "## Findings (audit)" in md and "### leak:" in md and "| yes |" in md
    data = dossier_json(result, ckpt)
    assert data["findings"] and data["findings"][0]["node_id"] == reader
    assert data["replay"]["as_of_source"] in (
        "start-up search",
        "first start-up read",
        "created_at",
    )
