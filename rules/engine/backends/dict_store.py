"""The dict store: facts as int tuples in Python dicts, with expiry tags, lazily built indexes
and expiry buckets.

A relation is ``(predicate id, arity)``. Each fact maps to its expiry: the last time point at which
it holds (``INF`` for background facts and their consequences). Expired facts are dropped bucket by
bucket, without re-derivation (docs/api.md, the ontological stage).

>>> s = DictStore()
>>> s.add((7, 2), (1, 2), 10), s.add((7, 2), (1, 3), INF), s.add((7, 2), (1, 2), 5)
(True, True, False)
>>> sorted(s.index((7, 2), (0,))[1])
[(1, 2), (1, 3)]
>>> s.expire(11)
[((7, 2), (1, 2), 10)]
>>> sorted(s.relation((7, 2)).facts)
[(1, 3)]
"""

from __future__ import annotations

from collections import defaultdict
from itertools import repeat
from typing import Callable, Container, Iterable, Iterator, Literal, Mapping, overload

from dotr.rules.engine.backends.dict_loops import apply_items, expire_buckets
from dotr.rules.engine.store import INF, UNUSED_INDEX_SLACK, FactItem, RelKey, index_key


class Relation:
    """The facts of one predicate: ``facts`` maps fact -> expiry; ``indexes`` maps a tuple of
    bound positions to {key -> set of facts} (key: the value itself for one position).

    Keeping an index costs a set operation per insertion and deletion. An index that nothing
    asks for while its relation changes (RDFS's rdf:type by class, which only a new subClassOf
    fact joins) is dropped once that work since the last request exceeds the relation's size,
    about what rebuilding it costs; ``index`` rebuilds it when it is asked for again. Whatever
    the pattern of use, the upkeep is then at most about twice the least it could be (the
    ski-rental argument: pay rent until it adds up to the purchase price).

    >>> r = Relation()
    >>> r.facts = {(i, i % 2): 5 for i in range(4)}
    >>> sorted(r.index((1,))[0])
    [(0, 0), (2, 0)]
    >>> for i in range(4, 4 + UNUSED_INDEX_SLACK):  # a window slides: one fact in, one out
    ...     r.facts[(i, i % 2)] = 5
    ...     r._insert((i, i % 2))
    ...     del r.facts[(i - 4, i % 2)]
    ...     r._delete((i - 4, i % 2))
    >>> r.indexes
    {}
    >>> sorted(r.index((1,))[0])
    [(1000, 0), (1002, 0)]
    """

    __slots__ = ("facts", "indexes", "churn", "_keyed")

    def __init__(self) -> None:
        self.facts: dict[tuple, int] = {}
        self.indexes: dict[tuple[int, ...], dict] = {}
        self.churn = 0  # insertions and deletions since an index was last asked for
        self._keyed: list[tuple[Callable[[tuple], object], dict]] = []  # (a fact's key, index) per index

    def index(self, positions: tuple[int, ...]) -> dict:
        self.churn = 0
        idx = self.indexes.get(positions)
        if idx is None:
            idx = defaultdict(set)
            key = index_key(positions)
            for fact in self.facts:
                idx[key(fact)].add(fact)
            self.indexes[positions] = idx
            self._keyed.append((key, idx))
        return idx

    def _insert(self, fact: tuple) -> None:
        if self._keyed:
            for key, idx in self._keyed:
                idx[key(fact)].add(fact)
            self._churned()

    def _delete(self, fact: tuple) -> None:
        if self._keyed:
            for key, idx in self._keyed:
                k = key(fact)
                bucket = idx.get(k)
                if bucket is not None:
                    bucket.discard(fact)
                    if not bucket:
                        del idx[k]
            self._churned()

    def _churned(self) -> None:
        self.churn += 1
        if self.churn > len(self.facts) + UNUSED_INDEX_SLACK:
            self.indexes.clear()
            self._keyed = []


