"""The stream query forms beside C-SPARQL's SELECT and CONSTRUCT: ASK, RSP-QL's registered
queries over named windows, FROM / FROM NAMED background files, SPARQL comments in the header;
the engine against recomputation (tests/ontology/csparql_reference.py) on generated streams."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.ontology.csparql import CSparqlEngine
from dotr.rules import check_text
from tests.ontology.csparql_reference import CSparqlReference
from tests.ontology.csparql_runs import run_engine
from tests.strategies.csparql import BACKGROUND, EX, PREFIX, RULES, node, streams

RSP_WHERE = [
    "{ WINDOW :w1 { ?x :p ?y } }",
    "{ WINDOW :w1 { ?x :p ?y } ?y a :D }",  # ?y a :D in the background
    "{ ?x :q ?y WINDOW :w1 { ?x a :D } }",
    "{ WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?y :p ?z } }",
    "{ WINDOW ?w { ?x :p ?y } }",
    "{ WINDOW :w2 { ?x :q ?y OPTIONAL { ?y :v ?z } } }",
    "{ WINDOW :w1 { ?x :r ?y } }",  # (:r: derived under a negation, RULES[4])
    "{ ?x :r ?y WINDOW :w1 { ?z :p ?w } }",
]


@st.composite
def rspql(draw, name: str) -> str:
    """An RSP-QL query over two windows :w1 and :w2 (with the same step)."""
    op = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    step = draw(st.integers(1, 3))
    wins = " ".join(f"FROM NAMED WINDOW :w{k} ON {draw(st.sampled_from([':s1', ':s2']))} "
                    f"[RANGE {draw(st.integers(step, 6))} STEP {step}]" for k in (1, 2))
    where = draw(st.sampled_from(RSP_WHERE))
    form = draw(st.integers(0, 3))
    if form == 0:
        return f"query {name} := REGISTER RSTREAM <{EX}out> AS ASK {wins} WHERE {where} ."
    if form == 1:
        return (f"query {name} := REGISTER {op} <{EX}out> AS SELECT ?x (COUNT(?y) AS ?n) {wins} WHERE {where} "
                "GROUP BY ?x .")
    return f"query {name} := REGISTER {op} <{EX}out> AS SELECT * {wins} WHERE {where} ."


@st.composite
def csparql_ask(draw, name: str) -> str:
    step = draw(st.integers(1, 3))
    return (f"query {name} := register as ask from stream {draw(st.sampled_from([':s1', ':s2']))} "
            f"[range {draw(st.integers(step, 6))} step {step}] where {{ ?x :p ?y . ?y :p ?z }} .")


_GENERATED = dict(rules=st.sampled_from(RULES),
                  background=st.lists(st.sampled_from(BACKGROUND), max_size=3, unique=True),
                  queries=st.tuples(rspql("R0"), st.one_of(rspql("R1"), csparql_ask("A1"))),
                  elements=streams, restart=st.one_of(st.none(), st.integers(0, 12)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**_GENERATED)
def test_rspql_and_ask_agree_with_recomputation(rules, background, queries, elements, restart):
    _agree(rules, background, queries, elements, restart)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**_GENERATED)
def test_rspql_and_ask_agree_with_recomputation_long(rules, background, queries, elements, restart):
    _agree(rules, background, queries, elements, restart)


def _agree(rules, background, queries, elements, restart):
    checked = check_text(PREFIX + rules + "\n" + "\n".join(queries))
    assert checked.ok, checked.diagnostics
    bg = [(node(s), node(p), node(o)) for s, o, p in background]
    by_time: dict = {}
    for t, stream, fact in sorted(elements, key=lambda e: e[0]):
        by_time.setdefault(t, {}).setdefault(stream, []).append(fact)
    elements = [(t, stream, f) for t, streams in by_time.items() for stream, facts in streams.items() for f in facts]
    expected = CSparqlReference(checked, bg, elements).reports(24)
    assert run_engine(CSparqlEngine(checked, bg), elements, 24, restart, checked) == expected


def _ask_rows(engine, outputs):
    return {o.t: o.answers for o in outputs if o.answers}


def test_ask_answers_true_or_false_at_each_evaluation():
    checked = check_text(PREFIX + """query Any := register compute every 1 as ask
        from stream :s [range 2 step 1] where { ?x :p ?y . ?y :p ?x } .""")
    p = lambda a, b: (node(":" + a), node(":p"), node(":" + b))
    stream = [(1, {None: [p("a", "b")]}), (2, {None: [p("b", "a")]}), (5, {None: [p("c", "d")]})]
    outs = CSparqlEngine(checked).run(stream)
    # the window (t - 2, t]: a p b at 1 and 2, b p a at 2 and 3; empty at 4, c p d at 5 and 6
    assert {o.t: o.answers["Any"] for o in outs if "Any" in o.answers} == {1: False, 2: True, 3: False, 5: False,
                                                                          6: False}


def test_ask_takes_no_stream_operator():
    checked = check_text(PREFIX + "query A := register as ask istream from stream :s [range 2 step 1] "
                         "where { ?x :p ?y } .", "a.dotr")
    assert [(d.code, d.message.split(":")[0]) for d in checked.diagnostics] == [
        ("E410", "an ASK query reports its answer at every evaluation")]


CITYBENCH_Q12 = """register query Q12 as
### ?obId1 is not selected, as selecting it would group by it, which changes the meaning.
### so the latency is not measured.

