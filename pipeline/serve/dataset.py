"""What ``GET /sparql`` queries: the triples that hold at the last time point a run completed
(the background and its consequences, the stream's triples still live, what the rules derived),
copied into a pyoxigraph store when a query asks for a time point not copied yet.

The copy is taken between two time points, under the run's lock (:attr:`EmbeddedRun.lock
<dotr.pipeline.runner.EmbeddedRun>`): a query sees one time point whole, and a run nobody queries
pays nothing. The background's triples are copied again only when they changed.

>>> import threading
>>> from dotr.pipeline.reasoner import Reasoner
>>> r = Reasoner.from_files("examples/fire/rules.dotr", ["examples/fire/ontology.ttl"])
>>> _ = r.step(1, ["<http://example.org/building#is_at_location>(<http://example.org/building#s1>, "
...                "<http://example.org/building#locA>)"])
>>> data = Dataset(r, threading.Lock())
>>> data.query("SELECT ?room { <http://example.org/building#s1> <http://example.org/building#is_in_room> ?room }")[1]
b'{"head":{"vars":["room"]},"results":{"bindings":[{"room":{"type":"uri","value":"http://example.org/building#roomA"}}]}}'
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager

import pyoxigraph as ox

from dotr.rules import ir
from dotr.rules.engine.ntriples import term_text

from ..reasoner import Reasoner

BACKGROUND = ox.NamedNode("urn:dotr:serve:background")
NOW = ox.NamedNode("urn:dotr:serve:now")
JSON = "application/sparql-results+json"
NTRIPLES = "application/n-triples"


class Dataset:
    """Answers SPARQL queries over what holds at ``reasoner``'s last time point; ``lock`` is held
    by the run while it evaluates a time point."""

    def __init__(self, reasoner: Reasoner, lock: AbstractContextManager):
        self.reasoner, self._run_lock = reasoner, lock
        self._store = ox.Store()
        self._lock = threading.Lock()  # (queries against the copy's replacement)
        self._copied: tuple | None = None  # (t, the dictionary's size) of the copy
        self._background: frozenset = frozenset()
        self.t: int | None = None

    def replace(self, reasoner: Reasoner) -> None:
        """Answer about ``reasoner`` from now on (a program change; the run's lock is held)."""
        self.reasoner, self._copied = reasoner, None
        self._background = None  # (its ids were the old reasoner's: copied again)

    def refresh(self) -> None:
        """Copy the last time point's triples if the run has gone past the copy."""
        with self._run_lock:
            r = self.reasoner
            key = (r.last_t, len(r.dictionary))
            if key == self._copied:
                return
            lasting, now = r.holding()
            background = None
            if lasting != self._background:
                background = _ntriples(r, lasting)
            current = _ntriples(r, now)
            self._copied, self.t = key, r.last_t
        with self._lock:
            if background is not None:
                self._store.remove_graph(BACKGROUND)
                self._store.bulk_load(background.encode(), ox.RdfFormat.N_TRIPLES, to_graph=BACKGROUND)
                self._background = frozenset(lasting)
            self._store.remove_graph(NOW)
            self._store.bulk_load(current.encode(), ox.RdfFormat.N_TRIPLES, to_graph=NOW)

    def query(self, text: str) -> tuple[str, bytes]:
        """The answer to the query ``text`` (its media type and bytes): SELECT and ASK as SPARQL
        JSON results, CONSTRUCT and DESCRIBE as N-Triples. A query that does not parse raises
        :class:`SyntaxError`."""
        self.refresh()
        with self._lock:
            answer = self._store.query(text, default_graph=[BACKGROUND, NOW])
            if isinstance(answer, ox.QueryTriples):
                return NTRIPLES, answer.serialize(format=ox.RdfFormat.N_TRIPLES)
            return JSON, answer.serialize(format=ox.QueryResultsFormat.JSON)


def _ntriples(reasoner: Reasoner, items) -> str:
    """The items that are triples (an IRI predicate, an IRI subject) as N-Triples."""
    term = reasoner.dictionary.term
    lines = []
    for (pred, arity), fact in items:
        if arity != 2:
            continue
        p, s = term(pred), term(fact[0])
        if type(p) is ir.Iri and type(s) is ir.Iri:
            lines.append(f"{term_text(s)} {term_text(p)} {term_text(term(fact[1]), True)} .\n")
    return "".join(lines)
