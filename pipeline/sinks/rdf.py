"""The RDF output formats, TriG and N-Quads (``--format trig``, ``nquads``): each time point one
named graph ``<urn:dotr:t:T>`` of the triples it derived and the graphs its patterns and CONSTRUCT
queries built, the composite events in ``<urn:dotr:t:T:events>``, with ``--changes`` the triples of
the facts removed in ``<urn:dotr:t:T:removed>``, written in a fixed order (the same result is
always the same bytes). Atoms that are not triples, and the answers of SELECT and ASK queries,
have no place in them: :func:`not_triples` and :func:`answering_queries` name them.

>>> import io
>>> out = io.StringIO()
>>> RdfWriter(out, {"": "http://ex.org/"}, False, "nquads").write(Result(3, ["<http://ex.org/p>(<http://ex.org/a>,7)"]))
>>> out.getvalue()
'<http://ex.org/a> <http://ex.org/p> "7"^^<http://www.w3.org/2001/XMLSchema#integer> <urn:dotr:t:3> .\\n'
"""

from __future__ import annotations

from typing import TextIO

from dotr.rules import ir
from dotr.rules.lang.queries.csparql import is_csparql, parse_csparql
from dotr.rules.lang.queries.epsparql import parse_epsparql

from ..printing import PREDECLARED
from ..records import Result
from .rdf_terms import RdfTerm, iri, literal, ntriples_line, printed_term, trig_iri, trig_text, triple_args


def not_triples(checked) -> list[str]:
    """The predicates ``checked``'s rules can print that are not RDF triples (``name/arity``):
    TriG and N-Quads cannot write them.

    >>> from dotr.rules import check_text
    >>> not_triples(check_text("@prefix : <http://ex.org/> . a(X) :- b(X). :c(X, Y) :- :d(X, Y). _h(X) :- b(X)."))
    ['a/1']
    >>> not_triples(check_text("@prefix : <http://ex.org/> . :t(X, Y, Z) :- b(X, Y, Z). :C(X) :- b(X, X, X)."))
    ['<http://ex.org/t>/3']
    """
    outputs = set(checked.program.outputs)
    # (an IRI predicate prints a triple with two arguments, a class membership with one)
    return sorted(f"{pred.value}/{arity}" if isinstance(pred, ir.Name) else f"<{pred.value}>/{arity}"
                  for pred, arity in checked.analysis.derived
                  if (not outputs or pred in outputs) and (isinstance(pred, ir.Name) and not pred.value.startswith("_")
                                                           or isinstance(pred, ir.Iri) and arity not in (1, 2)))


def answering_queries(checked) -> list[str]:
    """The names of ``checked``'s queries that answer with solutions or a boolean (C-SPARQL,
    RSP-QL and EP-SPARQL SELECT, ASK): TriG and N-Quads have no place for them (a CONSTRUCT
    query's graph they write).

    >>> from dotr.rules import check_text
    >>> answering_queries(check_text('''@prefix : <http://ex.org/> .
    ... query Q := register compute every 1 as select ?s from stream :st [range 2 step 1] where { ?s :p ?o } .
    ... query G := register compute every 1 as construct { ?s :q ?o } from stream :st [range 2 step 1] where { ?s :p ?o } .
    ... query E := select ?s where { ?s :p ?o } seq { ?s :q ?o } .
    ... query F := construct { ?s :r ?o } where { ?s :p ?o } seq { ?s :q ?o } .'''))
    ['Q', 'E']
    """
    program, ms = checked.program, checked.program.timeunit == "ms"
    names = []
    for decl in program.queries:
        if is_csparql(decl.query):
            query = checked.queries.require(f"csparql {decl.name}", decl.query,
                                            lambda: parse_csparql(decl, program.prefixes, ms))
        else:
            query = checked.queries.require(f"epsparql {decl.name}", decl.query,
                                            lambda: parse_epsparql(decl.name, decl.query, program.prefixes, ms))
        if query.form != "construct":
            names.append(decl.name)
    return names


#: the vocabulary of composite events in TriG and N-Quads (docs/cli.md)
_EVENT_PREFIXES = {"event": "urn:dotr:event:", "type": "urn:dotr:type:", "attr": "urn:dotr:attribute:",
                   "dotr": "urn:dotr:"}
_RDF_TYPE = iri(ir.RDF_TYPE)
_PATTERN = iri("urn:dotr:pattern")


