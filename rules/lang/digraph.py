"""A small directed graph and the few algorithms the analyses run on it: strongly connected
components, topological order, reachability.

The analyses' graphs have a node per predicate or pattern, tens to thousands of them; a plain
dict of dicts serves them, and keeps a general graph library out of the start-up of every run.

>>> g = DiGraph()
>>> g.add_edge("a", "b", negative=False); g.add_edge("b", "a", negative=True); g.add_edge("b", "c")
>>> g["b"]["a"]["negative"], g.has_edge("c", "b"), sorted(descendants(g, "c")), sorted(descendants(g, "a"))
(True, False, [], ['b', 'c'])
>>> [sorted(c) for c in strongly_connected_components(g)]
[['c'], ['a', 'b']]
>>> list(topological_sort(DiGraph([(2, 1), (3, 1)])))
[2, 3, 1]
"""

from __future__ import annotations

from typing import Hashable, Iterable, Iterator

Node = Hashable


class CycleError(ValueError):
    """A topological order was asked of a graph with a cycle."""


class DiGraph:
    """Nodes in insertion order; ``graph[u][v]`` is the attribute dict of the edge ``u -> v``."""

    def __init__(self, edges: Iterable[tuple[Node, Node]] = ()):
        self.succ: dict[Node, dict[Node, dict]] = {}
        self.pred: dict[Node, dict[Node, dict]] = {}
        for u, v in edges:
            self.add_edge(u, v)

    def add_node(self, node: Node) -> None:
        if node not in self.succ:
            self.succ[node] = {}
            self.pred[node] = {}

    def add_edge(self, u: Node, v: Node, **attributes) -> None:
        """Adds the edge (and its nodes), or updates its attributes."""
        self.add_node(u)
        self.add_node(v)
        data = self.succ[u].get(v)
        if data is None:
            data = self.succ[u][v] = self.pred[v][u] = {}
        data.update(attributes)

    def has_edge(self, u: Node, v: Node) -> bool:
        return v in self.succ.get(u, ())

    def __contains__(self, node: Node) -> bool:
        return node in self.succ

    def __getitem__(self, node: Node) -> dict[Node, dict]:
        return self.succ[node]

    @property
    def nodes(self) -> list[Node]:
        return list(self.succ)

    def edges(self, data: str | None = None) -> Iterator[tuple]:
        """``(u, v)``, or ``(u, v, value)`` with ``data``, the edge attribute's value (None if unset)."""
        for u, targets in self.succ.items():
            for v, attributes in targets.items():
                yield (u, v) if data is None else (u, v, attributes.get(data))

    def predecessors(self, node: Node) -> Iterable[Node]:
        return self.pred[node]


def strongly_connected_components(graph: DiGraph) -> list[set]:
    """The components, each after every component it reaches (Tarjan's algorithm, iterative)."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    on_stack: set = set()
    stack: list[Node] = []
    found: list[set] = []
    for root in graph.succ:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph.succ[root]))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.succ[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    found.append(component)
    return found


def topological_sort(graph: DiGraph) -> Iterator[Node]:
    """The nodes, each after its predecessors: generation by generation (the nodes without
    predecessors in insertion order, then those whose last predecessor was in the previous
    generation, ...). :class:`CycleError` if there is a cycle."""
    waiting = {v: len(preds) for v, preds in graph.pred.items() if preds}
    generation = [v for v, preds in graph.pred.items() if not preds]
    while generation:
        following = []
        for node in generation:
            for child in graph.succ[node]:
                waiting[child] -= 1
                if not waiting[child]:
                    following.append(child)
                    del waiting[child]
        yield from generation
        generation = following
    if waiting:
        raise CycleError("the graph has a cycle")


def descendants(graph: DiGraph, source: Node) -> set:
    """The nodes other than ``source`` that it reaches."""
    seen: set = {source}
    todo = [source]
    while todo:
        for child in graph.succ[todo.pop()]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    seen.discard(source)
    return seen


def has_path(graph: DiGraph, source: Node, target: Node) -> bool:
    """Whether ``target`` is ``source`` or one of its descendants."""
    return source == target or target in descendants(graph, source)


def shortest_path(edges: Iterable[tuple[Node, Node]], source: Node, target: Node) -> list[Node] | None:
    """The nodes of a shortest path ``source -> ... -> target`` over ``edges``, or None.

    >>> shortest_path([("a", "e"), ("e", "c"), ("c", "a"), ("a", "c")], "a", "c"), shortest_path([("a", "b")], "b", "a")
    (['a', 'c'], None)
    """
    succ: dict[Node, list[Node]] = {}
    for u, v in edges:
        succ.setdefault(u, []).append(v)
    parent: dict[Node, Node | None] = {source: None}
    todo = [source]
    for node in todo:  # (breadth first: the list grows as it is read)
        if node == target:
            path = [node]
            while (node := parent[node]) is not None:
                path.append(node)
            return path[::-1]
        for child in succ.get(node, ()):
            if child not in parent:
                parent[child] = node
                todo.append(child)
    return None
