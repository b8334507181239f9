"""An event type compiled onto the store, and the compiling of one defined by a rule body
(``event A(?k, ?id) := a(?k, ?id)``): a conjunction of its atoms, with no SPARQL compiler (nor
rdflib) loaded. An event defined by a SELECT query is compiled by
``rules.engine.sparql.algebra.compile_event``.

>>> from dotr.rules import parse
>>> from dotr.rules.engine.backends.dict_store import DictStore
>>> from dotr.rules.engine.terms import TermDictionary
>>> event = parse("event A(?k, ?id) := a(?k, ?id) .").events[0]
>>> d, store = TermDictionary(), DictStore()
>>> _ = store.add((d.intern(ir.Name("a")), 2), (d.number(2), d.number(7)), 5)
>>> compile_rule_event(event, d).run(store) == [(d.number(2), d.number(7))]
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dotr.rules import ir
from dotr.rules.engine.sparql.conjunction import Conjunction
from dotr.rules.engine.store import Store
from dotr.rules.engine.terms import TermDictionary


@dataclass
class CompiledEvent:
    """An event type: ``run(store)`` gives its solutions now, as tuples of term ids in the order
    of ``attributes``, sorted by their terms (``TermDictionary.sort_rows``): which of several
    events of one time point a pattern takes first does not depend on the store's order of
    facts, which differs between stores with other histories (a restored Spark worker)."""

    name: str
    attributes: tuple[str, ...]
    _run: Callable[[Store], list[tuple]]
    dictionary: TermDictionary

    def run(self, store: Store) -> list[tuple]:
        rows = self._run(store)
        if len(rows) > 1:
            self.dictionary.sort_rows(rows)
        return rows


def compile_rule_event(event: ir.EventDecl, d: TermDictionary) -> CompiledEvent:
    """Compile an ``event`` declared by a rule body onto the store."""
    atoms = [lit.atom for lit in event.body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
    extra = tuple(lit for lit in event.body if not (isinstance(lit, ir.AtomLiteral) and not lit.negated))
    conj = Conjunction(atoms, extra, tuple(p.name for p in event.params), d)
    return CompiledEvent(event.name, event.attributes, conj.rows, d)
