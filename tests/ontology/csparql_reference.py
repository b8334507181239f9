"""Reference semantics for C-SPARQL queries: every window recomputed from scratch.

At each evaluation time τ (a multiple of the query's period E): collect each window's triples
literally (time window: stream triples with time in (σ - R, σ], σ the latest multiple of the step
not after τ; count window: the last N triples with time ≤ τ; unnamed elements belong to every
window), add the background as it is at τ (changes from their time on), take the closure under the rules by naive fixpoint iteration
(tests/ontology/reference.py), and run the SPARQL part with rdflib's own evaluator on an rdflib
graph of the closure. RStream reports R(τ), IStream R(τ) - R(τ - E), DStream R(τ - E) - R(τ), at
the times whose window is non-empty (DStream also when R(τ - E) has something); ASK reports
whether R(τ) is non-empty.

RSP-QL: the default graph is the closure of the background; the named graph of a window is the
closure of the background and the window's triples less the closure of the background (what
needs a window triple); the query runs on that dataset with rdflib's evaluator.
"""

from __future__ import annotations

import functools
from collections import Counter

import rdflib
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery

from dotr.ontology.convert import from_rdflib, to_rdflib, intern_fact
from dotr.ontology.stage import stage_rules
from dotr.rules import ir
from dotr.rules.lang.queries.csparql import CSparqlQuery, is_csparql, parse_csparql
from dotr.rules.lang.loader import CheckResult
from dotr.rules.engine.terms import TermDictionary, format_term
from tests.ontology.reference import closure

Element = tuple  # (t, stream IRI or None, fact)


class CSparqlReference:
    def __init__(self, checked: CheckResult, background: list, elements: list[Element],
                 changes: list[tuple[int, list, list]] = ()):
        """``changes``: (t, added, removed) background facts, in effect from evaluation time t on."""
        program = checked.program
        self.prefixes = program.prefixes
        self.queries: list[CSparqlQuery] = []
        for decl in program.queries:
            if is_csparql(decl.query):
                query, diags = parse_csparql(decl, self.prefixes, program.timeunit == "ms")
                assert query is not None, diags
                self.queries.append(query)
        self.rules, facts = stage_rules(checked)
        self.d = TermDictionary()
        self.background = {intern_fact(f, self.d) for f in (*program.facts, *facts, *background)}
        self.changes = sorted(((t, {intern_fact(f, self.d) for f in add}, {intern_fact(f, self.d) for f in remove})
                               for t, add, remove in changes), key=lambda c: c[0])
        ordered = sorted(elements, key=lambda e: e[0])  # arrival order within a time point
        self.elements = [(t, s, intern_fact(f, self.d)) for t, s, f in ordered]

    def window(self, query: CSparqlQuery, tau: int) -> list:
        return [key for w in query.windows for key in self.window_content(w, tau)]

    def window_content(self, w, tau: int) -> list:
        mine = [(t, key) for t, s, key in self.elements if s is None or s == w.stream]
        if w.triples is not None:
            return [key for t, key in [e for e in mine if e[0] <= tau][-w.triples:]]
        sigma = tau // w.step * w.step
        return [key for t, key in mine if sigma - w.range < t <= sigma]

    def _add(self, graph, model) -> None:
        for (pred, arity), fact in model:
            if arity == 2 and isinstance(self.d.term(pred), ir.Iri):
                graph.add((to_rdflib(self.d.term(fact[0])), to_rdflib(self.d.term(pred)),
                           to_rdflib(self.d.term(fact[1]))))

    def result(self, query: CSparqlQuery, tau: int) -> Counter:
        content = self.window(query, tau)
        if not content:
            return Counter()
        background = set(self.background)
        for t, add, remove in self.changes:
            if t <= tau:
                background = (background - remove) | add
        if any(w.name for w in query.windows):  # RSP-QL
            graph = rdflib.Dataset()
            base = closure(self.rules, background, self.d)
            self._add(graph, base)
            for w in query.windows:
                named = closure(self.rules, background | set(self.window_content(w, tau)), self.d) - base
                self._add(graph.graph(rdflib.URIRef(w.name)), named)
        else:
            graph = rdflib.Graph()
            self._add(graph, closure(self.rules, background | set(content), self.d))
        translated = self._translated(query)
        rows = graph.query(translated)
        if query.form == "ask":
            return Counter({(): 1} if rows.askAnswer else {})
        if query.form == "construct":
            return Counter({tuple(self.text(n) for n in triple): 1 for triple in rows})
        names = translated.algebra["PV"]
        if "projection" not in parseQuery(query.sparql.text)[1]:  # SELECT *: dotr lists them alphabetically
            names = sorted(names, key=str)
        # rows.bindings keeps solutions that bind nothing (SELECT (MIN(?v) AS ?m) over no
        # solutions is one such row); but GROUP BY over no solutions has no groups, where rdflib
        # gives one empty row
        bindings = [row for row in rows.bindings if row or "group by" not in query.sparql.text.lower()]
        return Counter(tuple(None if row.get(v) is None else self.text(row[v]) for v in names)
                       for row in bindings)

    def text(self, node) -> str:
        """Canonical text, through the dictionary (so 1.0 and 1 are one number, as in dotr)."""
        return format_term(self.d.term(self.d.intern(from_rdflib(node))))

    @functools.cache
    def _translated(self, query: CSparqlQuery):
        return translateQuery(parseQuery(query.sparql.text), initNs=self.prefixes)

    def reports(self, until: int) -> dict[int, dict[str, list]]:
        """Per evaluation time up to ``until``: query name -> sorted reported rows (SELECT: tuples
        of the selected variables' texts, None when unbound; CONSTRUCT: triples of texts; ASK:
        True or False)."""
        out: dict[int, dict[str, list]] = {}
        for query in self.queries:
            prev = Counter()
            for tau in range(0, until + 1, query.every):
                live = bool(self.window(query, tau))
                now = self.result(query, tau)
                report = {"istream": now - prev, "dstream": prev - now}.get(query.stream_op, now)
                if live or (query.stream_op == "dstream" and report):
                    out.setdefault(tau, {})[query.name] = bool(report) if query.form == "ask" else \
                        sorted(report.elements(), key=_order)
                prev = now
        return out


def _order(row: tuple):
    return [x or "" for x in row]
