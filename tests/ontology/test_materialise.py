"""The incremental materialisation with expiry tags equals recomputation from scratch at every
time point (hypothesis-generated programs and streams)."""

from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dotr.ontology import materialise
from dotr.ontology.materialise import Materialiser
from dotr.rules.engine.store import INF
from dotr.rules import ir, parse
from dotr.rules.engine.terms import TermDictionary
from tests.ontology.reference import closure

BINARY = ["p", "q", "r", "s"]
UNARY = ["u", "w"]
VARS = ["X", "Y", "Z"]
CONSTS = ["a", "b", "c", "d"]


@st.composite
def atoms(draw, preds=None):
    pred = draw(st.sampled_from(preds or BINARY + UNARY))
    arity = 1 if pred in UNARY else 2
    args = [draw(st.one_of(st.sampled_from(VARS), st.sampled_from(CONSTS).filter(lambda _: draw(st.integers(0, 4)) == 0)))
            for _ in range(arity)]
    return f"{pred}({', '.join(args)})"


@st.composite
def rules_(draw, negation=False):
    body = draw(st.lists(atoms(), min_size=1, max_size=3))
    text_body = " ".join(body)
    bound = [v for v in VARS if v in text_body]
    if not bound:
        body.append("p(X, Y)")
        bound = ["X", "Y"]
    head_pred = draw(st.sampled_from(BINARY + UNARY))
    arity = 1 if head_pred in UNARY else 2
    head_args = [draw(st.sampled_from(bound + CONSTS[:1])) for _ in range(arity)]
    extras = []
    if negation and draw(st.booleans()):
        neg_pred = draw(st.sampled_from(["e", "f"]))  # negation only of stream predicates: stratified
        extras.append(f"not {neg_pred}({draw(st.sampled_from(bound))})")
    if draw(st.integers(0, 3)) == 0:
        extras.append(f"{draw(st.sampled_from(bound))} != {draw(st.sampled_from(bound + ['a']))}")
    return f"{head_pred}({', '.join(head_args)}) :- {', '.join(body + extras)} ."


transitive = st.sampled_from(["", "p(X, Z) :- p(X, Y), p(Y, Z) .", "q(X, Y) :- q(Y, X) .",
                              "r(X, Z) :- r(X, Y), q(Y, Z) .\nq(X, Z) :- r(X, Y), r(Y, Z) ."])


@st.composite
def stream_facts(draw):
    pred = draw(st.sampled_from(BINARY + UNARY + ["e", "f"]))
    arity = 1 if pred in UNARY + ["e", "f"] else 2
    return pred, tuple(draw(st.sampled_from(CONSTS)) for _ in range(arity))


streams = st.lists(st.lists(st.tuples(stream_facts(), st.sampled_from([0, 0, 1, 2, 5])), max_size=4),
                   min_size=1, max_size=8)


def _rel_fact(d, pred, args):
    return (d.intern(ir.Name(pred)), len(args)), tuple(d.intern(ir.Name(a)) for a in args)


#: the back ends of the materialiser, one suite over all: generated Python plans over the dict
#: store; every batch through the columnar (numpy) path; compiled plans over the native store
BACKENDS = {"python": {}, "columnar": {"set_at_a_time": True}, "native": {"native": True}}


def run_differential(program_text, background, stream, set_at_a_time=False, native=False):
    """``set_at_a_time``: every batch through the columnar path (rules.engine.backends.columnar); ``native``: the
    compiled store and plans (rules.engine.backends.native_plans)."""
    program = parse(program_text)
    d = TermDictionary()
    m = Materialiser(program.rules, d, bulk_threshold=0 if set_at_a_time else materialise.BULK_THRESHOLD,
                     native=native)
    negation = any(isinstance(lit, ir.AtomLiteral) and lit.negated for r in program.rules for lit in r.body)
    assert m._bulk is not None or not set_at_a_time or negation  # (negation: the per-fact path)
    bg = [_rel_fact(d, p, a) for p, a in background]
    m.add([(rel, fact, INF) for rel, fact in bg])
    live: list[tuple[int, tuple]] = []  # (expiry, (rel, fact))
    for t, elements in enumerate(stream):
        m.advance(t)
        items = []
        for (pred, args), r in elements:
            rel, fact = _rel_fact(d, pred, args)
            items.append((rel, fact, t + r))
            live.append((t + r, (rel, fact)))
        with mock.patch.object(materialise, "BULK_SHARE_TAGGED", 0 if set_at_a_time else materialise.BULK_SHARE_TAGGED):
            m.add(items)
        m.evaluate_local(t)
        explicit = {rf for e, rf in live if e >= t} | set(bg)
        expected = closure(list(program.rules), explicit, d)
        actual = {(rel, fact) for rel, fact, e in m.store if e >= t}
        assert actual == expected, (t, program_text)
        # every stored expiry is exact: the fact is derivable until then (checked at its expiry)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rules_(), min_size=1, max_size=4), transitive,
       st.lists(stream_facts(), max_size=3), streams)
def test_incremental_equals_recomputation(backend, rules, extra, background, stream):
    run_differential("\n".join(rules) + "\n" + extra, background, stream, **BACKENDS[backend])


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rules_(negation=True), min_size=1, max_size=4), st.lists(stream_facts(), max_size=3), streams)
# a fact a rule below a negation derived at 0 (expiry 0), given by the stream at 1: it stays
@example(rules=["u(a) :- u(X), not e(X) ."], background=[], stream=[[(("u", ("b",)), 0)], [(("u", ("a",)), 0)]])
def test_with_negation_equals_recomputation(backend, rules, background, stream):
    run_differential("\n".join(rules), background, stream, **BACKENDS[backend])


def test_expiry_rise_is_propagated():
    # a(x) holds until 1 through the stream, then until 5 through a second stream fact: its
    # consequence c(x) must live until 5 as well (the prototype pitfall)
    d = TermDictionary()
    m = Materialiser(parse("b(X) :- a(X). c(X) :- b(X).").rules, d)
    a, c, x = (d.intern(ir.Name("a")), 1), (d.intern(ir.Name("c")), 1), d.intern(ir.Name("x"))
    m.add([(a, (x,), 1)])
    m.add([(a, (x,), 5)])
    m.advance(4)
    assert m.store.expiry(c, (x,)) == 5


def test_cycles_do_not_keep_facts_alive():
    d = TermDictionary()
    m = Materialiser(parse("q(X, Y) :- p(X, Y). p(X, Y) :- q(Y, X).").rules, d)
    p, x, y = (d.intern(ir.Name("p")), 2), d.intern(ir.Name("x")), d.intern(ir.Name("y"))
    m.add([(p, (x, y), 3)])
    m.advance(4)
    assert len(m.store) == 0


def test_background_retraction_rederives_what_has_another_derivation():
    d = TermDictionary()
    m = Materialiser(parse("path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).").rules, d)
    edge, path = m.relation("edge", 2), m.relation("path", 2)
    a, b, c = (d.intern(ir.Name(n)) for n in "abc")
    m.add([(edge, (a, b), INF), (edge, (b, c), INF), (edge, (a, c), 7)])
    m.retract([(edge, (b, c))])
    assert m.store.relation(path).facts == {(a, b): INF, (a, c): 7}
