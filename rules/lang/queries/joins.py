"""Cross products in queries (warning W305): the parts of a join that share no variable.

A query's group is joined the way the SPARQL planner (``rules.engine.sparql.planner``) joins it:
the triple patterns of its plain basic graph patterns, across nested groups and the order they
are written in, form one conjunction, and the other parts (OPTIONAL, UNION, subqueries, VALUES,
BIND, GRAPH) are joined with it. A FILTER conjunct links the variables it reads (as a comparison
between the atoms of a rule body does: a deliberate join condition). The parts then fall into
groups that share no variable; two or more are joined as a cross product, whose size is the
product of their matches. So are an OPTIONAL sharing no variable with what it extends (its
condition neither), and in EP-SPARQL the two operands of ``seq``, ``and``, ``equals`` and their
optional forms.

CityBench writes a type pattern apart from the group that uses its variable: no cross product,
the planner joins them.

>>> from rdflib.plugins.sparql.parser import parseQuery
>>> from rdflib.plugins.sparql.algebra import translateQuery
>>> def parts(text):
...     query = translateQuery(parseQuery("PREFIX : <http://e/> " + text))
...     return [sorted(map(sorted, found.groups)) for found in cross_products(query.algebra["p"])]
>>> parts("SELECT * WHERE { ?p1 a :L . ?p2 a :L . { ?o1 :prop ?p1 } { ?o2 :prop ?p2 . ?o1 :near ?o2 } }")
[]
>>> parts("SELECT * WHERE { ?a :p ?b . ?c :q ?d }")
[[['a', 'b'], ['c', 'd']]]
>>> parts("SELECT * WHERE { ?a :p ?v . ?c :q ?w FILTER(?v < ?w) }")
[]
>>> parts("SELECT * WHERE { ?a :p ?b OPTIONAL { ?x :q ?y } }")
[[['a', 'b'], ['x', 'y']]]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


from ..errors import Diagnostic
from ..ir import SparqlText, Span
from .sparql import certain_variables


@dataclass
class CrossProduct:
    """Parts joined with no variable shared between ``groups`` (each a set of variable names;
    a blank node's is ``_:name``); ``kind``: ``join`` (the parts of a group), ``optional``."""

    kind: str
    groups: list[set[str]]


def expression_vars(expr) -> set[str]:
    """The variables a FILTER or BIND expression (rdflib's parsed form) reads."""
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.term import Variable

    found: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, Variable):
            found.add(str(node))
        elif isinstance(node, CompValue):
            for key, value in node.items():
                if not key.startswith("_"):
                    walk(value)
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item)

    walk(expr)
    return found


def conjuncts(expr) -> list:
    """A filter's ``&&`` operands (each a filter of its own: ``a && b`` holds when both hold)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, CompValue) and expr.name == "ConditionalAndExpression":
        return [part for e in [expr.expr, *(expr.other or [])] for part in conjuncts(e)]
    return [expr]


def triple_vars(triples) -> set[str]:
    """The variables of triple patterns, a blank node's as ``_:name``."""
    from rdflib.term import BNode, Variable

    return {str(x) if isinstance(x, Variable) else "_:" + str(x)
            for t in triples for x in t if isinstance(x, (Variable, BNode))}


@dataclass
class _Join:
    """The parts of a join as the planner collects them."""

    triples: list = field(default_factory=list)
    others: list = field(default_factory=list)  # (algebra nodes)
    filters: list = field(default_factory=list)  # (conjuncts)


def _parts(node) -> _Join:
    """The parts of the join ``node`` heads (the planner's ``_Compiler._group``, on the algebra)."""
    name = node.name
    if name == "BGP":
        return _Join(triples=list(node.triples))
    if name == "Filter":
        join = _parts(node.p)
        join.filters.extend(conjuncts(node.expr))
        return join
    if name == "Join":
        join = _Join()
        for part in (node.p1, node.p2):
            if part.name not in ("BGP", "Join", "Filter"):
                join.others.append(part)
                continue
            sub = _parts(part)
            certain = triple_vars(sub.triples).union(*(certain_variables(o) for o in sub.others))
            if all(expression_vars(f) <= certain for f in sub.filters):  # (merged into the enclosing join)
                join.triples += sub.triples
                join.others += sub.others
                join.filters += sub.filters
            else:
                join.others.append(part)
        return join
    return _Join(others=[node])


def scope(node) -> set[str]:
    """The variables a part of a query can bind (a subquery: those it selects)."""
    name = node.name
    if name == "BGP":
        return triple_vars(node.triples)
    if name in ("Join", "LeftJoin", "Union"):
        return scope(node.p1) | scope(node.p2)
    if name == "Minus":
        return scope(node.p1)
    if name == "Extend":
        return scope(node.p) | {str(node.var)}
    if name == "Graph":
        from rdflib.term import Variable

        return scope(node.p) | ({str(node.term)} if isinstance(node.term, Variable) else set())
    if name == "Project":
        return {str(v) for v in node.PV}
    if name == "values":
        return {str(k) for row in node.res for k in row}
    if "p" in node:
        return scope(node.p)
    return {str(v) for v in node.get("_vars") or ()}


