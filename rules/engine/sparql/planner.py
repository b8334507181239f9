"""The SPARQL planner: rdflib's algebra of a query compiled into operators
(``rules.engine.sparql.operators``), its joins planned across group boundaries.

A group's parts joined together (``{ A . { B } { C } FILTER(f) }`` is ``Filter(f, Join(Join(A, B),
C))``) form one n-ary join: the triple patterns of every part that is a plain basic graph pattern
are merged into one conjunction, whose join order is chosen at each evaluation from the store's
statistics (``rules.engine.sparql.conjunction``), so the order the groups are written in costs
nothing; the other parts (OPTIONAL, UNION, MINUS, subqueries, VALUES, BIND, GRAPH) are joined with
it by hash or bind joins, never by a cross product where a shared variable links them
(``operators.Join``). A FILTER conjunct runs where its variables are bound: inside the
conjunction's plan (comparisons of numbers and variables, arithmetic included), on the
conjunction's solutions, on the one part that binds all its variables, or on the whole join.

SPARQL's meaning is kept: a filter leaves its group only when every variable it reads is bound
in every solution of the group (so it evaluates alike on the group's solution and on the
joined one); an OPTIONAL's filter stays its join condition; MINUS, subqueries (their own
variables) and aggregates are evaluated as written.

>>> from rdflib.plugins.sparql.parser import parseQuery
>>> from rdflib.plugins.sparql.algebra import translateQuery
>>> from dotr.rules.engine.terms import TermDictionary
>>> q = translateQuery(parseQuery('''PREFIX : <http://ex.org/> SELECT * WHERE {
...     ?p1 a :Level . ?p2 a :Level .
...     { ?o1 :property ?p1 ; :value ?v1 } { ?o2 :property ?p2 ; :value ?v2 } FILTER(?v1 > ?v2) }'''))
>>> root = compile_pattern(q.algebra["p"]["p"], TermDictionary())
>>> type(root).__name__, len(root.conj.atoms), len(root.conj.extra)   # one conjunction, the filter in it
('BGP', 6, 1)
"""

from __future__ import annotations

from rdflib import BNode, Literal as RdfLiteral, URIRef, Variable

from dotr.rules import ir
from dotr.rules.lang.queries.joins import conjuncts as _conjuncts, expression_vars as expr_vars
from dotr.rules.lang.queries.joins import triple_vars as _triple_vars
from dotr.rules.lang.queries.sparql import rdf_term as from_rdflib
from dotr.rules.engine.sparql.expr import compile_expr, unsupported
from dotr.rules.engine.sparql.operators import (BGP, Aggregate, Distinct, Extend, Filter, Graph, Join, LeftJoin,
                                                Minus, Project, Union, Values)
from dotr.rules.engine.terms import TermDictionary

__all__ = ["compile_pattern"]


def compile_pattern(algebra, d: TermDictionary, span=None):
    """Compile an rdflib algebra node (a query's ``algebra["p"]``: SELECT, CONSTRUCT or ASK) into
    an operator whose ``run(ds)`` gives the solutions over a ``Dataset``."""
    return _Compiler(d, span).op(algebra)


class _Group:
    """The parts of a join being collected: triples of plain basic graph patterns, other
    operators, and the filters over the whole join."""

    def __init__(self):
        self.triples: list = []
        self.others: list = []
        self.filters: list = []

    @property
    def certain(self) -> set[str]:
        return _triple_vars(self.triples).union(*(op.certain for op in self.others))


