"""``dotr explain``: why a fact holds (or a graph was built) at a time point.

The stream is evaluated up to the time point; then the fact is traced back: to the input or
background facts it rests on, through one grounding of a rule per step (the ontological rules
and profiles on the ontological stage's facts, the temporal rules on the LARS engine's, where a
window atom is shown as the window it stands for), and to the events of the pattern match that
built a graph.
"""

from __future__ import annotations

from typing import Iterator

from rules import DotrError, ir
from rules.engine.builtins import arith, compare
from rules.lang.printer import format_rule
from rules.engine.store import INF, Store
from rules.engine.terms import format_fact, format_term

from .embedded import Reasoner, parse_fact

MAX_DEPTH = 12


def _solutions(body, store: Store, d, theta: dict) -> Iterator[dict]:
    """Groundings of a body (atoms and comparisons, no windows) in ``store``, by brute force."""
    if not body:
        yield theta
        return
    lit, rest = body[0], body[1:]
    if isinstance(lit, ir.Comparison):
        def val(e):
            if isinstance(e, ir.Var):
                return d.value(theta[e.name]) if e.name in theta else None
            if isinstance(e, ir.BinOp):
                return arith(e.op, val(e.left), val(e.right))
            return d.value(d.intern(e))
        bound = lambda e: all(v in theta for v in _names(e))  # noqa: E731
        if bound(lit.left) and bound(lit.right):
            if compare(lit.op, val(lit.left), val(lit.right)) or (
                    lit.op in ("=", "!=") and (_id(lit.left, theta, d) == _id(lit.right, theta, d)) == (lit.op == "=")):
                yield from _solutions(rest, store, d, theta)
        elif lit.op == "=":
            target, source = (lit.left, lit.right) if bound(lit.right) else (lit.right, lit.left)
            value = _id(source, theta, d)
            if isinstance(target, ir.Var) and value is not None:
                yield from _solutions(rest, store, d, {**theta, target.name: value})
        else:
            yield from _solutions(rest + (lit,), store, d, theta) if rest else iter(())
        return
    atom = lit.atom
    if lit.negated:
        ground = tuple(_id(a, theta, d) for a in atom.args)
        rel = (theta.get(atom.pred.name) if isinstance(atom.pred, ir.Var) else d.intern(atom.pred), len(atom.args))
        if store.expiry(rel, ground) is None:
            yield from _solutions(rest, store, d, theta)
        return
    if isinstance(atom.pred, ir.Var):
        preds = [theta[atom.pred.name]] if atom.pred.name in theta else list(store.triple_predicates)
    else:
        preds = [d.intern(atom.pred)]
    for pid in preds:
        relation = store.relations.get((pid, len(atom.args)))
        if relation is None:
            continue
        for fact in list(relation.facts):
            t2 = dict(theta)
            if isinstance(atom.pred, ir.Var):
                t2[atom.pred.name] = pid
            if all(_unify(a, v, t2, d) for a, v in zip(atom.args, fact)):
                yield from _solutions(rest, store, d, t2)


def _names(e):
    if isinstance(e, ir.Var):
        return {e.name}
    if isinstance(e, ir.BinOp):
        return _names(e.left) | _names(e.right)
    return set()


def _id(e, theta, d):
    if isinstance(e, ir.Var):
        return theta.get(e.name)
    if isinstance(e, ir.BinOp):
        v = arith(e.op, *(d.value(_id(x, theta, d)) if _id(x, theta, d) is not None else None for x in (e.left, e.right)))
        return None if v is None else d.number(v)
    return d.intern(e)


def _unify(term, value, theta, d) -> bool:
    if isinstance(term, ir.Var):
        return theta.setdefault(term.name, value) == value
    return d.intern(term) == value


