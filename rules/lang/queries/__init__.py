"""The query languages embedded in rule files: SPARQL (events, construct templates), EP-SPARQL
and C-SPARQL."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import RuleError
from ..ir import SparqlText


class ParsedQueries:
    """The parsed form of each query text of a checked program (an event's SELECT, a C-SPARQL or
    EP-SPARQL query, a pattern's construct template), by its kind and text: the engines built
    from the checked program take them from here (:meth:`require`) instead of parsing again. The
    kind is what the text is read as: ``select``, ``template``, and ``csparql NAME`` or
    ``epsparql NAME`` (their parsed forms hold the query's name).

    A checked program carried to another process (a Spark worker) carries no parsed forms
    (rdflib's parse trees do not pickle): there each text is parsed once, at its first
    :meth:`require`, and kept.

    >>> from dotr.rules.lang.ir import SparqlText
    >>> from dotr.rules.lang.queries.sparql import parse_select
    >>> text, parsed = SparqlText("select ?a where { ?a ?p ?o }"), ParsedQueries()
    >>> parsed.put("select", text, "its algebra")
    >>> parsed.require("select", SparqlText(text.text), lambda: None)  # the same text
    'its algebra'
    >>> other = SparqlText("select ?b where { ?b ?p ?o }")
    >>> parsed.require("select", other, lambda: parse_select(other, {})).algebra.name
    'SelectQuery'
    >>> bad = SparqlText("select where")
    >>> try:
    ...     parsed.require("select", bad, lambda: parse_select(bad, {}))
    ... except RuleError as err:
    ...     print(err)
    dotr: error[E401]: SPARQL syntax error at 'the end of the query'
    """

    def __init__(self) -> None:
        self._parsed: dict[tuple[str, str], object] = {}

    def __getstate__(self) -> dict:
        return {"_parsed": {}}  # (parsed again where it is needed, once)

    def put(self, kind: str, text: SparqlText, parsed: object) -> None:
        """Keep ``parsed``, the form of ``text`` as a query of ``kind``."""
        self._parsed[(kind, text.text)] = parsed

    def require(self, kind: str, text: SparqlText, parse: Callable[[], tuple[Any, list]],
                sources: dict | None = None) -> Any:
        """The parsed form of ``text`` as a query of ``kind``: kept, or what ``parse()`` gives
        (a ``(parsed, diagnostics)`` pair), kept from then on. A text that does not parse raises
        its diagnostics as a :class:`RuleError`."""
        key = (kind, text.text)
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed, diags = parse()
            if parsed is None:
                raise RuleError(diags, sources)
            self._parsed[key] = parsed
        return parsed
