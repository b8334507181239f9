"""One RDF document read into a :class:`TripleBatch`: its distinct terms once, its triples as
their numbers, ready to be interned in bulk.

Who reads what: N-Triples of plain terms (also in ``.ttl`` and ``.n3`` files) by the compiled
scanner (``rules.engine.nt_scan``); N-Triples, Turtle, N3, N-Quads, TriG and RDF/XML otherwise by
pyoxigraph; JSON-LD by rdflib; OWL files (``.owl``, ``.owx``) by owlready2. Each gives the same
terms for the same triples (tests/ontology/test_loading.py): IRIs, blank nodes as IRIs of their
own (``urn:dotr:bnode:...``, fresh for each document read), numbers as numbers, other literals
with the lexical form rdflib gives them (``"1"^^xsd:boolean`` is ``"true"``), language tags in
lower case. Nothing here follows an ``owl:imports`` or reaches the network
(``ontology.background`` decides that); RDF/XML is checked for entity bombs first
(``ontology.xml_guard``); JSON-LD that names a context elsewhere is refused.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "bg.ttl")
>>> _ = open(path, "w").write('@prefix : <http://ex.org/> . :a :p "b", 2 .')
>>> batch = read_file(path)
>>> batch.terms
['http://ex.org/a', 'http://ex.org/p', Literal(lexical='b', datatype=None, lang=None), Num(value=2)]
>>> list(batch.triples)
[0, 1, 2, 0, 1, 3]
>>> list(batch)  # as term tokens (ontology.turtle.TokenTriple)
[('<http://ex.org/a>', '<http://ex.org/p>', Literal(lexical='b', datatype=None, lang=None)), ('<http://ex.org/a>', '<http://ex.org/p>', '2')]
"""

from __future__ import annotations

import contextlib
import io
import json
import secrets
from array import array
from pathlib import Path
from typing import Iterable, Iterator

from dotr.rules.engine.nt_scan import scan
from dotr.rules.lang.errors import BackgroundError
from dotr.rules.lang.ir import XSD, Const, Iri, Literal, Num, canonical
from dotr.rules.lang.queries.sparql import BNODE_PREFIX, rdf_term

from .turtle import TokenTriple
from .xml_guard import check_xml

#: file suffix -> format name
FORMATS = {".ttl": "turtle", ".nt": "nt", ".nq": "nquads", ".trig": "trig", ".rdf": "xml", ".xml": "xml",
           ".jsonld": "json-ld", ".json": "json-ld", ".n3": "n3", ".owl": "owl", ".owx": "owl"}
#: media type -> format name (documents fetched for owl:imports)
MEDIA_TYPES = {"text/turtle": "turtle", "application/n-triples": "nt", "application/n-quads": "nquads",
               "application/trig": "trig", "application/rdf+xml": "xml", "application/xml": "xml",
               "text/xml": "xml", "application/ld+json": "json-ld", "text/n3": "n3",
               "application/owl+xml": "owl"}
#: the formats the compiled scanner tries first (N-Triples is a part of each)
_SCANNED = ("nt", "turtle", "n3")
_INFERRED = "http://dotr.invalid/inferred"
_RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
_STRING = XSD + "string"
#: datatypes whose literals canonical() makes numbers or writes in canonical form (integers,
#: decimals): their lexical forms need no normalising (a double's or a float's keeps its own form,
#: which rdflib's normalises: "5E1" is written "50.0")
_NUMERIC = frozenset(XSD + t for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "negativeInteger",
    "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte", "decimal"))


class TripleBatch:
    """The triples of one document: ``terms`` lists its distinct terms, each an IRI's value (a
    ``str``, blank nodes too) or another constant (numbers, literals); ``triples`` is an
    ``array('q')`` of term numbers, subject, predicate and object of each triple in turn.
    Iterating gives the triples as :class:`~ontology.turtle.TokenTriple` s."""

    __slots__ = ("source", "terms", "triples")

    def __init__(self, source: str, terms: list, triples: array):
        self.source, self.terms, self.triples = source, terms, triples

    def __len__(self) -> int:
        return len(self.triples) // 3

    def __iter__(self) -> Iterator[TokenTriple]:
        tokens = [_token(term) for term in self.terms]
        triples = self.triples
        for k in range(0, len(triples), 3):
            yield TokenTriple((tokens[triples[k]], tokens[triples[k + 1]], tokens[triples[k + 2]]))

    def objects(self, predicate: str) -> list:
        """The objects of the triples whose predicate is the IRI ``predicate``."""
        try:
            number = self.terms.index(predicate)
        except ValueError:
            return []
        triples = self.triples
        return [self.terms[triples[k + 1]] for k in range(1, len(triples), 3) if triples[k] == number]


