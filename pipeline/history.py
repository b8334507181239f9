"""The stream history a reasoner keeps for a program change (docs/language.md, "Changing the
program"): the interned stream facts of its recent time points and every background change,
each with its time point.

How far back it keeps them is the program's *reach* (:func:`reach`): the sum of its windows'
ranges, its ``@`` heads' offsets, its patterns' ``within`` bounds and its queries' horizons (no
conclusion at t depends on a record older than t - reach, however the windows chain), at most
a limit (:data:`DEFAULT_LIMIT`, ``dotr run --history``), which is what a program that reaches
back without bound keeps.

>>> from dotr.rules import check_text
>>> reach(check_text("a(X) :- [3] <> p(X) .\\nb(X) :- [2] [] a(X) ."))
5
>>> reach(check_text("a(X) :- <> p(X) .")) is None
True
>>> reach(check_text("@U a(X) :- [3] @T p(X), U = T + 2 ."))
5
>>> h = History(2)
>>> for t in (1, 2, 5):
...     h.add_point(t, {None: [((7, 1), (t,))]})
>>> [t for t, _ in h.points]   # (at 5, what is 2 or less before)
[5]
"""

from __future__ import annotations

from collections import deque
from typing import Iterator

from networkx import DiGraph, strongly_connected_components

from dotr.rules import ir
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.loader import CheckResult
from dotr.rules.lang.queries.csparql import is_csparql, parse_csparql
from dotr.rules.lang.queries.epsparql import DEFAULT_HORIZON, is_epsparql, parse_epsparql

from .state_file import StateFileError

#: a stream time point kept: its time and its interned facts by stream name
Point = tuple[int, dict]
#: how many time units a program keeps at most, by time unit (an hour in ms)
DEFAULT_LIMIT = {"ticks": 10_000, "ms": 3_600_000}
#: a background change made: its time point, the facts removed and added (interned)
Change = tuple[int, list, list]


def reach(checked: CheckResult) -> int | None:
    """How many time units before t the program's conclusions at t can depend on the stream: the
    sum of every bound it has, or None when something has none (a window without a range or
    counting atoms, an ``@`` head at a time not from a window, a recursion through a window, a
    pattern item without ``within``, a C-SPARQL window of the last N triples)."""
    program, total = checked.program, 0
    temporal = [r for r in checked.analysis.temporal if not r.is_fact]
    graph = DiGraph()
    for rule in temporal:
        if rule.at is not None:
            offset = _placement(rule)
            if offset is None:
                return None
            total += abs(offset)
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
    ms, prefixes, parsed = program.timeunit == "ms", program.prefixes, checked.queries
    for decl in program.queries:  # (parsed once: the engines ask the same cache)
        if is_epsparql(decl.query):
            query = parsed.require(f"epsparql {decl.name}", decl.query,
                                   lambda: parse_epsparql(decl.name, decl.query, prefixes, ms), checked.sources)
            total += query.horizon if query.horizon is not None else DEFAULT_HORIZON[program.timeunit]
        elif is_csparql(decl.query):
            query = parsed.require(f"csparql {decl.name}", decl.query,
                                   lambda: parse_csparql(decl, prefixes, ms), checked.sources)
            for window in query.windows:
                if window.range is None:
                    return None
                total += window.range
    return total


def _placement(rule: ir.Rule) -> int | None:
    """How far from its window's ``@T`` an ``@`` head places its atom (``@U`` with ``U = T + k``:
    k), or None when its time does not come from a window with a range."""
    name, offset = getattr(rule.at, "name", None), 0
    if name is None:
        return None
    for lit in rule.body:
        if isinstance(lit, ir.Comparison) and lit.op == "=" and getattr(lit.left, "name", None) == name:
            expr = lit.right
            if not (isinstance(expr, ir.BinOp) and expr.op in "+-" and isinstance(expr.left, ir.Var)
                    and isinstance(expr.right, ir.Num) and isinstance(expr.right.value, int)):
                return None
            name, offset = expr.left.name, offset + expr.right.value * (1 if expr.op == "+" else -1)
    bound = any(isinstance(lit, ir.TemporalLiteral) and isinstance(lit.op, ir.At) and not lit.negated
                and getattr(lit.op.time, "name", None) == name and lit.window is not None and not lit.window.tuple
                for lit in rule.body)
    return offset if bound else None


def _key(atom: ir.Atom) -> tuple:
    return (atom.pred, len(atom.args))


def _aggregates(expr) -> Iterator[ir.Aggregate]:
    if isinstance(expr, ir.Aggregate):
        yield expr
    for part in ("left", "right", "value"):
        if (sub := getattr(expr, part, None)) is not None and not isinstance(sub, (str, int, float)):
            yield from _aggregates(sub)


class History:
    """The stream time points of the last ``reach`` time units and every background change,
    interned with the reasoner's dictionary."""

    def __init__(self, reach: int):
        self.reach = reach
        self.first: int | None = None  # the first time point evaluated (where the timeline began)
        self.points: deque[Point] = deque()
        self.changes: list[Change] = []

    def add_point(self, t: int, streams: dict) -> None:
        """Keep ``t``'s facts (by stream name), and forget those too old to matter at ``t``."""
        if any(streams.values()):
            self.points.append((t, streams))
        points, oldest = self.points, t - self.reach
        while points and points[0][0] < oldest:
            points.popleft()

    def add_change(self, t: int, removed: list, added: list) -> None:
        self.changes.append((t, removed, added))

    def snapshot(self, d: TermDictionary) -> dict:
        """As plain data, each fact a tuple of terms (its predicate, then its arguments): what
        another dictionary interns again (a program change; a checkpoint)."""
        def terms(fact: tuple) -> tuple:
            return (d.term(fact[0][0]), *map(d.term, fact[1]))

        return {"reach": self.reach, "first": self.first,
                "points": [[t, [[name, [terms(f) for f in facts]] for name, facts in streams.items()]]
                           for t, streams in self.points],
                "changes": [[t, [terms(f) for f in removed], [terms(f) for f in added]]
                            for t, removed, added in self.changes]}

    @classmethod
    def restore(cls, state: dict, d: TermDictionary) -> "History":
        """The history of :meth:`snapshot`, interned with ``d``."""
        def ids(fact: tuple) -> tuple:
            return (d.intern(fact[0]), len(fact) - 1), tuple(map(d.intern, fact[1:]))

        reach, first = state["reach"], state["first"]
        if type(reach) is not int or not (first is None or type(first) is int):
            raise StateFileError("not a stream history")
        history = cls(reach)
        history.first = first
        history.points.extend((t, {name: [ids(f) for f in facts] for name, facts in streams})
                              for t, streams in state["points"])
        history.changes = [(t, [ids(f) for f in removed], [ids(f) for f in added])
                           for t, removed, added in state["changes"]]
        return history
