"""The compiled store and plans (``Materialiser(native=True)``: rules.engine.backends.native_store,
rules.engine.backends.native_plans) keep exactly the store of the dict engine, expiries and explicit facts
included: on random programs over triples (variable predicates, comparisons, assignments,
recursion) and random streams with retraction and restore, and on the built-in profiles."""

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.examples.workloads.lubm_like import triples
from dotr.ontology.materialise import Materialiser
from dotr.ontology.stage import profile_rules
from dotr.rules import ir, parse
from dotr.rules.engine.backends.native_plans import compile_plans, flush_at
from dotr.rules.engine.planning import Unsupported
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import TermDictionary
from tests.ontology.reference import closure
from tests.strategies.triples import EX, interned, other, recursion, rules_, store_state, triple


def _explicit(m) -> set:
    return {(rel, fact, e) for rel, held in m.explicit.items() for fact, e in held.items()}


@pytest.fixture(params=["at the end of a round", "as they come"])
def flush(request):
    """Derivations stored at the end of each round, or every two derivations (mid-round, as a
    large background's are)."""
    former = flush_at(8) if request.param == "as they come" else None
    yield
    if former is not None:
        flush_at(former)


def _same(native, plain, when=None) -> None:
    assert store_state(native) == store_state(plain), when
    assert _explicit(native) == _explicit(plain), when


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(rules_(), min_size=1, max_size=4), recursion, st.lists(triple, max_size=10),
       st.lists(st.lists(st.tuples(st.one_of(triple.map(lambda t: (t,)), other), st.sampled_from([0, 0, 1, 2, 5])),
                         max_size=6), min_size=1, max_size=7),
       st.lists(st.integers(0, 6), max_size=2), st.integers(0, 7))
def test_native_engine_equals_the_dict_engine(flush, rules, extra, graph, stream, retract_at, restore_at):
    program = parse(f"@prefix : <{EX}> .\n" + "\n".join(rules) + "\n" + extra)
    d = TermDictionary()
    native, plain = Materialiser(program.rules, d, native=True), Materialiser(program.rules, d)
    background = list(dict.fromkeys(interned(d, graph, [])))
    for m in (native, plain):
        m.add([(rel, fact, INF) for rel, fact in background])
    _same(native, plain)
    live: list[tuple[int, tuple]] = []
    for t, elements in enumerate(stream):
        if t == restore_at:  # continue from a snapshot of the dict engine's state
            native = Materialiser(program.rules, d, native=True)
            native.restore(*pickle.loads(pickle.dumps((list(plain.store), list(_explicit(plain))))))
            _same(native, plain, t)
        gone = [background.pop(t % len(background))] if t in retract_at and background else []
        live = [(e, rf) for e, rf in live if rf not in gone]
        graph_part = [e[0] for e, _ in elements if len(e) == 1]
        others = [e for e, _ in elements if len(e) != 1]
        ranges = [r for e, r in elements if len(e) == 1] + [r for e, r in elements if len(e) != 1]
        items = [(rel, fact, t + r) for (rel, fact), r in zip(interned(d, graph_part, others), ranges)]
        live += [(e, (rel, fact)) for rel, fact, e in items]
        for m in (native, plain):
            m.advance(t)
            m.retract(gone)
            m.add(items)
        _same(native, plain, t)
        explicit = {rf for e, rf in live if e >= t} | set(background)
        assert {(rel, f) for rel, f, e in native.store if e >= t} == closure(list(program.rules), explicit, d), t


@pytest.mark.parametrize("profile", ["rdfs", "rdfs_full", "owl2rl"])
def test_profiles_on_a_lubm_like_window(flush, profile):
    """The profiles' rules compile (none left to Python plans); a window slides over the graph."""
    rules = [r for r in profile_rules(profile) if not r.is_fact]
    d = TermDictionary()
    native, plain = Materialiser(rules, d, native=True), Materialiser(rules, d)
    assert native._native.unsupported == []
    graph = [((d.intern(ir.Iri(p)), 2), (d.intern(ir.Iri(s)), d.intern(ir.Iri(o)))) for s, p, o in triples(3000)]
    schema, data = graph[:60], graph[60:]
    for m in (native, plain):
        m.add([(rel, fact, INF) for rel, fact in schema])
    for t in range(12):  # 250 triples a time point, each in the window for 4 time points
        items = [(rel, fact, t + 3) for rel, fact in data[250 * t: 250 * (t + 1)]]
        for m in (native, plain):
            m.advance(t)
            m.add(items)
        _same(native, plain, t)


def test_rules_the_plans_do_not_cover_keep_their_python_plans():
    program = parse("hot(X) :- temp(X, V), V > 30 .\nnext(X, T2) :- at(X, T), T2 = T + 1 .\n"
                    "warm(X) :- hot(X), room(X) .")
    d = TermDictionary()
    with pytest.raises(Unsupported, match="comparison >"):
        compile_plans(program.rules[0], d)
    native, plain = Materialiser(program.rules, d, native=True), Materialiser(program.rules, d)
    assert [str(reason) for _, reason in native._native.unsupported] == ["the comparison >", "arithmetic"]
    num, name = (lambda v: d.intern(ir.Num(v))), (lambda v: d.intern(ir.Name(v)))
    temp, at, room = native.relation("temp", 2), native.relation("at", 2), native.relation("room", 1)
    for t in range(3):
        items = [(temp, (name("a"), num(20 + 10 * t)), t + 1), (room, (name("a"),), t),
                 (at, (name("b"), num(t)), t)]
        for m in (native, plain):
            m.advance(t)
            m.add(items)
        _same(native, plain, t)
    assert native.store.expiry(native.relation("warm", 1), (name("a"),)) == 2
