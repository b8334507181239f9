"""The TriG and N-Quads writer as it was before it wrote from the fact texts (its argument split
fixed, :func:`_split_args`): every term built as
an rdflib term and serialized by rdflib (``_quoteLiteral``), each pattern graph parsed by rdflib.
The reference :mod:`pipeline.sinks.rdf` is compared with, byte for byte (test_rdf_output.py)."""

from __future__ import annotations

import re
from typing import TextIO

import rdflib
from rdflib.plugins.serializers.nt import _quoteLiteral

from dotr.pipeline.input_facts import parse_fact
from dotr.pipeline.printing import PREDECLARED
from dotr.pipeline.records import Result
from dotr.rules import ir
from dotr.rules.engine.terms import iri_text

_EVENT_PREFIXES = {"event": "urn:dotr:event:", "type": "urn:dotr:type:", "attr": "urn:dotr:attribute:",
                   "dotr": "urn:dotr:"}


class ReferenceRdfWriter:
    """Writes each time point's :class:`Result` as RDF: one named graph ``<urn:dotr:t:T>`` per
    time point with its triples and pattern graphs, the composite events in a second one
    (docs/cli.md, "Output"); ``document`` makes the text of a time point's quads (TriG with the
    rule file's ``prefixes`` unless ``full_iris``, N-Quads)."""

    def __init__(self, out: TextIO, prefixes: dict[str, str], full_iris: bool, document: str):
        self.out, self._document = out, self._trig if document == "trig" else _nquads
        self.prefixes = {} if full_iris else {**PREDECLARED, **prefixes}

    def write(self, result: Result) -> None:
        graph = rdflib.URIRef(f"urn:dotr:t:{result.t}")
        quads = _fact_quads(graph, result.facts)  # (graph, s, p, o)
        # (added: with --changes, the removed facts' triples in a graph of their own)
        quads += _fact_quads(rdflib.URIRef(f"urn:dotr:t:{result.t}:removed"), result.removed or ())
        for doc in result.graphs:
            quads += [(graph, *triple) for triple in rdflib.Graph().parse(data=doc, format="nt")]
        if result.events:
            events = rdflib.URIRef(f"urn:dotr:t:{result.t}:events")
            for i, event in enumerate(result.events):
                node = rdflib.URIRef(f"urn:dotr:event:{result.t}:{i}")
                quads.append((events, node, rdflib.RDF.type, rdflib.URIRef(f"urn:dotr:type:{event['type']}")))
                quads.append((events, node, rdflib.URIRef("urn:dotr:pattern"), rdflib.Literal(event["pattern"])))
                for attr, value in event["attributes"].items():
                    quads.append((events, node, rdflib.URIRef(f"urn:dotr:attribute:{attr}"), _node(value)))
        self.out.write(self._document(quads))

    def _trig(self, quads: list[tuple]) -> str:
        """One TriG document: the prefixes, then each graph's triples, one per line, sorted (the
        same result is always the same bytes)."""
        names = {**self.prefixes, **(_EVENT_PREFIXES if any(str(q[0]).endswith(":events") for q in quads) else {})}
        short = sorted(((ns, name) for name, ns in names.items()), key=lambda item: -len(item[0]))
        lines = [f"@prefix {name}: <{ns}> ." for name, ns in names.items()]
        by_graph: dict = {}
        for g, s, p, o in quads:
            by_graph.setdefault(g, set()).add(" ".join(_trig_term(x, short) for x in (s, p, o)) + " .")
        for g in sorted(by_graph):
            lines += [f"{_trig_term(g, short)} {{", *sorted(by_graph[g]), "}"]
        return "\n".join(lines) + "\n"


def _fact_quads(graph, facts) -> list[tuple]:
    quads = []
    for fact in facts:  # triples print as <p>(<s>,<o>); other facts have no RDF form
        if fact.startswith("<") and ">(" in fact:  # (fixed: a literal argument may hold ">(")
            pred, rest = fact[1:].split(">(", 1)
            args = _split_args(rest[:-1])
            if args is None:  # (not two arguments: no triple)
                continue
            try:
                subject = _node(args[0])
                if not isinstance(subject, rdflib.Literal):  # (RDF has no literal subjects: JSON Lines only)
                    quads.append((graph, subject, rdflib.URIRef(pred), _node(args[1])))
            except ValueError:  # (a term rdflib does not take)
                continue
    return quads


def _nquads(quads: list[tuple]) -> str:
    """N-Quads lines, sorted (the same result is always the same bytes)."""
    return "".join(sorted({f"{_nt_term(s)} {_nt_term(p)} {_nt_term(o)} {_nt_term(g)} .\n" for g, s, p, o in quads}))


def _nt_term(node) -> str:
    """An rdflib term in N-Triples (an IRI with the characters it may not hold escaped)."""
    if isinstance(node, rdflib.URIRef):
        return iri_text(str(node))
    return _quoteLiteral(node) if isinstance(node, rdflib.Literal) else node.n3()


#: a local name that can be written after a prefix as it is (a subset of Turtle's PN_LOCAL)
_LOCAL = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def _trig_term(node, prefixes: list[tuple[str, str]]) -> str:
    """A term in TriG: an IRI with a prefix (the longest namespace that leaves a plain local name),
    else in full; a literal as N-Triples writes it, with a prefixed datatype."""
    if isinstance(node, rdflib.URIRef):
        iri = str(node)
        for ns, name in prefixes:
            if iri.startswith(ns) and _LOCAL.fullmatch(iri[len(ns):]):
                return f"{name}:{iri[len(ns):]}"
        return iri_text(iri)
    if isinstance(node, rdflib.Literal) and node.datatype is not None and not node.language:
        return _quoteLiteral(rdflib.Literal(str(node))) + "^^" + _trig_term(node.datatype, prefixes)
    return _nt_term(node)


def _split_args(text: str) -> tuple[str, str] | None:
    """A triple's two argument texts, split at the comma outside IRIs and quotes (None: not two).
    Fixed: the comma of an IRI, a literal ending in a backslash, a third argument."""
    commas, quote, iri, escaped = [], False, False, False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quote = False
        elif iri:
            iri = ch != ">"
        elif ch == '"':
            quote = True
        elif ch == "<":
            iri = True
        elif ch == ",":
            commas.append(i)
    return (text[:commas[0]], text[commas[0] + 1:]) if len(commas) == 1 else None


def _node(text: str):
    """The RDF term of a printed term (numerals typed as Turtle types them; a plain constant as a
    plain literal)."""
    if text.startswith("<") and "\\" not in text:
        return rdflib.URIRef(text[1:-1])
    term = parse_fact(f"x({text})").args[0]
    if isinstance(term, ir.Iri):  # (one with escapes)
        return rdflib.URIRef(term.value)
    if isinstance(term, ir.Literal):
        return rdflib.Literal(term.lexical, lang=term.lang, datatype=rdflib.URIRef(term.datatype) if term.datatype
                              else None, normalize=False)
    if isinstance(term, ir.Num):
        kind = "integer" if isinstance(term.value, int) else "double" if "e" in text.lower() else "decimal"
        return rdflib.Literal(text, datatype=rdflib.URIRef(ir.XSD + kind), normalize=False)
    return rdflib.Literal(str(term.value))