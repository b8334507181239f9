"""The query languages embedded in rule files: SPARQL (events, construct templates), EP-SPARQL
and C-SPARQL."""

from __future__ import annotations


class ParsedQueries:
    """The parsed form of each query text of a checked program (an event's SELECT, a C-SPARQL or
    EP-SPARQL query, a pattern's construct template), found by the text object itself: the
    engines built from the checked program take them from here instead of parsing again.

    >>> from dotr.rules.lang.ir import SparqlText
    >>> text, parsed = SparqlText("select ?a where { ?a ?p ?o }"), ParsedQueries()
    >>> parsed.put(text, "its algebra")
    >>> parsed.get(text), parsed.get(SparqlText(text.text))  # another object with the same text
    ('its algebra', None)
    """

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[object, object]] = {}

    def __getstate__(self) -> dict:
        # not carried to another process (a Spark worker unpickling a checked program): rdflib's
        # parse trees do not pickle, and the texts there are other objects; it parses again
        return {"_by_id": {}}

    def put(self, text, parsed) -> None:
        self._by_id[id(text)] = (text, parsed)

    def get(self, text):
        hit = self._by_id.get(id(text))
        return hit[1] if hit is not None and hit[0] is text else None