class _Compiler:
    def __init__(self, d: TermDictionary, span):
        self.d, self.span = d, span

    def op(self, node, project: bool = False):
        """``project``: whether a ``Project`` below (through ``ORDER BY``) keeps only its
        variables; elsewhere the caller reads the selected variables of each solution itself."""
        name = node.name
        if name in ("BGP", "Join", "Filter"):
            return self._assemble(self._group(node))
        if name == "LeftJoin":
            test = None if node.expr is None or getattr(node.expr, "name", "") == "TrueFilter" \
                else self._expr(node.expr)
            return LeftJoin(self.op(node.p1), self.op(node.p2), test)
        if name == "Minus":
            return Minus(self.op(node.p1), self.op(node.p2))
        if name == "Union":
            return Union(self.op(node.p1), self.op(node.p2))
        if name == "Extend":
            return Extend(self.op(node.p), str(node.var), self._expr(node.expr), self.d,
                          str(node.expr) if isinstance(node.expr, Variable) else None)
        if name == "ToMultiSet":  # (a subquery)
            return self.op(node.p, project=True)
        if name == "values":
            return Values([{str(k): self.d.intern(from_rdflib(v)) for k, v in row.items()
                            if isinstance(v, (URIRef, RdfLiteral, BNode))}  # (UNDEF: unbound)
                           for row in node.res])
        if name == "Graph":
            term = node.term
            if isinstance(term, Variable):
                return Graph(self.op(node.p), None, str(term))
            return Graph(self.op(node.p), self.d.intern(from_rdflib(term)), None)
        if name == "Slice":
            raise unsupported("LIMIT / OFFSET", self.span)
        if name == "OrderBy":
            return self.op(node.p, project)
        if name == "Project":
            inner = self.op(node.p)
            return Project(inner, [str(v) for v in node.PV]) if project else inner
        if name in ("Distinct", "Reduced"):
            return Distinct(self.op(node.p, project=True))
        if name == "AggregateJoin":
            group = node.p
            return Aggregate(self.op(group.p), list(group.expr or []), list(node.A), self.d, self.span)
        raise unsupported(name, self.span)

    def _expr(self, expr):
        return compile_expr(expr, self.d, self.span)

    # --------------------------------------------------------------------------- joins
    def _group(self, node) -> _Group:
        """The parts of the join ``node`` heads, and the filters over all of them (``dotr check``
        finds cross products in the same parts: ``rules.lang.queries.joins``)."""
        name = node.name
        if name == "BGP":
            group = _Group()
            group.triples.extend(node.triples)
            return group
        if name == "Filter":
            group = self._group(node.p)
            group.filters.extend(_conjuncts(node.expr))
            return group
        if name == "Join":
            group = _Group()
            for part in (node.p1, node.p2):
                sub = self._group(part) if part.name in ("BGP", "Join", "Filter") else None
                if sub is None:
                    group.others.append(self.op(part))
                    continue
                certain = sub.certain
                if all(expr_vars(f) <= certain for f in sub.filters):
                    # each filter reads variables every solution of its group binds: it gives the
                    # same on the joined solutions, so the group's parts join the enclosing join
                    group.triples.extend(sub.triples)
                    group.others.extend(sub.others)
                    group.filters.extend(sub.filters)
                else:
                    group.others.append(self._assemble(sub))
            return group
        group = _Group()
        group.others.append(self.op(node))
        return group

    def _assemble(self, group: _Group):
        """The operator of a collected join: the triples as one conjunction, each filter as deep
        as its variables allow."""
        names = _triple_vars(group.triples)
        others = list(group.others)
        pushed, residual, final = [], [], []
        for f in group.filters:
            reads = expr_vars(f)
            if group.triples and reads <= names:
                comparisons = _to_comparisons(f)
                if comparisons is not None:
                    pushed += comparisons
                else:
                    residual.append(self._expr(f))
                continue
            home = next((k for k, op in enumerate(others) if reads <= op.certain), None)
            if home is not None:
                others[home] = Filter(others[home], [self._expr(f)])
            else:
                final.append(self._expr(f))
        bgp = BGP(group.triples, pushed, residual, self.d, self.span) \
            if group.triples or not others else None
        if not others:
            root = bgp
        elif bgp is None and len(others) == 1:
            root = others[0]
        else:
            root = Join(bgp, others)
        return Filter(root, final) if final else root


# ------------------------------------------------------------------------- filters in plans

_ARITH = {"+": "+", "-": "-", "*": "*"}


def _to_comparisons(expr) -> list[ir.Comparison] | None:
    """A filter as rule-language comparisons the conjunction's plan runs, or None: ``<``, ``<=``,
    ``>``, ``>=`` between numbers, variables and their sums, differences and products (a value
    comparison, false where a side is no number or string, as SPARQL's type error makes it).
    ``=`` and ``!=`` stay SPARQL expressions (the plan's equality is of terms, SPARQL's of values)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if not (isinstance(expr, CompValue) and expr.name == "RelationalExpression"
            and expr.op in ("<", "<=", ">", ">=")):
        return None
    left, right = _arith(expr.expr), _arith(expr.other)
    if left is None or right is None:
        return None
    return [ir.Comparison(expr.op, left, right)]


def _arith(node):
    """A numeric expression as a rule-language one (variables, numbers, + - *), or None."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, Variable):
        return ir.Var(str(node))
    if isinstance(node, RdfLiteral):
        term = from_rdflib(node)
        return term if isinstance(term, ir.Num) else None
    if isinstance(node, CompValue) and node.name in ("AdditiveExpression", "MultiplicativeExpression"):
        value = _arith(node.expr)
        for op, other in zip(node.op, node.other):
            right = _arith(other)
            if value is None or right is None or op not in _ARITH:
                return None
            value = ir.BinOp(_ARITH[op], value, right)
        return value
    return None