select (count(?obId1) as ?obCnt)
  from stream :traffic [range 3000ms step 1s]
where {
?p1   a :CongestionLevel.
{?obId1 a ?ob.
?obId1 :observedProperty ?p1.
?obId1 :hasValue ?v1.
?obId1 :observedBy ?service1.
}
Filter(?v1 >= -1)
}
group by ?service1
having (count(?obId1) > 1)"""


def test_comments_between_register_and_select_as_citybench_writes_them():
    """A query shaped as CityBench's Q12: '#' comment lines (with ' as ' and '. ') between the
    header and the query; a '. ' in a comment ended the statement."""
    checked = check_text(PREFIX + f"@timeunit ms .\nquery Q12 := {CITYBENCH_Q12} .\n", "q12.dotr")
    assert checked.ok, [str(d) for d in checked.diagnostics]
    ob = lambda n, v: [(node(f":o{n}"), node("rdf:type"), node(":Observation")),
                       (node(f":o{n}"), node(":observedProperty"), node(":level")),
                       (node(f":o{n}"), node(":hasValue"), node(str(v))),
                       (node(f":o{n}"), node(":observedBy"), node(":sensor"))]
    engine = CSparqlEngine(checked, [(node(":level"), node("rdf:type"), node(":CongestionLevel"))])
    outs = engine.run([(0, {EX + "traffic": ob(0, 1)}), (1000, {EX + "traffic": ob(1, 2)})], until=1000)
    assert [o.answers["Q12"] for o in outs] == [[], [{"obCnt": "2"}]]


def test_from_files_are_the_background_and_from_named_files_are_graphs(tmp_path):
    (tmp_path / "levels.ttl").write_text(f"@prefix : <{EX}> . :l1 a :Level . :l2 a :Level .")
    (tmp_path / "other.ttl").write_text(f"@prefix : <{EX}> . :l2 a :Level .")
    (tmp_path / "r.dotr").write_text(PREFIX + """
query Own := register as select ?o ?l from <other.ttl> from stream :s [range 2 step 1]
    where { ?o :level ?l . ?l a :Level } .
query Graphs := register as select ?o ?g from named <levels.ttl> from named <other.ttl>
    from stream :s [range 2 step 1] where { ?o :level ?l . graph ?g { ?l a :Level } } .
