"""A conjunction of one atom of distinct variables and nothing else (an event over a stream
relation, ``event A(?k, ?id) := a(?k, ?id)``) reads its relation's facts without a join plan:
the same solutions, as a bag, as the plan gives, on generated stores, heads and atoms."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from dotr.rules import ir
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.sparql.conjunction import Conjunction
from dotr.rules.engine.terms import TermDictionary

facts = st.lists(st.tuples(st.sampled_from(["p", "q"]), st.integers(0, 3), st.integers(0, 3),
                           st.integers(1, 3)), max_size=20)
#: the atom's arguments: distinct variables (read by the scan), a repeated one, a constant
arguments = st.sampled_from([("x", "y"), ("y", "x"), ("x", "x"), ("x", 2)])
heads = st.sampled_from([("x", "y"), ("y", "x"), ("x",)])


def _plan_rows(conj: Conjunction, store) -> list[tuple]:
    scan, conj._scan = conj._scan, None
    try:
        return conj.rows(store)
    finally:
        conj._scan = scan


@settings(max_examples=200, deadline=None)
@given(facts, arguments, heads, st.sampled_from(["p", "q", "r"]))
def test_a_single_atom_is_read_as_its_plan_reads_it(data, args, head, pred):
    terms = tuple(ir.Var(a) if isinstance(a, str) else ir.Num(a) for a in args)
    if not {v.name for v in terms if isinstance(v, ir.Var)} >= set(head):
        head = tuple(v.name for v in terms if isinstance(v, ir.Var))[:1]
    for kind in (DictStore, NativeStore):
        d = TermDictionary()
        store = kind()
        for rel, a, b, expiry in data:
            store.add((d.intern(ir.Name(rel)), 2), (d.intern(ir.Num(a)), d.intern(ir.Num(b))), expiry)
        store.expire(2)  # (some facts dropped, buckets left behind)
        conj = Conjunction([ir.Atom(ir.Name(pred), terms)], (), head, d)
        assert (conj._scan is not None) == (args in (("x", "y"), ("y", "x")) and len(head) == 2)
        assert Counter(conj.rows(store)) == Counter(_plan_rows(conj, store)), kind.__name__
