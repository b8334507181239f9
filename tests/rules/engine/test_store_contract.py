"""One contract suite over every fact store (``rules.engine.store.Store``): the dict store and
the native store run the same cases. (tests/rules/engine/test_native_store.py also compares them on
random operation sequences.)"""

import pytest

from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF, UNUSED_INDEX_SLACK, Store

STORES = [DictStore, NativeStore]
E, F = (7, 2), (8, 2)


@pytest.fixture(params=STORES, ids=lambda cls: cls.__name__)
def store(request) -> Store:
    return request.param(lambda pid: pid in (7, 8))


def _facts(store, rel) -> dict:
    return dict(store.relation(rel).facts.items())


def test_it_is_a_store(store):
    assert isinstance(store, Store)


def test_an_expiry_keeps_its_maximum_and_add_says_whether_it_changed(store):
    assert store.add(E, (1, 2), 10) and store.add(E, (1, 3), INF)
    assert not store.add(E, (1, 2), 5)  # lower: unchanged
    assert store.add(E, (1, 2), 12)  # higher: rises
    assert store.expiry(E, (1, 2)) == 12 and store.expiry(E, (9, 9)) is None and store.expiry(F, (1, 2)) is None
    assert sorted(store) == [(E, (1, 2), 12), (E, (1, 3), INF)] and len(store) == 2


def test_expire_drops_what_ends_before_now(store):
    store.add(E, (1, 2), 10)
    store.add(E, (1, 3), INF)
    store.add(E, (1, 4), 3)
    store.add(E, (1, 4), 11)  # rose: its old bucket is skipped
    assert store.expire(4) == []
    assert store.expire(11) == [(E, (1, 2), 10)]
    assert _facts(store, E) == {(1, 3): INF, (1, 4): 11}
    assert store.expiry_times(0) == [11]
    store.add(F, (5, 6), 12)
    assert store.expire(13, report=False) == 2 and len(store) == 1  # (how many, without the list)


def test_indexes_follow_insertions_and_deletions(store):
    for fact in [(1, 2), (3, 2), (1, 4)]:
        store.add(E, fact, 5)
    assert set(store.index(E, (1,)).get(2, ())) == {(1, 2), (3, 2)}
    assert set(store.index(E, (0, 1)).get((1, 4), ())) == {(1, 4)}
    assert store.remove(E, (3, 2)) and not store.remove(E, (3, 2))
    assert set(store.index(E, (1,)).get(2, ())) == {(1, 2)}
    store.add(E, (5, 2), 6)
    assert set(store.index(E, (1,)).get(2, ())) == {(1, 2), (5, 2)}


def test_an_unused_index_is_dropped_and_rebuilt_when_asked_for(store):
    for i in range(10):
        store.add(E, (i, i % 3), 1)
    assert sorted(store.index(E, (1,)).get(0)) == [(0, 0), (3, 0), (6, 0), (9, 0)]
    assert list(store.relation(E).indexes) == [(1,)]
    for t in range(UNUSED_INDEX_SLACK):  # a window slides: one fact in, one out
        store.add(E, (100 + t, t % 3), t + 2)
        store.expire(t + 2)
    assert not store.relation(E).indexes
    held = {f for f in store.relation(E).facts if f[1] == 0}
    assert set(store.index(E, (1,)).get(0)) == held and list(store.relation(E).indexes) == [(1,)]


def test_apply_reports_the_new_and_risen_facts(store):
    store.add(E, (1, 2), 5)
    delta = store.apply([(E, (1, 2), 3), (E, (1, 2), 7), (E, (2, 2), 4), (F, (1, 1), INF)])
    assert {rel: dict(facts) for rel, facts in delta.items()} == {E: {(1, 2): 7, (2, 2): 4}, F: {(1, 1): INF}}
    assert store.add_new(E, [(3, 3), (4, 4), (3, 3)], 9) == 2  # facts the relation lacks (bulk loading)
    assert _facts(store, E) == {(1, 2): 7, (2, 2): 4, (3, 3): 9, (4, 4): 9}


def test_tagged_lists_the_facts_with_a_finite_expiry(store):
    store.add(E, (1, 2), 5)
    store.add(E, (1, 3), INF)
    store.add(F, (2, 2), 9)
    assert sorted(store.tagged(6)) == [(F, (2, 2))]
    assert sorted(store.tagged(0, {E: {(1, 2)}})) == [(F, (2, 2))]
    assert store.expiry_times(0) == [5, 9]


def test_tagged_lists_a_fact_once_when_its_row_is_used_again(store):
    store.add(E, (1, 2), 5)
    assert store.remove(E, (1, 2))
    store.add(E, (1, 2), 5)  # (the native store reuses the freed row: listed twice under 5)
    store.remove(E, (1, 2))
    store.add(E, (3, 4), 5)  # another fact in that row, under the same expiry
    store.add(E, (1, 2), 5)
    for i in range(40):  # and facts of another relation, under three expiries
        store.add(F, (i, i), 5 + i % 3)
    tagged = store.tagged(0)
    assert len(tagged) == len(set(tagged)) == 42
    assert sorted(tagged) == sorted([(E, (1, 2)), (E, (3, 4))] + [(F, (i, i)) for i in range(40)])


def test_triple_predicates_drop_and_clear(store):
    store.add(E, (1, 2), 5)
    store.add((9, 2), (1, 2), 5)  # not a triple relation
    store.add((9, 1), (1,), 5)
    assert store.triple_predicates == [7] and store.is_triple(E) and not store.is_triple((9, 2))
    store.drop([E, (12, 1)])
    assert E not in store.relations and store.triple_predicates == [] and len(store) == 2
    assert store.expire(6) == [((9, 2), (1, 2), 5), ((9, 1), (1,), 5)] or len(store) == 0
    store.add(F, (1, 1), 3)
    store.clear()
    assert len(store) == 0 and list(store) == [] and store.expire(10) == []


def test_a_relation_of_no_argument(store):
    assert store.add((11, 0), (), 3) and not store.add((11, 0), (), 2)
    assert list(store) == [((11, 0), (), 3)] and store.expire(4) == [((11, 0), (), 3)] and len(store) == 0
