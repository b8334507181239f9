"""The compiled fact store (rules.engine.backends.native_store) holds what the dict store holds: the same facts and
expiries, the same index contents, the same facts dropped at each time, for random sequences of
operations; its views read like the dict store's dicts."""

import doctest

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.rules.engine.backends import native_plans, native_store
from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF

RELS = [(7, 2), (8, 2), (9, 1), (10, 3), (11, 0)]
VALUES = [1, 2, 3, 1 << 60, -5]  # small ids, an integer's id (INT_OFFSET + v), a negative number

fact_of = {rel: st.tuples(*[st.sampled_from(VALUES)] * rel[1]) for rel in RELS}
item = st.sampled_from(RELS).flatmap(lambda rel: st.tuples(st.just(rel), fact_of[rel],
                                                           st.sampled_from([0, 1, 2, 3, 5, INF])))
operation = st.one_of(
    st.tuples(st.just("add"), item),
    st.tuples(st.just("apply"), st.lists(item, max_size=6)),
    st.tuples(st.just("remove"), item),
    st.tuples(st.just("expire"), st.integers(0, 6)),
    st.tuples(st.just("tagged"), st.integers(0, 6)),
    st.tuples(st.just("drop"), st.lists(st.sampled_from(RELS), max_size=2)),
    st.tuples(st.just("index"), st.sampled_from([((7, 2), (0,)), ((7, 2), (1,)), ((10, 3), (0, 2)),
                                                 ((10, 3), (1,)), ((9, 1), (0,))])),
)


def _state(store) -> set:
    return set(store)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=40))
def test_native_store_agrees_with_the_dict_store(operations):
    plain, native = DictStore(), NativeStore()
    for op, arg in operations:
        if op == "add":
            assert plain.add(*arg) == native.add(*arg)
        elif op == "apply":
            assert plain.apply(arg) == native.apply(arg)
        elif op == "remove":
            assert plain.remove(*arg[:2]) == native.remove(*arg[:2])
        elif op == "expire":
            assert sorted(plain.expire(arg)) == sorted(native.expire(arg))
        elif op == "tagged":  # the facts with a finite expiry from ``arg`` on, and those times
            live = [(rel, fact, e) for rel, fact, e in plain if arg <= e < INF]
            assert sorted(plain.tagged(arg)) == sorted(native.tagged(arg)) == sorted((r, f) for r, f, _ in live)
            exclude = {(7, 2): {(1, 2), (3, 3)}, (9, 1): {(1,)}}
            assert sorted(plain.tagged(arg, exclude)) == sorted(native.tagged(arg, exclude)) == \
                sorted((r, f) for r, f, _ in live if f not in exclude.get(r, ()))
            assert plain.expiry_times(arg) == native.expiry_times(arg) == sorted({e for *_, e in live})
        elif op == "drop":
            plain.drop(arg)
            native.drop(arg)
            assert set(native.relations) == set(plain.relations)
        else:
            rel, positions = arg
            a, b = plain.index(rel, positions), native.index(rel, positions)
            assert {k: set(v) for k, v in a.items() if v} == {k: set(v) for k, v in b.items()}
            for key in list(a)[:3]:
                assert set(a.get(key, ())) == set(b.get(key, ()))
        assert _state(plain) == _state(native)
        assert len(plain) == len(native)
    for rel in RELS:
        facts = plain.relation(rel).facts
        view = native.relation(rel).facts
        assert dict(view.items()) == facts and len(view) == len(facts) and set(view) == set(facts)
        for fact, expiry in facts.items():
            assert view[fact] == view.get(fact) == native.expiry(rel, fact) == expiry and fact in view
    assert sorted({when for when, items in plain.buckets.items() if any(plain.expiry(*i) == when for i in items)}) \
        == native.expiry_times(0)


def test_views_read_like_dicts():
    s = NativeStore()
    s.add((7, 2), (1, 2), 5)
    facts = s.relation((7, 2)).facts
    assert facts.get((9, 9)) is None and facts.get((9, 9), 0) == 0 and (9, 9) not in facts
    assert facts.get((1,)) is None and "x" not in facts  # wrong shapes are absent facts, not errors
    with pytest.raises(KeyError):
        facts[(9, 9)]
    index = s.index((7, 2), (1,))
    assert list(index.get(2)) == [(1, 2)] and index.get(3, "none") == "none" and 2 in index and len(index) == 1
    assert list(index) == [2] and [(k, list(v)) for k, v in index.items()] == [(2, [(1, 2)])]
    chain = index.get(2)
    assert len(chain) == 1 and (1, 2) in chain and (1, 3) not in chain and chain == {(1, 2)}
    s.add((7, 2), (5, 2), 5)
    with pytest.raises(RuntimeError, match="changed"):
        list(chain)
    assert sorted(index.get(2)) == [(1, 2), (5, 2)] and len(index.get(2)) == 2
    assert s.relation((7, 2)) == {(1, 2): 5, (5, 2): 5} and bool(facts) and not s.relation((8, 2)).facts
    assert s.expiry((7, 2), (1, 2)) == 5 and s.expiry((6, 2), (1, 2)) is None


def test_wrong_arity_and_too_many_arguments():
    s = NativeStore()
    with pytest.raises(ValueError, match="expected a tuple of 2 term ids"):
        s.add((7, 2), (1, 2, 3), 5)
    with pytest.raises(ValueError, match="more than 16 arguments"):
        s.add((12, 17), tuple(range(17)), 5)


def test_views_of_a_cleared_store_say_so():
    s = NativeStore()
    s.add((7, 2), (1, 2), 5)
    facts = s.relation((7, 2)).facts
    s.clear()
    with pytest.raises(RuntimeError, match="cleared"):
        len(facts)
    assert len(s) == 0 and s.relations == {} and s.expire(10) == []


def test_explicit_facts_until_their_expiry():
    s = NativeStore()
    s.load([((7, 2), (1, 2), 5), ((7, 2), (1, 3), INF)], explicit=True)
    s.add((7, 2), (1, 2), 9)  # derived beyond its explicit expiry
    assert dict(s.explicit[(7, 2)]) == {(1, 2): 5, (1, 3): INF}
    s.add((7, 2), (2, 2), 7)
    assert s.tagged(0, exclude=s.explicit) == [((7, 2), (2, 2))]  # the explicit facts left out
    s.expire(6)
    assert dict(s.explicit[(7, 2)]) == {(1, 3): INF} and s.expiry((7, 2), (1, 2)) == 9
    assert s.explicit[(7, 2)].pop((1, 3)) == INF and not s.explicit[(7, 2)]
    assert s.explicit.get((8, 2), {}) == {} and (7, 2) in s.explicit
    s.expire(20)  # then an earlier time point (the Spark job's enrich step goes back so)
    s.load([((7, 2), (4, 4), 8)], explicit=True)
    assert dict(s.explicit[(7, 2)]) == {(4, 4): 8}
    s.expire(9)
    assert dict(s.explicit[(7, 2)]) == {} and list(s) == [((7, 2), (1, 3), INF)]


@pytest.mark.parametrize("module", [native_store, native_plans])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
