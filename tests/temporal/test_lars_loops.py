"""The LARS engine's compiled loops (``rules.engine.backends.dict_loops``: ``note_dropped``,
``held_changes``, ``box_facts``, ``relations_of``) against the Python loops they replace, kept
here as their reference, on generated stores, views and runs."""

from operator import itemgetter
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from dotr.rules.engine.backends.dict_loops import box_facts, held_changes, note_dropped, relations_of
from dotr.temporal.windows import covered, record

RELS = [(1, 1), (2, 1), (3, 2)]
facts = st.tuples(st.integers(0, 6))
pairs = st.tuples(st.sampled_from(RELS), facts)


def note_dropped_reference(dropped, on_expired, intensional, dirty):
    last = tells = None
    for rel, fact, _ in dropped:
        if rel is not last:
            last, tells, derived = rel, on_expired.get(rel), rel in intensional
        if tells:
            for tell in tells:
                tell(fact)
        if derived:
            dirty.add((rel, fact))


def held_changes_reference(dirty, relations, sinks, inputs, out):
    def holds(rel, fact):
        r = relations.get(rel)
        return r is not None and fact in r.facts or any(fact in v.heads for v in sinks.get(rel, ()))

    held, removed = [], []
    for item in dirty:
        if holds(*item) and item not in inputs:
            if item not in out:
                held.append(item)
        elif item in out:
            removed.append(item)
    return held, removed


def box_facts_reference(base_facts, occ, rel, t, first, out):
    for f in base_facts:
        runs = occ.get(f)
        if runs:
            last = runs[-1]
            if last[1] == t - 1:
                last[1] = t
            elif last[1] < t:
                record(occ, f, t, t)
                last = runs[-1]
        else:
            record(occ, f, t, t)
            last = occ[f][-1]
        if last[0] <= first and last[1] >= t or covered(occ[f], first, t):
            out.append((rel, f, t))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(RELS), facts, st.integers(0, 9))).map(lambda d: sorted(d, key=lambda x: x[0])),
       st.sets(st.sampled_from(RELS)), st.sets(st.sampled_from(RELS)), st.sets(pairs))
def test_note_dropped_tells_and_marks_what_the_python_loop_does(dropped, telling, intensional, dirty):
    def run(loop) -> tuple[list, set]:
        told, marked = [], set(dirty)
        loop(dropped, {rel: [lambda fact, rel=rel: told.append((rel, fact))] for rel in telling}, intensional, marked)
        return told, marked

    assert run(note_dropped) == run(note_dropped_reference)


@settings(max_examples=300, deadline=None)
@given(st.sets(pairs), st.dictionaries(st.sampled_from(RELS), st.sets(facts)),
       st.dictionaries(st.sampled_from(RELS), st.lists(st.sets(facts), max_size=2)), st.sets(pairs), st.sets(pairs))
def test_held_changes_is_the_python_loop(dirty, stored, views, inputs, out):
    relations = {rel: SimpleNamespace(facts=dict.fromkeys(fs, 0)) for rel, fs in stored.items()}
    sinks = {rel: [SimpleNamespace(heads=dict.fromkeys(heads, 1)) for heads in each] for rel, each in views.items()}
    assert held_changes(dirty, relations, sinks, inputs, set(out)) == held_changes_reference(
        dirty, relations, sinks, inputs, out)


runs = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3)), max_size=3).map(
    lambda spans: [[start, start + length] for start, length in spans])


@settings(max_examples=300, deadline=None)
@given(st.sets(facts), st.dictionaries(facts, runs), st.integers(1, 14), st.integers(0, 14))
def test_box_facts_extends_the_runs_and_finds_the_covering_ones_as_the_python_loop_does(base, occ, t, first):
    occ = {f: [] for f in occ} | {f: sorted(r) for f, r in occ.items() if r}  # (some facts without runs)
    compiled, reference = {f: [list(run) for run in r] for f, r in occ.items()}, {f: [list(run) for run in r] for f, r in occ.items()}
    out_compiled, out_reference = [], []
    box_facts(dict.fromkeys(base, t), compiled, (9, 1), t, first, out_compiled, record, covered)
    box_facts_reference(dict.fromkeys(base, t), reference, (9, 1), t, first, out_reference)
    assert (out_compiled, compiled) == (out_reference, reference)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(RELS), facts)), st.booleans())
def test_relations_of_is_the_set_of_the_first_elements(items, copies):
    if copies:  # (equal relations as other objects, as the stream's facts have them)
        items = [(tuple(list(rel)), fact) for rel, fact in items]
    assert relations_of(items) == set(map(itemgetter(0), items))
    assert relations_of(iter(items)) == relations_of(items)
