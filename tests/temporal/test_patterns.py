"""The pattern engine agrees with the literal TESLA definitions on generated patterns and event
streams; the T-Rex and DOTR examples run from examples/ through the ontological stage."""
import re

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from dotr.rules import check_text, ir
from dotr.rules.engine.builtins import compare
from dotr.rules.engine.terms import TermDictionary
from dotr.temporal.keys import EventPartition, partition_keys
from dotr.temporal.patterns import PatternEngine
from tests.temporal.pattern_reference import PatternReference
from tests.state_files import round_trip
from tests.strategies.patterns import DECLS, TYPES, pattern, programs, streams


def _show(d, values):
    return tuple(d.term(v) for v in values)


def run(text, stream, restart: int | None = None):
    """Step the engine and the reference side by side; at ``restart`` the engine is replaced by a
    new one restored from a snapshot read back from a state file (as a resumed run or a Spark micro-batch is)."""
    result = check_text(text)
    assume(result.ok)
    engine = PatternEngine(result.program)
    reference = PatternReference(result.program)
    d = engine.dictionary
    for t, events in enumerate(stream):
        if t == restart:
            state = round_trip(((d.snapshot(), engine.snapshot())))
            d = TermDictionary.restore(state[0])
            engine = PatternEngine(result.program, d)
            engine.restore(state[1])
        by_type: dict[str, list] = {}
        for etype, k, v in events:
            by_type.setdefault(etype, []).append((ir.Name(k), ir.Num(v)))
        out = engine.step(t, {n: [tuple(d.intern(x) for x in row) for row in rows] for n, rows in by_type.items()}, interned=True)
        ours = sorted(repr((m.pattern, sorted((lab, (e.type, e.time, _show(d, e.values))) for lab, e in m.bindings.items()),
                            _show(d, m.emitted.values) if m.emitted else None)) for m in out.matches)
        theirs = sorted(repr((p, sorted(b.items()), e)) for p, b, e in reference.step(t, by_type))
        assert ours == theirs, (t, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs(), streams())
def test_engine_agrees_with_the_tesla_definitions(text, stream):
    run(text, stream)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs(), streams(), st.integers(1, 8))
def test_an_engine_restored_from_a_snapshot_continues_as_the_definitions_say(text, stream, restart):
    run(text, stream, restart)


@st.composite
def shared_programs(draw):
    """P and copies of it (the same items and ``where``; their own names, composite events and
    graphs), consuming when P does; sometimes a pattern Q terminated by P's composite events."""
    body = draw(pattern("P"))
    terminator = re.search(r"from (\w+)", body).group(1)
    texts = [body]
    for i in range(1, draw(st.integers(1, 2)) + 1):
        texts.append(body.replace("pattern P\n", f"pattern P{i}\n").replace("emit EP(", f"emit EP{i}(").replace(
            "\n  emit", f"\n  construct {{ _:m a <http://x/C{i}> ; <http://x/k> ?k }} with ?k = {terminator}.k\n  emit"))
    text = DECLS + "\n" + "\n".join(texts)
    if draw(st.booleans()):
        text += "\n" + draw(pattern("Q", terminator_types=["EP"]))
    return text