def _token(term) -> object:
    """A term as a token of a :class:`~ontology.turtle.TokenTriple`: ``<iri>``, an integer's
    digits, or the constant itself."""
    if type(term) is str:
        return f"<{term}>"
    if type(term) is Num and type(term.value) is int:
        return str(term.value)
    return term


# -------------------------------------------------------------------------------- readers
def format_of(path: Path) -> str | None:
    """The format name of a file, by its suffix."""
    return FORMATS.get(path.suffix.lower())


def read_file(path: str | Path, classify: bool = False) -> TripleBatch:
    """The triples of the RDF or OWL file ``path``; ``classify``: an OWL file's TBox classified by
    owlready2's HermiT first (which needs Java), the inferred subsumptions kept."""
    path = Path(path)
    if path.is_dir():
        raise BackgroundError(f"{path}: a directory, not an RDF file")
    fmt = format_of(path)
    if fmt == "owl" or classify:
        return _owlready(path, classify)
    if fmt is None:
        raise BackgroundError(f"{path}: unknown RDF format (use .ttl, .nt, .nq, .trig, .n3, .rdf, .jsonld or .owl)")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise BackgroundError(f"{path}: {err.strerror or err}") from None
    return read_document(data, fmt, str(path), path.resolve().as_uri())


def read_document(data: bytes, fmt: str, source: str, base: str) -> TripleBatch:
    """The triples of the document ``data`` in the format ``fmt`` (a name of ``FORMATS``);
    relative IRIs resolve against ``base``; messages name ``source``."""
    if fmt in _SCANNED:
        try:
            found = scan(data)
        except UnicodeDecodeError:
            found = None  # (the parser names where)
        if found is not None:
            prefix = _blank_prefix()
            terms = [_scanned_term(t, prefix) for t in found[0]]
            return TripleBatch(source, terms, found[1])
    if fmt == "json-ld":
        return _json_ld(data, source, base)
    if fmt == "owl":
        raise BackgroundError(f"{source}: an OWL/XML document can be read from a file only")
    if fmt == "xml":
        check_xml(data, source)
    return _oxigraph(data, fmt, source, base)


def _blank_prefix() -> str:
    """The start of the IRIs of one document's blank nodes: its labels are its own."""
    return f"{BNODE_PREFIX}{secrets.token_hex(6)}-"


def _scanned_term(term, blank_prefix: str) -> object:
    if type(term) is str:
        return term
    if term[0] == "blank":
        return blank_prefix + term[1]
    return literal(term[1], term[2], term[3])


_NORMALISED: dict[tuple[str, str], str] = {}  # (lexical, datatype) -> rdflib's lexical form


def literal(lexical: str, lang: str | None, datatype: str | None) -> Const:
    """The dotr term of a literal as a parser gives it (a language tag, else a datatype or none):
    numbers as numbers, other lexical forms as rdflib normalises them (module docstring).

    >>> literal("1", None, XSD + "boolean"), literal("0.50", None, XSD + "decimal")
    (Literal(lexical='true', datatype='http://www.w3.org/2001/XMLSchema#boolean', lang=None), Num(value=0.5))
    """
    if lang:
        return canonical(Literal(lexical, None, lang))
    if datatype is None or datatype == _STRING or datatype == _RDF_LANG_STRING:
        return Literal(lexical)
    if datatype not in _NUMERIC:
        key = (lexical, datatype)
        normal = _NORMALISED.get(key)
        if normal is None:
            from rdflib import Literal as RdfLiteral, URIRef

            if len(_NORMALISED) > 100_000:
                _NORMALISED.clear()
            normal = _NORMALISED[key] = str(RdfLiteral(lexical, datatype=URIRef(datatype)))
        lexical = normal
    return canonical(Literal(lexical, datatype))


