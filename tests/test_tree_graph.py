"""The run's tree is a networkx DiGraph (`Checkpoint.graph`), and every walk the tool makes of
it is networkx's: lineage, the path to a root, descendants, the lowest common ancestor, depths
in a topological walk, a broken tree's cycles, the preorder health numbers nodes by.

A 20,000-deep chain (no ancestor_ids: its scopes are rebuilt from the tree) is walked with the
recursion limit a few frames above the test's own depth: any walk that recursed per level would
raise RecursionError (networkx's recursive functions, such as `dfs_tree` with a depth limit or
`lowest_common_ancestor` on trees in older versions, are not used).
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import networkx as nx
import pytest

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.health import Lineages
from ari_mem_tui.model import ParentChain
from ari_mem_tui.render.words import shared_memory_words, unseen_words
from tests.checkpoint_helpers import node, write_tree

DEPTH = 20_000


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory):
    """n0 → … → n19999, a branch b1 → b2 off n10, a second root r; no ancestor_ids."""
    folder = tmp_path_factory.mktemp("chain")
    nodes = [{"id": f"n{i}", "parent_id": f"n{i - 1}" if i else None} for i in range(DEPTH)]
    nodes += [{"id": "b1", "parent_id": "n10"}, {"id": "b2", "parent_id": "b1"}, {"id": "r"}]
    (folder / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    return load_checkpoint(folder)


@pytest.fixture
def shallow_stack():
    """The recursion limit 60 frames above this test's depth (restored after)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 60)
    yield
    sys.setrecursionlimit(old)


def test_the_graph_is_networkx_with_the_attributes_the_views_read(chain) -> None:
    graph = chain.graph
    assert isinstance(graph, nx.DiGraph) and len(graph) == DEPTH + 3
    assert graph.nodes["n19999"]["node"] is chain.nodes["n19999"]  # the tree widget's label
    assert graph.nodes["n19999"]["depth"] == DEPTH - 1 and graph.nodes["b2"]["depth"] == 12
    assert chain.roots == ["n0", "r"]
    assert list(graph.successors("n10")) == ["n11", "b1"]  # the tree's order


def _recurse(n: int) -> int:
    return 0 if n == 0 else 1 + _recurse(n - 1)


def test_every_walk_of_a_20000_deep_chain_is_iterative(chain, shallow_stack) -> None:
    with pytest.raises(RecursionError):  # the limit bites: 200 levels are too many
        _recurse(200)
    deepest = f"n{DEPTH - 1}"
    path = chain.tree_path(deepest)
    assert len(path) == DEPTH and path[0] == "n0" and path[-1] == deepest
    scope = chain.nodes[deepest].ancestor_ids
    assert type(scope) is ParentChain and len(scope) == DEPTH - 1 and "n0" in scope
    assert chain.lineage(deepest) == path
    order = list(chain.tree_order())
    assert order[:12] == [f"n{i}" for i in range(12)] and order[-3:] == ["b1", "b2", "r"]
    assert len(order) == DEPTH + 3
    assert len(chain.descendants("n0")) == DEPTH + 1 and chain.descendants("r") == set()
    assert chain.common_ancestor(deepest, "b2") == "n10"
    assert chain.common_ancestor(deepest, "r") is None
    assert chain.shared_scope(deepest, "b2") == [f"n{i}" for i in range(11)]
    assert chain.with_tree_ancestors(["b2", deepest]) == set(path) | {"b1", "b2"}
    lineages = Lineages(chain, None)
    assert "n10" in lineages.scope(chain.nodes["b2"]) and "n11" not in lineages.scope(
        chain.nodes["b2"]
    )
    assert lineages.eligible(chain.nodes[deepest], None) == 0  # (no memory in this run)


def test_what_d_dims_and_what_compare_shares(chain) -> None:
    assert unseen_words(chain, "b1") == (
        "dimming the 19991 nodes b1's search could not see: 1 below it (they started after"
        " it), 19990 on other branches"
    )
    assert shared_memory_words(chain, "b2", "n12") == (
        "memory both could read: 0 entries of 11 nodes, n0 … n10"
    )
    assert shared_memory_words(chain, "b2", "r") == (
        "no memory both could read (no node is in both scopes)"
    )


def test_a_broken_trees_cycles_are_cut_and_named_in_parent_id_order(tmp_path: Path) -> None:
    nodes = [
        node("root"),
        node("x", "z", ["z"]),
        node("y", "x", ["x"]),
        node("z", "y", ["y"]),
        node("w", "x", ["x"]),  # hangs off the cycle
        node("s", "s", ["s"]),  # its own parent
    ]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    assert nx.is_directed_acyclic_graph(ckpt.graph)
    assert ckpt.roots == ["root", "x", "s"]  # cut at the earliest-created node of each
    whys = [p.why for p in ckpt.problems if "parent_id cycle" in p.why]
    assert whys == ["parent_id cycle: x → z → y", "parent_id cycle: s"]
    assert ckpt.tree_path("w") == ["x", "w"] and ckpt.tree_path("y") == ["x", "y"]
    assert ckpt.graph.nodes["z"]["depth"] == 2
