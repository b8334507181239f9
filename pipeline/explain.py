"""``dotr explain``: why a fact holds (or a graph was built) at a time point.

The stream is evaluated up to the time point; then the fact is traced back: to the input or
background facts it rests on, through one grounding of a rule per step (the ontological rules
and profiles on the ontological stage's facts, the temporal rules on the LARS engine's, where a
window atom is shown as the window it stands for), and to the events of the pattern match that
built a graph.
"""

from __future__ import annotations

from typing import Iterable

from dotr.rules import DotrError, UsageError, ir
from dotr.rules.engine.plan import compile_rule
from dotr.rules.engine.planning import Unsupported
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF, Store
from dotr.rules.engine.terms import format_fact, format_term
from dotr.rules.lang.printer import format_rule

from .printing import Readable
from .reasoner import Reasoner
from .input_facts import parse_fact

MAX_DEPTH = 12


_GOAL = ir.Name("_explain_goal")


def _variables(literals) -> list[str]:
    names: dict[str, None] = {}

    def walk(e):
        if isinstance(e, ir.Var):
            names.setdefault(e.name)
        elif isinstance(e, ir.BinOp):
            walk(e.left)
            walk(e.right)
    for lit in literals:
        if isinstance(lit, ir.Atom):
            lit = ir.AtomLiteral(lit)
        if isinstance(lit, ir.AtomLiteral):
            for term in (lit.atom.pred, *lit.atom.args):
                walk(term)
        elif isinstance(lit, ir.Comparison):
            walk(lit.left)
            walk(lit.right)
    return list(names)


def _groundings(head: ir.Atom, body: tuple, store: Store | DictStore, d, rel, fact) -> list[dict]:
    """The groundings of ``head :- body`` that derive ``(rel, fact)`` from ``store``: the join
    plan of ``vars :- goal(head's terms), body`` seeded at the goal with the fact (the way the
    materialiser rederives a fact), each as variable name -> term id."""
    variable = isinstance(head.pred, ir.Var)
    if not variable and (d.intern(head.pred), len(head.args)) != rel or len(head.args) != len(fact):
        return []
    goal = ir.Atom(_GOAL, (head.pred, *head.args) if variable else head.args)
    names = _variables((head, *body))
    try:
        compiled = compile_rule(tuple(ir.Var(n) for n in names), (ir.AtomLiteral(goal), *body), d,
                                head_relation=(-2, len(names)))
    except Unsupported:
        return []
    out: list = []
    compiled.seeded[0]([((rel[0], *fact) if variable else fact, INF)], store, out.append)
    return [dict(zip(names, values)) for _, values, _ in out]


def _id(term, theta, d):
    return theta.get(term.name) if isinstance(term, ir.Var) else d.intern(term)


class Explainer:
    def __init__(self, reasoner: Reasoner):
        self.r = reasoner
        self.d = reasoner.dictionary
        self.prefixes = reasoner.program.prefixes
        self.readable = Readable(self.prefixes)  # facts and terms as dotr run prints them

    def fact(self, t: int, inputs: set, rel, fact, depth: int = 0, seen=None) -> list[str]:
        seen = set() if seen is None else seen
        pad = "  " * depth
        text = self.readable.fact(format_fact(self.d, rel, fact))
        if (rel, fact) in inputs:
            return [f"{pad}{text}: input at {t}"]
        explicit = self.r.ontology.materialiser.explicit.get(rel, {}).get(fact)
        if explicit is not None:
            return [f"{pad}{text}: background fact" if explicit >= INF else f"{pad}{text}: stream fact (holds until {explicit})"]
        if (rel, fact) in seen or depth > MAX_DEPTH:
            return [f"{pad}{text}: (see above)"]
        seen.add((rel, fact))
        held = False
        ontology, lars = self.r.ontology, self.r.lars
        stages: list[tuple[Store | DictStore, list, bool]] = [
            (ontology.store, ontology.rules, ontology.store.expiry(rel, fact) is not None)]
        if lars is not None:
            stages.append((lars.store, lars.rewritten, lars.holds(rel, fact)))
        for store, rules, holds in stages:
            if not holds:
                continue
            held = True
            for rule, body in rules:
                for solution in _groundings(rule.head, tuple(body), store, self.d, rel, fact)[:1]:
                    lines = [f"{pad}{text}: by {format_rule(rule, self.prefixes)}"]
                    for lit in body:
                        if isinstance(lit, ir.AtomLiteral) and not lit.negated:
                            atom = lit.atom
                            prel = (solution[atom.pred.name] if isinstance(atom.pred, ir.Var) else self.d.intern(atom.pred), len(atom.args))
                            pfact = tuple(_id(a, solution, self.d) for a in atom.args)
                            window = self.r.lars.window_of(prel) if self.r.lars else None
                            if window is not None:
                                lines.append(f"{pad}  {self._window_text(window, pfact)}: held in the window")
                            else:
                                lines += self.fact(t, inputs, prel, pfact, depth + 1, seen)
                    return lines
        return [f"{pad}{text}: {'no derivation found' if held else 'does not hold'} at {t}"]

    def _window_text(self, window, fact: tuple) -> str:
        """The window atom ``[size] op base(args)`` as the rule file writes it (``window``: what
        ``LarsEngine.window_of`` gives)."""
        args = [self.readable.term(format_term(self.d.term(i))) for i in fact]
        op = window.kind.operator
        if op == "@":
            op, args = "@" + args[-1], args[:-1]
        size = "" if window.size >= INF else f"[{window.size}{' #' if window.kind.tuple_based else ''}] "
        pred = self.readable.term(format_term(self.d.term(window.base[0])))
        return f"{size}{op} {pred}({', '.join(args)})" if args else f"{size}{op} {pred}"


