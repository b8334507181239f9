"""Compile Datalog rules into join plans: Python functions generated once per rule and seed atom.

A plan is compiled for each positive body atom as the *seed*: it takes the seed's delta facts
(``(fact, expiry)`` pairs) and joins the other atoms through the store's indexes, in a greedy order
(most bound positions first, constants and schema atoms early), with comparisons, assignments and
negations placed as soon as their variables are bound. Each derivation is reported as
``emit((head_relation, head_tuple, expiry))`` with the minimum expiry of its premises (``emit`` is
typically a list's ``append``). The generated
code works on int tuples and local variables only; no IR object is touched per fact.

>>> from rules import parse
>>> from rules.engine.terms import TermDictionary
>>> from rules.engine.store import Store, INF
>>> d, store = TermDictionary(), Store()
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

from dataclasses import dataclass
from typing import Callable

from rules import ir
from rules.engine.builtins import arith, compare
from rules.lang.ir import Name  # noqa: F401  (used by the doctest)
from rules.engine.terms import TermDictionary
from rules.lang.validate import expr_vars

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


class _Gen:
    def __init__(self, dictionary: TermDictionary):
        self.d = dictionary
        self.lines: list[str] = []
        self.consts: dict[str, object] = {}
        self.slots: dict[str, str] = {}  # variable name -> python local

    def const(self, value: object) -> str:
        name = f"K{len(self.consts)}"
        self.consts[name] = value
        return name

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def term_code(self, term) -> str:
        if isinstance(term, ir.Var):
            return self.slots[term.name]
        return str(self.d.intern(term))

    def value_code(self, expr) -> str:
        if isinstance(expr, ir.Var):
            return f"VAL({self.slots[expr.name]})"
        if isinstance(expr, ir.Num):
            return repr(expr.value)
        if isinstance(expr, ir.BinOp):
            return f"ARITH({expr.op!r}, {self.value_code(expr.left)}, {self.value_code(expr.right)})"
        return f"VAL({self.d.intern(expr)})"


def _bound(expr, slots) -> bool:
    return all(v.name in slots for v in expr_vars(expr))


def compile_rule(head: ir.Atom | tuple, body: tuple, dictionary: TermDictionary,
                 head_relation: tuple[int, int] | None = None) -> CompiledRule:
    """Plans for ``head :- body`` (``head`` an atom, or a tuple of head terms with an explicit
    ``head_relation``, as for events)."""
    head_terms = head.args if isinstance(head, ir.Atom) else tuple(head)
    head_rel = relation_of(head, dictionary) if isinstance(head, ir.Atom) else head_relation
    positives = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
    negatives = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and lit.negated]
    comparisons = [lit for lit in body if isinstance(lit, ir.Comparison)]
    if any(isinstance(lit, ir.TemporalLiteral) for lit in body):
        raise ValueError("a window or @ atom cannot be evaluated at one time point")
    plans, sources, indexes = [], [], {}
    for seed in range(len(positives)) or [None]:  # no positive atom: one plan, run with [((), INF)]
        fn, src, consts = _compile_seeded(seed, positives, negatives, comparisons, head_terms, head_rel, dictionary,
                                          head.pred if isinstance(head, ir.Atom) else None)
        plans.append(fn)
        sources.append(src)
        indexes.update(dict.fromkeys(v for v in consts.values() if isinstance(v[0], tuple)))
    return CompiledRule(head_rel, tuple(relation_of(a, dictionary) for a in positives), tuple(plans),
                        tuple(relation_of(a, dictionary) for a in negatives), "\n\n".join(sources), tuple(indexes))


def _compile_seeded(seed, positives, negatives, comparisons, head_terms, head_rel, d, head_pred=None):
    g = _Gen(d)
    g.emit(0, "def plan(delta, store, emit, PRED=None):")
    rels = [relation_of(a, d) for a in positives]
    prelude_at = len(g.lines)
    pending_cmp = list(comparisons)
    pending_neg = list(negatives)
    remaining = [i for i in range(len(positives)) if i != seed]
    head_check = [True] if head_rel is None else []
    if seed is None:
        positives = [ir.Atom(ir.Name("_"), ())]
        rels = [(-1, 0)]
        seed = 0

    def bind_atom(i: int, fact: str, depth: int) -> None:
        for pos, term in enumerate(positives[i].args):
            if isinstance(term, ir.Var):
                if term.name in g.slots:
                    continue
                local = f"v{len(g.slots)}"
                g.slots[term.name] = local
                g.emit(depth, f"{local} = {fact}[{pos}]")

    def checks(i: int, fact: str, depth: int, skip: set[int]) -> None:
        """Equality checks for the positions of atom i that the index lookup did not cover."""
        seen: dict[str, int] = {}
        for pos, term in enumerate(positives[i].args):
            if pos in skip:
                continue
            if isinstance(term, ir.Var):
                if term.name in g.slots:
                    g.emit(depth, f"if {fact}[{pos}] != {g.slots[term.name]}: continue")
                elif term.name in seen:
                    g.emit(depth, f"if {fact}[{pos}] != {fact}[{seen[term.name]}]: continue")
                else:
                    seen[term.name] = pos
            else:
                g.emit(depth, f"if {fact}[{pos}] != {g.term_code(term)}: continue")

    def place_filters(depth: int) -> None:
        if head_check and head_pred.name in g.slots:  # a variable head predicate must be an IRI
            head_check.clear()
            g.emit(depth, f"if not store.is_triple(({g.slots[head_pred.name]}, {len(head_terms)})): continue")
        progress = True
        while progress:
            progress = False
            for cmp in list(pending_cmp):
                left_ok, right_ok = _bound(cmp.left, g.slots), _bound(cmp.right, g.slots)
                if left_ok and right_ok:
                    pending_cmp.remove(cmp)
                    progress = True
                    if cmp.op in ("=", "!=") and not isinstance(cmp.left, ir.BinOp) \
                            and not isinstance(cmp.right, ir.BinOp):
                        op = "!=" if cmp.op == "=" else "=="
                        g.emit(depth, f"if {g.term_code(cmp.left)} {op} {g.term_code(cmp.right)}: continue")
                    else:
                        g.emit(depth, f"if not CMP({cmp.op!r}, {g.value_code(cmp.left)}, "
                                      f"{g.value_code(cmp.right)}): continue")
                elif cmp.op == "=" and (left_ok or right_ok):
                    target, source = (cmp.right, cmp.left) if left_ok else (cmp.left, cmp.right)
                    if isinstance(target, ir.Var):
                        pending_cmp.remove(cmp)
                        progress = True
                        local = f"v{len(g.slots)}"
                        if isinstance(source, (ir.Var, ir.Name, ir.Iri, ir.Literal, ir.Num)):
                            g.emit(depth, f"{local} = {g.term_code(source)}")
                        else:
                            g.emit(depth, f"{local} = NUM({g.value_code(source)})")
                            g.emit(depth, f"if {local} is None: continue")
                        g.slots[target.name] = local
            for atom in list(pending_neg):
                if all(not isinstance(t, ir.Var) or t.name in g.slots for t in (atom.pred, *atom.args)):
                    pending_neg.remove(atom)
                    key = "(" + "".join(g.term_code(t) + ", " for t in atom.args) + ")"
                    if isinstance(atom.pred, ir.Var):
                        g.emit(depth, f"if {key} in store.relations.get(({g.slots[atom.pred.name]}, "
                                      f"{len(atom.args)}), EMPTY).facts: continue")
                    else:
                        g.emit(depth, f"if {key} in {g.const(relation_of(atom, d))}_facts: continue")

    level = 0
    mvar: list[str | None] = [None]  # the variable holding the minimum expiry so far (None: INF)

    def place_atom(i: int, depth: int) -> int:
        """Emit the lookup of positive atom i; returns the depth inside it."""
        nonlocal level
        level += 1
        args = positives[i].args
        positions = tuple(p for p, t in enumerate(args) if not isinstance(t, ir.Var) or t.name in g.slots)
        fact, exp, m = f"f{level}", f"e{level}", f"m{level}"
        pred = positives[i].pred
        if isinstance(pred, ir.Var):  # the relation is found at run time
            if pred.name not in g.slots:
                local = f"v{len(g.slots)}"
                g.slots[pred.name] = local
                g.emit(depth, f"for {local} in store.triple_predicates:")
                depth += 1
            g.emit(depth, f"R{level} = store.relations.get(({g.slots[pred.name]}, {len(args)}))")
            g.emit(depth, f"if R{level} is None: continue")
            facts_expr, index_expr = f"R{level}.facts", lambda pos: f"R{level}.index({pos!r})"
        else:
            rel = g.const(rels[i])
            facts_expr = f"{rel}_facts"
            index_expr = lambda pos: g.const((rels[i], pos)) + "_idx"  # noqa: E731
        if len(positions) == len(args):
            key = "(" + "".join(g.term_code(t) + ", " for t in args) + ")"
            g.emit(depth, f"{exp} = {facts_expr}.get({key})")
            g.emit(depth, f"if {exp} is None: continue")
        else:
            if positions:
                key = g.term_code(args[positions[0]]) if len(positions) == 1 else \
                    "(" + "".join(g.term_code(args[p]) + ", " for p in positions) + ")"
                g.emit(depth, f"for {fact} in {index_expr(positions)}.get({key}, ()):")
            else:
                g.emit(depth, f"for {fact} in {facts_expr}:")
            depth += 1
            checks(i, fact, depth, set(positions))
            g.emit(depth, f"{exp} = {facts_expr}[{fact}]")
            bind_atom(i, fact, depth)
        prev = mvar[0]
        g.emit(depth, f"{m} = {exp}" if prev is None else f"{m} = {prev} if {prev} < {exp} else {exp}")
        mvar[0] = m
        place_filters(depth)
        return depth

    def score(i):
        atom = positives[i]
        terms = (atom.pred, *atom.args)
        bound = sum(1 for t in terms if not isinstance(t, ir.Var) or t.name in g.slots)
        return (bound == len(terms), bound, -i)

    depth = 1
    seed_pred = positives[seed].pred
    if isinstance(seed_pred, ir.Var):
        # the seed's predicate is the delta's (PRED): the atoms it binds are joined once, before
        # the loop over the delta (often they have no match, and the delta is not looked at)
        g.slots[seed_pred.name] = "vP"
        g.emit(depth, "vP = PRED")
        g.emit(depth, "for _ in (0,):  # a loop, so that 'continue' leaves the joins below")
        depth += 1
        seed_vars = {t.name for t in positives[seed].args if isinstance(t, ir.Var)}
        while remaining:
            i = max(remaining, key=score)
            names = {t.name for t in (positives[i].pred, *positives[i].args) if isinstance(t, ir.Var)}
            if not names & set(g.slots) or names & seed_vars:
                break
            remaining.remove(i)
            depth = place_atom(i, depth)
    g.emit(depth, "for f0, m0 in delta:")
    depth += 1
    checks(seed, "f0", depth, set())
    bind_atom(seed, "f0", depth)
    if mvar[0] is None:
        mvar[0] = "m0"
    else:
        g.emit(depth, f"m0 = m0 if m0 < {mvar[0]} else {mvar[0]}")
        mvar[0] = "m0"
    place_filters(depth)
    while remaining:
        i = max(remaining, key=score)
        remaining.remove(i)
        depth = place_atom(i, depth)
    if pending_cmp or pending_neg:
        raise ValueError("unsafe rule: a comparison or negation has unbound variables")
    head = "(" + "".join(g.term_code(t) + ", " for t in head_terms) + ")"
    head_code = "HEAD" if head_rel is not None else f"({g.slots[head_pred.name]}, {len(head_terms)})"
    g.emit(depth, f"emit(({head_code}, {head}, {mvar[0]}))")

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
        compiled.seeded[0]([((), 1 << 62)], store, out.append)
        return out
    seed_rel = compiled.body_relations[0]
    if seed_rel is not None:
        compiled.seeded[0](list(store.relation(seed_rel).facts.items()), store, out.append)
        return out
    for pid in list(store.triple_predicates):  # a variable predicate first: every triple relation
        compiled.seeded[0](list(store.relation((pid, 2)).facts.items()), store, out.append, pid)
    return out
