"""The LARS engine agrees with the literal reading of the LARS definitions (tests/temporal/
reference.py) on generated programs and streams: every operator, negation, tuple windows, @ heads."""

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st
import pytest

from dotr.rules import RuleError, UsageError, check_text, ir, parse
from dotr.rules.engine.terms import TermDictionary, format_fact
from dotr.temporal.lars import LarsEngine
from dotr.temporal.program import LarsProgram
from tests.temporal.reference import Reference
from tests.state_files import round_trip
from tests.strategies.lars import programs, streams


def _ref_text(fact) -> str:
    (pred, _), args = fact
    name = pred.value
    if not args:
        return name
    return f"{name}({','.join(str(a.value) for a in args)})"


def _usable(condition: bool) -> None:
    """Discard a generated case that is no valid program (a plain test must give a valid one)."""
    if currently_in_test_context():
        assume(condition)
    else:
        assert condition


def run(program_text: str, stream: list[list[str]], restart: int | None = None,
        changes: dict[int, tuple[list[str], list[str]]] | None = None, twin: bool = False, **options):
    """Step the engine and the reference side by side; at ``restart`` the engine is replaced by a
    new one restored from a snapshot read back from a state file (as a resumed run or a Spark micro-batch is);
    ``changes``: time point -> (facts added to, facts removed from the background) before it;
    ``twin``: a second engine over the first one's compiled program is stepped in turn with it
    (and given a stream of its own first), and must print the same."""
    result = check_text(program_text)
    _usable(result.ok)
    program = result.program
    rules = list(program.statements)
    rules = [s for s in rules if isinstance(s, ir.Rule)]
    try:
        engine = LarsEngine(rules, **options)
    except RuleError:
        _usable(False)
    reference = Reference(rules)
    if twin:  # (it runs the stream backwards first: what the program held of a run would show)
        other = LarsEngine(engine.program, **options)
        for t, facts in enumerate(reversed(stream)):
            other.step(t, [other._fact(parse(f + ".").facts[0]) for f in facts], interned=True)
        other = LarsEngine(engine.program, **options)
    background = set(reference.background)
    held: set = set()  # the output as its changes give it
    for t, facts in enumerate(stream + [[]] * 4):
        if changes and t in changes:
            add, remove = ([parse(f + ".").facts[0] for f in part] for part in changes[t])
            engine.change_background([engine._fact(a) for a in add], [engine._fact(a) for a in remove], interned=True)
            if twin:
                other.change_background([engine._fact(a) for a in add], [engine._fact(a) for a in remove], interned=True)
            background = (background - {((a.pred, len(a.args)), a.args) for a in remove}) | \
                {((a.pred, len(a.args)), a.args) for a in add}
            reference.change_background(t, background)
        if t == restart:
            state = round_trip(((engine.dictionary.snapshot(), engine.snapshot())))
            engine = LarsEngine(rules, TermDictionary.restore(state[0]), **options)
            engine.restore(state[1])
            held = set()  # (a restored engine reports what holds as added)
        atoms = [parse(f + ".").facts[0] for f in facts]
        ref_facts = [((a.pred, len(a.args)), a.args) for a in atoms]
        expected, placed = reference.step(t, ref_facts)
        out = engine.step(t, [engine._fact(a) for a in atoms], interned=True)
        if twin:
            twin_out = other.step(t, [engine._fact(a) for a in atoms], interned=True)
            assert (sorted(twin_out.facts), sorted(twin_out.added), sorted(twin_out.removed), twin_out.at) == \
                (sorted(out.facts), sorted(out.added), sorted(out.removed), out.at), (t, program_text)
        assert engine.format(out) == sorted(_ref_text(f) for f in expected), (t, program_text)
        assert not set(out.added) & held and set(out.removed) <= held, (t, program_text)
        held = (held - set(out.removed)) | set(out.added)
        assert held == set(out.facts), (t, program_text)
        assert sorted((w, format_fact(engine.dictionary, rel, f)) for w, rel, f in out.at) == \
            sorted((w, _ref_text(f)) for w, f in placed), (t, program_text)


