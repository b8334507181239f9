"""The stream history a reasoner keeps for a program change (docs/language.md, "Changing the
program"): the interned stream facts of its recent time points and every background change,
each with its time point.

How far back it keeps them is the program's *reach* (:func:`reach`): the sum of its windows'
ranges, its patterns' ``within`` bounds and its queries' horizons (no conclusion at t depends on
a record older than t - reach, however the windows chain), or the whole stream when something
reaches back without bound.

>>> from dotr.rules import check_text
>>> reach(check_text("a(X) :- [3] <> p(X) .\\nb(X) :- [2] [] a(X) ."))
5
>>> reach(check_text("a(X) :- <> p(X) .")) is None
True
>>> h = History(2)
>>> for t in (1, 2, 5):
...     h.add_point(t, {None: [((7, 1), (t,))]})
>>> [t for t, _ in h.points_from(5 - 2)]
[5]
"""

from __future__ import annotations

from collections import deque
from typing import Iterator

from dotr.rules import ir
from dotr.rules.lang.digraph import DiGraph, strongly_connected_components
from dotr.rules.lang.loader import CheckResult
from dotr.rules.lang.queries.csparql import is_csparql, parse_csparql
from dotr.rules.lang.queries.epsparql import DEFAULT_HORIZON, is_epsparql, parse_epsparql

#: a stream time point kept: its time and its interned facts by stream name
Point = tuple[int, dict]
#: a background change made: its time point, the facts removed and added (interned)
Change = tuple[int, list, list]


def reach(checked: CheckResult) -> int | None:
    """How many time units before t the program's conclusions at t can depend on the stream: the
    sum of every bound it has, or None when something has none (a window without a range or
    counting atoms, an ``@`` head, a recursion through a window, a pattern item without
    ``within``, a C-SPARQL window of the last N triples)."""
    program, total = checked.program, 0
    temporal = [r for r in checked.analysis.temporal if not r.is_fact]
    graph = DiGraph()
    for rule in temporal:
        if rule.at is not None:
            return None
        for lit in rule.body:
            if isinstance(lit, ir.TemporalLiteral):
                if lit.window is None or lit.window.tuple:
                    return None
                total += lit.window.length()
            if isinstance(lit, (ir.TemporalLiteral, ir.AtomLiteral)):
                graph.add_edge(_key(lit.atom), _key(rule.head))
    for component in strongly_connected_components(graph):
        node = next(iter(component))
        if len(component) > 1 or graph.has_edge(node, node):
            return None
    for pattern in program.patterns:
        scopes = [item.scope for item in pattern.items]
        scopes += [a.scope for c in pattern.where for a in _aggregates(c)]
        for scope in scopes:
            if not isinstance(scope, ir.Within):
                return None
            total += int(scope.duration) if scope.unit is None else int(scope.duration * ir.UNIT_MS[scope.unit])
    ms = program.timeunit == "ms"
    for decl in program.queries:
        if is_epsparql(decl.query):
            query, _ = parse_epsparql(decl.name, decl.query, program.prefixes, ms)
            total += query.horizon if query.horizon is not None else DEFAULT_HORIZON[program.timeunit]
        elif is_csparql(decl.query):
            query, _ = parse_csparql(decl, program.prefixes, ms)
            for window in query.windows:
                if window.range is None:
                    return None
                total += window.range
    return total


def _key(atom: ir.Atom) -> tuple:
    return (atom.pred, len(atom.args))


def _aggregates(expr) -> Iterator[ir.Aggregate]:
    if isinstance(expr, ir.Aggregate):
        yield expr
    for part in ("left", "right", "value"):
        if (sub := getattr(expr, part, None)) is not None and not isinstance(sub, (str, int, float)):
            yield from _aggregates(sub)


class History:
    """The stream time points of the last ``reach`` time units (all of them when ``reach`` is
    None) and every background change, interned with the reasoner's dictionary."""

    def __init__(self, reach: int | None):
        self.reach = reach
        self.first: int | None = None  # the first time point evaluated (where the timeline began)
        self.points: deque[Point] = deque()
        self.changes: list[Change] = []

    def add_point(self, t: int, streams: dict) -> None:
        """Keep ``t``'s facts (by stream name), and forget those too old to matter at ``t``."""
        if any(streams.values()):
            self.points.append((t, streams))
        if self.reach is not None:
            points, oldest = self.points, t - self.reach
            while points and points[0][0] < oldest:
                points.popleft()

    def add_change(self, t: int, removed: list, added: list) -> None:
        self.changes.append((t, removed, added))

    def points_from(self, start: int | None) -> list[Point]:
        """The time points kept from ``start`` on (all with None)."""
        return [p for p in self.points if start is None or p[0] >= start]

    def snapshot(self) -> dict:
        return {"reach": self.reach, "first": self.first, "points": [[t, list(s.items())] for t, s in self.points],
                "changes": [list(c) for c in self.changes]}

    @classmethod
    def restore(cls, state: dict) -> "History":
        history = cls(state["reach"])
        history.first = state["first"]
        history.points.extend((t, dict(items)) for t, items in state["points"])
        history.changes = [tuple(c) for c in state["changes"]]
        return history
