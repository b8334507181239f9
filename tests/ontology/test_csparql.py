"""The C-SPARQL engine agrees with recomputing every window from scratch (generated rules,
queries and streams: time and count windows, several streams, aggregates, stream operators), and
reproduces the IMaRS paper's Fig. 4 expirations."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from dotr.rules import check_text, ir
from dotr.ontology.csparql import CSparqlEngine
from tests.ontology.csparql_reference import CSparqlReference
from tests.ontology.csparql_runs import reported, run_engine
from tests.strategies.csparql import BACKGROUND, EX, PREFIX, RULES, STREAMS, node, streams
from tests.state_files import round_trip


@st.composite
def windows(draw):
    stream = draw(st.sampled_from([":s1", ":s2"]))
    if draw(st.integers(0, 3)) == 0:
        return f"from stream {stream} [triples {draw(st.integers(1, 4))}]"
    step = draw(st.integers(1, 3))
    return f"from stream {stream} [range {draw(st.integers(step, 6))} step {step}]"


WHERE = ["{ ?x :p ?y }", "{ ?x :p ?y . ?y :p ?z }", "{ ?x :q ?y OPTIONAL { ?y :v ?z } }",
         "{ ?x a :D }", "{ ?x :r ?y }", "{ { ?x :p ?y } UNION { ?x :q ?y } FILTER(?x != :a) }"]


@st.composite
def query(draw, name: str):
    every = draw(st.integers(1, 3))
    op = draw(st.sampled_from(["", "", "istream ", "dstream "]))
    wins = " ".join(draw(st.lists(windows(), min_size=1, max_size=2)))
    shape = draw(st.integers(0, 3))
    if shape == 0:  # aggregates
        agg = draw(st.sampled_from(["count(?y)", "count(distinct ?y)", "sum(?v)", "avg(?v)", "min(?v)", "max(?v)"]))
        grouped = draw(st.booleans())
        return (f"query {name} := register compute every {every} as select {op}{'?x ' if grouped else ''}"
                f"({agg} as ?n) {wins} where {{ ?x :p ?y . OPTIONAL {{ ?y :v ?v }} }}"
                f"{' group by ?x' if grouped else ''} .")
    if shape == 1:
        return (f"query {name} := register compute every {every} as construct {op}{{ ?y :back ?x }} {wins} "
                f"where {draw(st.sampled_from(WHERE))} .")
    return f"query {name} := register compute every {every} as select {op}* {wins} where {draw(st.sampled_from(WHERE))} ."


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(RULES), background=st.lists(st.sampled_from(BACKGROUND), max_size=3, unique=True),
       queries=st.lists(st.integers(), min_size=1, max_size=2).flatmap(
           lambda qs: st.tuples(*[query(f"Q{i}") for i in range(len(qs))])),
       elements=streams, restart=st.one_of(st.none(), st.integers(0, 12)))
def test_engine_agrees_with_recomputation(rules, background, queries, elements, restart):
    checked = check_text(PREFIX + rules + "\n" + "\n".join(queries))
    assert checked.ok, checked.diagnostics
    bg = [(node(s), node(p), node(o)) for s, o, p in background]
    until = 24
    # the engine receives a time point's elements as a mapping stream -> facts: a count window
    # orders them by time, then stream by stream in the mapping's order
    by_time: dict = {}
    for t, stream, fact in sorted(elements, key=lambda e: e[0]):
        by_time.setdefault(t, {}).setdefault(stream, []).append(fact)
    elements = [(t, stream, f) for t, streams in by_time.items() for stream, facts in streams.items() for f in facts]
    expected = CSparqlReference(checked, bg, elements).reports(until)
    engine = CSparqlEngine(checked, bg)
    got = run_engine(engine, elements, until, restart, checked)
    assert got == expected


def test_a_restored_engine_forgets_window_facts_at_their_expiry():
    """After a restore, a time window's triple stops being explicit when it leaves its window.
    Found by the test above with more examples: the restored engine kept (a q a), so evicting
    (a p a) from the count window at 1 re-derived from it (the restore had dropped the explicit
    facts' expiry schedule)."""
    checked = check_text(PREFIX + RULES[2] + """
query Q0 := register compute every 1 as select * from stream :s1 [triples 1] from stream :s2 [range 1 step 1]
    where { ?x :p ?y } .""")
    a, b, p, q = (node(":" + n) for n in "abpq")
    elements = [(0, STREAMS[0], (a, p, a)), (0, STREAMS[1], (a, q, a)), (1, STREAMS[0], (a, p, b))]
    expected = CSparqlReference(checked, [], elements).reports(4)
    assert [sorted(row) for row in expected[1]["Q0"]] == [["<http://ex.org/a>", "<http://ex.org/b>"]]  # (a p b)
    for restart in (None, 0):
        assert run_engine(CSparqlEngine(checked), elements, 4, restart, checked) == expected


def test_imars_fig4_transitive_isin():
    """IMaRS Fig. 4: a window of 10 s over isIn triples; each triple is tagged with the time it
    leaves the window (IMaRS's expiration time: one past the last time point it holds here)."""
    checked = check_text(PREFIX + """@timeunit ms .
:isIn(?x, ?z) :- :isIn(?x, ?y), :isIn(?y, ?z) .
query Closure := register compute every 1 s as select ?x ?y
    from stream :positions [range 10 s step 1 s] where { ?x :isIn ?y } .""")
    engine = CSparqlEngine(checked)
    s = EX + "positions"
    isin = lambda a, b: (URIRef(EX + a), URIRef(EX + "isIn"), URIRef(EX + b))
    arrivals = {1: [isin("A", "B")], 2: [isin("B", "C")], 3: [isin("C", "D")], 4: [isin("A", "E"), isin("E", "D")]}
    rel = (engine.dictionary.intern(ir.Iri(EX + "isIn")), 2)

    def tags() -> dict[str, int]:
        store = engine.store("Closure")
        term = engine.dictionary.term
        return {f"{term(a).value[-1]}{term(b).value[-1]}": (expiry + 1) // 1000
                for (a, b), expiry in store.relation(rel).facts.items()}

    table = {}
    for second in range(1, 16):
        engine.step(second * 1000, {s: arrivals.get(second, [])})
        table[second] = tags()
    assert table[1] == {"AB": 11}
    assert table[2] == {"AB": 11, "BC": 12, "AC": 11}
    assert table[3] == {"AB": 11, "BC": 12, "CD": 13, "AC": 11, "BD": 12, "AD": 11}
    # A isIn D is re-derived through E with the later expiration 14: the copy tagged 11 is dropped
    assert table[4] == {"AB": 11, "BC": 12, "CD": 13, "AC": 11, "BD": 12, "AE": 14, "ED": 14, "AD": 14}
    assert table[10] == table[4]
    assert table[11] == {"BC": 12, "CD": 13, "BD": 12, "AE": 14, "ED": 14, "AD": 14}
    assert table[12] == {"CD": 13, "AE": 14, "ED": 14, "AD": 14}
    assert table[13] == {"AE": 14, "ED": 14, "AD": 14}
    assert table[14] == {}
    assert engine.next_change(14_000) is None


def test_count_window_and_background_entailments():
    """A count window keeps the last N triples; what leaves is retracted (DRed) while what the
    background still entails stays."""
    checked = check_text(PREFIX + """@profile rdfs .
query Typed := register compute every 1 as select ?x
    from stream :s [triples 2] where { ?x a :D } .""")
    bg = [(node(":C"), node("rdfs:subClassOf"), node(":D")), (node(":a"), node("rdf:type"), node(":C"))]
    engine = CSparqlEngine(checked, bg)
    typ = lambda x: (node(":" + x), node("rdf:type"), node(":C"))
    xs = lambda out: [r["x"][-2] for r in out.answers["Typed"]]
    assert xs(engine.step(1, {EX + "s": [typ("b"), typ("a")]})) == ["a", "b"]
    assert xs(engine.step(2, {EX + "s": [typ("c")]})) == ["a", "c"]
    assert xs(engine.step(3, {EX + "s": [typ("d"), typ("c")]})) == ["a", "c", "d"]
    assert xs(engine.step(9, {})) == ["a", "c", "d"]


def test_having_tumbling_and_istream():
    checked = check_text(PREFIX + """query Busy := register compute every 2 as select istream ?x (count(?y) as ?n)
    from stream :s [range 4 tumbling] where { ?x :p ?y } group by ?x having (count(?y) > 1) .""")
    engine = CSparqlEngine(checked)
    p = lambda a, b: (node(":" + a), node(":p"), node(":" + b))
    stream = [(1, {None: [p("a", "b"), p("a", "c"), p("b", "c")]}), (3, {EX + "s": [p("b", "d")]}),
              (5, {EX + "s": [p("b", "d"), p("b", "a"), p("b", "e")]})]
    outs = {o.t: o.answers["Busy"] for o in engine.run(stream) if "Busy" in o.answers}
    # evaluated at 0, 2, 4, ...: windows (-4, 0] at 0 and 2 (empty: no report), (0, 4] at 4 and 6,
    # (4, 8] at 8 and 10; istream reports only what is new
    assert outs == {4: [{"x": f"<{EX}a>", "n": "2"}, {"x": f"<{EX}b>", "n": "2"}], 6: [],
                    8: [{"x": f"<{EX}b>", "n": "3"}], 10: []}


def test_check_time_errors_name_line_and_column():
    text = PREFIX + """@timeunit ms .
query A := register compute every 1 s as select ?x
    from stream :s [range 0 s step 1 s] where { ?x :p ?y } .
query B := register compute every 1 s as select ?x
    from stream :s [range 3 s stride 1 s] where { ?x :p ?y } .
query C := register compute every 1 fortnight as select ?x from stream :s [triples 5] where { ?x :p ?y } .
query D := register as select ?x from stream :s [triples 5] where { ?x :p ?y } .
query E := register compute every 1 s as select ?x from stream nope:s [triples 5] where { ?x :p ?y } .
query F := register compute every 1 s as select ?x from stream :s [triples 5] where { ?x :p ?y ?z } .
query G := register compute every 1 s as select ?x where { ?x :p ?y } .
"""
    checked = check_text(text, "q.dotr")
    found = [(d.code, str(d.span)) for d in checked.diagnostics]
    assert found == [("E411", "q.dotr:4:27"), ("E410", "q.dotr:6:31"), ("E410", "q.dotr:7:37"),
                     ("E411", "q.dotr:8:12"), ("E304", "q.dotr:9:64"), ("E401", "q.dotr:10:96"),
                     ("E410", "q.dotr:11:42")]
    ticks = check_text(PREFIX + "query T := register compute every 1 s as select ?x from stream :s [triples 5] "
                       "where { ?x :p ?y } .", "t.dotr")
    assert [(d.code, str(d.span)) for d in ticks.diagnostics] == [("E305", "t.dotr:2:35")]


def test_blank_nodes_of_a_construct_do_not_depend_on_the_store_order():
    """CONSTRUCT names a blank node per solution; solutions are numbered in a canonical order, so
    that an engine restored from a snapshot (whose store holds the facts in another order) names
    them as the uninterrupted one does."""
    checked = check_text('''@prefix : <http://ex.org/> .
    query Seen := register compute every 1 as construct { _:s :saw ?x ; :at ?y }
        from stream :s [range 3 step 1] where { ?x :isIn ?y } .''')
    ex = lambda n: ir.Iri(f"http://ex.org/{n}")  # noqa: E731
    elements = [(t, "http://ex.org/s", ir.Atom(ex("isIn"), (ex(f"o{(7 * t + k) % 11}"), ex(f"r{k}"))))
                for t in range(8) for k in range(3)]
    whole = run_engine(CSparqlEngine(checked), elements, 9)
    assert "urn:dotr:query:Seen:" in str(whole)
    for restart in range(8):
        assert run_engine(CSparqlEngine(checked), elements, 9, restart, checked) == whole, restart


CHANGEABLE = BACKGROUND + [(":b", ":c", ":p"), (":q", ":p", "rdfs:subPropertyOf"), (":d", ":D", "rdf:type")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(RULES), background=st.lists(st.sampled_from(BACKGROUND), max_size=3, unique=True),
       queries=st.lists(st.integers(), min_size=1, max_size=2).flatmap(
           lambda qs: st.tuples(*[query(f"Q{i}") for i in range(len(qs))])),
       elements=streams, changes=st.lists(st.tuples(st.integers(0, 14), st.lists(st.sampled_from(CHANGEABLE), max_size=2),
                                                    st.lists(st.sampled_from(CHANGEABLE), max_size=2)), max_size=3),
       restart=st.booleans())
def test_background_changes_agree_with_recomputation(rules, background, queries, elements, changes, restart):
    """A change takes effect at the evaluations from its time on, with the windows as they are:
    against recomputing every window over the background as it is then. The changes touch
    triples the stream also gives (a window's copy stays) and entailed ones."""
    checked = check_text(PREFIX + rules + "\n" + "\n".join(queries))
    triple = lambda spec: (node(spec[0]), node(spec[2]), node(spec[1]))  # noqa: E731
    changes = sorted(((t, [triple(a) for a in add], [triple(r) for r in remove]) for t, add, remove in changes),
                     key=lambda c: c[0])
    by_time: dict = {}  # (as above: a time point's elements in the order the engine takes them)
    for t, stream, fact in sorted(elements, key=lambda e: e[0]):
        by_time.setdefault(t, {}).setdefault(stream, []).append(fact)
    elements = [(t, stream, f) for t, streams in by_time.items() for stream, facts in streams.items() for f in facts]
    until = 24
    expected = CSparqlReference(checked, [triple(b) for b in background], elements, changes).reports(until)
    engine = CSparqlEngine(checked, [triple(b) for b in background])
    stream = [(t, {s: [f]}) for t, s, f in elements]
    outputs, done = [], -1
    for when, add, remove in changes:
        outputs += engine.run([e for e in stream if done < e[0] < when], when - 1)
        done = when - 1
        engine.change_background(add, remove)
        if restart:  # the changed background is part of the state
            state = round_trip((engine.snapshot()))
            engine = CSparqlEngine(checked, dictionary=engine.dictionary)
            engine.restore(state)
    outputs += engine.run([e for e in stream if e[0] > done], until)
    assert reported(engine, outputs) == expected


def test_a_removed_background_fact_that_a_window_holds_stays_while_it_does():
    checked = check_text(PREFIX + "query Q := register compute every 1 as select * "
                                  "from stream :s1 [range 3 step 1] where { ?x :p ?y } .")
    triple = (node(":a"), node(":p"), node(":b"))
    engine = CSparqlEngine(checked, [triple])
    outputs = list(engine.run([(1, {EX + "s1": [triple]})], 1))
    engine.change_background(remove=[triple])
    outputs += engine.run([(2, {EX + "s1": [(node(":c"), node(":p"), node(":d"))]})], 5)
    got = {t: rows["Q"] for t, rows in reported(engine, outputs).items()}
    ab, cd = (f"<{EX}a>", f"<{EX}b>"), (f"<{EX}c>", f"<{EX}d>")
    assert got == {1: [ab], 2: [ab, cd], 3: [ab, cd], 4: [cd]}  # :a :p :b left the window after 3


def test_a_name_stays_a_name_through_group_by_sample_and_bind():
    """A plain constant (``s1``) grouped by, sampled or bound to another variable prints as the
    name it is, as a selected variable does, not as the string of its value (``"s1"``)."""
    from dotr.pipeline.reasoner import Reasoner

    checked = check_text('''@prefix : <http://ex.org/> .
query G := register compute every 1 as select ?s (count(?v) as ?n) (sample(?s) as ?any)
    from stream :a [range 2 step 1] where { ?s :temp ?v } group by ?s .
query B := register compute every 1 as select ?t from stream :a [range 2 step 1] where { ?s :temp ?v bind(?s as ?t) } .''')
    out = [r.to_json() for r in Reasoner(checked).run([(0, ["<http://ex.org/temp>(s1,5)", "<http://ex.org/temp>(s1,6)"])])]
    assert out[0]["answers"] == {"B": [{"t": "s1"}, {"t": "s1"}], "G": [{"any": "s1", "n": "2", "s": "s1"}]}