# an @ head placing into the past an atom a plain rule had derived there: nothing new to report
PLACED_WHERE_DERIVED = """@T h0(X) :- a(X), [1] @T a(X), not b(X) .
h1(X) :- a(X) .
h2(X) :- a(X) .
h3(X) :- a(X), not a(X) .
h0(X) :- [1] <> h0(X), b(X) .
a(z) ."""
PLACED_BACK_WHERE_DERIVED = """@U h0(X) :- <> a(X), [0] @T c(X,Y), U = T + -1 .
h0(X) :- [1] <> h0(X), b(X) .
c(z, x) ."""


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs(), streams())
@example(PLACED_WHERE_DERIVED, [[], ["b(z)"]])
@example(PLACED_BACK_WHERE_DERIVED, [[], ["a(z)", "b(z)"]])
# placed before the timeline from the whole stream, again at every time point: reported once
@example("@U h0(X) :- @T c(X, Y), not a(X), U = T + -2 .", [["c(x, x)"]])
def test_engine_agrees_with_the_lars_definitions(program_text, stream):
    run(program_text, stream)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs(), streams(), st.integers(1, 8))
def test_an_engine_restored_from_a_snapshot_continues_as_the_definitions_say(program_text, stream, restart):
    run(program_text, stream, restart)


def test_a_placement_into_the_past_reports_only_what_is_new_there():
    # h(z) holds at 0 (derived by the plain rule); at 2 the @ head places h(z) at 0 and 1: only
    # (1, h(z)) is new to the answer stream
    program = "h(X) :- a(X), c(X) .\n@T h(X) :- [2] @T a(X), b(X) ."
    engine = LarsEngine(parse(program).rules)
    stream = [["a(z)", "c(z)"], ["a(z)"], ["b(z)"]]
    outputs = []
    for t, facts in enumerate(stream):
        out = engine.step(t, [engine._fact(parse(f + ".").facts[0]) for f in facts], interned=True)
        outputs.append(sorted((w, format_fact(engine.dictionary, rel, f)) for w, rel, f in out.at))
    assert outputs == [[], [], [(1, "h(z)")]]
    run(program, stream)


def test_cooling_example():
    from pathlib import Path
    import json
    root = Path(__file__).resolve().parents[2] / "examples" / "cooling"
    stream = [json.loads(line)["facts"] for line in (root / "stream.jsonl").read_text().splitlines()]
    program = "\n".join(line for line in (root / "rules.dotr").read_text().splitlines() if "overLimit" not in line and ":monitors" not in line)
    run(program, stream)


@st.composite
def tuple_programs(draw):
    rules = []
    for i in range(draw(st.integers(2, 3))):
        pred = draw(st.sampled_from(["a", "b"]))
        op = draw(st.sampled_from(["<>", "[]", "@T"]))
        neg = draw(st.sampled_from(["", "", "not "]))
        guard = "b(X), " if neg else ""
        rules.append(f"h{i}(X) :- {guard}{neg}[{draw(st.integers(1, 5))} #] {op} {pred}(X) ."
                     .replace("@T a(X) .", "@T a(X), T >= 0 .") if op != "@T" or not neg else
                     f"h{i}(X) :- b(X), not [{draw(st.integers(1, 5))} #] <> {pred}(X) .")
    return "\n".join(rules)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tuple_programs(), streams())
def test_tuple_windows_agree_with_the_definitions(program_text, stream):
    run(program_text, stream)


def test_tuple_windows_see_a_background_fact_where_it_held():
    """A box over the last atoms holds where stream atoms and a background fact added (or
    removed) on the way cover the window's span between them; ``@T`` gives T each time point."""
    stream = [["a(x)"], ["a(x)"], [], [], ["b(z)"], ["a(x)"], ["a(x)"], [], []]
    changes = {2: (["a(x)"], []), 5: ([], ["a(x)"])}
    for program in ("h(X) :- [4 #] [] a(X) .", "h(X, T) :- [4 #] @T a(X) .", "h(X) :- [3 #] <> a(X) ."):
        run(program, stream, changes=changes)
        run(program, stream, restart=6, changes=changes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs(), streams())
def test_rule_disabling_for_small_windows_changes_nothing(program_text, stream):
    # the generated windows are 0-3 wide: disable from 1 so that disabling is exercised
    run(program_text, stream, disable_from=1)
    run(program_text, stream, rule_disabling=False)


def test_rule_disabling_ends_exactly_when_the_window_has_passed():
    program = "h(X) :- [2] [] p(X) .\ng(X) :- h(X), [3] [] q(X) ."
    stream = [[], ["p(a)", "q(a)"], ["p(a)", "q(a)"], ["p(a)", "q(a)"], ["p(a)", "q(a)"], ["p(a)"], ["p(a)", "q(a)"]]
    run(program, stream, disable_from=1)
    engine = LarsEngine(parse(program).rules, disable_from=1)
    p, a = engine.relation("p", 1), engine.dictionary.intern(ir.Name("a"))
    outputs = [engine.format(engine.step(t, [(p, (a,))] if t else [], interned=True)) for t in range(5)]
    assert outputs == [[], [], [], ["h(a)"], ["h(a)"]] and engine.disabled_checks > 0


