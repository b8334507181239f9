"""The Python back end: each :class:`~rules.engine.planning.JoinPlan` of a rule becomes a Python
function generated once.

A plan is compiled for each positive body atom as the *seed*: it takes the seed's delta facts
(``(fact, expiry)`` pairs) and joins the other atoms through the store's indexes in the plan's
order, with comparisons, assignments and negations where the plan places them. Each derivation is reported as
``emit((head_relation, head_tuple, expiry))`` with the minimum expiry of its premises (``emit`` is
typically a list's ``append``). The generated
code works on int tuples and local variables only; no IR object is touched per fact.

>>> from dotr.rules import parse
>>> from dotr.rules.engine.terms import TermDictionary
>>> from dotr.rules.engine.backends.dict_store import DictStore
>>> from dotr.rules.engine.store import INF
>>> d, store = TermDictionary(), DictStore()
>>> rule = parse("path(X, Z) :- edge(X, Y), path(Y, Z).").rules[0]
>>> plans = compile_rule(rule.head, rule.body, d)
>>> edge, path = relation_of(rule.body[0].atom, d), relation_of(rule.head, d)
>>> a, b, c = (d.intern(Name(n)) for n in "abc")
>>> _ = store.add(path, (b, c), INF)
>>> out = []
>>> plans.seeded[0]([((a, b), 5)], store, out.append)
>>> out == [(path, (a, c), 5)]
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from dotr.rules import ir
from dotr.rules.engine.builtins import arith, compare
from dotr.rules.engine.planning import (K_VAR, P_BOUND, P_CONST, P_FREE, Assign, Code, Compare, Compute, HeadCheck, JoinPlan,
                                   Step, TermTest, Unsupported, plan_rule)
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.ir import Name  # noqa: F401  (used by the doctest)

__all__ = ["CompiledRule", "Unsupported", "compile_rule", "evaluate_full", "relation_of"]

Plan = Callable  # (delta: iterable of (fact, expiry), store, emit, PRED=None) -> None


class _Empty:
    facts: dict = {}


_EMPTY = _Empty()


def relation_of(atom: ir.Atom, dictionary: TermDictionary) -> tuple[int, int] | None:
    """The relation of an atom; None for a variable predicate (the relation is bound at run time)."""
    if isinstance(atom.pred, ir.Var):
        return None
    return (dictionary.intern(atom.pred), len(atom.args))


@dataclass
class CompiledRule:
    head: tuple[int, int] | None  # None: a variable predicate
    body_relations: tuple[tuple[int, int] | None, ...]  # of the positive atoms, in body order
    # (None: a variable-predicate atom, whose plan takes the delta predicate as PRED)
    seeded: tuple[Plan, ...]  # one per positive atom: plan seeded with that atom's delta (if
    # there is no positive atom, one plan to run once with the delta [((), INF)])
    negated_relations: tuple[tuple[int, int], ...]
    source: str  # the generated code, for inspection
    indexes: tuple[tuple[tuple[int, int], tuple[int, ...]], ...] = ()  # (relation, positions) the plans probe
    plans: tuple[JoinPlan, ...] = ()  # the join plans the code runs, one per seed


class _Gen:
    """Python source for one :class:`JoinPlan`: nested loops over int tuples and local variables."""

    def __init__(self, plan: JoinPlan, dictionary: TermDictionary):
        self.plan = plan
        self.d = dictionary
        self.lines: list[str] = []
        self.consts: dict[str, object] = {}
        self.level = 0
        self.mvar: str | None = None  # the variable holding the minimum expiry so far (None: INF)

    def const(self, value: object) -> str:
        name = f"K{len(self.consts)}"
        self.consts[name] = value
        return name

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    @staticmethod
    def term(code: Code) -> str:
        return f"v{code[1]}" if code[0] == K_VAR else str(code[1])

    def key(self, codes) -> str:
        return "(" + "".join(self.term(c) + ", " for c in codes) + ")"

    def value(self, expr) -> str:
        if isinstance(expr, ir.Var):
            return f"VAL(v{self.plan.slots[expr.name]})"
        if isinstance(expr, ir.Num):  # (1E400 reads as infinity, which has no literal)
            return repr(expr.value) if math.isfinite(expr.value) else f"float({str(expr.value)!r})"
        if isinstance(expr, ir.BinOp):
            return f"ARITH({expr.op!r}, {self.value(expr.left)}, {self.value(expr.right)})"
        return f"VAL({self.d.intern(expr)})"

    def checks(self, step: Step, fact: str, depth: int, keyed: bool) -> None:
        """Equality checks for the known positions (unless an index lookup covers them) and for
        the repeats of a variable the atom binds."""
        first = {var: pos for pos, var in step.bind}
        tests = [] if keyed else [(pos, self.term((kind, val))) for pos, kind, val in step.key]
        tests += [(pos, f"{fact}[{first[var]}]") for pos, var in step.check]
        for pos, code in sorted(tests):
            self.emit(depth, f"if {fact}[{pos}] != {code}: continue")

    def bind(self, step: Step, fact: str, depth: int) -> None:
        for pos, var in step.bind:
            self.emit(depth, f"v{var} = {fact}[{pos}]")

    def filters(self, step: Step, depth: int) -> None:
        for f in step.filters:
            if isinstance(f, HeadCheck):
                self.emit(depth, f"if not store.is_triple((v{f.var}, {len(self.plan.head)})): continue")
            elif isinstance(f, TermTest):
                op = "!=" if f.op == "=" else "=="
                self.emit(depth, f"if {self.term(f.left)} {op} {self.term(f.right)}: continue")
            elif isinstance(f, Compare):
                self.emit(depth, f"if not CMP({f.op!r}, {self.value(f.left)}, {self.value(f.right)}): continue")
            elif isinstance(f, Assign):
                self.emit(depth, f"v{f.var} = {self.term(f.source)}")
            elif isinstance(f, Compute):
                self.emit(depth, f"v{f.var} = NUM({self.value(f.expr)})")
                self.emit(depth, f"if v{f.var} is None: continue")
            else:  # Negation
                key = self.key(f.args)
                if f.pkind == P_BOUND:
                    self.emit(depth, f"if {key} in store.relations.get((v{f.pred}, {len(f.args)}), "
                                     f"EMPTY).facts: continue")
                else:
                    self.emit(depth, f"if {key} in {self.const((f.pred, len(f.args)))}_facts: continue")

    def minimum(self, exp: str, m: str, depth: int) -> None:
        prev = self.mvar
        if prev is None:
            self.mvar = exp
        else:
            self.emit(depth, f"{m} = {prev} if {prev} < {exp} else {exp}")
            self.mvar = m

    def seed(self, step: Step, depth: int) -> int:
        self.emit(depth, "for f0, m0 in delta:")
        depth += 1
        self.checks(step, "f0", depth, keyed=False)
        self.bind(step, "f0", depth)
        self.minimum("m0", "m0", depth)
        self.filters(step, depth)
        return depth

    def step(self, step: Step, depth: int) -> int:
        """The lookup of a joined atom; returns the depth inside it."""
        self.level += 1
        fact, exp, m = f"f{self.level}", f"e{self.level}", f"m{self.level}"
        positions = tuple(pos for pos, _, _ in step.key)
        if step.pkind != P_CONST:  # the relation is found at run time
            if step.pkind == P_FREE:
                self.emit(depth, f"for v{step.pred} in store.triple_predicates:")
                depth += 1
            self.emit(depth, f"R{self.level} = store.relations.get((v{step.pred}, {step.arity}))")
            self.emit(depth, f"if R{self.level} is None: continue")
            facts = f"R{self.level}.facts"
            index = f"R{self.level}.index({positions!r})"
        else:
            facts = f"{self.const(step.relation)}_facts"
            index = f"{self.const((step.relation, positions))}_idx" if positions else ""
        if len(positions) == step.arity:
            self.emit(depth, f"{exp} = {facts}.get({self.key(self._codes(step))})")
            self.emit(depth, f"if {exp} is None: continue")
        else:
            if positions:
                codes = self._codes(step)
                key = self.term(codes[0]) if len(codes) == 1 else self.key(codes)
                self.emit(depth, f"for {fact} in {index}.get({key}, ()):")
            else:
                self.emit(depth, f"for {fact} in {facts}:")
            depth += 1
            self.checks(step, fact, depth, keyed=True)
            self.emit(depth, f"{exp} = {facts}[{fact}]")
            self.bind(step, fact, depth)
        self.minimum(exp, m, depth)
        self.filters(step, depth)
        return depth

    @staticmethod
    def _codes(step: Step) -> list[Code]:
        return [(kind, val) for _, kind, val in step.key]


def compile_rule(head: ir.Atom | tuple, body: tuple, dictionary: TermDictionary,
                 head_relation: tuple[int, int] | None = None, order: tuple[int, ...] | None = None) -> CompiledRule:
    """Plans for ``head :- body`` (``head`` an atom, or a tuple of head terms with an explicit
    ``head_relation``, as for events); raises :class:`Unsupported` for what no plan runs (a
    window, an unsafe rule). ``order``: one plan, seeded at the first positive atom it names and
    joining the others in its order (``planning.plan_rule``)."""
    head_rel = relation_of(head, dictionary) if isinstance(head, ir.Atom) else head_relation
    positives = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
    negatives = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and lit.negated]
    plans = plan_rule(head, body, dictionary, hoist=order is None, head_relation=head_rel, order=order)
    fns, sources, indexes = [], [], {}
    for plan in plans:
        fn, src, consts = _generate(plan, head_rel, dictionary)
        fns.append(fn)
        sources.append(src)
        indexes.update(dict.fromkeys(v for v in consts.values() if isinstance(v[0], tuple)))
    return CompiledRule(head_rel, tuple(relation_of(a, dictionary) for a in positives), tuple(fns),
                        tuple(relation_of(a, dictionary) for a in negatives), "\n\n".join(sources), tuple(indexes),
                        tuple(plans))


def _generate(plan: JoinPlan, head_rel, d: TermDictionary):
    g = _Gen(plan, d)
    g.emit(0, "def plan(delta, store, emit, PRED=None):")
    prelude_at = len(g.lines)
    depth = 1
    seed = plan.seed_step
    if seed.pkind == P_FREE:
        # the seed's predicate is the delta's (PRED): the atoms hoisted before it are joined
        # once, before the loop over the delta (often they have no match, and the delta is not looked at)
        g.emit(depth, f"v{seed.pred} = PRED")
        g.emit(depth, "for _ in (0,):  # a loop, so that 'continue' leaves the joins below")
        depth += 1
    for i, step in enumerate(plan.steps):
        depth = g.seed(step, depth) if i == plan.seed else g.step(step, depth)
    head_code = "HEAD" if plan.head_pkind == P_CONST else f"(v{plan.head_pred}, {len(plan.head)})"
    g.emit(depth, f"emit(({head_code}, {g.key(plan.head)}, {g.mvar or INF}))")

    # prelude: fetch relations and indexes once per call
    prelude = []
    for name, value in g.consts.items():
        if isinstance(value[0], tuple):  # (relation, positions): an index
            prelude.append(f"    {name}_idx = store.index({name}, {value[1]!r})")
        else:
            prelude.append(f"    {name}_facts = store.relation({name}).facts")
    g.lines[prelude_at:prelude_at] = prelude
    source = "\n".join(g.lines)
    namespace = {"VAL": d.value, "CMP": compare, "ARITH": arith, "NUM": d.number, "HEAD": head_rel,
                 "EMPTY": _EMPTY}
    # an index constant is passed as its relation (store.index takes the relation)
    namespace.update({k: (v[0] if isinstance(v[0], tuple) else v) for k, v in g.consts.items()})
    exec(compile(source, f"<plan {head_rel}>", "exec"), namespace)
    return namespace["plan"], source, g.consts


def evaluate_full(compiled: CompiledRule, store) -> list[tuple]:
    """Every derivation of a rule over the whole store, as ``(relation, fact, expiry)``."""
    out: list[tuple] = []
    if not compiled.body_relations:
        compiled.seeded[0]([((), INF)], store, out.append)
        return out
    seed_rel = compiled.body_relations[0]
    if seed_rel is not None:
        compiled.seeded[0](list(store.relation(seed_rel).facts.items()), store, out.append)
        return out
    for pid in list(store.triple_predicates):  # a variable predicate first: every triple relation
        compiled.seeded[0](list(store.relation((pid, 2)).facts.items()), store, out.append, pid)
    return out
