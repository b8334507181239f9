"""The fact store's contract (:class:`Store`) and what every store shares: a relation is
``(predicate id, arity)``; each fact maps to its expiry, the last time point at which it holds
(``INF`` for background facts and their consequences). Expired facts are dropped bucket by bucket,
without re-derivation (docs/api.md, the ontological stage). The stores are in
``rules.engine.backends``: ``dict_store.DictStore`` (dicts) and ``native_store.NativeStore``
(C arrays).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, Container, Iterable, Iterator, Literal, Mapping, Protocol, overload, runtime_checkable

INF = 1 << 62  # expiry of facts that never expire

RelKey = tuple  # (predicate term id, arity)
FactItem = tuple  # (relation, fact tuple, expiry)


#: an index is dropped when its relation has had more insertions and deletions since the index
#: was last asked for than it has facts (plus this), and rebuilt when it is asked for again
UNUSED_INDEX_SLACK = 1000


def index_key(positions: tuple[int, ...]) -> Callable[[tuple], object]:
    """A fact's key in the index on ``positions``: the term itself for one position, a tuple for
    several, the empty tuple for none.

    >>> index_key((1,))((7, 8, 9)), index_key((2, 0))((7, 8, 9)), index_key(())((7, 8, 9))
    (8, (9, 7), ())
    """
    return itemgetter(*positions) if positions else _no_key


def _no_key(fact: tuple) -> tuple:
    return ()


@runtime_checkable
class Store(Protocol):
    """What the engines read and write in a fact store: :class:`DictStore` (dicts) and
    ``rules.engine.backends.native_store.NativeStore`` (C arrays) implement it, and one contract suite
    (tests/rules/engine/test_store_contract.py) runs over both. ``relations`` maps a relation to an object
    with ``facts`` (fact -> expiry) and ``index(positions)`` (key -> facts)."""

    triple_predicates: list[int]

    @property
    def relations(self) -> Mapping[RelKey, Any]: ...

    def relation(self, rel: RelKey): ...

    def is_triple(self, rel: RelKey) -> bool: ...

    def index(self, rel: RelKey, positions: tuple[int, ...]) -> Mapping: ...

    def expiry(self, rel: RelKey, fact: tuple) -> int | None: ...

    def add(self, rel: RelKey, fact: tuple, expiry: int) -> bool: ...

    def add_new(self, rel: RelKey, facts: Iterable[tuple], expiry: int) -> int: ...

    def add_batch(self, rel: RelKey, facts: Iterable[tuple], expiries: list[int], new: bool) -> None: ...

    def apply(self, items, delta: dict | None = None) -> dict[RelKey, dict[tuple, int]]: ...

    def remove(self, rel: RelKey, fact: tuple) -> bool: ...

    @overload
    def expire(self, now: int, report: Literal[True] = ...) -> list[FactItem]: ...

    @overload
    def expire(self, now: int, report: Literal[False]) -> int: ...

    @overload
    def expire(self, now: int, report: bool) -> list[FactItem] | int: ...

    def expire(self, now: int, report: bool = True) -> list[FactItem] | int: ...

    def expiry_times(self, since: int) -> list[int]: ...

    def tagged(self, since: int, exclude: Mapping[RelKey, Container[tuple]] | None = None
               ) -> list[tuple[RelKey, tuple]]: ...

    def drop(self, rels: Iterable[RelKey]) -> None: ...

    def clear(self) -> None: ...

    def __iter__(self) -> Iterator[tuple[RelKey, tuple, int]]: ...

    def __len__(self) -> int: ...
