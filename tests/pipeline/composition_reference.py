"""The whole pipeline read literally: the stage references composed, as the docs define them.

At each evaluated time point t (every tick from the first record's time to the last one's when
the program has temporal rules, else the records' time points):

1. the knowledge K_t is the closure, under the ontological stage's rules (the program's Datalog
   rules of that stage and its profiles' rules), of the background (the rule file's facts and the
   ontologies), the stream facts of t and the triples of the graphs built at t so far;
2. the events of t are the solutions of the event queries over K_t (SPARQL through rdflib's own
   evaluator, rule bodies by brute force), each type's in the order of their attribute values;
   the events not given to the patterns yet go to the pattern reference; the graphs of its
   matches join K_t, and 1-2 repeat until no new event comes;
3. the LARS reference evaluates the temporal rules at t, with the background closure holding at
   every time point, the stream facts of t as stream atoms and the rest of K_t (what the stage
   derived, the graphs) as atoms holding at t;
4. printed at t: what the stage derived at t (K_t less the background closure, the stream facts
   and the graphs' triples) and what the LARS rules derived at t (less their consequences of the
   background alone: what the rules without ``not`` and ``@`` derive from the background closure,
   every window atom read as a plain atom), less the input facts and the atoms reported at an
   earlier time point in ``at``; ``at``: the atoms ``@T`` heads placed at another time point,
   new there; ``graphs``: one sorted N-Triples document per match.

Nothing here shares code with the engines but the parser, the IR and the canonical text of a
term; the ontological closure and the LARS and pattern definitions are the per-stage references.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import rdflib
from networkx import descendants

from dotr.ontology.stage import stage_rules
from dotr.ontology.turtle import in_order
from dotr.pipeline.input_facts import parse_fact
from dotr.rules import check
from dotr.rules import ir
from dotr.rules.lang.analysis import dependency_graph, pred_key
from dotr.rules.lang.loader import CheckResult
from dotr.rules.engine.terms import TermDictionary, format_term
from tests.ontology import reference as onto
from tests.temporal.pattern_reference import PatternReference
from tests.temporal.reference import Reference as LarsReference

Atom = tuple  # ((pred term, arity), args as IR terms)
RDF_TYPE = ir.Iri(ir.RDF_TYPE)


def atom_of(fact: ir.Atom) -> Atom:
    return (fact.pred, len(fact.args)), tuple(fact.args)


def triple_atom(s, p, o) -> Atom:
    return (_term(p), 2), (_term(s), _term(o))


def _term(node) -> ir.Term:
    if isinstance(node, rdflib.URIRef):
        return ir.Iri(str(node))
    if isinstance(node, rdflib.Literal) and isinstance(node.toPython(), (int, float)) and not isinstance(node.toPython(), bool):
        return ir.Num(node.toPython())
    raise ValueError(f"the composition reference reads IRIs and numbers only, not {node!r}")


def _node(term: ir.Term):
    if isinstance(term, ir.Iri):
        return rdflib.URIRef(term.value)
    if isinstance(term, ir.Num):
        return rdflib.Literal(term.value)
    return None  # a plain name has no RDF form


def text(atom: Atom) -> str:
    (pred, _), args = atom
    name = pred.value if isinstance(pred, ir.Name) else f"<{pred.value}>"
    return f"{name}({','.join(format_term(a) for a in args)})" if args else name


def closure(rules: list[ir.Rule], atoms: set[Atom]) -> set[Atom]:
    """The ontology reference's least model, on IR terms."""
    d = TermDictionary()
    facts = {((d.intern(p), n), tuple(d.intern(a) for a in args)) for (p, n), args in atoms}
    model = onto.closure(rules, facts, d)
    return {((d.term(rel[0]), rel[1]), tuple(d.term(i) for i in fact)) for rel, fact in model}


def _static(rules: list[ir.Rule]) -> list[ir.Rule]:
    """The ontological stage's rules that depend on no negation: what they derive from the
    background holds at every time point (the others are evaluated anew at each)."""
    graph = dependency_graph(tuple(rules))
    negated = {pred_key(lit.atom) for r in rules for lit in r.body if isinstance(lit, ir.AtomLiteral) and lit.negated}
    downstream = set().union(*(descendants(graph, key) for key in negated if key in graph))
    return [r for r in rules if pred_key(r.head) not in downstream]


