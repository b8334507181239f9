"""SPARQL expressions (rdflib's parsed form) compiled into functions of a solution.

A solution maps variable names to term ids; the compiled function gives the expression's value
(numbers, strings, booleans, :class:`IriValue` for terms without a Python value) or raises
:class:`Undefined` (SPARQL's expression error: an unbound variable, a type error).
Used by the event queries (``rules.engine.sparql.algebra``) and the EP-SPARQL engine (``temporal.epsparql``).

>>> from rdflib.plugins.sparql.parser import parseQuery
>>> from rdflib.plugins.sparql.algebra import translateQuery
>>> from dotr.rules.engine.terms import TermDictionary
>>> q = translateQuery(parseQuery("SELECT * WHERE { FILTER(?a * 2 > 5 && bound(?a)) }"))
>>> d = TermDictionary()
>>> test = compile_expr(q.algebra["p"]["p"].expr, d, None)
>>> holds(test, {"a": d.number(3)}), holds(test, {"a": d.number(2)}), holds(test, {})
(True, False, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rdflib import BNode, Literal as RdfLiteral, URIRef, Variable

from dotr.rules.lang import ir
from dotr.rules.engine.builtins import arith, compare
from dotr.rules.lang.errors import Diagnostic, RuleError
from dotr.rules.lang.queries.sparql import rdf_term
from dotr.rules.engine.terms import TermDictionary

Solution = dict  # variable name -> term id


class UnsupportedQuery(RuleError):
    """The query uses SPARQL the compiler does not support."""


def unsupported(what: str, span) -> UnsupportedQuery:
    return UnsupportedQuery([Diagnostic("E401", f"unsupported in event queries: {what}", span,
                                        "supported: BGP, FILTER, OPTIONAL, UNION, BIND, VALUES, DISTINCT, "
                                        "GROUP BY with COUNT, SUM, AVG, MIN, MAX, SAMPLE")])


class Undefined(Exception):
    """A SPARQL expression error (unbound variable, type error): the filter is false."""


@dataclass(frozen=True)
class IriValue:
    id: int


def compile_expr(expr, d: TermDictionary, span) -> Callable[[Solution], object]:
    """A function from a solution to the expression's value (numbers, strings, bools, IRIs)."""
    if isinstance(expr, Variable):
        name = str(expr)

        def var(sol):
            if name not in sol:
                raise Undefined(name)
            term_id = sol[name]
            value = d.value(term_id)
            return IriValue(term_id) if value is None else value
        return var
    if isinstance(expr, (URIRef, RdfLiteral, BNode)):
        term_id = d.intern(rdf_term(expr))
        value = d.value(term_id)
        constant = IriValue(term_id) if value is None else value
        return lambda sol: constant
    from rdflib.plugins.sparql.parserutils import CompValue  # (loaded with the query's parser)

    if not isinstance(expr, CompValue):
        raise unsupported(f"expression {expr!r}", span)
    name = expr.name
    if name == "RelationalExpression":
        left, right, op = compile_expr(expr.expr, d, span), compile_expr(expr.other, d, span), expr.op
        if op in ("IN", "NOT IN"):
            raise unsupported("IN", span)
        return lambda sol: compare(op, left(sol), right(sol))
    if name in ("ConditionalAndExpression", "ConditionalOrExpression"):
        parts = [compile_expr(expr.expr, d, span)] + [compile_expr(e, d, span) for e in expr.other or []]
        if name == "ConditionalAndExpression":
            return lambda sol: all(_ebv(p(sol)) for p in parts)
        return lambda sol: any(_safe_ebv(p, sol) for p in parts) or _raise_if_all_error(parts, sol)
    if name in ("AdditiveExpression", "MultiplicativeExpression"):
        first = compile_expr(expr.expr, d, span)
        rest = [(op, compile_expr(e, d, span)) for op, e in zip(expr.op, expr.other)]

        def arithmetic(sol):
            value = first(sol)
            for op, f in rest:
                right = f(sol)
                if op == "/" and type(value) is int and type(right) is int and right:
                    value = value / right  # (SPARQL divides integers exactly: 7 / 2 = 3.5)
                else:
                    value = arith(op, value, right)
                if value is None:
                    raise Undefined(op)
            return value
        return arithmetic
    if name == "UnaryNot":
        inner = compile_expr(expr.expr, d, span)
        return lambda sol: not _ebv(inner(sol))
    if name == "UnaryMinus":
        inner = compile_expr(expr.expr, d, span)
        return lambda sol: -inner(sol)
    if name == "Builtin_BOUND":
        var_name = str(expr.arg)
        return lambda sol: var_name in sol
    if name == "Builtin_STR":
        inner = compile_expr(expr.arg, d, span)
        return lambda sol: _str(inner(sol), d)
    raise unsupported(name, span)


def _str(value, d: TermDictionary) -> str:
    if isinstance(value, IriValue):
        term = d.term(value.id)
        return term.value if isinstance(term, ir.Iri) else str(term)
    return str(value)


def _ebv(value) -> bool:
    if isinstance(value, IriValue):
        raise Undefined("effective boolean value of an IRI")
    return bool(value)


def _safe_ebv(part, sol) -> bool:
    try:
        return _ebv(part(sol))
    except Undefined:
        return False


def _raise_if_all_error(parts, sol) -> bool:
    for part in parts:
        try:
            _ebv(part(sol))
            return False
        except Undefined:
            continue
    raise Undefined("||")


def holds(test, sol) -> bool:
    try:
        return _ebv(test(sol))
    except (Undefined, TypeError):
        return False
