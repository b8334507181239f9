"""The set-at-a-time paths (rules.engine.backends.columnar) give exactly the per-fact engine's store, on random
programs over triples (variable predicates, schema-like recursion, comparisons) and random graphs:
background loading, and batches with expiry tags (the max-min fixpoint) while streaming."""

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.examples.workloads.lubm_like import triples
from dotr.ontology import materialise
from dotr.ontology.materialise import Materialiser
from dotr.ontology.stage import profile_rules
from dotr.rules import ir, parse
from dotr.rules.engine.backends.columnar import ColumnarRules
from dotr.rules.engine.planning import Unsupported
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import TermDictionary
from tests.strategies.triples import EX, interned, other, recursion, rules_, store_state, triple


def _pair(program_rules):
    """The same rules with the columnar background path (always) and without it, on one dictionary."""
    d = TermDictionary()
    bulk, plain = Materialiser(program_rules, d, bulk_threshold=0), Materialiser(program_rules, d, bulk_threshold=None)
    return d, bulk, plain


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rules_(), min_size=1, max_size=4), recursion, st.lists(triple, max_size=14),
       st.lists(other, max_size=4), st.integers(0, 14),
       st.lists(st.lists(st.tuples(triple, st.sampled_from([0, 1, 3])), max_size=3), max_size=4))
def test_columnar_background_equals_per_fact(rules, extra, graph, others, split, stream):
    program = parse(f"@prefix : <{EX}> .\n" + "\n".join(rules) + "\n" + extra)
    d, bulk, plain = _pair(program.rules)
    assert bulk._bulk is not None
    background = [(rel, fact, INF) for rel, fact in interned(d, graph, others)]
    for part in (background[:split], background[split:]):  # the second batch meets a closed store
        bulk.add(part)
        plain.add(part)
        assert store_state(bulk) == store_state(plain)
    for t, elements in enumerate(stream):  # streaming afterwards (indexes built lazily)
        items = [(rel, fact, t + r) for (rel, fact), (_, r) in zip(interned(d, [e for e, _ in elements], []), elements)]
        for m in (bulk, plain):
            m.advance(t)
            m.add(items)
        assert store_state(bulk) == store_state(plain)


@pytest.mark.parametrize("profile", ["rdfs", "rdfs_full", "owl2rl"])
def test_profiles_on_lubm_like_graph(profile):
    d, bulk, plain = _pair([r for r in profile_rules(profile) if not r.is_fact])
    assert bulk._bulk is not None
    items = [((d.intern(ir.Iri(p)), 2), (d.intern(ir.Iri(s)), d.intern(ir.Iri(o))), INF) for s, p, o in triples(3000)]
    bulk.add(items)
    plain.add(items)
    assert store_state(bulk) == store_state(plain)
    # the stage builds the plans' indexes before streaming: those the per-fact path built (but
    # the indexes of variable-predicate atoms, which only the run binds to relations)
    bulk.build_indexes()
    indexes = lambda m: {(rel, pos) for rel, r in m.store.relations.items() for pos in r.indexes}  # noqa: E731
    if profile != "owl2rl":
        assert indexes(plain) <= indexes(bulk)


def test_unsupported_rules_keep_the_per_fact_path():
    d = TermDictionary()
    with pytest.raises(Unsupported):
        ColumnarRules(parse("q(X) :- p(X, Y), Y > 3 .").rules, d)
    m = Materialiser(parse("q(X) :- p(X, Y), Y > 3 .").rules, d, bulk_threshold=0)
    assert m._bulk is None
    p = m.relation("p", 2)
    m.add([(p, (d.intern(ir.Name("a")), d.intern(ir.Num(5))), INF)])
    assert len(m.store.relation(m.relation("q", 1)).facts) == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rules_(), min_size=1, max_size=4), recursion, st.lists(triple, max_size=10),
       st.lists(st.lists(st.tuples(st.one_of(triple.map(lambda t: (t,)), other), st.sampled_from([0, 0, 1, 2, 5])),
                         max_size=6), min_size=1, max_size=6),
       st.lists(st.booleans(), min_size=6, max_size=6))
def test_tagged_batches_equal_per_fact(rules, extra, graph, stream, tagged_path):
    """Streams with random ranges: each time point's batch through the tagged set-at-a-time path
    (or, at random, fact by fact on the same store) against the per-fact engine alone."""
    program = parse(f"@prefix : <{EX}> .\n" + "\n".join(rules) + "\n" + extra)
    d, bulk, plain = _pair(program.rules)
    background = [(rel, fact, INF) for rel, fact in interned(d, graph, [])]
    bulk.add(background)
    plain.add(background)
    for t, elements in enumerate(stream):
        graph_part = [e[0] for e, _ in elements if len(e) == 1]
        others = [e for e, _ in elements if len(e) != 1]
        ranges = [r for e, r in elements if len(e) == 1] + [r for e, r in elements if len(e) != 1]
        items = [(rel, fact, t + r) for (rel, fact), r in zip(interned(d, graph_part, others), ranges)]
        for m in (bulk, plain):
            m.advance(t)
        with mock.patch.object(materialise, "BULK_SHARE_TAGGED", 0 if tagged_path[t] else INF):
            bulk.add(items)
        plain.add(items)
        assert store_state(bulk) == store_state(plain)
        assert bulk.explicit == plain.explicit


def test_tagged_path_raises_and_repropagates():
    """A batch that raises the expiry of stored facts (through a cycle) raises their consequences."""
    program = parse("p(X, Z) :- p(X, Y), p(Y, Z) . q(X) :- p(X, X) .")
    d, bulk, plain = _pair(program.rules)
    p = bulk.relation("p", 2)
    a, b, c = (d.intern(ir.Name(n)) for n in "abc")
    for m in (bulk, plain):
        m.add([(p, (a, b), 3), (p, (b, c), 3), (p, (c, a), 2)])
    assert bulk.store.expiry(bulk.relation("q", 1), (a,)) == 2
    with mock.patch.object(materialise, "BULK_SHARE_TAGGED", 0):
        bulk.add([(p, (c, a), 9), (p, (a, b), 1)])
    plain.add([(p, (c, a), 9), (p, (a, b), 1)])
    assert store_state(bulk) == store_state(plain) and bulk.store.expiry(bulk.relation("q", 1), (a,)) == 3


def test_path_choice():
    d, bulk, plain = _pair(parse("q(X, Z) :- p(X, Y), p(Y, Z) .").rules)
    bulk.bulk_threshold = 2
    p = bulk.relation("p", 2)
    a, b, c = (d.intern(ir.Name(n)) for n in "abc")
    with mock.patch.object(bulk._bulk, "closure", wraps=bulk._bulk.closure) as untagged, \
            mock.patch.object(bulk._bulk, "closure_tagged", wraps=bulk._bulk.closure_tagged) as tagged:
        bulk.add([(p, (a, b), INF), (p, (b, c), INF)])  # never expiring, into a store without expiry
        assert untagged.call_count == 1 and tagged.call_count == 0
        bulk.add([(p, (c, a), 3)])  # below the threshold: fact by fact
        bulk.add([(p, (c, c), INF), (p, (a, a), INF)])  # the store has facts that expire
        assert untagged.call_count == 1 and tagged.call_count == 1
    for m in (plain,):
        m.add([(p, (a, b), INF), (p, (b, c), INF)])
        m.add([(p, (c, a), 3)])
        m.add([(p, (c, c), INF), (p, (a, a), INF)])
    assert store_state(bulk) == store_state(plain) and bulk.store.expiry(bulk.relation("q", 2), (c, b)) == 3