def test_what_holds_again_at_the_next_time_point_keeps_its_place_in_the_store():
    # evaluated before what held at t - 1 expires: the stream atoms, the box over them and what the
    # rules derive have their expiry raised; each is dropped when it stops holding
    engine = LarsEngine(parse("h(X) :- [2] [] p(X) .\nquiet(X) :- room(X), not p(X) .").rules)
    p, room, a = engine.relation("p", 1), engine.relation("room", 1), engine.dictionary.intern(ir.Name("a"))
    dropped, expire = [], engine.store.expire
    engine.store.expire = lambda now, report=True: dropped.extend(gone := expire(now, report)) or gone
    stream = [[(p, (a,)), (room, (a,))]] * 4 + [[(room, (a,))]] * 2
    outputs = [engine.format(engine.step(t, facts, interned=True)) for t, facts in enumerate(stream)]
    assert outputs == [["h(a)"]] * 4 + [["quiet(a)"]] * 2  # (the window reaches no further back than 0)
    names = {engine.dictionary.term(rel[0]).value for rel, _, _ in dropped}
    assert names == {"p", "h", engine.dictionary.term(engine.program.early_boxes[0].rel[0]).value}
    assert all(when == 3 for _, _, when in dropped)


def test_a_box_over_what_a_variable_predicate_head_derives_sees_it_at_once():
    # (no box over a triple relation is drawn before the rules when a head's predicate is a variable)
    rules = parse("@prefix : <http://ex.org/> .\nP(X, Y) :- link(X, P, Y) .\nh(X, Y) :- [1] [] :q(X, Y) .").rules
    engine = LarsEngine(rules)
    q = "<http://ex.org/q>(a,b)"
    stream = [[q]] + [[q, "link(a,<http://ex.org/q>,d)"]] * 3
    outputs = [engine.format(engine.step(t, [engine._fact(parse(f + ".").facts[0]) for f in facts], interned=True))
               for t, facts in enumerate(stream)]
    assert outputs == [["h(a,b)"]] * 2 + [["h(a,b)", "h(a,d)"]] * 2


def test_variable_predicate_first_in_a_negation_rule():
    # evaluated in full at each time point; the variable predicate ranges over the triples
    rules = parse("@prefix : <http://ex.org/> .\nh(X) :- P(X, Y), not :blocked(X) .").rules
    engine = LarsEngine(rules)
    d = engine.dictionary
    p = (d.intern(ir.Iri("http://ex.org/p")), 2)
    a, b = d.intern(ir.Iri("http://ex.org/a")), d.intern(ir.Iri("http://ex.org/b"))
    assert engine.format(engine.step(0, [(p, (a, b))], interned=True)) == ["h(<http://ex.org/a>)"]


def test_variable_predicate_head_of_a_negation_rule():
    # no view maintains it (a view keeps one relation's heads): it is evaluated in full
    rules = parse("@prefix : <http://ex.org/> .\nP(X, Y) :- link(X, P, Y), not blocked(X) .\n"
                  "seen(X) :- :q(X, Y) .").rules
    engine = LarsEngine(rules)
    link = "link(<http://ex.org/{}>,<http://ex.org/q>,<http://ex.org/b>)"
    assert engine.format(engine.step(0, [link.format("a"), link.format("c"), "blocked(<http://ex.org/c>)"])) \
        == ["seen(<http://ex.org/a>)"]
    assert engine.format(engine.step(1, [link.format("c")])) == ["seen(<http://ex.org/c>)"]


@st.composite
def background_changes(draw):
    """time point -> (facts added, facts removed): facts of the stream's predicates"""
    fact = st.sampled_from(["a(z)", "a(x)", "b(z)", "c(z, x)", "c(x, x)"])
    return {t: (draw(st.lists(fact, max_size=2)), draw(st.lists(fact, max_size=2)))
            for t in draw(st.sets(st.integers(0, 8), max_size=3))}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs() | tuple_programs(), streams(), background_changes(), st.one_of(st.none(), st.integers(1, 8)))
def test_background_changes_agree_with_the_lars_definitions(program_text, stream, changes, restart):
    """Each time point with the background of its time, windows with that of each earlier one."""
    run(program_text, stream, restart, changes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs() | tuple_programs(), streams(), background_changes())
