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

#: objects: numbers, and what no number compares with (strings, NaN)
objects = st.one_of(st.integers(0, 5), st.sampled_from([1.5, 2.0, float("nan"), "a", "3"]))
facts = st.lists(st.tuples(st.sampled_from(["p", "q", "r"]), st.integers(0, 3), objects), max_size=20)
#: comparisons of ?v with a number (the threshold alone: each query one; a query of its own:
#: with a negation or a second comparison), the number on either side
extras = st.lists(st.one_of(
    st.tuples(st.sampled_from(["cmp", "cmp reversed"]), st.sampled_from(["<", "<=", ">", ">=", "=", "!="]),
              st.one_of(st.integers(-1, 6), st.sampled_from([1.5, 2.0, float("inf")]))),
    st.tuples(st.just("not"), st.sampled_from(["x", "y"]), st.none())), max_size=2)


def _object(value) -> ir.Const:
    return ir.Literal(value) if isinstance(value, str) else ir.Num(value)


def _extra(spec) -> tuple:
    out = []
    for kind, a, b in spec:
        if kind == "cmp":
            out.append(ir.Comparison(a, V, ir.Num(b)))
        elif kind == "cmp reversed":
            out.append(ir.Comparison(a, ir.Num(b), V))
        else:
            out.append(ir.AtomLiteral(ir.Atom(ir.Name("r"), (ir.Var(a), ir.Num(0))), negated=True))
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(facts, st.lists(extras, min_size=1, max_size=4), st.sampled_from([("x", "v"), ("y",), ("v", "x", "y")]))
def test_shared_matches_give_each_conjunction_its_own_solutions(data, specs, head):
    for kind in (DictStore, NativeStore):
        d = TermDictionary()
        store = kind()
        for pred, a, b in data:
            store.add((d.intern(ir.Name(pred)), 2), (d.intern(ir.Num(a)), d.intern(_object(b))), 10)
        conjunctions = [Conjunction(ATOMS, _extra(spec), head, d) for spec in specs]
        alone = [Counter(c.rows(store)) for c in conjunctions]
        with shared():
            together = [Counter(c.rows(store)) for c in conjunctions]
        assert together == alone, kind.__name__