def _trace(m) -> tuple:
    return m.pattern, m.time, sorted(m.bindings.items()), m.values, m.emitted, m.graph


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(shared_programs(), streams())
def test_patterns_with_the_same_items_share_their_matching_and_give_what_separate_evaluation_gives(text, stream):
    result = check_text(text)
    assume(result.ok)
    shared = PatternEngine(result.program)
    separate = PatternEngine(result.program, shared.dictionary, share=False)
    # P and its copies are matched once unless they consume (each has its own consumption marks)
    assert (shared.patterns[0].group is not None) == ("consuming" not in text.split("pattern Q")[0])
    assert all(c.group is None for c in separate.patterns)
    d = shared.dictionary
    for t, events in enumerate(stream):
        by_type: dict[str, list] = {}
        for etype, k, v in events:
            by_type.setdefault(etype, []).append((d.intern(ir.Name(k)), d.intern(ir.Num(v))))
        assert [_trace(m) for m in shared.step(t, by_type, interned=True).matches] == \
            [_trace(m) for m in separate.step(t, by_type, interned=True).matches], (t, text)
    run(text, stream)  # and both agree with the TESLA definitions


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pattern("P"), st.integers(1, 2), streams())
def test_patterns_over_events_declared_alike_share_buffers_and_matching(body, copies, stream):
    """Each copy of P declares its own events, the same way as P's (as when every pattern of a
    rule file declares its events): the copies find P's matches, with their own labels."""
    texts, decls = [body], [DECLS]
    for i in range(1, copies + 1):
        texts.append(re.sub(r"\b(A|B|C|EP|P)\b", rf"\g<1>{i}", body))
        decls.append("\n".join(f"event {t}{i}(?k, ?v) := {t.lower()}(?k, ?v) ." for t in TYPES))
    result = check_text("\n".join(decls + texts))
    assume(result.ok)
    engine = PatternEngine(result.program)
    alone = PatternEngine(check_text(DECLS + "\n" + body).program, engine.dictionary)
    assert all(engine.buffers[f"{t}{i}"] is engine.buffers[t] for t in TYPES for i in range(1, copies + 1))
    assert (engine.patterns[0].group is not None) == ("consuming" not in body)
    d = engine.dictionary
    for t, events in enumerate(stream):
        by_type: dict[str, list] = {}
        for etype, k, v in events:
            by_type.setdefault(etype, []).append((d.intern(ir.Name(k)), d.intern(ir.Num(v))))
        expected = sorted(repr((m.time, sorted((lab, e.time, e.values) for lab, e in m.bindings.items())))
                          for m in alone.step(t, by_type, interned=True).matches)
        # every declaration of an event gets its rows (the ontological stage runs each query once)
        out = engine.step(t, {f"{n}{i or ''}": rows for n, rows in by_type.items() for i in range(copies + 1)}, interned=True)
        for i in range(copies + 1):
            mine = [m for m in out.matches if m.pattern == f"P{i or ''}"]
            assert sorted(repr((m.time, sorted((re.sub(r"\d+$", "", lab) if lab[0] != "L" else lab, e.time, e.values)
                                               for lab, e in m.bindings.items()))) for m in mine) == expected, (t, i)


def _found(m) -> tuple:
    """A match without its events' types and arrival numbers (types alike share a buffer)."""
    emitted = m.emitted and (m.emitted.type, m.emitted.time, m.emitted.values)
    return m.time, sorted((label, e.time, e.values) for label, e in m.bindings.items()), m.values, emitted


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
thresholds = st.tuples(st.sampled_from(["<", "<=", ">", ">="]), st.integers(-1, 6), st.booleans())


def _threshold_decl(name: str, threshold) -> str:
    op, bound, reversed_ = threshold
    test = f"{bound} {_FLIPPED[op]} ?v" if reversed_ else f"?v {op} {bound}"
    return f"event {name}(?k, ?v) := select ?k ?v where {{ ?k :{name[0].lower()} ?v filter({test}) }} ."


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pattern("P"), st.integers(1, 3), st.data(), streams())
def test_patterns_over_events_alike_but_for_their_thresholds_read_the_loosest_rows(body, copies, data, stream):
    """Each copy of P declares its own events with a FILTER threshold of its own (as the DOTR
    paper's rules do): with ``query_rows`` the types alike but for their thresholds share the
    loosest one's buffer, and each copy finds the matches it finds alone on its own rows."""
    own = {f"{t}{i or ''}": data.draw(thresholds) for t in TYPES for i in range(copies + 1)}
    texts = [body] + [re.sub(r"\b(A|B|C|EP|P)\b", rf"\g<1>{i}", body) for i in range(1, copies + 1)]
    decls = ["\n".join(_threshold_decl(f"{t}{i or ''}", own[f"{t}{i or ''}"]) for t in TYPES) for i in range(copies + 1)]
    prefix = "@prefix : <http://ex.org/> .\n"
    result = check_text(prefix + "\n".join(decls + texts))
    assume(result.ok)
    engine = PatternEngine(result.program, parsed=result.queries, query_rows=True)
    d = engine.dictionary
    alone = [PatternEngine(check_text(prefix + decls[i] + "\n" + texts[i]).program, d) for i in range(copies + 1)]
    for t in TYPES:  # the types of one direction share a buffer (a negative bound is no number: an expression)
        for up in (True, False):
            names = [n for n, (op, bound, _) in own.items() if n[0] == t and (op[0] == ">") == up and bound >= 0]
            assert len({id(engine.buffers[n]) for n in names}) <= 1
    for t, events in enumerate(stream):
        rows = {name: [(d.intern(ir.Name(k)), d.intern(ir.Num(v))) for etype, k, v in events
                       if etype == name[0] and compare(own[name][0], v, own[name][1])] for name in own}
        out = engine.step(t, rows, interned=True)
        for i in range(copies + 1):
            suffix = str(i or "")
            expected = alone[i].step(t, {t_ + suffix: rows[t_ + suffix] for t_ in TYPES}, interned=True).matches
            mine = [m for m in out.matches if m.pattern == f"P{suffix}"]
            assert [_found(m) for m in mine] == [_found(m) for m in expected], (t, i)


