"""SPARQL inside rule files, parsed with rdflib's SPARQL parser at check time.

Errors are returned as diagnostics whose positions point into the ``.dotr`` file, not into the
SPARQL text:

>>> from dotr.rules.lang.ir import SparqlText, Span
>>> text = SparqlText("select ?a where {\\n  ?a :p ?b ?c }", span=Span("r.dotr", 4, 20))
>>> _, diags = parse_select(text, {"": "http://ex.org/"})
>>> str(diags[0].span)
'r.dotr:5:12'
>>> q, _ = parse_select(SparqlText("select ?a where { ?a :p 3 }"), {"": "http://ex.org/"})
>>> [str(v) for v in q.algebra["PV"]]
['a']

``SELECT *`` lists the variables in alphabetical order (rdflib lists them in the order of a set,
which changes from one process to the next):

>>> q, _ = parse_select(SparqlText("select * where { ?z :p ?b . ?b :q ?a }"), {"": "http://ex.org/"})
>>> [str(v) for v in q.algebra["PV"]]
['a', 'b', 'z']
"""

from __future__ import annotations

from typing import Any

from ..errors import Diagnostic
from ..ir import Iri, Literal, SparqlText, Span, canonical

#: blank nodes of RDF data become IRIs in this namespace (skolemised) so that they can be joined
BNODE_PREFIX = "urn:dotr:bnode:"

_TEMPLATE_PREFIX = "CONSTRUCT "


def _map(text: SparqlText, line: int, col: int, col_shift: int = 0) -> Span | None:
    """Position ``line:col`` of the SPARQL text as a position in the rule file."""
    if text.span is None:
        return None
    if line <= 1:
        return Span(text.span.path, text.span.line, text.span.column + col - 1 - col_shift)
    return Span(text.span.path, text.span.line + line - 1, col)


#: the clauses tried where a query fails to parse, to find how far the failing one got (pyparsing
#: reports the start of the clause that did not parse, not the token that broke it)
_CLAUSES = ("GraphPatternNotTriples", "TriplesBlock", "SelectClause", "WhereClause", "GroupGraphPattern",
            "SolutionModifier", "ConstructTemplate")


def _furthest(source: str, loc: int) -> int:
    """How far into ``source`` the clauses starting at ``loc`` parse before they fail (again from
    there, while that gets further: the clause that failed may be nested in the one tried). Only
    a clause led by a keyword or a brace is entered: where a triple cannot continue, its start is
    the error."""
    for _ in range(10):
        if not (source[loc:loc + 1].isalpha() or source[loc:loc + 1] == "{"):
            break
        further = _one_clause_further(source, loc)
        if further == loc:
            break
        loc = further
    return loc


def _one_clause_further(source: str, loc: int) -> int:
    from pyparsing import ParseException
    from rdflib.plugins.sparql import parser as grammar
    furthest = loc
    for name in _CLAUSES:
        clause = getattr(grammar, name, None)
        if clause is None:
            continue
        try:
            clause.parse_string(source[loc:])
        except ParseException as err:
            furthest = max(furthest, loc + err.loc)
        except Exception:  # noqa: BLE001 - a clause's parse action may fail on a fragment
            pass
    return furthest


def _translate(source: str, text: SparqlText, prefixes: dict[str, str], col_shift: int = 0):
    # (rdflib's SPARQL parser is imported by the first query: a program without one never loads it)
    from pyparsing import ParseException
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        parsed = parseQuery(source)
    except ParseException as err:
        loc = _furthest(source, err.loc)  # a clause started at err.loc may have failed further on
        rest = source[loc:]
        token = rest.split(None, 1)[0][:20] if rest.strip() else "the end of the query"
        line = source.count("\n", 0, loc) + 1
        col = loc - source.rfind("\n", 0, loc)
        expected = str(getattr(err, "msg", "") or "")
        hint = expected if loc == err.loc and expected and not expected.endswith("Query") else None
        return None, [Diagnostic("E401", f"SPARQL syntax error at '{token}'",
                                 _map(text, line, col, col_shift) or text.span, hint)]
    try:
        query = translateQuery(parsed, initNs=prefixes)
    except Exception as err:  # rdflib raises bare Exception for unknown prefixes and the like
        return None, [Diagnostic("E401", f"SPARQL error: {err}", text.span,
                                 hint="declare prefixes with @prefix in the rule file")]
    if parsed[1].name == "SelectQuery" and "projection" not in parsed[1]:  # SELECT *: rdflib lists the variables in set order
        for node in (query.algebra, query.algebra.get("p")):
            if node is not None and "PV" in node:
                node["PV"] = sorted(node["PV"], key=str)
    return query, []