def _oxigraph(data: bytes, fmt: str, source: str, base: str) -> TripleBatch:
    import pyoxigraph as ox

    formats = {"nt": ox.RdfFormat.N_TRIPLES, "turtle": ox.RdfFormat.TURTLE, "n3": ox.RdfFormat.N3,
               "nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG, "xml": ox.RdfFormat.RDF_XML}
    named, blank, literal_ = ox.NamedNode, ox.BlankNode, ox.Literal
    prefix = _blank_prefix()

    def convert(term) -> object:
        kind = type(term)
        if kind is named:
            return term.value
        if kind is blank:
            return prefix + term.value
        if kind is literal_:
            return literal(term.value, term.language, term.datatype.value)
        raise BackgroundError(f"{source}: a triple term ({term}): RDF 1.2 triple terms are not supported")

    numbers: dict = {}
    terms: list = []
    triples = array("q")
    push = triples.append
    try:
        for quad in ox.parse(data, formats[fmt], base_iri=base):
            for term in (quad.subject, quad.predicate, quad.object):
                number = numbers.get(term)
                if number is None:
                    number = numbers[term] = len(terms)
                    terms.append(convert(term))
                push(number)
    except (SyntaxError, ValueError) as err:
        raise BackgroundError(f"{source}: {err}") from None
    return TripleBatch(source, terms, triples)


def _rdflib_batch(source: str, triples: Iterable[tuple], skip_subject: str | None = None) -> TripleBatch:
    """A batch of rdflib triples (blank nodes keep rdflib's fresh labels)."""
    numbers: dict = {}
    terms: list = []
    out = array("q")
    for triple in triples:
        if skip_subject is not None and str(triple[0]) == skip_subject:
            continue
        for node in triple:
            number = numbers.get(node)
            if number is None:
                number = numbers[node] = len(terms)
                term = rdf_term(node)
                terms.append(term.value if type(term) is Iri else term)
            out.append(number)
    return TripleBatch(source, terms, out)


def _json_ld(data: bytes, source: str, base: str) -> TripleBatch:
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise BackgroundError(f"{source}: not JSON: {err}") from None
    remote = _remote_context(document)
    if remote is not None:
        raise BackgroundError(f"{source}: the JSON-LD context {remote!r} is another document: refused, dotr "
                              f"reads only the files it is given (put the context in the file)")
    import rdflib

    graph = rdflib.Graph()
    try:
        graph.parse(data=data, format="json-ld", base=base)
    except Exception as err:  # rdflib raises many kinds; name the file and keep the message
        raise BackgroundError(f"{source}: {err}") from err
    return _rdflib_batch(source, graph)


def _remote_context(node) -> str | None:
    """The first context that a JSON-LD document takes from elsewhere (a string ``@context`` or
    ``@import``), or None."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("@context", "@import"):
                for context in value if isinstance(value, list) else [value]:
                    if isinstance(context, str):
                        return context
            found = _remote_context(value)
            if found is not None:
                return found
    elif isinstance(node, list):
        for item in node:
            found = _remote_context(item)
            if found is not None:
                return found
    return None


# ------------------------------------------------------------------------------- owlready2
def _owlready_reason(err: Exception, printed: str) -> str:
    """owlready2's error in one line: the parser's reason (``unbound prefix: line 2, column 65``)
    when its traceback named one, else the error's own text."""
    reasons = [line.split(": ", 1)[1] for line in printed.splitlines()
               if line.startswith(("xml.parsers.expat.ExpatError: ", "owlready2.base.OwlReadyOntologyParsingError: "))]
    if reasons:
        return "; ".join(dict.fromkeys(reasons))
    text = str(err.args[1][0]) if len(err.args) == 2 and isinstance(err.args[1], tuple) and err.args[1] else str(err)
    return text


def _owlready(path: Path, classify: bool) -> TripleBatch:
    """An OWL file through owlready2, its own triples only: owlready2's ``load`` would follow its
    ``owl:imports`` (over the network too) and import the Python modules it names, so the file is
    parsed into the ontology's graph directly."""
    import owlready2  # only this module imports owlready2

    try:
        data = path.read_bytes()
    except OSError as err:
        raise BackgroundError(f"{path}: {err.strerror or err}") from None
    if data.lstrip()[:1] == b"<":
        check_xml(data, str(path))
    world = owlready2.World()
    printed = io.StringIO()  # owlready2's parser thread prints a traceback before it raises
    try:
        with contextlib.redirect_stderr(printed):
            ontology = world.get_ontology(path.resolve().as_uri())
            ontology.graph.parse(io.BytesIO(data), default_base=ontology._orig_base_iri)
            ontology.loaded = True
            if classify:
                with world.get_ontology(_INFERRED + "#"):
                    owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    except Exception as err:
        raise BackgroundError(f"{path}: {_owlready_reason(err, printed.getvalue())}") from err
    # (the ontology holding the inferences is not part of the data)
    return _rdflib_batch(str(path), world.as_rdflib_graph(), skip_subject=_INFERRED)
