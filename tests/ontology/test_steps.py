"""Transitive steps (``A[C := D] :- A, S(C, D)`` with S closed by a transitivity rule) are not fed
back their own conclusions (ontology.materialise, "Transitive steps"): the store, expiries
included, is the one the full semi-naive evaluation gives at every time point, and it is the
closure of the live facts; schema facts arrive in the stream, other rules raise what a step
concluded, background facts are retracted."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.ontology.materialise import Materialiser
from dotr.ontology.stage import profile_rules
from dotr.rules import ir, parse
from dotr.rules.lang.analysis import transitive_steps
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import TermDictionary
from tests.ontology.reference import closure

EX = "http://ex.org/"
STEPS = f"""@prefix : <{EX}> .
:sub(X, Z) :- :sub(X, Y), :sub(Y, Z) .
:type(X, D) :- :type(X, C), :sub(C, D) .
:sp(X, Z) :- :sp(X, Y), :sp(Y, Z) .
Q(X, Y) :- :sp(P, Q), P(X, Y) .
:type(X, :c1) :- :m(X, Y) .
:type(X, D) :- :type(X, C), :q(C, D) .
"""  # the steps; a rule that concludes what the first one does (with another expiry: it must be
# fed again); a rule of the steps' shape over a relation that is not closed (not a step)
#: other rules: ones that add what a step concludes, feed the schema, or move down
OTHERS = [":type(Y, :c0) :- :p(X, Y) .", ":sub(C, C) :- :type(C, :c2) .", ":sp(X, Y) :- :m(X, Y) .",
          ":m(X, Y) :- :type(X, :c2), :p(X, Y) .", ":type(X, C) :- :sub(C, D), :type(X, D), :m(X, C) .",
          ":low(Y, X) :- :sub(X, Y) .", ":type(X, D) :- :type(X, C), :low(C, D) ."]
NODES = [":x", ":y", ":c0", ":c1", ":c2", ":d0", ":d1", ":p", ":q", ":m", ":sub", ":sp", ":type"]
PREDS = [":type", ":sub", ":sp", ":p", ":q", ":m"]
#: always in the background: chains for the steps to climb (q links other classes)
SCHEMA = [(":sub", ":c0", ":c1"), (":sub", ":c1", ":c2"), (":q", ":c0", ":d0"), (":sp", ":p", ":q"),
          (":sp", ":q", ":m")]
CLASSES, PROPERTIES = [":c0", ":c1", ":c2", ":d0", ":d1"], [":p", ":q", ":m"]
fact = st.one_of(  # mostly facts about :x that the rules join; any triple (sp(:m, :sub), ...) now and then
    st.tuples(st.just(":type"), st.just(":x"), st.sampled_from([":c0", *CLASSES])),
    st.tuples(st.just(":sub"), st.sampled_from(CLASSES), st.sampled_from(CLASSES)),
    st.tuples(st.just(":q"), st.sampled_from(CLASSES), st.sampled_from([":d0", ":d1"])),
    st.tuples(st.just(":sp"), st.sampled_from(PROPERTIES), st.sampled_from(PROPERTIES)),
    st.tuples(st.sampled_from([":m", *PROPERTIES]), st.just(":x"), st.sampled_from([":x", ":y"])),
    st.tuples(st.sampled_from(PREDS), st.sampled_from(NODES), st.sampled_from(NODES)))


def _item(d, p, s, o):
    return (d.intern(ir.Iri(EX + p[1:])), 2), (d.intern(ir.Iri(EX + s[1:])), d.intern(ir.Iri(EX + o[1:])))


def _state(m):
    return {(rel, f, e) for rel, f, e in m.store}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(OTHERS), max_size=4, unique=True), st.lists(fact, max_size=8),
       st.lists(st.lists(st.tuples(fact, st.sampled_from([0, 0, 1, 2, 4])), max_size=6), min_size=1, max_size=7),
       st.lists(st.integers(0, 7), max_size=2))
def test_steps_equal_full_feeding_and_recomputation(others, background, stream, retract_at):
    program = parse(STEPS + "\n".join(others))
    d = TermDictionary()
    skipping, full = Materialiser(program.rules, d), Materialiser(program.rules, d, transitive_steps=False)
    assert len(skipping._steps) == 2 and not full._steps  # not the rule over :q
    # the compiled plans (rules.engine.backends.native_plans) skip the same way
    natives = [Materialiser(program.rules, d, native=True, transitive_steps=steps) for steps in (True, False)]
    assert len(natives[0]._native.steps) == 2 and not natives[1]._native.steps
    engines = (skipping, full, *natives)
    bg = list(dict.fromkeys(_item(d, *f) for f in SCHEMA + background))
    live: list[tuple[int, tuple]] = []  # (expiry, (relation, fact)) of the stream
    for m in engines:
        m.add([(rel, f, INF) for rel, f in bg])
    assert _state(skipping) == _state(full) == _state(natives[0]) == _state(natives[1])
    for t, elements in enumerate(stream):
        gone = [bg.pop(t % len(bg))] if t in retract_at and bg else []
        live = [(e, rf) for e, rf in live if rf not in gone]  # a retracted fact goes, tags and all
        items = [(*_item(d, *f), t + r) for f, r in elements]
        live += [(e, (rel, f)) for rel, f, e in items]
        for m in engines:
            m.advance(t)
            m.retract(gone)
            m.add(items)
        assert _state(skipping) == _state(full) == _state(natives[0]) == _state(natives[1]), t
        explicit = {rf for e, rf in live if e >= t} | set(bg)
        assert {(rel, f) for rel, f, e in skipping.store if e >= t} == closure(list(program.rules), explicit, d), t


def _counting(m):
    """How many derivations (items stored or found held) the materialiser makes."""
    count = [0]
    apply = m.store.apply

    def counted(items, delta=None):
        items = list(items)
        count[0] += len(items)
        return apply(items, delta)
    m.store.apply = counted
    return count


def _chain(transitive_steps=True, length=6):
    """RDFS, with a chain of ``length`` classes c0 < c1 < ... as background."""
    d = TermDictionary()
    m = Materialiser([r for r in profile_rules("rdfs") if not r.is_fact], d, transitive_steps=transitive_steps)
    sub = ir.Iri("http://www.w3.org/2000/01/rdf-schema#subClassOf")
    c = [d.intern(ir.Iri(f"{EX}c{i}")) for i in range(length)]
    m.add([((d.intern(sub), 2), (c[i], c[i + 1]), INF) for i in range(length - 1)])
    return d, m, c, (d.intern(ir.Iri(ir.RDF_TYPE)), 2)


def test_a_type_fact_derives_each_superclass_once():
    (d, skipping, c, rdf_type), (_, full, _, _) = _chain(), _chain(False)
    x = d.intern(ir.Iri(EX + "x"))
    counts = _counting(skipping), _counting(full)
    for m in (skipping, full):
        m.add([(rdf_type, (x, c[0]), 5)])
    assert _state(skipping) == _state(full)
    assert {f[1] for f in skipping.store.relation(rdf_type).facts} == set(c)
    # the input, then c1..c5 from c0 (and nothing more); fed back, c1 would give c2..c5 again, ...
    assert counts[0][0] == 1 + 5 and counts[1][0] == 1 + 5 + 4 + 3 + 2 + 1


def test_a_schema_fact_in_the_stream():
    (d, m, c, rdf_type), (_, full, _, _) = _chain(), _chain(False)
    sub = (d.intern(ir.Iri("http://www.w3.org/2000/01/rdf-schema#subClassOf")), 2)
    x, y, top = (d.intern(ir.Iri(EX + n)) for n in ("x", "y", "top"))
    for mm in (m, full):
        mm.add([(rdf_type, (x, c[0]), 9)])
        # a subclass fact that holds until 4 arrives with a type fact: S changes while they propagate
        mm.add([(sub, (c[5], top), 4), (rdf_type, (y, c[2]), 7)])
    assert _state(m) == _state(full)
    assert m.store.expiry(rdf_type, (x, top)) == 4 and m.store.expiry(rdf_type, (y, top)) == 4
    for mm in (m, full):
        mm.advance(5)
        mm.add([(rdf_type, (y, c[1]), 8)])  # S has no tagged fact any more; y's types rise to 8
    assert _state(m) == _state(full) and m.store.expiry(rdf_type, (y, c[5])) == 8
    assert m.store.expiry(rdf_type, (y, top)) is None


def test_a_conclusion_raised_by_another_rule_is_fed_again():
    """type(x, c1) is concluded by the step until 3 and, in the same round, by another rule until 7:
    fed back at 7, it raises c2 (the step alone gave c2 until 3)."""
    program = parse(STEPS)
    for shortcut in (True, False):
        d = TermDictionary()
        m = Materialiser(program.rules, d, transitive_steps=shortcut)
        m.add([(*_item(d, ":sub", ":c0", ":c1"), INF), (*_item(d, ":sub", ":c1", ":c2"), INF)])
        m.add([(*_item(d, ":type", ":x", ":c0"), 3), (*_item(d, ":m", ":x", ":y"), 7)])
        assert m.store.expiry(*_item(d, ":type", ":x", ":c2")) == 7


@pytest.mark.parametrize("text, found", [
    ("t(X, D) :- t(X, C), s(C, D). s(X, Z) :- s(X, Y), s(Y, Z).", {0: 0}),
    ("t(X, D) :- s(D, C), t(X, C). s(X, Z) :- s(Y, Z), s(X, Y).", {0: 1}),  # downwards; body reordered
    ("t(X, D) :- t(X, C), s(C, D).", {}),  # s is not closed
    ("t(X, D) :- t(X, C), s(C, D). s(X, Z) :- s(X, Y), s(Z, Y).", {}),  # not transitivity
    ("t(C, D) :- t(C, C), s(C, D). s(X, Z) :- s(X, Y), s(Y, Z).", {}),  # C twice in A
    ("t(X, D) :- t(D, C), s(C, D). s(X, Z) :- s(X, Y), s(Y, Z).", {}),  # D in A
    ("t(D, X) :- t(X, C), s(C, D). s(X, Z) :- s(X, Y), s(Y, Z).", {}),  # the head is not A moved
    ("t(X, D) :- t(X, C), s(C, D), C != X. s(X, Z) :- s(X, Y), s(Y, Z).", {}),  # more in the body
    ("u(X, D) :- t(X, C), s(C, D). s(X, Z) :- s(X, Y), s(Y, Z).", {}),  # another relation
])
def test_step_shapes(text, found):
    assert transitive_steps(parse(text).rules) == found


def test_rdfs_steps():
    rdfs = [r for r in profile_rules("rdfs") if not r.is_fact]
    assert {rdfs[i].head.pred for i in transitive_steps(rdfs)} == {ir.Iri(ir.RDF_TYPE), ir.Var("Q")}  # rdfs9, rdfs7