def _plain_rules(rules: list[ir.Rule]) -> list[ir.Rule]:
    """The rules that derive consequences of the background alone: without ``not`` and ``@``,
    every window atom read as a plain atom."""
    out = []
    for rule in rules:
        if rule.at is not None or any(getattr(lit, "negated", False) for lit in rule.body) or any(
                isinstance(lit, ir.TemporalLiteral) and isinstance(lit.op, ir.At) for lit in rule.body):
            continue
        body = tuple(ir.AtomLiteral(lit.atom) if isinstance(lit, ir.TemporalLiteral) else lit for lit in rule.body)
        out.append(ir.Rule(rule.head, body))
    return out


class CompositionReference:
    def __init__(self, checked: CheckResult, background: list[Atom], include_background: bool = False):
        program = checked.program
        self.program = program
        rules, profile_facts = stage_rules(checked)
        self.rules = rules
        given = {atom_of(f) for f in program.facts} | {atom_of(f) for f in profile_facts}
        self.given = given | set(background)
        self.background = closure(_static(rules), self.given)
        self.temporal = [r for r in checked.analysis.temporal if not r.is_fact]
        self.lars_heads = {(r.head.pred, len(r.head.args)) for r in self.temporal}
        self.lars_background = {a for a in closure(_plain_rules(self.temporal), self.background)
                                if a[0] in self.lars_heads}
        self.include_background = include_background
        self.outputs = set(program.outputs) if program.outputs else None  # predicates and classes
        self.patterns = PatternReference(program) if program.patterns else None
        self.events = program.events
        self.prefixes = dict(ir.DEFAULT_PREFIXES) | {
            s.prefix: s.iri for s in program.statements if isinstance(s, ir.PrefixDecl)}
        self.templates = {p.name: p for p in program.patterns}
        self.lars: LarsReference | None = None
        self._changed = False
        self.ahead: dict[int, set] = defaultdict(set)

    def change_background(self, add: list[Atom], remove: list[Atom]) -> None:
        """From the next time point on, the background lacks ``remove`` and has ``add`` (the
        closure recomputed from scratch); the LARS reference keeps each earlier time point's."""
        self.given = (self.given - set(remove)) | set(add)
        self.background = closure(_static(self.rules), self.given)
        self.lars_background = {a for a in closure(_plain_rules(self.temporal), self.background)
                                if a[0] in self.lars_heads}
        self._changed = True

    # ------------------------------------------------------------------------ events
    def _events(self, knowledge: set[Atom]) -> dict[str, list[tuple]]:
        graph = rdflib.Graph()
        for (pred, n), args in knowledge:
            if n == 2 and isinstance(pred, ir.Iri):
                nodes = [_node(args[0]), _node(pred), _node(args[1])]
                if None not in nodes and not isinstance(nodes[0], rdflib.Literal):
                    graph.add(tuple(nodes))
        out = {}
        for event in self.events:
            if event.query is not None:
                prologue = "".join(f"PREFIX {k}: <{v}>\n" for k, v in self.prefixes.items())
                rows = []
                for row in graph.query(prologue + event.query.text):
                    values = [row[p.key] for p in event.params]
                    if None not in values:
                        rows.append(tuple(_term(v) for v in values))
            else:
                d = TermDictionary()
                model = {}
                for (pred, n), args in knowledge:
                    model.setdefault((d.intern(pred), n), set()).add(tuple(d.intern(a) for a in args))
                rows = [tuple(d.term(theta[p.name]) for p in event.params)
                        for theta in onto._solutions(event.body, model, d)]
            out[event.name] = sorted(set(rows) if event.query is None else rows, key=lambda r: [format_term(x) for x in r])
        return out

    def _graph(self, pattern: str, bindings: dict) -> list[tuple]:
        """The triples of a match's graph (templates of IRIs and ``?v`` from ``with`` only)."""
        decl = self.templates[pattern]
        values = {}
        for binding in decl.bindings:
            ref = binding.value
            label = bindings[ref.event]
            values[binding.name.lstrip("?")] = label[2][self.patterns.attrs[label[0]].index(ref.attr)]
        triples = []
        for s, p, o in _template(decl.construct.text, self.prefixes):
            triples.append(tuple(values[x[1:]] if isinstance(x, str) else x for x in (s, p, o)))
        return triples

    # ------------------------------------------------------------------------ time points
    def step(self, t: int, stream: list[Atom]) -> dict | None:
        """The output record of ``t`` (as ``dotr run`` writes it), or None when it has nothing."""
        inputs = set(stream)
        built: set[Atom] = set()
        graphs: list[str] = []
        seen: dict[str, set] = defaultdict(set)
        while True:
            knowledge = closure(self.rules, self.background | inputs | built)
            if self.patterns is None:
                break
            events = {}
            for name, rows in self._events(knowledge).items():
                new = [r for r in rows if r not in seen[name]]
                seen[name].update(new)
                if new:
                    events[name] = new
            if not events:
                break
            new_triples = set()
            for pattern, bindings, _ in self.patterns.step(t, events):
                if self.templates[pattern].construct is None:
                    continue
                triples = self._graph(pattern, bindings)
                graphs.append("".join(sorted({f"{format_term(s)} {format_term(p)} {format_term(o)} .\n"
                                              for s, p, o in triples})))
                new_triples |= {triple_atom(*(_node(x) for x in tr)) for tr in triples}
            if new_triples <= built:
                break
            built |= new_triples
        facts = knowledge - self.background - inputs - built
        at: dict[int, set] = defaultdict(set)
        if self.temporal:
            if self.lars is None:
                self.lars = LarsReference(self.temporal, sorted(self.background, key=repr), start=t)
            elif self._changed:
                self.lars.change_background(t, self.background)
            self._changed = False
            derived, placed = self.lars.step(t, stream, sorted(knowledge - inputs - self.background, key=repr))
            facts |= derived - self.lars_background - self.ahead.pop(t, set())
            for when, atom in placed:
                if when > t:
                    self.ahead[when].add(atom)
                at[when].add(atom)
        if self.include_background:
            facts |= (self.background | self.lars_background) - self.given
        facts -= inputs
        record: dict = {"t": t, "facts": sorted(text(a) for a in facts if self._printed(a))}
        at = {str(w): sorted(text(a) for a in atoms if self._printed(a)) for w, atoms in sorted(at.items())}
        at = {w: v for w, v in at.items() if v}
        if at:
            record["at"] = at
        if graphs:
            record["graphs"] = sorted(graphs)
        return record if record["facts"] or at or graphs else None

    def _printed(self, atom: Atom) -> bool:
        (pred, n), args = atom
        if isinstance(pred, ir.Name) and pred.value.startswith("_"):
            return False
        outputs = self.outputs
        return outputs is None or pred in outputs or pred == RDF_TYPE and args[1] in outputs