class RdfWriter:
    """Writes each time point's :class:`Result` as RDF: one named graph ``<urn:dotr:t:T>`` per
    time point with its triples and pattern graphs, the composite events in a second one, the
    removed facts' triples (``--changes``) in a third (docs/cli.md, "Output"); ``document`` says
    which: TriG (with the rule file's ``prefixes`` unless ``full_iris``) or N-Quads.

    Each triple's text is made from the fact's text (:mod:`pipeline.sinks.rdf_terms`) once and
    kept (a bounded cache, ``bound`` texts): a fact that holds on costs a dict probe."""

    def __init__(self, out: TextIO, prefixes: dict[str, str], full_iris: bool, document: str,
                 bound: int = 200_000):
        self.out, self.trig, self.bound = out, document == "trig", bound
        self.prefixes = {} if full_iris else {**PREDECLARED, **prefixes}
        # per prefix set (without, with the events' vocabulary): its names, and (namespace, name)
        # longest namespace first, as TriG picks a prefix
        self._names = [self.prefixes, {**self.prefixes, **_EVENT_PREFIXES}]
        self._short = [sorted(((ns, name) for name, ns in names.items()), key=lambda item: -len(item[0]))
                       for names in self._names]
        # per prefix set: a fact's text or a graph's line -> its triple's text ("": no triple);
        # N-Quads without the graph, TriG a whole line
        self._lines: list[dict[str, str]] = [{}, {}]
        self._terms: dict[str, RdfTerm | None] = {}  # a printed term -> its RDF term

    def write(self, result: Result) -> None:
        events = bool(result.events)
        lines, short = self._lines[events and self.trig], self._short[events]
        if len(lines) > self.bound:
            lines.clear()
        triples = self._fact_lines(result.facts, lines, short)
        removed = self._fact_lines(result.removed or (), lines, short)
        for doc in result.graphs:
            for text in doc.split("\n"):  # (not splitlines: a literal may hold \x1e, \u2028)
                line = lines.get(text)
                if line is None:
                    terms = ntriples_line(text)
                    line = lines[text] = "" if terms is None else self._line(terms, short)
                if line:
                    triples.add(line)
        event_lines = {self._line(triple, short) for triple in self._events(result)}
        graph = f"urn:dotr:t:{result.t}"
        held = ((graph, triples), (f"{graph}:events", event_lines), (f"{graph}:removed", removed))
        if self.trig:
            self._write_trig(held, events)
        else:
            self.out.write("".join(sorted({f"{line}<{name}> .\n" for name, texts in held for line in texts})))

    def _write_trig(self, held: tuple[tuple[str, set[str]], ...], events: bool) -> None:
        """One TriG document: the prefixes, then each graph's triples (``held``: its name and
        lines), one per line, sorted (the same result is always the same bytes)."""
        short = self._short[events]
        lines = [f"@prefix {name}: <{ns}> ." for name, ns in self._names[events].items()]
        for name, triples in held:
            if triples:
                lines += [f"{trig_iri(name, short)} {{", *sorted(triples), "}"]
        self.out.write("\n".join(lines) + "\n")

    def _fact_lines(self, facts, lines: dict[str, str], short: list[tuple[str, str]]) -> set[str]:
        """The texts of the triples of ``facts`` (``lines``: the cache of the prefix set ``short``)."""
        triples = set()
        for fact in facts:
            line = lines.get(fact)
            if line is None:
                line = lines[fact] = self._fact_line(fact, short)
            if line:
                triples.add(line)
        return triples

    def _fact_line(self, fact: str, short: list[tuple[str, str]]) -> str:
        """The text of a fact's triple ("": it is none: triples print as ``<p>(<s>,<o>)``, other
        facts have no RDF form, nor a literal subject)."""
        if not fact.startswith("<") or ">(" not in fact:
            return ""
        pred, rest = fact[1:].split(">(", 1)
        args = triple_args(rest[:-1])
        if args is None:
            return ""
        subject, obj = self._term(args[0]), self._term(args[1])
        if subject is None or subject.iri is None or obj is None:
            return ""
        return self._line((subject, iri(pred), obj), short)

    def _line(self, triple: tuple[RdfTerm, RdfTerm, RdfTerm], short: list[tuple[str, str]]) -> str:
        """A triple as a TriG line, or as N-Quads without its graph."""
        s, p, o = triple
        if self.trig:
            return f"{trig_text(s, short)} {trig_text(p, short)} {trig_text(o, short)} ."
        return f"{s.nt} {p.nt} {o.nt} "

    def _term(self, text: str) -> RdfTerm | None:
        terms = self._terms
        term = terms.get(text, False)
        if term is False:
            if len(terms) > self.bound:
                terms.clear()
            term = terms[text] = printed_term(text)
        return term  # type: ignore[return-value]

    def _events(self, result: Result):
        """The triples of the composite events (an attribute RDF has no term for left out)."""
        for i, event in enumerate(result.events):
            node = iri(f"urn:dotr:event:{result.t}:{i}")
            yield node, _RDF_TYPE, iri(f"urn:dotr:type:{event['type']}")
            yield node, _PATTERN, literal(event["pattern"])
            for attr, value in event["attributes"].items():
                term = self._term(value)
                if term is not None:
                    yield node, iri(f"urn:dotr:attribute:{attr}"), term