class Explainer:
    def __init__(self, reasoner: Reasoner):
        self.r = reasoner
        self.d = reasoner.dictionary
        self.prefixes = reasoner.program.prefixes

    def fact(self, t: int, inputs: set, rel, fact, depth: int = 0, seen=None) -> list[str]:
        seen = set() if seen is None else seen
        pad = "  " * depth
        text = format_fact(self.d, rel, fact)
        if (rel, fact) in inputs:
            return [f"{pad}{text}: input at {t}"]
        explicit = self.r.ontology.materialiser.explicit.get(rel, {}).get(fact)
        if explicit is not None:
            return [f"{pad}{text}: background fact" if explicit >= INF else f"{pad}{text}: stream fact (holds until {explicit})"]
        if (rel, fact) in seen or depth > MAX_DEPTH:
            return [f"{pad}{text}: (see above)"]
        seen.add((rel, fact))
        for store, rules in ((self.r.ontology.store, self.r.ontology.rules),
                             (self.r.lars.store if self.r.lars else None, self.r.lars.rewritten if self.r.lars else [])):
            if store is None or store.expiry(rel, fact) is None:
                continue
            for rule, body in rules:
                head = rule.head
                if (isinstance(head.pred, ir.Var) or (self.d.intern(head.pred), len(head.args)) == rel) and len(head.args) == len(fact):
                    theta: dict = {}
                    if isinstance(head.pred, ir.Var):
                        theta[head.pred.name] = rel[0]
                    if not all(_unify(a, v, theta, self.d) for a, v in zip(head.args, fact)):
                        continue
                    for solution in _solutions(tuple(body), store, self.d, theta):
                        lines = [f"{pad}{text}: by {format_rule(rule, self.prefixes)}"]
                        for lit in body:
                            if isinstance(lit, ir.AtomLiteral) and not lit.negated:
                                atom = lit.atom
                                prel = (solution[atom.pred.name] if isinstance(atom.pred, ir.Var) else self.d.intern(atom.pred), len(atom.args))
                                pfact = tuple(_id(a, solution, self.d) for a in atom.args)
                                name = self.d.term(prel[0])
                                if isinstance(name, ir.Name) and name.value.startswith("_lars:"):
                                    kind, size = name.value.split(":")[1:3]
                                    base = self.d.term(int(name.value.split(":")[3]))
                                    args = [format_term(self.d.term(i)) for i in pfact]
                                    op = {"dia": "<>", "box": "[]", "at": "@" + (args[-1] if args else "")}[kind.lstrip("t")]
                                    if kind.endswith("at"):
                                        args = args[:-1]
                                    window = "" if int(size) >= INF else f"[{size}{' #' if kind.startswith('t') else ''}] "
                                    shown = f"{getattr(base, 'value', base)}({', '.join(args)})" if args else str(base.value)
                                    lines.append(f"{pad}  {window}{op} {shown}: held in the window")
                                else:
                                    lines += self.fact(t, inputs, prel, pfact, depth + 1, seen)
                        return lines
        return [f"{pad}{text}: no derivation found at {t}"]


class NothingToExplain(DotrError):
    """The fact does not hold at the time point, the graph index is out of range, or the time
    point was not evaluated."""


def explain(reasoner: Reasoner, elements, t: int, target: str) -> list[str]:
    """Run ``elements`` up to ``t`` and explain ``target`` (a fact, or the index of a graph) at t;
    :class:`NothingToExplain` when there is nothing to explain."""
    last = None
    inputs: set = set()
    for result in reasoner.run((when, facts) for when, facts in elements if when <= t):
        last = result
    if last is None or last.t != t:
        raise NothingToExplain(f"nothing was evaluated at {t}")
    for when, facts in elements:
        if when == t:
            inputs |= {reasoner.ontology.intern(parse_fact(f) if isinstance(f, str) else f) for f in facts}
    if target.isdigit():
        matches = reasoner.last_matches
        index = int(target)
        if index >= len(matches):
            raise NothingToExplain(f"there are {len(matches)} graphs at {t}")
        m = matches[index]
        lines = [f"graph {index} at {t}: pattern {m.pattern} fired on these events:"]
        for label, e in sorted(m.bindings.items(), key=lambda kv: kv[1].time):
            names = reasoner.patterns.attrs[e.type]
            attrs = ", ".join(f"{a}={format_term(reasoner.dictionary.term(v))}" for a, v in zip(names, e.values))
            lines.append(f"  {label}: {e.type}({attrs}) at {e.time}")
        return lines
    atom = parse_fact(target)
    if isinstance(atom.pred, ir.Iri) and len(atom.args) == 1:
        atom = ir.Atom(ir.Iri(ir.RDF_TYPE), (atom.args[0], atom.pred))
    rel, fact = reasoner.ontology.intern(atom)
    lines = Explainer(reasoner).fact(t, inputs, rel, fact)
    if len(lines) == 1 and lines[0].endswith(f": no derivation found at {t}"):
        raise NothingToExplain(lines[0])
    return lines