def cross_products(node) -> list[CrossProduct]:
    """The cross products of a translated query's pattern (``algebra["p"]``), outermost first."""
    from rdflib.plugins.sparql.parserutils import CompValue

    found: list[CrossProduct] = []

    def walk(node) -> None:
        if not isinstance(node, CompValue):
            return
        name = node.name
        if name in ("BGP", "Join", "Filter"):
            join = _parts(node)
            parts = [triple_vars([t]) for t in join.triples] + [scope(o) for o in join.others]
            groups = connected([p for p in parts if p], [expression_vars(f) for f in join.filters])
            if len(groups) > 1:
                found.append(CrossProduct("join", groups))
            for other in join.others:
                walk(other)
            return
        if name == "LeftJoin":
            left, right = scope(node.p1), scope(node.p2)
            condition = expression_vars(node.expr) if node.expr is not None else set()
            if left and right and not left & (right | condition):
                found.append(CrossProduct("optional", [left, right]))
        for key in ("p", "p1", "p2"):
            if key in node:
                walk(node[key])

    walk(node)
    return found


def connected(parts: list[set[str]], links: list[set[str]] = ()) -> list[set[str]]:
    """The variables of ``parts`` in groups that share none, parts in the same group when a
    variable or one of ``links`` (sets of variables) connects them.

    >>> sorted(map(sorted, connected([{"a"}, {"b"}, {"c", "d"}], [{"a", "d"}])))
    [['a', 'c', 'd'], ['b']]
    """
    parent: dict[str, str] = {}

    def root(v: str) -> str:
        while parent.setdefault(v, v) != v:
            parent[v] = v = parent[parent[v]]
        return v

    for names in [*parts, *links]:
        first, *rest = list(names) or [None]
        for name in rest:
            parent[root(name)] = root(first)
    groups: dict[str, set[str]] = {}
    for names in parts:
        groups.setdefault(root(next(iter(names))), set()).update(names)
    return list(groups.values())


# --------------------------------------------------------------------------- diagnostics

def _first_use(text: str, names: set[str]) -> int | None:
    """The offset of the first occurrence of one of ``names`` in the pattern of ``text`` (after
    its first ``{``), or None."""
    start = text.find("{")
    best = None
    for name in names:
        token = re.escape(name) if name.startswith("_:") else r"[?$]" + re.escape(name)
        match = re.compile(r"(?<![\w?$:])" + token + r"(?![\w-])").search(text, max(start, 0))
        if match is not None and (best is None or match.start() < best):
            best = match.start()
    return best


def _span(text: SparqlText, offset: int | None) -> Span | None:
    base = text.span
    if base is None or offset is None:
        return base
    before = text.text[:offset]
    line = before.count("\n")
    if line == 0:
        return Span(base.path, base.line, base.column + offset)
    return Span(base.path, base.line + line, offset - before.rfind("\n"))


def _order(text: str, groups: list[set[str]]) -> list[tuple[int | None, set[str]]]:
    """The groups by where they are first used in ``text``."""
    placed = [(_first_use(text, g), g) for g in groups]
    return sorted(placed, key=lambda item: (item[0] is None, item[0] or 0))


def query_warnings(text: SparqlText, algebra_pattern, what: str = "query") -> list[Diagnostic]:
    """W305 for the first cross product of a query's pattern, at the second group's first
    variable (``what`` names the query in the message)."""
    found = cross_products(algebra_pattern)
    if not found:
        return []
    first = found[0]
    if first.kind == "optional":
        return [Diagnostic("W305", f"an OPTIONAL of {what} shares no variable with the pattern it extends: every "
                           "solution of one is joined with every solution of the other",
                           _span(text, _first_use(text.text, first.groups[1])),
                           "join them by a shared variable, or match them in two queries", severity="warning")]
    return [_join_warning(text, first.groups, what)]


def pattern_warnings(text: SparqlText, parts: list[set[str]], links: list[set[str]], what: str = "query"
                     ) -> list[Diagnostic]:
    """:func:`query_warnings` of one basic graph pattern: the variables of each triple
    (``parts``) and of each filter conjunct (``links``)."""
    groups = connected([p for p in parts if p], links)
    return [_join_warning(text, groups, what)] if len(groups) > 1 else []


def _join_warning(text: SparqlText, groups: list[set[str]], what: str) -> Diagnostic:
    placed = _order(text.text, groups)
    return Diagnostic("W305", f"the patterns of {what} fall into {len(groups)} groups that share no variable: "
                      "they are joined as a cross product, whose size is the product of their matches",
                      _span(text, placed[1][0]),
                      "join the groups by a shared variable, or split the query in one query per group",
                      severity="warning")


def operands_warning(what: str, op: str, right: set[str], text: SparqlText) -> Diagnostic:
    """W305 for EP-SPARQL operands that share no variable (``text``: the right one's first group)."""
    return Diagnostic("W305", f"the operands of {op} in {what} share no variable: every match of one is combined "
                      "with every match of the other", _span(text, _first_use(text.text, right)),
                      "join them by a shared variable", severity="warning")


__all__ = ["CrossProduct", "conjuncts", "connected", "cross_products", "expression_vars", "operands_warning",
           "pattern_warnings", "scope", "query_warnings", "triple_vars"]
