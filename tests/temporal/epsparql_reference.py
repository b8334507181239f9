"""The EP-SPARQL interval semantics (paper section 4.2) read literally, over a whole finite stream.

Every group's solutions at every time point t become ⟨μ, t, t⟩; each operator's result is the set
its definition describes, computed from its operands' complete results (no state, no pruning):

- Join: μ ⋈ μ' for compatible pairs, interval [min a, max b]; Union: Ψ ∪ Ψ'
- SeqJoin: pairs with b < a'; EqJoin: pairs with a = a' and b = b'
- LeftJoin(Ψ, Ψ', F): compatible pairs with F and b' <= b (the optional part ends no later), plus
  each μ ∈ Ψ without such a partner
- SeqRightJoin(Ψ', Ψ, F) (``Ψ' optionalseq Ψ``): Filter(F, SeqJoin(Ψ', Ψ)) plus each μ ∈ Ψ without
  a compatible μ' ∈ Ψ' with F and b' < a
- EqLeftJoin(Ψ, Ψ', F): Filter(F, EqJoin(Ψ, Ψ')) plus each μ ∈ Ψ without a compatible partner with
  F and the same interval
- Filter / BIND on μ with getDURATION() = b - a, getSTARTTIME() = a, getENDTIME() = b

The horizon H (the query's duration bound) restricts every operator's result to durations <= H and
is part of every optional condition F (a partner only counts if the combination is within H).
A SELECT solution is reported at its end time b.
"""

from __future__ import annotations

from dotr.rules.lang.queries.epsparql import DURATION, END, START, Bind, Combine, EpQuery, Filter, Group
from dotr.rules.engine.sparql.expr import IriValue, Undefined, compile_expr, holds
from dotr.rules.engine.terms import TermDictionary

from dotr.temporal.epsparql import _algebra, _find


def _compatible(a: dict, b: dict) -> bool:
    return all(b[k] == v for k, v in a.items() if k in b)


def _merge(x, y):
    return frozenset({**dict(x[0]), **dict(y[0])}.items()), min(x[1], y[1]), max(x[2], y[2])


class Reference:
    def __init__(self, query: EpQuery, prefixes: dict, d: TermDictionary, horizon: int):
        self.q, self.prefixes, self.d, self.h = query, prefixes, d, horizon
        self._compiled: dict = {}  # SPARQL text -> its FILTER or BIND, compiled once

    def _with_interval(self, sol) -> dict:
        d = self.d
        return {**dict(sol[0]), DURATION: d.number(sol[2] - sol[1]), START: d.number(sol[1]),
                END: d.number(sol[2])}

    def _test(self, text):
        if text not in self._compiled:
            self._compiled[text] = compile_expr(_find(_algebra(text, self.prefixes), "Filter")[0].expr, self.d, None)
        return self._compiled[text]

    def _bind(self, text):
        if text not in self._compiled:
            extend = _find(_algebra(text, self.prefixes), "Extend")[0]
            self._compiled[text] = str(extend.var), compile_expr(extend.expr, self.d, None)
        return self._compiled[text]

    def _f(self, tests, sol) -> bool:
        return sol[2] - sol[1] <= self.h and all(holds(f, self._with_interval(sol)) for f in tests)

    def solutions(self, node, stream: dict[int, list[list[dict]]]) -> set:
        """Ψ of ``node``: a set of (frozenset of (variable, id), start, end)."""
        h = self.h
        if isinstance(node, Group):
            out = {(frozenset(m.items()), t, t) for t, groups in stream.items() for m in groups[node.index]}
        elif isinstance(node, Filter):
            tests = [self._test(c) for c in node.conditions]
            out = {s for s in self.solutions(node.inner, stream) if self._f(tests, s)}
        elif isinstance(node, Bind):
            out = set()
            for s in self.solutions(node.inner, stream):
                mapping = dict(s[0])
                for text in node.binds:
                    var, expr = self._bind(text)
                    try:
                        value = expr(self._with_interval((mapping.items(), s[1], s[2])))
                    except (Undefined, TypeError):
                        continue
                    mapping[var] = value.id if isinstance(value, IriValue) else self.d.number(value)
                out.add((frozenset(mapping.items()), s[1], s[2]))
        else:
            out = self._combine(node, self.solutions(node.left, stream), self.solutions(node.right, stream))
        return {s for s in out if s[2] - s[1] <= h}

    def _combine(self, node: Combine, left: set, right: set) -> set:
        op = node.op
        tests = [self._test(c) for c in node.condition]
        pairs = [(x, y) for x in left for y in right if _compatible(dict(x[0]), dict(y[0]))]
        if op == "union":
            return left | right
        if op == "and":
            return {_merge(x, y) for x, y in pairs}
        if op == "seq":
            return {_merge(x, y) for x, y in pairs if x[2] < y[1]}
        if op == "equals":
            return {_merge(x, y) for x, y in pairs if x[1:] == y[1:]}
        if op == "optional":
            joined = {(x, _merge(x, y)) for x, y in pairs if y[2] <= x[2] and self._f(tests, _merge(x, y))}
            return {m for _, m in joined} | (left - {x for x, _ in joined})
        if op == "optionalseq":
            joined = {(y, _merge(x, y)) for x, y in pairs if x[2] < y[1] and self._f(tests, _merge(x, y))}
            return {m for _, m in joined} | (right - {y for y, _ in joined})
        assert op == "equalsoptional"
        joined = {(x, _merge(x, y)) for x, y in pairs if x[1:] == y[1:] and self._f(tests, _merge(x, y))}
        return {m for _, m in joined} | (left - {x for x, _ in joined})

    def answers(self, stream: dict[int, list[list[dict]]]) -> dict[int, list[tuple]]:
        """Per end time: the sorted (projected row as sorted items, (start, end)) of the root's
        solutions (SELECT with plain variables or ``*``)."""
        if self.q.star:
            names = None
        else:
            names = [str(v) for v in _algebra(self.q.projection, self.prefixes)["PV"]]
        out: dict[int, list] = {}
        for mapping, a, b in self.solutions(self.q.root, stream):
            m = dict(mapping)
            keys = sorted(m) if names is None else names
            row = tuple((k, m[k]) for k in keys if k in m)
            out.setdefault(b, []).append((row, (a, b)))
        return {t: sorted(rows) for t, rows in out.items()}