class NothingToExplain(DotrError):
    """The fact does not hold at the time point, the graph index is out of range, or the time
    point was not evaluated."""


def explain(reasoner: Reasoner, target: str, elements: Iterable[tuple] | None = None, t: int | None = None
            ) -> list[str]:
    """Why ``target`` (a fact's text, or the index of a graph in the result) holds at the time
    point ``reasoner`` evaluated last, from its live state: the derivation's lines, as ``dotr
    explain`` prints them. With ``elements`` (a stream, as ``Reasoner.run`` takes it), a fresh
    reasoner first evaluates them up to ``t``. :class:`NothingToExplain` when there is nothing
    to explain.

    >>> import dotr
    >>> r = dotr.Reasoner(dotr.check_text("warm(X) :- temp(X, V), V > 20 ."))
    >>> _ = r.step(1, ["temp(s1, 25)"])
    >>> print("\\n".join(dotr.explain(r, "warm(s1)")))
    warm(s1): by warm(X) :- temp(X, V), V > 20 .
      temp(s1,25): input at 1
    """
    if elements is not None:
        if t is None:
            raise UsageError("explain with elements needs the time point t to explain at")
        last = None
        for last in reasoner.run((when, facts) for when, facts in elements if when <= t):
            pass
        if last is None or last.t != t:
            raise NothingToExplain(f"nothing was evaluated at {t}")
    t = reasoner.last_t
    if t is None:
        raise NothingToExplain("the reasoner has evaluated no time point")
    inputs = set(reasoner.last_inputs)
    if target.isdigit():
        matches = reasoner.last_matches
        index = int(target)
        if index >= len(matches):
            raise NothingToExplain(f"there are {len(matches)} graphs at {t}")
        m = matches[index]
        if isinstance(m, str) or reasoner.patterns is None:  # (a query's graph: no events to show)
            return [f"graph {index} at {t}: built by the query {m}"]
        lines = [f"graph {index} at {t}: pattern {m.pattern} fired on these events:"]
        # each event by the type its pattern declares (an event's own type may be the one whose
        # rows it shares: declared the same way, or the loosest of a threshold family)
        [decl] = [p for p in reasoner.program.patterns if p.name == m.pattern]
        declared = {r.label: r.event for r in decl.refs if r.selection != "not"}
        readable = Readable(reasoner.program.prefixes)
        for label, e in sorted(m.bindings.items(), key=lambda kv: kv[1].time):
            event_type = declared.get(label, e.type)
            attrs = ", ".join(f"{a}={readable.term(format_term(reasoner.dictionary.term(v)))}"
                              for a, v in zip(reasoner.patterns.attrs[event_type], e.values))
            lines.append(f"  {label}: {event_type}({attrs}) at {e.time}")
        return lines
    atom = parse_fact(target, reasoner.program.prefixes)
    if isinstance(atom.pred, ir.Iri) and len(atom.args) == 1:
        atom = ir.Atom(ir.Iri(ir.RDF_TYPE), (atom.args[0], atom.pred))
    rel, fact = reasoner.ontology.intern(atom)
    lines = Explainer(reasoner).fact(t, inputs, rel, fact)
    if len(lines) == 1 and lines[0].endswith((f": no derivation found at {t}", f": does not hold at {t}")):
        raise NothingToExplain(lines[0])
    return lines
