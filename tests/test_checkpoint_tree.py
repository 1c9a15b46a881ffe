"""Tree loading (§2): precedence, retries, legacy shapes, broken structures."""

from __future__ import annotations

import json
import os

from checkpoint_helpers import chain_tree, node, write_tree

from ari_mem_tui.checkpoint import jsonfile
from ari_mem_tui.checkpoint.load import checkpoint_hash, load_checkpoint


def problems_about(ckpt, text):
    return [p for p in ckpt.problems if text in p.line()]


def test_current_tree_loads_into_graph_and_models(tmp_path):
    write_tree(tmp_path, chain_tree(), run_id="20260101000000_run")
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.tree_source == "tree.json"
    assert ckpt.run_id == "20260101000000_run"
    assert list(ckpt.nodes) == ["root", "a", "c", "b"]
    assert set(ckpt.graph.edges) == {("root", "a"), ("root", "c"), ("a", "b")}
    assert ckpt.roots == ["root"]
    assert ckpt.nodes["b"].ancestor_ids == ["root", "a"]
    assert ckpt.nodes["b"].label == "improve"
    assert not ckpt.nodes["b"].scope_reconstructed
    assert [p for p in ckpt.problems if p.severity != "info"] == []


def test_unknown_node_keys_are_kept(tmp_path):
    write_tree(tmp_path, [node("root", hypothesis="h1", score=0.3)])
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.nodes["root"].extra_fields["hypothesis"] == "h1"


def test_nodes_tree_json_is_the_fallback_and_gives_the_goal(tmp_path):
    write_tree(tmp_path, chain_tree(), name="nodes_tree.json", experiment_goal="Goal text")
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.tree_source == "nodes_tree.json"
    assert ckpt.experiment_goal == "Goal text"
    assert len(ckpt.nodes) == 4


def test_experiment_md_wins_over_nodes_tree_goal(tmp_path):
    write_tree(tmp_path, chain_tree(), name="nodes_tree.json", experiment_goal="short")
    (tmp_path / "experiment.md").write_text("# Full goal ✓", encoding="utf-8")
    assert load_checkpoint(tmp_path).experiment_goal == "# Full goal ✓"


def test_legacy_node_dirs_newest_non_empty_wins(tmp_path):
    old = write_tree(
        tmp_path, [{"id": "old", "status": "success", "metrics": {}}], name="node_1/tree.json"
    )
    new = write_tree(
        tmp_path, [{"id": "new", "status": "failed", "metrics": {}}], name="node_2/tree.json"
    )
    (tmp_path / "node_3").mkdir()
    (tmp_path / "node_3" / "tree.json").write_text("{}")  # size 2: ignored even though newest
    os.utime(old, (1000, 1000))
    os.utime(new, (2000, 2000))
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.tree_source == "node_2/tree.json"
    assert list(ckpt.nodes) == ["new"]
    assert ckpt.nodes["new"].label == "draft"  # legacy default


def test_tree_json_wins_over_nodes_tree(tmp_path):
    write_tree(tmp_path, [node("t")])
    write_tree(tmp_path, [node("n")], name="nodes_tree.json")
    assert list(load_checkpoint(tmp_path).nodes) == ["t"]