query All := register as select ?o ?l from stream :s [range 2 step 1] where { ?o :level ?l . ?l a :Level } .
""")
    from dotr.rules import check
    checked = check(tmp_path / "r.dotr")
    assert checked.ok, checked.diagnostics
    background = [(node(":l1"), node("rdf:type"), node(":Level"))]  # the reasoner's (--ontology)
    engine = CSparqlEngine(checked, background)
    level = lambda o, v: (node(":" + o), node(":level"), node(":" + v))
    out = engine.step(1, {None: [level("a", "l1"), level("b", "l2")]})
    short = lambda rows: sorted(tuple(v.rsplit("/", 1)[-1].strip("<>") for v in row.values()) for row in rows)
    assert short(out.answers["Own"]) == [("b", "l2")]  # other.ttl only: no l1, no --ontology
    assert short(out.answers["All"]) == [("a", "l1")]  # the reasoner's background
    assert short(out.answers["Graphs"]) == [("a", "levels.ttl"), ("b", "levels.ttl"), ("b", "other.ttl")]
    # the reasoner's background changes do not reach a query that names its own
    engine.change_background(add=[(node(":l2"), node("rdf:type"), node(":Level"))])
    out = engine.step(2, {})
    assert short(out.answers["All"]) == [("a", "l1"), ("b", "l2")] and short(out.answers["Own"]) == [("b", "l2")]


@pytest.mark.parametrize("iri, message", [
    ("http://127.0.0.1:9000/WebGlCity/RDF/SensorRepository.rdf", "dotr reads background files, never the network"),
    ("missing.ttl", "no background file"),
])
def test_a_from_file_that_cannot_be_read_is_an_error_at_its_position(tmp_path, iri, message):
    (tmp_path / "r.dotr").write_text(PREFIX + f"query Q := register as select ?s\n    from named <{iri}>\n"
                                     "    from stream :s [range 3 step 1] where { ?s a :Sensor } .\n")
    from dotr.rules import check
    checked = check(tmp_path / "r.dotr")
    assert [(d.code, d.span.line, d.span.column) for d in checked.diagnostics] == [("E412", 3, 16)]
    assert checked.diagnostics[0].message.startswith(message)


def test_rspql_durations_and_errors():
    ok = check_text(PREFIX + "@timeunit ms .\nquery R := REGISTER RSTREAM <http://ex.org/o> AS SELECT * "
                    "FROM NAMED WINDOW :w ON STREAM :s [RANGE PT1M STEP PT0.5S] WHERE { WINDOW :w { ?x :p ?y } } .")
    assert ok.ok, ok.diagnostics
    (w,) = ok.queries.require("csparql R", ok.program.queries[0].query, lambda: None).windows
    assert (w.name, w.stream, w.range, w.step) == (EX + "w", EX + "s", 60_000, 500)
    cases = {
        "ticks": ("FROM NAMED WINDOW :w ON :s [RANGE PT1S STEP PT1S] WHERE { WINDOW :w { ?x :p ?y } }", "E305"),
        "undeclared": ("FROM NAMED WINDOW :w ON :s [RANGE 2 STEP 1] WHERE { WINDOW :v { ?x :p ?y } }", "E410"),
        "twice": ("FROM NAMED WINDOW :w ON :s [RANGE 2 STEP 1] FROM NAMED WINDOW :w ON :s [RANGE 3 STEP 1] "
                  "WHERE { WINDOW :w { ?x :p ?y } }", "E410"),
        "no window": ("WHERE { ?x :p ?y }", "E410"),
        "months": ("FROM NAMED WINDOW :w ON :s [RANGE P1M STEP 1] WHERE { WINDOW :w { ?x :p ?y } }", "E411"),
    }
    for case, (body, code) in cases.items():
        unit = "" if case == "ticks" else "@timeunit ms .\n" if case == "months" else ""
        checked = check_text(PREFIX + unit + f"query R := REGISTER ISTREAM <{EX}o> AS SELECT * {body} .")
        assert [d.code for d in checked.diagnostics] == [code], case


def test_queries_with_one_answer_or_named_graphs_are_not_split_by_key():
    from dotr.pipeline.keys import csparql_keys

    for query, reason in [
        ("register as ask from stream :s [range 2 step 1] where { ?x :p ?y }", "asks"),
        (f"REGISTER RSTREAM <{EX}o> AS SELECT ?x FROM NAMED WINDOW :w ON :s [RANGE 2 STEP 1] "
         "WHERE { WINDOW :w { ?x :p ?y } }", "reads named graphs"),
    ]:
        keys, why = csparql_keys(check_text(PREFIX + f"query Q := {query} ."))
        assert keys is None and reason in why


def test_an_event_query_names_no_dataset():
    """An event's query reads the enriched knowledge of its time point: a FROM clause was
    accepted and ignored."""
    checked = check_text(PREFIX + "event E(?s) := select ?s from <city.ttl> where { ?s :p ?o } .")
    assert [d.code for d in checked.diagnostics] == ["E401"] and "FROM" in checked.diagnostics[0].message
