"""Conjunctions evaluated inside ``conjunction.shared()`` (the event queries of a time point)
share the matches of equal atoms and filter them each with its own comparisons and negations:
the same solutions, as a bag, as each evaluated alone, on generated stores and filters."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from dotr.rules import ir
from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.sparql.conjunction import Conjunction, shared
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.terms import TermDictionary

X, Y, V = ir.Var("x"), ir.Var("y"), ir.Var("v")
ATOMS = [ir.Atom(ir.Name("p"), (X, V)), ir.Atom(ir.Name("q"), (X, Y))]

facts = st.lists(st.tuples(st.sampled_from(["p", "q", "r"]), st.integers(0, 3), st.integers(0, 5)), max_size=20)
extras = st.lists(st.one_of(
    st.tuples(st.just("cmp"), st.sampled_from(["<", ">=", "=", "!="]), st.integers(0, 5)),
    st.tuples(st.just("not"), st.sampled_from(["x", "y"]), st.none())), max_size=2)


def _extra(spec) -> tuple:
    out = []
    for kind, a, b in spec:
        if kind == "cmp":
            out.append(ir.Comparison(a, V, ir.Num(b)))
        else:
            out.append(ir.AtomLiteral(ir.Atom(ir.Name("r"), (ir.Var(a), ir.Num(0))), negated=True))
    return tuple(out)


@settings(max_examples=150, deadline=None)
@given(facts, st.lists(extras, min_size=1, max_size=4), st.sampled_from([("x", "v"), ("y",), ("v", "x", "y")]))
def test_shared_matches_give_each_conjunction_its_own_solutions(data, specs, head):
    for kind in (DictStore, NativeStore):
        d = TermDictionary()
        store = kind()
        for pred, a, b in data:
            store.add((d.intern(ir.Name(pred)), 2), (d.intern(ir.Num(a)), d.intern(ir.Num(b))), 10)
        conjunctions = [Conjunction(ATOMS, _extra(spec), head, d) for spec in specs]
        alone = [Counter(c.rows(store)) for c in conjunctions]
        with shared():
            together = [Counter(c.rows(store)) for c in conjunctions]
        assert together == alone, kind.__name__