def test_engines_over_one_compiled_program_run_apart(program_text, stream, changes):
    run(program_text, stream, changes=changes, twin=True)


def test_a_compiled_program_runs_over_its_own_dictionary_only():
    d = TermDictionary()
    d.intern_all([ir.Name("a"), ir.Name("b")])
    program = LarsProgram(parse("alarm(R) :- [2] <> smoke(R), not [1] [] ok(R) .").rules, d)
    with pytest.raises(UsageError, match="dictionary it was compiled over"):
        LarsEngine(program, TermDictionary())
    with pytest.raises(UsageError, match="semi_naive"):
        LarsEngine(program, semi_naive=False)
    program.dictionary.truncate(1)
    with pytest.raises(UsageError, match="truncated"):
        LarsEngine(program)


def test_a_compiled_program_survives_a_truncation_to_its_start():
    """A Spark key group resets its dictionary to the background's terms before it builds a
    reasoner again over the program it compiled: the program's terms come back with their ids."""
    d = TermDictionary()
    d.intern(ir.Name("background"))
    program = LarsProgram(parse("alarm(R) :- [2] <> smoke(R), not [1] [] ok(R, 7.5) .").rules, d)
    first = LarsEngine(program)
    smoke, r1 = program.relation("smoke", 1), d.intern(ir.Name("r1"))
    assert first.format(first.step(0, [(smoke, (r1,))])) == ["alarm(r1)"]
    d.truncate(1)
    again = LarsEngine(program)
    smoke, r1 = program.relation("smoke", 1), d.intern(ir.Name("r1"))
    assert again.format(again.step(0, [(smoke, (r1,))])) == ["alarm(r1)"]
    d.truncate(1)
    d.intern(ir.Name("other"))  # (now the program's terms would get other ids)
    with pytest.raises(UsageError, match="another id"):
        LarsEngine(program)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs() | tuple_programs(), streams(), st.lists(st.integers(1, 6), min_size=7, max_size=7),
       st.integers(0, 12))
# (h0(x) is placed at 0 when 1 is evaluated: its diamond ends at 1, so h1(x) goes at 2)
@example("@T h0(X) :- @T a(X), not a(X) .\nh1(X) :- [1] <> h0(X), not a(X) .", [["a(x)"]], [1] * 7, 0)
# (evaluated at 3 after 1: h0(x), concluded at 1, held through 2, so its diamond reaches 3,
# where b(x) comes; whether it held on is asked of what was listed before 1 was stepped)
@example("h0(X) :- [1 #] <> c(X, Y) .\nh0(X) :- [1] <> h0(X), b(X) .", [["a(x)", "c(x, x)"], ["b(x)"]], [3] + [1] * 6, 0)
def test_the_time_points_next_change_skips_print_what_the_one_before_printed(program_text, stream, gaps, restart):
    """Stepped only at the records' time points and where ``next_change`` says the output can
    change (as ``@timeunit ms`` steps), the engine prints at every time point in between what an
    engine stepped at every time point prints there, also when restored from a snapshot on the
    way."""
    result = check_text(program_text)
    _usable(result.ok)
    rules = [s for s in result.program.statements if isinstance(s, ir.Rule)]
    times = [sum(gaps[:i]) for i in range(len(stream))]
    end = times[-1] + 12
    d = TermDictionary()
    every, sparse = LarsEngine(rules, d), LarsEngine(rules, d)
    inputs = {t: [every._fact(parse(f + ".").facts[0]) for f in facts] for t, facts in zip(times, stream)}
    printed: dict[int, list[str]] = {}
    last = None
    while True:
        pending = [t for t in inputs if last is None or t > last]
        change = sparse.next_change(last) if last is not None else None
        t = min([c for c in (change, *pending[:1]) if c is not None and c <= end], default=None)
        if t is None:
            break
        printed[t] = sparse.format(sparse.step(t, [(rel, fact) for rel, fact in inputs.get(t, [])], interned=True))
        last = t
        if len(printed) == restart:  # (a snapshot knows where the output can change next too)
            sparse, state = LarsEngine(rules, d), round_trip((sparse.snapshot()))
            sparse.restore(state)
    shown: list[str] = []
    for u in range(times[0], end + 1):
        expected = every.format(every.step(u, inputs.get(u, []), interned=True))
        shown = printed.get(u, shown)
        assert shown == expected, (u, program_text, sorted(printed))