def _template(text: str, prefixes: dict[str, str]) -> list[tuple]:
    """The triples of a construct template made of ``?v`` and IRIs (``:x``, ``a``), one
    ``s p o`` per ``.``: IRIs as IR terms, variables as ``"?v"``."""
    out = []
    for part in text.strip().strip("{}").split(" ."):
        words = part.split()
        if not words:
            continue
        out.append(tuple(_word(w, prefixes) for w in words))
    return out


def _word(word: str, prefixes: dict[str, str]):
    if word.startswith("?"):
        return word
    if word == "a":
        return RDF_TYPE
    if word.startswith("<"):
        return ir.Iri(word[1:-1])
    prefix, local = word.split(":", 1)
    return ir.Iri(prefixes[prefix] + local)


def reference_output(rules: Path, turtle: str, records, include_background: bool) -> list[dict]:
    """The reference's output records for a rule file, a Turtle background and records
    ``(t, facts, Turtle or None[, background change or None])`` (every tick from the first
    record's time to the last one's when the program has temporal rules)."""
    checked = check(rules)
    background = [triple_atom(*tr) for tr in rdflib.Graph().parse(data=turtle, format="turtle")]
    reference = CompositionReference(checked, background, include_background)
    by_time: dict[int, list] = {}
    changes: dict[int, tuple[list, list]] = {}
    for t, facts, payload, *change in records:
        if change and change[0]:
            add, remove = changes.setdefault(t, ([], []))
            add += [atom_of(parse_fact(f, reference.prefixes)) for f in change[0].get("add", [])]
            remove += [atom_of(parse_fact(f, reference.prefixes)) for f in change[0].get("remove", [])]
        atoms = by_time.setdefault(t, [])
        atoms += [atom_of(parse_fact(f)) for f in facts]
        if payload:
            # (a graph has no order: its triples arrive in the order pipeline.turtle defines)
            atoms += [triple_atom(*tr) for tr in in_order(list(rdflib.Graph().parse(data=payload, format="turtle")))]
    times = sorted(by_time)
    if checked.analysis.temporal:
        times = list(range(times[0], times[-1] + 1))
    out = []
    for t in times:
        if t in changes:  # (from t on: removals, then additions)
            reference.change_background(*changes[t])
        if (record := reference.step(t, by_time.get(t, []))) is not None:
            out.append(record)
    return out
