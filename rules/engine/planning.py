"""Join planning: a rule becomes one :class:`JoinPlan` per positive body atom, its *seed*.

This is the one join-order policy of the engine; the three back ends execute its plans: generated
Python (``rules.engine.plan``), compiled C structs (``rules.engine.backends.native_plans``) and numpy
columns (``rules.engine.backends.columnar``). A seeded plan matches the seed against a delta, then joins
the other positive atoms greedily: the atom with every term known first, else the one with the
most known terms, ties to the earlier body atom. A test is placed right after the step that binds
its last variable: ``=`` / ``!=`` between terms, ``X = term`` assignments, value comparisons and
arithmetic, negated atoms, and the check that a variable head predicate names a triple relation.

A back end that cannot run something in a plan raises :class:`Unsupported`; the caller then
keeps the generated Python plans, which run everything.

>>> from dotr.rules import parse
>>> from dotr.rules.engine.terms import TermDictionary
>>> rule = parse("q(X, Z) :- p(X, Y), r(Y, Z), Z != X .").rules[0]
>>> plans = plan_rule(rule.head, rule.body, TermDictionary())
>>> print(plans[1])
seed r(Y, Z) -> bind Y=v0 Z=v1
p(X, Y) key 1=v0 -> bind X=v2; test v1 != v2
head #2(v2, v1)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dotr.rules.lang import ir
from dotr.rules.lang.printer import Printer
from dotr.rules.lang.validate import expr_vars

K_CONST, K_VAR = 0, 1  # a term code: (K_CONST, term id) or (K_VAR, variable number)
P_CONST, P_BOUND, P_FREE = 0, 1, 2  # a predicate: a term id, a variable bound before, one the atom binds

Code = tuple[int, int]


class Unsupported(ValueError):
    """A back end cannot run a rule (the caller keeps the generated Python plans)."""


@dataclass(frozen=True)
class TermTest:
    """``left = right`` / ``left != right`` on term identity."""
    op: str
    left: Code
    right: Code


@dataclass(frozen=True)
class Assign:
    """``var = source`` for a term (or a bound variable)."""
    var: int
    source: Code


@dataclass(frozen=True)
class Compute:
    """``var = expr`` for an arithmetic expression (no binding when it has no number value)."""
    var: int
    expr: object  # an ir expression; its variables are numbered in the plan's ``slots``


@dataclass(frozen=True)
class Compare:
    """A comparison of values (``<``, ``>=``, ... or ``=`` / ``!=`` with arithmetic)."""
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Negation:
    """``not pred(args)`` with every term known."""
    pkind: int  # P_CONST or P_BOUND
    pred: int
    args: tuple[Code, ...]


@dataclass(frozen=True)
class HeadCheck:
    """The variable head predicate ``var`` must name a triple relation (an IRI)."""
    var: int


Filter = TermTest | Assign | Compute | Compare | Negation | HeadCheck


@dataclass(frozen=True)
class Step:
    """One positive atom matched under the variables bound before it."""
    atom: ir.Atom
    body: int  # its number among the rule's positive atoms (-1: the empty seed of a rule without one)
    pkind: int
    pred: int  # P_CONST: the predicate's id; else the variable's number
    arity: int
    key: tuple[tuple[int, int, int], ...]  # (position, kind, value): positions known before the atom
    bind: tuple[tuple[int, int], ...]  # (position, variable) the atom binds
    check: tuple[tuple[int, int], ...]  # (position, variable): repeats of a variable the atom binds
    filters: tuple[Filter, ...] = ()  # placed after the atom

    @property
    def relation(self) -> tuple[int, int] | None:
        return (self.pred, self.arity) if self.pkind == P_CONST else None


@dataclass(frozen=True)
class JoinPlan:
    """A rule seeded at one positive atom: ``steps`` in execution order, one of them the seed."""
    steps: tuple[Step, ...]
    seed: int  # the position of the seed in ``steps``
    head_pkind: int  # P_CONST (``head_pred`` an id; -2 for events' solutions) or P_BOUND
    head_pred: int
    head: tuple[Code, ...]
    slots: dict[str, int] = field(default_factory=dict)  # variable name -> number

    @property
    def seed_step(self) -> Step:
        return self.steps[self.seed]

    @property
    def nvars(self) -> int:
        return len(self.slots)

    def __str__(self) -> str:
        def code(c):
            return f"v{c[1]}" if c[0] == K_VAR else f"#{c[1]}"
        lines = []
        printer = Printer()
        for i, s in enumerate(self.steps):
            text = ("seed " if i == self.seed else "") + printer.atom(s.atom)
            if s.key:
                text += " key " + " ".join(f"{p}={code((k, v))}" for p, k, v in s.key)
            if s.bind:
                text += " -> bind " + " ".join(f"{printer.term(s.atom.args[p])}=v{v}" for p, v in s.bind)
            if s.check:
                text += " check " + " ".join(f"{p}=v{v}" for p, v in s.check)
            if s.filters:
                text += "; " + ", ".join(_filter_text(f, code) for f in s.filters)
            lines.append(text)
        head = code((K_CONST if self.head_pkind == P_CONST else K_VAR, self.head_pred))
        lines.append(f"head {head}({', '.join(code(c) for c in self.head)})")
        return "\n".join(lines)


def _filter_text(f: Filter, code) -> str:
    printer = Printer()
    if isinstance(f, TermTest):
        return f"test {code(f.left)} {f.op} {code(f.right)}"
    if isinstance(f, Assign):
        return f"v{f.var} := {code(f.source)}"
    if isinstance(f, Compute):
        return f"v{f.var} := {printer.expr(f.expr)}"
    if isinstance(f, Compare):
        return f"compare {printer.expr(f.left)} {f.op} {printer.expr(f.right)}"
    if isinstance(f, Negation):
        pred = code((K_CONST if f.pkind == P_CONST else K_VAR, f.pred))
        return f"not {pred}({', '.join(code(c) for c in f.args)})"
    return f"v{f.var} names a triple relation"


class _Planner:
    """Numbers variables and places filters while the atoms of one seeded plan are ordered."""

    def __init__(self, d, comparisons, negatives, head_pred):
        self.d = d
        self.slots: dict[str, int] = {}
        self.comparisons = list(comparisons)
        self.negatives = list(negatives)
        self.head_var = head_pred.name if isinstance(head_pred, ir.Var) else None

    def bound(self, term) -> bool:
        return not isinstance(term, ir.Var) or term.name in self.slots

    def code(self, term) -> Code:
        if isinstance(term, ir.Var):
            return K_VAR, self.slots[term.name]
        return K_CONST, self.d.intern(term)

    def new(self, name: str) -> int:
        self.slots[name] = len(self.slots)
        return self.slots[name]

    def score(self, atom: ir.Atom, i: int):
        terms = (atom.pred, *atom.args)
        bound = sum(1 for t in terms if self.bound(t))
        return (bound == len(terms), bound, -i)

    def step(self, atom: ir.Atom, body: int) -> Step:
        pred = atom.pred
        if isinstance(pred, ir.Var):
            pkind, pid = (P_BOUND, self.slots[pred.name]) if pred.name in self.slots else (P_FREE, self.new(pred.name))
        else:
            pkind, pid = P_CONST, self.d.intern(pred)
        key, bind, check, first = [], [], [], set()
        for pos, term in enumerate(atom.args):
            if isinstance(term, ir.Var) and term.name not in self.slots:
                first.add(term.name)
                bind.append((pos, self.new(term.name)))
            elif isinstance(term, ir.Var) and term.name in first:
                check.append((pos, self.slots[term.name]))
            else:
                key.append((pos, *self.code(term)))
        return Step(atom, body, pkind, pid, len(atom.args), tuple(key), tuple(bind), tuple(check),
                    self.filters())

    def filters(self) -> tuple[Filter, ...]:
        """The filters whose variables are bound now, in the order they run."""
        out: list[Filter] = []
        if self.head_var in self.slots:
            out.append(HeadCheck(self.slots[self.head_var]))
            self.head_var = None
        progress = True
        while progress:
            progress = False
            for cmp in list(self.comparisons):
                left_ok = all(v.name in self.slots for v in expr_vars(cmp.left))
                right_ok = all(v.name in self.slots for v in expr_vars(cmp.right))
                if left_ok and right_ok:
                    if cmp.op in ("=", "!=") and not isinstance(cmp.left, ir.BinOp) \
                            and not isinstance(cmp.right, ir.BinOp):
                        out.append(TermTest(cmp.op, self.code(cmp.left), self.code(cmp.right)))
                    else:
                        out.append(Compare(cmp.op, cmp.left, cmp.right))
                elif cmp.op == "=" and (left_ok or right_ok):
                    target, source = (cmp.right, cmp.left) if left_ok else (cmp.left, cmp.right)
                    if not isinstance(target, ir.Var):
                        continue
                    if isinstance(source, ir.BinOp):
                        out.append(Compute(self.new(target.name), source))
                    else:
                        source_code = self.code(source)
                        out.append(Assign(self.new(target.name), source_code))
                else:
                    continue
                self.comparisons.remove(cmp)
                progress = True
            for atom in list(self.negatives):
                if all(self.bound(t) for t in (atom.pred, *atom.args)):
                    self.negatives.remove(atom)
                    pkind, pred = (P_BOUND, self.slots[atom.pred.name]) if isinstance(atom.pred, ir.Var) \
                        else (P_CONST, self.d.intern(atom.pred))
                    out.append(Negation(pkind, pred, tuple(self.code(t) for t in atom.args)))
        return tuple(out)


_EMPTY_SEED = ir.Atom(ir.Name("_"), ())


def plan_rule(head: ir.Atom | tuple, body: tuple, d, *, hoist: bool = False,
              head_relation: tuple[int, int] | None = None, order: tuple[int, ...] | None = None) -> list[JoinPlan]:
    """One plan per positive atom of ``body`` as the seed (a body without one: one plan seeded at
    an empty atom, to run once). ``head`` is an atom, or a tuple of terms with an explicit
    ``head_relation`` (events' solutions). ``hoist``: with a variable-predicate seed, the atoms
    that depend only on that predicate come first (a back end that loops over the delta inside
    them skips the delta when they have no match). ``order``: one plan only, seeded at the first
    positive atom it names and joining the others in its order (a caller that orders the atoms
    itself, from statistics, as the SPARQL planner does)."""
    if any(isinstance(lit, ir.TemporalLiteral) for lit in body):
        raise Unsupported("a window or @ atom cannot be evaluated at one time point")
    positives = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
    negatives = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and lit.negated]
    comparisons = [lit for lit in body if isinstance(lit, ir.Comparison)]
    head_terms = head.args if isinstance(head, ir.Atom) else tuple(head)
    head_pred = head.pred if isinstance(head, ir.Atom) else None
    if not positives:
        return [_plan(d, [_EMPTY_SEED], None, comparisons, negatives, head_pred, head_terms, head_relation, hoist)]
    if order is not None:
        return [_plan(d, positives, order[0], comparisons, negatives, head_pred, head_terms, head_relation, False,
                      list(order[1:]))]
    return [_plan(d, positives, seed, comparisons, negatives, head_pred, head_terms, head_relation, hoist)
            for seed in range(len(positives))]


def _plan(d, positives, seed, comparisons, negatives, head_pred, head_terms, head_relation, hoist,
          then: list[int] | None = None) -> JoinPlan:
    planner = _Planner(d, comparisons, negatives, head_pred)
    atoms = positives
    steps: list[Step] = []
    if seed is None:  # the empty seed
        steps.append(Step(_EMPTY_SEED, -1, P_CONST, -1, 0, (), (), (), planner.filters()))
        remaining: list[int] = []
        at = 0
    else:
        remaining = [i for i in range(len(atoms)) if i != seed]
        seed_atom = atoms[seed]
        if hoist and isinstance(seed_atom.pred, ir.Var):
            planner.new(seed_atom.pred.name)
            seed_vars = {t.name for t in seed_atom.args if isinstance(t, ir.Var)}
            while remaining:
                i = max(remaining, key=lambda i: planner.score(atoms[i], i))
                names = {t.name for t in (atoms[i].pred, *atoms[i].args) if isinstance(t, ir.Var)}
                if not names & set(planner.slots) or names & seed_vars:
                    break
                remaining.remove(i)
                steps.append(planner.step(atoms[i], i))
            # the predicate variable, numbered before the hoisted atoms, is the delta's predicate
            seed_step = planner.step(seed_atom, seed)
            seed_step = Step(seed_step.atom, seed, P_FREE, seed_step.pred, seed_step.arity, seed_step.key,
                             seed_step.bind, seed_step.check, seed_step.filters)
        else:
            seed_step = planner.step(seed_atom, seed)
        at = len(steps)
        steps.append(seed_step)
    if then is not None:
        remaining = then
    while remaining:
        i = remaining[0] if then is not None else max(remaining, key=lambda i: planner.score(atoms[i], i))
        remaining.remove(i)
        steps.append(planner.step(atoms[i], i))
    if planner.comparisons or planner.negatives:
        raise Unsupported("a comparison or negation with unbound variables")
    if not all(planner.bound(t) for t in head_terms) or (isinstance(head_pred, ir.Var) and not planner.bound(head_pred)):
        raise Unsupported("a head variable the body does not bind")
    if head_pred is None:
        hkind, hpred = P_CONST, head_relation[0]
    elif isinstance(head_pred, ir.Var):
        hkind, hpred = P_BOUND, planner.slots[head_pred.name]
    else:
        hkind, hpred = P_CONST, d.intern(head_pred)
    return JoinPlan(tuple(steps), at, hkind, hpred, tuple(planner.code(t) for t in head_terms), dict(planner.slots))