def test_half_written_tree_is_retried_once(tmp_path, monkeypatch):
    path = write_tree(tmp_path, chain_tree())
    full = path.read_text()
    path.write_text(full[: len(full) // 2])
    waits = []

    def writer_finishes(seconds):  # ARI completes its write while we wait
        waits.append(seconds)
        path.write_text(full)

    monkeypatch.setattr(jsonfile.time, "sleep", writer_finishes)
    ckpt = load_checkpoint(tmp_path)
    assert waits == [0.15]
    assert len(ckpt.nodes) == 4
    assert not problems_about(ckpt, "tree.json")


def test_broken_tree_falls_back_and_reports(tmp_path):
    (tmp_path / "tree.json").write_text('{"nodes": [{"id": "x"')
    write_tree(tmp_path, [node("n")], name="nodes_tree.json")
    ckpt = load_checkpoint(tmp_path)
    assert list(ckpt.nodes) == ["n"]
    [problem] = [p for p in ckpt.problems if p.file == "tree.json"]
    assert problem.severity == "error" and "after one retry" in problem.why


def test_no_tree_at_all_is_an_error_problem(tmp_path):
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.tree_source is None and not ckpt.nodes
    assert any(p.severity == "error" for p in ckpt.problems)


def test_missing_directory_does_not_raise(tmp_path):
    ckpt = load_checkpoint(tmp_path / "nope")
    assert ckpt.tree_source is None
    assert ckpt.problems[0].severity == "error"


def test_missing_ancestor_ids_are_rebuilt_and_flagged(tmp_path):
    nodes = chain_tree()
    for item in nodes:
        del item["ancestor_ids"]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.nodes["b"].ancestor_ids == ["root", "a"]
    assert ckpt.nodes["b"].scope_reconstructed and ckpt.nodes["root"].scope_reconstructed
    assert problems_about(ckpt, "rebuilt ancestor_ids of 4 nodes")


def test_scope_invariant_violations_are_reported(tmp_path):
    nodes = chain_tree()
    nodes[3]["ancestor_ids"] = ["root", "c"]  # last != parent
    nodes[1]["depth"] = 3  # len != depth
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    assert problems_about(ckpt, "ancestor_ids[-1]='c' but parent_id='a'")
    assert problems_about(ckpt, "len(ancestor_ids)=1 but depth=3")
    assert ckpt.nodes["b"].ancestor_ids == ["root", "c"]  # kept as written: it is what ARI used


def test_cycles_are_broken_and_reported(tmp_path):
    nodes = [node("root"), node("x", "y", ["y"]), node("y", "x", ["x"]), node("z", "z", ["z"])]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    assert set(ckpt.nodes) == {"root", "x", "y", "z"}
    import networkx as nx

    assert nx.is_directed_acyclic_graph(nx.DiGraph(ckpt.graph.edges))
    assert set(ckpt.roots) == {"root", "x", "z"}
    assert len(problems_about(ckpt, "parent_id cycle")) == 2
    assert problems_about(ckpt, "kept 3 roots")


def test_dangling_parent_and_duplicates(tmp_path):
    nodes = [node("root"), node("a", "ghost", ["ghost"]), node("root", status="failed"), 42, {}]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    assert set(ckpt.nodes) == {"root", "a"}
    assert ckpt.nodes["root"].status == "success"  # first kept
    assert "a" in ckpt.roots
    assert problems_about(ckpt, "parent 'ghost' is not in the tree")
    assert problems_about(ckpt, "duplicate")
    assert problems_about(ckpt, "not an object")
    assert problems_about(ckpt, "no string id")


def test_wrong_field_types_become_problems(tmp_path):
    bad = node("root", depth="x", trace_log="nope", metrics=[1], created_at=5, children=["ok", 3])
    write_tree(tmp_path, [bad])
    ckpt = load_checkpoint(tmp_path)
    root = ckpt.nodes["root"]
    assert root.depth == 0  # recomputed
    assert root.trace_log == [] and root.metrics == {} and root.created_at is None
    assert root.children == ["ok"]
    [problem] = problems_about(ckpt, "ignored wrongly typed fields")
    assert "depth='x'" in problem.why and "trace_log" in problem.why


def test_legacy_shapes(tmp_path):
    nodes = [
        {"id": "root", "parent_id": None, "score_reason": "why", "status": "success"},
        {"id": "k", "parent_id": "root", "label": "label=NodeLabel.IMPROVE"},
        {"id": "m", "parent_id": "root", "label": "NodeLabel.ABLATION"},
        {"id": "o", "parent_id": "root", "label": "replication"},
    ]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.nodes["root"].eval_summary == "why"
    assert ckpt.nodes["root"].label == "draft"
    assert ckpt.nodes["k"].label == "improve"
    assert ckpt.nodes["m"].label == "ablation"
    assert ckpt.nodes["o"].label == "replication"
    assert ckpt.nodes["k"].depth == 1 and ckpt.nodes["k"].ancestor_ids == ["root"]
    infos = [p for p in ckpt.problems if p.severity == "info"]
    assert any("assumed draft" in p.what for p in infos)
    assert any("enum repr" in p.what for p in infos)


def test_nodes_as_a_dict_shape(tmp_path):
    (tmp_path / "tree.json").write_text(json.dumps({"nodes": {"r": {"status": "success"}}}))
    assert list(load_checkpoint(tmp_path).nodes) == ["r"]


def test_non_object_document_is_no_tree(tmp_path):
    (tmp_path / "tree.json").write_text("42")
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.tree_source is None
    assert problems_about(ckpt, "no nodes")


def test_bad_utf8_in_tree_is_replaced_and_reported(tmp_path):
    path = write_tree(tmp_path, [node("root", name="café")])
    path.write_bytes(path.read_bytes().replace("é".encode(), b"\xff"))
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.nodes["root"].name == "caf\ufffd"
    assert problems_about(ckpt, "invalid UTF-8")


def test_checkpoint_hash_is_sha1_of_resolved_path(tmp_path):
    import hashlib

    link = tmp_path / "link"
    real = tmp_path / "real"
    real.mkdir()
    link.symlink_to(real)
    expected = hashlib.sha1(str(real.resolve()).encode()).hexdigest()[:12]
    assert checkpoint_hash(link) == expected == checkpoint_hash(real)
    assert len(expected) == 12


def test_non_string_trace_lines_are_named_and_the_strings_kept(tmp_path):
    bad = node("root", trace_log=['→ get_node_memory({"node_id": "root"})', 7, None])
    write_tree(tmp_path, [bad])
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.nodes["root"].trace_log == ['→ get_node_memory({"node_id": "root"})']
    [problem] = problems_about(ckpt, "ignored wrongly typed fields")
    assert "2 non-string items of trace_log" in problem.why


def _tree_as_read(tmp_path, monkeypatch, plain: bool):
    from ari_mem_tui.checkpoint import tree

    problems: list = []
    with monkeypatch.context() as patch:
        if not plain:
            patch.setattr(tree, "_plain_nodes", lambda _raw, _fields: None)
        result = tree.load_tree(tmp_path, problems)
    nodes = {
        node_id: (node.as_data(), node.trace_log, node.artifacts)
        for node_id, node in result.nodes.items()
    }
    return nodes, [p.as_data() for p in problems]


def test_plain_nodes_read_as_structs_equal_the_per_key_reader(tmp_path, monkeypatch):
    from ari_mem_tui.checkpoint import tree
    from ari_mem_tui.demo import write_demo

    run = write_demo(tmp_path / "demo", nodes=12, seed=3)
    raw = tree._TOP((run / "tree.json").read_bytes())["nodes"]
    assert tree._plain_nodes(raw) is not None  # (the demo's nodes take the Struct path)
    plain = _tree_as_read(run, monkeypatch, True)
    assert plain == _tree_as_read(run, monkeypatch, False)
    assert plain[0] and any(trace for _, trace, _ in plain[0].values())


def test_a_node_with_a_key_ari_does_not_write_takes_the_per_key_reader(tmp_path):
    from ari_mem_tui.checkpoint import tree

    nodes = chain_tree()
    nodes[1]["custom_field"] = {"a": [1, 2]}
    write_tree(tmp_path, nodes)
    raw = tree._TOP((tmp_path / "tree.json").read_bytes())["nodes"]
    assert tree._plain_nodes(raw) is None
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.nodes[nodes[1]["id"]].extra_fields == {"custom_field": {"a": [1, 2]}}


def test_checked_nodes_are_the_nodes_msgspec_validates(tmp_path, monkeypatch):
    """`Node.checked` (no second validation pass) gives the node `Node(**fields)` gives, on
    every node of a demo tree with odd fields added; a node whose `scope_reconstructed` is no
    boolean still goes through msgspec, which names it."""
    from ari_mem_tui.demo import write_demo
    from ari_mem_tui.model import Node

    run = write_demo(tmp_path / "demo", nodes=12, seed=5)
    document = json.loads((run / "tree.json").read_text(encoding="utf-8"))
    document["nodes"][2].update(custom={"x": [1]}, has_real_data=False, metrics=None)
    document["nodes"][3]["scope_reconstructed"] = "yes"
    (run / "tree.json").write_text(json.dumps(document), encoding="utf-8")
    checked = load_checkpoint(run)
    monkeypatch.setattr(Node, "checked", classmethod(lambda cls, data: cls(**data)))
    validated = load_checkpoint(run)
    assert list(checked.nodes) == list(validated.nodes)
    for node_id, whole in validated.nodes.items():
        assert checked.nodes[node_id].as_data() == whole.as_data()
        assert checked.nodes[node_id].trace_log == whole.trace_log
    assert checked.nodes[document["nodes"][2]["id"]].extra_fields == {"custom": {"x": [1]}}
    skipped = document["nodes"][3]["id"]
    assert skipped not in checked.nodes
    [problem] = problems_about(checked, "skipped a node")
    assert problem.where == f"node {skipped}" and "scope_reconstructed" in problem.why
