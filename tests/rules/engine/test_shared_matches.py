"""Conjunctions evaluated inside ``conjunction.shared()`` (the event queries of a time point)
share the matches of equal atoms and filter them each with its own comparisons and negations:
the same solutions, as a bag, as each evaluated alone, on generated stores and filters; and a
program's event types run together (``EventRuns``: those with a threshold alone as one group)
give each type the rows it gives alone."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from dotr.rules import ir
from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.sparql.conjunction import Conjunction, shared
from dotr.rules.engine.sparql.events import CompiledEvent, EventRuns
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


def _store(kind, d: TermDictionary, data):
    store = kind()
    for pred, a, b in data:
        store.add((d.intern(ir.Name(pred)), 2), (d.intern(ir.Num(a)), d.intern(_object(b))), 10)
    return store


@settings(max_examples=300, deadline=None)
@given(facts, st.lists(extras, min_size=1, max_size=4), st.sampled_from([("x", "v"), ("y",), ("v", "x", "y")]))
def test_shared_matches_give_each_conjunction_its_own_solutions(data, specs, head):
    for kind in (DictStore, NativeStore):
        d = TermDictionary()
        store = _store(kind, d, data)
        conjunctions = [Conjunction(ATOMS, _extra(spec), head, d) for spec in specs]
        alone = [Counter(c.rows(store)) for c in conjunctions]
        with shared():
            together = [Counter(c.rows(store)) for c in conjunctions]
        assert together == alone, kind.__name__


#: a threshold alone (the usual event filter), or other extras
thresholds = st.tuples(st.sampled_from(["cmp", "cmp reversed"]), st.sampled_from(["<", "<=", ">", ">="]),
                       st.integers(-1, 6)).map(lambda spec: [spec])


@settings(max_examples=300, deadline=None)
@given(facts, st.lists(st.tuples(st.sampled_from([ATOMS, ATOMS[:1]]), st.one_of(thresholds, thresholds, extras),
                                 st.sampled_from([("x", "v"), ("v",), ("v", "x"), ("x",)])), min_size=1, max_size=6))
def test_event_types_run_together_give_each_its_own_rows(data, specs):
    """Types over equal atoms with a threshold alone each (``?v > 2``) are run as one group;
    the others (other atoms, no filter, two filters, a negation) on their own."""
    for kind in (DictStore, NativeStore):
        d = TermDictionary()
        store = _store(kind, d, data)
        events = []
        for n, (atoms, spec, head) in enumerate(specs):
            if len(atoms) == 1:  # (?y is not bound: a negation of r(?x, 0) instead)
                spec = [("not", "x", None) if k == "not" else (k, a, b) for k, a, b in spec]
            c = Conjunction(atoms, _extra(spec), head, d)
            events.append(CompiledEvent(f"E{n}", head, c.rows, d, c))
        assert EventRuns(events).run(store) == [e.run(store) for e in events], kind.__name__