class DictStore:
    """The ``rules.engine.store.Store`` in Python dicts. ``buckets`` lists the facts per expiry time (lazily: a
    fact whose expiry rose stays listed under its old expiry and is skipped there)."""

    def __init__(self, is_triple: Callable[[int], bool] | None = None) -> None:
        self.relations: dict[RelKey, Relation] = {}
        self.buckets: dict[int, list[tuple[RelKey, tuple]]] = defaultdict(list)
        self._is_triple = is_triple
        #: predicate ids of the binary relations that are RDF triples (IRI predicates), which
        #: variable-predicate atoms range over
        self.triple_predicates: list[int] = []

    def relation(self, rel: RelKey) -> Relation:
        r = self.relations.get(rel)
        if r is None:
            r = self.relations[rel] = Relation()
            if rel[1] == 2 and self._is_triple is not None and self._is_triple(rel[0]):
                self.triple_predicates.append(rel[0])
        return r

    def clear(self) -> None:
        """Drop every fact."""
        self.relations.clear()
        self.buckets.clear()
        self.triple_predicates.clear()

    def drop(self, rels: Iterable[RelKey]) -> None:
        """Forget the relations ``rels`` and their facts."""
        gone = {rel for rel in rels if rel in self.relations}
        for rel in gone:
            del self.relations[rel]
        self.triple_predicates[:] = [p for p in self.triple_predicates if (p, 2) not in gone]
        for when, items in self.buckets.items():
            self.buckets[when] = [item for item in items if item[0] not in gone]

    def is_triple(self, rel: RelKey) -> bool:
        return rel[1] == 2 and self._is_triple is not None and self._is_triple(rel[0])

    def index(self, rel: RelKey, positions: tuple[int, ...]) -> dict:
        return self.relation(rel).index(positions)

    def expiry(self, rel: RelKey, fact: tuple) -> int | None:
        r = self.relations.get(rel)
        return None if r is None else r.facts.get(fact)

    def expiry_times(self, since: int) -> list[int]:
        """The times from ``since`` on at which some fact stops holding (its expiry), sorted."""
        relations = self.relations
        return sorted(when for when, items in self.buckets.items() if when >= since and any(
            rel in relations and relations[rel].facts.get(fact) == when for rel, fact in items))

    def tagged(self, since: int, exclude: Mapping[RelKey, Container[tuple]] | None = None
               ) -> list[tuple[RelKey, tuple]]:
        """The facts whose expiry is finite and at least ``since``, as ``(relation, fact)``, each
        once; without those in ``exclude`` (relation -> facts: ``Materialiser.explicit`` leaves
        out the explicit facts)."""
        relations, exclude = self.relations, exclude or {}
        out: set[tuple[RelKey, tuple]] = set()
        for when, items in self.buckets.items():
            if when < since:
                continue
            last = facts = None
            for rel, fact in items:
                if rel is not last:  # entries come in runs of one relation
                    last, facts, held = rel, relations[rel].facts if rel in relations else {}, exclude.get(rel, ())
                if facts.get(fact) == when and fact not in held:
                    out.add((rel, fact))
        return list(out)

    def add(self, rel: RelKey, fact: tuple, expiry: int) -> bool:
        """Insert ``fact`` or raise its expiry; True when it is new or its expiry rose."""
        r = self.relation(rel)
        old = r.facts.get(fact)
        if old is not None and old >= expiry:
            return False
        r.facts[fact] = expiry
        if old is None:
            r._insert(fact)
        if expiry != INF:
            self.buckets[expiry].append((rel, fact))
        return True

    def add_new(self, rel: RelKey, facts: Iterable[tuple], expiry: int) -> int:
        """Insert facts that the relation does not hold, all with the same expiry (bulk loading;
        repeats are allowed); returns how many."""
        r = self.relation(rel)
        new = dict.fromkeys(facts, expiry)
        count = len(new)
        if r.indexes:
            for fact in new:
                r._insert(fact)
        if expiry != INF:
            self.buckets[expiry].extend((rel, fact) for fact in new)
        if count > len(r.facts):  # merge the smaller dict into the larger one
            new.update(r.facts)
            r.facts = new
        else:
            r.facts.update(new)
        return count

    def add_batch(self, rel: RelKey, facts: Iterable[tuple], expiries: list[int], new: bool) -> None:
        """Store facts with their expiries: facts the relation does not hold (``new``), or facts
        it holds with a smaller expiry (raised). For large batches (no per-fact delta)."""
        r = self.relation(rel)
        facts = facts if isinstance(facts, list) else list(facts)
        if new and r.indexes:
            for fact in facts:
                r._insert(fact)
        r.facts.update(zip(facts, expiries))
        if not facts:
            return
        first = expiries[0]
        if expiries.count(first) == len(expiries):
            if first != INF:
                self.buckets[first].extend(zip(repeat(rel), facts))
            return
        buckets = self.buckets
        for fact, e in zip(facts, expiries):
            if e != INF:
                buckets[e].append((rel, fact))

    def apply(self, items, delta: dict | None = None, new: list | None = None) -> dict[RelKey, dict[tuple, int]]:
        """``add`` for each ``(rel, fact, expiry)`` (the engines' hot loop, compiled:
        ``rules.engine.backends.dict_loops``); returns (or extends) the delta: rel -> {fact: expiry} of what
        is new or rose; ``new`` (a list) is extended by the ``(rel, fact)`` that are new.

        >>> s, new = DictStore(), []
        >>> s.apply([((7, 1), (1,), 5), ((7, 1), (2,), 5)])
        {(7, 1): {(1,): 5, (2,): 5}}
        >>> s.apply([((7, 1), (1,), 6), ((7, 1), (2,), 4), ((7, 1), (3,), 6)], new=new), new
        ({(7, 1): {(1,): 6, (3,): 6}}, [((7, 1), (3,))])
        """
        return apply_items(self, items, {} if delta is None else delta, new)

    def remove(self, rel: RelKey, fact: tuple) -> bool:
        r = self.relations.get(rel)
        if r is None or fact not in r.facts:
            return False
        del r.facts[fact]
        r._delete(fact)
        return True

    @overload
    def expire(self, now: int, report: Literal[True] = ...) -> list[FactItem]: ...

    @overload
    def expire(self, now: int, report: Literal[False]) -> int: ...

    @overload
    def expire(self, now: int, report: bool) -> list[FactItem] | int: ...

    def expire(self, now: int, report: bool = True) -> list[FactItem] | int:
        """Drop every fact whose expiry is before ``now``; return what was dropped, with the
        expiry each had (``report=False``: how many; compiled: ``rules.engine.backends.dict_loops``)."""
        return expire_buckets(self, now, report)

    def __iter__(self) -> Iterator[tuple[RelKey, tuple, int]]:
        for rel, r in self.relations.items():
            for fact, expiry in r.facts.items():
                yield rel, fact, expiry

    def __len__(self) -> int:
        return sum(len(r.facts) for r in self.relations.values())