def test_matches_at_one_time_point_get_distinct_fresh_iris_named_by_their_events():
    prog = check_text("""event Smoke(?area) := smoke(?area) .
pattern Fire from Smoke construct { _:f a <http://x/Alarm> ; <http://x/area> ?a } with ?a = Smoke.area .""").program
    first, second = PatternEngine(prog), PatternEngine(prog)
    d = first.dictionary
    a1, a2 = d.intern(ir.Name("a1")), d.intern(ir.Name("a2"))
    names = [m.graph[0][0] for m in first.step(1, {"Smoke": [(a1,), (a2,)]}, interned=True).matches]
    assert len(set(names)) == 2
    # another engine (other term ids, the events in another order) names each match the same way
    d2 = second.dictionary
    d2.intern(ir.Name("other"))
    again = [m.graph[0][0] for m in second.step(1, {"Smoke": [(d2.intern(ir.Name("a2")),), (d2.intern(ir.Name("a1")),)]}, interned=True).matches]
    assert again == names[::-1]


def test_an_emitted_attribute_left_undefined_is_unbound_where_it_is_read():
    # (``v + 1`` of a name is undefined) a constraint on it is false, a digest and the event's
    # data show it unbound
    prog = check_text("""event Reading(?s, ?v) := reading(?s, ?v) .
pattern P from Reading emit Level(s = Reading.s, x = Reading.v + 1) .
pattern Q from Level(x > 3) emit Alarm(s = Level.s) .
pattern R from Level construct { _:r <http://x/of> ?s } with ?s = Level.s .""").program
    engine = PatternEngine(prog)
    matches = engine.step(1, {"Reading": [("s1", "high"), ("s2", 5)]}).matches
    assert sorted(repr((m.pattern, engine.emitted(m)["attributes"] if m.emitted else len(m.graph)))
                  for m in matches) == sorted(repr(x) for x in [
        ("P", {"s": "s1", "x": None}), ("P", {"s": "s2", "x": "6"}), ("Q", {"s": "s2"}), ("R", 1), ("R", 1)])


def _matches(d, matches) -> list[str]:
    return sorted(repr((m.pattern, sorted((lab, (e.type, e.time, _show(d, e.values))) for lab, e in m.bindings.items()),
                        _show(d, m.emitted.values) if m.emitted else None, m.graph)) for m in matches)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs(keyed=True), streams(), st.integers(2, 3))
@example(DECLS + "\npattern P from A and not A(v <= 0) within 1 from A emit EP(k = A.k, v = A.v) .",
         [[("A", "x", 0)], [("A", "y", 0)]], 3)  # a negation named as the terminator, tied to no key