def parse_select(text: SparqlText, prefixes: dict[str, str]) -> tuple[Any, list[Diagnostic]]:
    """rdflib's parsed and translated query for an event's SELECT text, and any diagnostics."""
    query, diags = _translate(text.text, text, prefixes)
    if query is not None and query.algebra.name != "SelectQuery":
        return None, [Diagnostic("E401", "an event is defined by a SELECT query", text.span)]
    if query is not None and _has_path(query.algebra):
        return None, [Diagnostic("E401", "property paths are not supported", text.span,
                                 "write each step as a triple pattern: ?x :p ?m . ?m :q ?y")]
    if query is not None and query.algebra.get("datasetClause"):
        return None, [Diagnostic("E401", "an event or EP-SPARQL query reads the enriched knowledge of its time "
                                 "point: FROM names no other", text.span,
                                 "load the file with --ontology, or write a C-SPARQL or RSP-QL query with from <file>")]
    return query, diags


def _has_path(node) -> bool:
    """Whether a translated query has a property path (a BGP predicate neither IRI nor variable)."""
    from rdflib import URIRef, Variable
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        if node.name == "BGP" and any(not isinstance(p, (URIRef, Variable)) for _, p, _ in node["triples"]):
            return True
        return any(_has_path(value) for value in node.values())
    if isinstance(node, (list, tuple)):
        return any(_has_path(item) for item in node)
    return False


_TEMPLATES: dict[tuple, list] = {}  # (text, prefixes) -> the triples of a template without diagnostics


def parse_template(text: SparqlText, prefixes: dict[str, str]) -> tuple[list | None, list[Diagnostic]]:
    """The triples (rdflib terms: variables, blank nodes, IRIs, literals) of a ``construct``
    template ``{ ... }``, and any diagnostics. Parsed once per process (a reasoner built again
    from the same rules, as Spark workers do, reuses them; rdflib's parser takes milliseconds)."""
    key = (text.text, tuple(sorted(prefixes.items())))
    if key in _TEMPLATES:
        return list(_TEMPLATES[key]), []
    query, diags = _translate(_TEMPLATE_PREFIX + text.text + " WHERE {}", text, prefixes,
                              col_shift=len(_TEMPLATE_PREFIX))
    if query is None:
        return None, diags
    triples = list(query.algebra["template"] or [])
    if not diags:
        _TEMPLATES[key] = triples
    return list(triples), diags


def rdf_term(node):
    """The dotr term of an rdflib term (blank nodes skolemised, numeric literals as numbers)."""
    from rdflib.term import BNode, Literal as RdfLiteral, URIRef  # (rdflib: imported by what needs it)

    if isinstance(node, URIRef):
        return Iri(str(node))
    if isinstance(node, BNode):
        return Iri(BNODE_PREFIX + str(node))
    if isinstance(node, RdfLiteral):
        datatype = str(node.datatype) if node.datatype is not None else None
        return canonical(Literal(str(node), datatype, node.language))
    raise TypeError(f"not an RDF term: {node!r}")


def triple_patterns(algebra) -> list[tuple]:
    """Every triple pattern of a translated query (rdflib terms), those of ``OPTIONAL``,
    ``MINUS`` and ``[NOT] EXISTS`` included."""
    from rdflib.plugins.sparql.parserutils import CompValue

    found: list[tuple] = []

    def walk(node) -> None:
        if isinstance(node, CompValue):
            if node.name == "BGP":
                found.extend(node["triples"])
            for value in node.values():
                walk(value)
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item)

    walk(algebra)
    return found


def certain_variables(node) -> set[str]:
    """The variables every solution of a translated pattern (``algebra["p"]``) binds; an
    aggregate binds its ``GROUP BY`` variables, and a ``LIMIT`` or ``OFFSET`` none that can be
    told (set())."""
    from rdflib.term import Variable

    name = node.name
    if name == "BGP":
        return {str(x) for tr in node.triples for x in tr if isinstance(x, Variable)}
    if name == "Join":
        return certain_variables(node.p1) | certain_variables(node.p2)
    if name == "LeftJoin":
        return certain_variables(node.p1)
    if name == "Union":
        return certain_variables(node.p1) & certain_variables(node.p2)
    if name == "Group":
        return certain_variables(node.p) & {str(e) for e in node.expr or () if isinstance(e, Variable)}
    if name in ("Filter", "Project", "Distinct", "Reduced", "ToMultiSet", "Extend", "OrderBy", "AggregateJoin", "Minus"):
        return certain_variables(node.p if name != "Minus" else node.p1)
    return set()


def query_reads(algebra) -> set:
    """The predicate keys (rules.lang.analysis.pred_key) the triple patterns of a translated query
    read: ``ANY_TRIPLE`` for a variable predicate or a path, ``(rdf:type, 2)`` for a membership in
    a variable class."""
    from rdflib import RDF, URIRef

    from .. import ir
    from ..analysis import ANY_TRIPLE

    keys: set = set()
    for _, p, o in triple_patterns(algebra):
        if not isinstance(p, URIRef):
            keys.add(ANY_TRIPLE)
        elif p == RDF.type:
            keys.add((ir.Iri(str(o)), 1) if isinstance(o, URIRef) else (ir.Iri(str(p)), 2))
        else:
            keys.add((ir.Iri(str(p)), 2))
    return keys
