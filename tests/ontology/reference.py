"""Reference semantics for the ontological stage: naive recomputation from scratch.

Rules are interpreted directly from the IR (nested loops over substitutions), to the least
fixpoint, stratum by stratum for negation. Obviously correct, slow, for the differential tests.
"""

from __future__ import annotations

from dotr.rules import ir
from dotr.rules.lang.analysis import dependency_graph, pred_key, stratify
from dotr.rules.engine.builtins import arith, compare
from dotr.rules.engine.terms import TermDictionary


def _value(term, theta, d: TermDictionary):
    if isinstance(term, ir.Var):
        return d.value(theta[term.name])
    if isinstance(term, ir.BinOp):
        return arith(term.op, _value(term.left, theta, d), _value(term.right, theta, d))
    return d.value(d.intern(term))


def _ident(term, theta, d: TermDictionary):
    if isinstance(term, ir.Var):
        return theta.get(term.name)
    if isinstance(term, ir.BinOp):
        v = _value(term, theta, d)
        return None if v is None else d.number(v)
    return d.intern(term)


def _match(atom: ir.Atom, fact: tuple, theta: dict, d: TermDictionary) -> dict | None:
    theta = dict(theta)
    for term, value in zip(atom.args, fact):
        if isinstance(term, ir.Var):
            if theta.setdefault(term.name, value) != value:
                return None
        elif d.intern(term) != value:
            return None
    return theta


def _solutions(body, facts: dict, d: TermDictionary):
    thetas = [{}]
    todo = list(body)
    while todo:
        # positive atoms first, then whatever became evaluable
        lit = next((l for l in todo if isinstance(l, ir.AtomLiteral) and not l.negated), None)
        if lit is None:
            lit = todo[0]
        todo.remove(lit)
        out = []
        for theta in thetas:
            if isinstance(lit, ir.AtomLiteral) and not lit.negated:
                for rel, theta1 in _relations(lit.atom, theta, facts, d):
                    for fact in facts.get(rel, ()):
                        t2 = _match(lit.atom, fact, theta1, d)
                        if t2 is not None:
                            out.append(t2)
            elif isinstance(lit, ir.AtomLiteral):
                rel = _head_relation(lit.atom, theta, d)
                ground = tuple(_ident(t, theta, d) for t in lit.atom.args)
                if None in ground:
                    todo.append(lit)  # not yet bound: later
                    out = thetas
                    break
                if ground not in facts.get(rel, set()):
                    out.append(theta)
            else:
                left_bound = all(v.name in theta for v in _vars(lit.left))
                right_bound = all(v.name in theta for v in _vars(lit.right))
                if left_bound and right_bound:
                    if lit.op in ("=", "!=") and not isinstance(lit.left, ir.BinOp) and not isinstance(lit.right, ir.BinOp):
                        same = _ident(lit.left, theta, d) == _ident(lit.right, theta, d)
                        if same == (lit.op == "="):
                            out.append(theta)
                    elif compare(lit.op, _value(lit.left, theta, d), _value(lit.right, theta, d)):
                        out.append(theta)
                elif lit.op == "=" and (left_bound or right_bound):
                    target, source = (lit.right, lit.left) if left_bound else (lit.left, lit.right)
                    value = _ident(source, theta, d)
                    if value is not None:
                        out.append({**theta, target.name: value})
                else:
                    todo.append(lit)
                    out = thetas
                    break
        thetas = out
    return thetas


def _relations(atom, theta, facts, d):
    """The relations an atom ranges over, with the binding of a variable predicate."""
    if not isinstance(atom.pred, ir.Var):
        return [((d.intern(atom.pred), len(atom.args)), theta)]
    if atom.pred.name in theta:
        return [((theta[atom.pred.name], len(atom.args)), theta)]
    return [(rel, {**theta, atom.pred.name: rel[0]}) for rel in list(facts)
            if rel[1] == len(atom.args) == 2 and isinstance(d.term(rel[0]), ir.Iri)]


def _head_relation(atom, theta, d):
    pred = theta.get(atom.pred.name) if isinstance(atom.pred, ir.Var) else d.intern(atom.pred)
    return (pred, len(atom.args))


def _vars(expr):
    if isinstance(expr, ir.Var):
        yield expr
    elif isinstance(expr, ir.BinOp):
        yield from _vars(expr.left)
        yield from _vars(expr.right)


def closure(rules: list[ir.Rule], facts: set[tuple], d: TermDictionary) -> set[tuple]:
    """The least model of ``rules`` over ``facts`` ((relation, tuple) pairs), stratified."""
    model: dict = {}
    for rel, fact in facts:
        model.setdefault(rel, set()).add(fact)
    strata, _ = stratify(dependency_graph(tuple(rules)))
    for level in sorted(set(strata[pred_key(r.head)] for r in rules)):
        group = [r for r in rules if strata[pred_key(r.head)] == level]
        changed = True
        while changed:
            changed = False
            for rule in group:
                for theta in _solutions(rule.body, model, d):
                    rel = _head_relation(rule.head, theta, d)
                    fact = tuple(_ident(t, theta, d) for t in rule.head.args)
                    if (rel[0] is None or not isinstance(d.term(rel[0]), ir.Iri)) and isinstance(rule.head.pred, ir.Var):
                        continue  # a variable predicate bound to a non-IRI derives nothing
                    if fact not in model.setdefault(rel, set()):
                        model[rel].add(fact)
                        changed = True
    return {(rel, fact) for rel, fs in model.items() for fact in fs}
