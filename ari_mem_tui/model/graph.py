"""The run's parent → child links: the few graph operations the tool uses, and nothing more.

A run's tree needs children in their order, parents, membership and a depth-first walk. networkx
did that, but importing it took ~0.1–0.2 s of every command's start (its algorithms all load at
once), more than a 50-node run's whole load; these dicts do the same work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


class RunGraph:
    """Directed parent → child edges between node ids, in insertion order (as the tree lists
    them), at most one edge per pair."""

    __slots__ = ("_children", "_parents")

    def __init__(self) -> None:
        self._children: dict[str, dict[str, None]] = {}  # id -> children, ordered
        self._parents: dict[str, dict[str, None]] = {}

    def add_node(self, node_id: str) -> None:
        if node_id not in self._children:
            self._children[node_id] = {}
            self._parents[node_id] = {}

    def add_nodes_from(self, node_ids: Iterable[str]) -> None:
        for node_id in node_ids:
            self.add_node(node_id)

    def add_edge(self, parent: str, child: str) -> None:
        self.add_node(parent)
        self.add_node(child)
        self._children[parent][child] = None
        self._parents[child][parent] = None

    def add_edges_from(self, edges: Iterable[tuple[str, str]]) -> None:
        for parent, child in edges:
            self.add_edge(parent, child)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._children

    def __iter__(self) -> Iterator[str]:
        return iter(self._children)

    def __len__(self) -> int:
        return len(self._children)

    @property
    def nodes(self) -> list[str]:
        return list(self._children)

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Every (parent, child), parents in node order, children in theirs."""
        return [(p, c) for p, kids in self._children.items() for c in kids]

    def successors(self, node_id: str) -> Iterator[str]:
        return iter(self._children[node_id])

    def predecessors(self, node_id: str) -> Iterator[str]:
        return iter(self._parents[node_id])

    def preorder(self, root: str) -> Iterator[str]:
        """Nodes reachable from `root`, depth first, children in order; iterative, so a chain
        thousands of nodes deep costs no recursion. A node is yielded once."""
        seen: set[str] = set()
        stack = [iter((root,))]
        while stack:
            for node_id in stack[-1]:
                if node_id in seen:
                    continue
                seen.add(node_id)
                yield node_id
                stack.append(iter(self._children.get(node_id, ())))
                break
            else:
                stack.pop()