def test_engines_on_the_partitions_of_a_keyed_program_find_the_matches_of_one_engine(text, stream, n):
    result = check_text(text)
    assume(result.ok)
    keys = partition_keys(result.program)
    assume(keys is not None)
    whole = PatternEngine(result.program)
    d = whole.dictionary
    parts = [PatternEngine(result.program, d) for _ in range(n)]
    split = EventPartition(keys, n, d).split
    for t, events in enumerate(stream):
        by_type: dict[str, list] = {}
        for etype, k, v in events:
            by_type.setdefault(etype, []).append((d.intern(ir.Name(k)), d.intern(ir.Num(v))))
        expected = _matches(d, whole.step(t, by_type, interned=True).matches)
        found = [m for engine, own in zip(parts, split(by_type)) for m in engine.step(t, own, interned=True).matches]
        assert _matches(d, found) == expected, (t, text)


def test_a_join_on_no_key_or_an_aggregate_over_every_key_is_not_partitioned():
    def keys(patterns: str):
        return partition_keys(check_text(DECLS + "\n" + patterns).program)
    assert keys("pattern P from A and last B(k = A.k) within 3 from A .") == {"A": 0, "B": 0}
    assert keys("pattern P from A and last B(v = A.v) within 3 from A .") == {"A": 1, "B": 1}
    assert keys("pattern P from A and last B(v = A.k) within 3 from A .") == {"A": 0, "B": 1}
    assert keys("pattern P from A and last B within 3 from A .") is None
    assert keys("pattern P from A and not A(v > 0) within 1 from A .") is None  # a negation named as a label
    assert keys("pattern P from A and not A(k = A.k, v > 0) within 1 from A .") == {"A": 0}
    assert keys("pattern P from A and last B(k = A.k) within 3 from A .\n"
                "pattern Q from B and last A(v = B.v) within 3 from B .") is None
    assert keys("pattern P from A where count(B within 3 from A) > 1 .") is None
    assert keys("pattern P from A where count(B(k = A.k) within 3 from A) > 1 .") == {"A": 0, "B": 0}
    assert keys("pattern P from A emit E(v = A.v) .\npattern Q from E and last A(k = E.v) within 2 from E .") is None


#: template terms by position: blank nodes, variables (?k and ?v from the events; ?m an
#: aggregate, unbound over an empty scope), IRIs, literals that N-Triples escapes and literals
#: with what a format string reads as fields
SUBJECTS = ["_:m", "_:n", "?k", "<http://x/s>"]
PREDICATES = ["<http://x/p>", "<http://x/q>", "<http://x/p2>", "a"]
OBJECTS = ["?v", "?k", "?m", "_:m", "<http://x/o>", '"a\\"b"@en', '"x y"', "5", "2.5", '"7"^^<http://x/dt>', '"{0}}"']
VALUES = [ir.Name("n1"), ir.Iri("http://x/i"), ir.Num(3), ir.Num(-0.5), ir.Literal('q"\\z'), ir.Literal("d", lang="de"),
          ir.Literal("{1[0]}")]


terms = st.sampled_from(VALUES)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from(OBJECTS)),
                min_size=1, max_size=4),
       st.lists(st.tuples(st.lists(st.tuples(st.sampled_from(["B", "C"]), terms, terms), min_size=1, max_size=3),
                          terms, terms), min_size=1, max_size=3))
def test_a_matchs_graph_text_is_the_document_of_its_triples(template, stream):
    """The N-Triples document a match builds from its terms' ids (with the lines in a known order
    when the template allows) is the one written from its triples of terms."""
    from dotr.rules.engine.ntriples import document

    construct = " . ".join(" ".join(triple) for triple in template)
    prog = check_text(DECLS + f"\npattern P from A and each B within 2 from A\n  construct {{ {construct} }}\n"
                              "  with ?k = A.k, ?v = B.v, ?m = max(C.v within 1 from A) .").program
    engine = PatternEngine(prog)
    d = engine.dictionary
    matches = 0
    for i, (before, k, v) in enumerate(stream):  # B and C events, then an A event
        by_type: dict[str, list] = {}
        for etype, bk, bv in before:
            by_type.setdefault(etype, []).append((d.intern(bk), d.intern(bv)))
        engine.step(2 * i, by_type, interned=True)
        for m in engine.step(2 * i + 1, {"A": [(d.intern(k), d.intern(v))]}, interned=True).matches:
            assert m.ntriples == document(m.graph), construct
            matches += 1
    assert matches or all(etype == "C" for before, _, _ in stream for etype, _, _ in before)
