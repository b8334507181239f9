"""An event type compiled onto the store, a program's event types run together at a time point
(:class:`EventRuns`), the threshold of a type's query (:class:`EventThreshold`), and the
compiling of an event defined by a rule body (``event A(?k, ?id) := a(?k, ?id)``): a
conjunction of its atoms, with no SPARQL compiler (nor rdflib) loaded. Which compiler an event
takes: ``rules.engine.sparql.event_compiler``.

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

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Sequence

from dotr.rules import ir
from dotr.rules.engine.sparql.conjunction import Conjunction, shared
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
    #: the conjunction whose rows ``_run`` gives as they are (None: another query)
    conjunction: Conjunction | None = None

    def run(self, store: Store) -> list[tuple]:
        rows = self._run(store)
        if len(rows) > 1:
            self.dictionary.sort_rows(rows)
        return rows


@dataclass(frozen=True)
class EventThreshold:
    """An event type whose query is a basic graph pattern with one filter, ``?x op bound`` (an
    order, ``?x`` one of its attributes): the types of one ``family`` (the same query but for its
    threshold, the same direction) give, of the rows of the loosest, those whose ``attribute``
    passes their own threshold."""

    family: tuple
    attribute: str
    op: str
    bound: int | float

    @property
    def looseness(self) -> tuple:
        """Smallest for the type of its family whose rows hold every other's."""
        if self.op in (">", ">="):
            return self.bound, self.op == ">"
        return -self.bound, self.op == "<"

    @classmethod
    def of(cls, conj: Conjunction, attributes: tuple[str, ...]) -> EventThreshold | None:
        """The threshold of the event type whose rows are ``conj``'s over ``attributes``, or
        None (its comparison is no threshold of an attribute)."""
        threshold = conj.threshold
        if threshold is None:
            return None
        attribute = conj.atom_vars[threshold.position]
        if attribute not in attributes:
            return None
        up = threshold.op in (">", ">=")
        return cls((conj.atoms_key, tuple(attributes), attribute, up), attribute, threshold.op, threshold.bound)


#: the dictionary of the ids that tell threshold families apart (``EventThreshold.family``)
FAMILIES = TermDictionary()


def compile_rule_event(event: ir.EventDecl, d: TermDictionary) -> CompiledEvent:
    """Compile an ``event`` declared by a rule body onto the store."""
    atoms = [lit.atom for lit in event.body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
    extra = tuple(lit for lit in event.body if not (isinstance(lit, ir.AtomLiteral) and not lit.negated))
    conj = Conjunction(atoms, extra, tuple(p.name for p in event.params), d)
    return CompiledEvent(event.name, event.attributes, conj.rows, d, conj)


class EventRuns:
    """A program's event types run together, each time point: inside one
    :func:`~rules.engine.sparql.conjunction.shared` block (queries over equal atoms match them
    once), and the types whose queries are equal atoms each with one threshold filter
    (``FILTER(?v >= 3)``, ``FILTER(?v >= 7)``, ...: every pattern with its own) as one group,
    whose matches each type slices (``Conjunction.threshold_rows``) with no call of its own.

    >>> from dotr.rules import parse
    >>> from dotr.rules.engine.backends.dict_store import DictStore
    >>> from dotr.rules.engine.terms import TermDictionary
    >>> d, store = TermDictionary(), DictStore()
    >>> events = [compile_rule_event(e, d) for e in parse(
    ...     "event Hot(?x) := t(?x, ?v), ?v > 30 . event Warm(?x) := t(?x, ?v), ?v > 20 .").events]
    >>> for n, v in enumerate([25, 35]):
    ...     _ = store.add((d.intern(ir.Name("t")), 2), (d.number(n), d.number(v)), 5)
    >>> [[d.value(i) for (i,) in rows] for rows in EventRuns(events).run(store)]
    [[1], [0, 1]]
    """

    def __init__(self, events: Sequence[CompiledEvent]):
        self.events = list(events)
        groups: dict[int, list[int]] = defaultdict(list)
        for n, event in enumerate(self.events):
            if event.conjunction is not None and event.conjunction.threshold is not None:
                groups[event.conjunction.atoms_key].append(n)
        #: per group: its positions in ``events``, its first conjunction and each one's threshold
        self._groups = [(members, self.events[members[0]].conjunction,
                         [self.events[n].conjunction.threshold for n in members])
                        for members in groups.values() if len(members) > 1]
        grouped = {n for members, _, _ in self._groups for n in members}
        self._alone = [n for n in range(len(self.events)) if n not in grouped]

    def run(self, store: Store) -> list[list[tuple]]:
        """Each event type's solutions now (as ``CompiledEvent.run``), in the order of ``events``."""
        events = self.events
        out: list = [None] * len(events)
        with shared():
            for n in self._alone:
                out[n] = events[n].run(store)
            for members, conjunction, thresholds in self._groups:
                found = conjunction.threshold_rows(store, thresholds)
                if found is None:
                    for n in members:
                        out[n] = []
                    continue
                for n, rows in zip(members, found):
                    if len(rows) > 1:
                        events[n].dictionary.sort_rows(rows)
                    out[n] = rows
        return out
