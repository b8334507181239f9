"""A temporal stage split by key (Reasoner.keep_group): the groups' merged outputs are one
reasoner's output, for the fire example and the DOTR-style workload with large time points."""

import random
import re

import pytest

from hypothesis import HealthCheck, given, settings, strategies as st

from dotr.examples.workloads.dotr_paper import EX, background, program
from dotr.pipeline.reasoner import Reasoner
from dotr.pipeline.keys import carried, make_partition, split_keys, split_reason
from dotr.pipeline.records import carry_facts, merge_records
from dotr.pipeline.cli import main
from dotr.rules import check_text
from dotr.temporal.keys import EventPartition, JointKeys
from tests.strategies.epsparql import trees
from tests.strategies.keyed import (BACKGROUND, PATTERNS, READS_GRAPHS, ROOMS, RULES, UNREAD, lars_programs,
                                    mixed_programs)


def _outputs(make, elements, groups: int) -> list[dict]:
    if groups == 1:
        return [r.to_json() for r in make().run(elements) if not r.is_empty()]
    reasoners = [make() for _ in range(groups)]
    for g, r in enumerate(reasoners):
        r.keep_group(make_partition(split_keys(r.checked), groups, r.dictionary), g)
    if carried(reasoners[0].checked):  # (each group evaluates its own time points)
        return carry_facts((g, result.to_json()) for g, r in enumerate(reasoners) for result in r.run(elements))[0]
    by_t: dict[int, list[dict]] = {}
    for r in reasoners:
        for result in r.run(elements):
            if not result.is_empty():
                by_t.setdefault(result.t, []).append(result.to_json())
    return [merge_records(records) for _, records in sorted(by_t.items())]


def _split_gives_one_reasoners_output(text: str, elements: list, groups: int) -> None:
    """``text`` split in ``groups`` key groups gives one reasoner's output on ``elements``; a
    program that is not split says why."""
    checked = check_text(text)
    assert checked.ok, (text, checked.diagnostics)
    if split_keys(checked) is None:
        assert split_reason(checked)
        return
    make = lambda: Reasoner(checked)  # noqa: E731
    assert _outputs(make, elements, groups) == _outputs(make, elements, 1), text


def _checked(tmp_path, capsys, files: dict[str, str]) -> str:
    """What ``dotr check`` prints for the rule files ``files`` (name -> text after the prefix)."""
    for name, text in files.items():
        (tmp_path / f"{name}.dotr").write_text("@prefix : <http://ex.org/> .\n" + text)
    assert main(["check", *(str(tmp_path / f"{name}.dotr") for name in files)]) == 0
    return capsys.readouterr().out

def _dotr_stream(points: int, per_point: int) -> list:
    rnd = random.Random(5)
    return [(t * 1000, [f"<{EX}{'read_valA' if rnd.random() < 0.2 else 'read_valB'}>"
                        f"(<{EX}sensor{rnd.randrange(500)}>,{rnd.randrange(100)})" for _ in range(per_point)])
            for t in range(points)]


@pytest.mark.parametrize("groups", [2, 3])
def test_the_fire_example_split_by_key_gives_one_reasoners_output(groups):
    make = lambda: Reasoner.from_files("examples/fire/rules.dotr", ["examples/fire/ontology.ttl"])  # noqa: E731
    elements = [(10, ["temp(r1,50)", "smoke(r1)"]), (11, ["temp(r2,60)", "temp(r1,40)"]),
                (12, ["smoke(r2)", "smoke(r1)", "temp(r3,70)"]), (20, ["smoke(r3)", "smoke(r2)"])]
    assert _outputs(make, elements, groups) == _outputs(make, elements, 1)


@pytest.mark.parametrize("groups", [2, 5])
def test_the_dotr_workload_split_by_room_gives_one_reasoners_output(groups):
    checked = check_text(program(rules=3))
    bg = background(200)
    make = lambda: Reasoner(checked, bg)  # noqa: E731
    assert split_keys(checked) == {"A": 1, "B": 1}  # (sensor, room, value): by room
    elements = _dotr_stream(40, 60)
    expected = _outputs(make, elements, 1)
    assert sum(len(r.get("graphs", ())) for r in expected) > 100
    assert _outputs(make, elements, groups) == expected


def test_events_alike_but_for_their_thresholds_split_by_their_own_keys():
    """Each pattern with its own threshold, the loosest events read by no pattern (so that the
    split leaves their rows out): each key group reads every type's own rows."""
    text = re.sub(r"pattern P0\n.*?A0\.room \.", "", program(rules=4, own_events=True, distinct_filters=True), flags=re.S)
    checked = check_text(text)
    bg = background(200)
    make = lambda: Reasoner(checked, bg)  # noqa: E731
    assert make().patterns.reads["A1"] == "A0" and "A0" not in split_keys(checked)
    elements = _dotr_stream(40, 60)
    expected = _outputs(make, elements, 1)
    assert sum(len(r.get("graphs", ())) for r in expected) > 100
    assert _outputs(make, elements, 2) == expected


@pytest.mark.parametrize("unread", ["", UNREAD])
def test_event_types_declared_alike_split_by_their_own_keys(unread):
    """RoomSmoke (keyed by room) and SensorSmoke (by sensor) are declared alike, sensors in two
    rooms: each group reads each type's rows split by its own key, not the first type's rows
    (which, split by room, put a sensor's events in two groups; unread by any pattern, had no
    key and left every group without them)."""
    text = BACKGROUND + ROOMS + unread + PATTERNS[1].format(w=3) + "\n" + PATTERNS[4].format(w=3) + "\n"
    checked = check_text(text)
    assert split_keys(checked) == {"RoomHeat": 0, "RoomSmoke": 0, "SensorSmoke": 1}
    make = lambda: Reasoner(checked)  # noqa: E731
    elements = [(0, ["smoke(s1)", "smoke(s3)", "temp(s2, 5)"]), (1, ["smoke(s2)", "smoke(s1)", "smoke(s3)"]),
                (2, ["smoke(s1)", "smoke(s4)", "temp(s4, 3)"]), (3, ["smoke(s4)", "smoke(s2)"])]
    expected = _outputs(make, elements, 1)
    assert sum(g.count("again") for r in expected for g in r["graphs"]) == 8
    for groups in (2, 3):
        assert _outputs(make, elements, groups) == expected


def test_a_program_that_cannot_be_split_is_refused():
    r = Reasoner.from_files("examples/cooling/rules.dotr", ["examples/cooling/ontology.ttl"])
    assert split_keys(r.checked) is None
    with pytest.raises(ValueError, match="cannot be split"):
        r.keep_group(EventPartition({}, 2, r.dictionary), 0)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(lars_programs(), st.sampled_from([2, 3]), st.sampled_from(["ticks", "ms"]))
def test_generated_lars_programs_split_by_key_give_one_reasoners_output(case, groups, unit):
    """In ms, each group evaluates the time points where its own keys' facts change: the facts
    it printed last are carried to the others' time points (carry_facts)."""
    text, elements = case
    _split_gives_one_reasoners_output(f"@timeunit {unit} .\n" + text, elements, groups)


def test_check_says_how_the_temporal_stage_splits(tmp_path, capsys):
    (tmp_path / "a.dotr").write_text(BACKGROUND + RULES[0].format(w=3, c=30) + "\n" + RULES[2] + "\n")
    (tmp_path / "b.dotr").write_text("near(A, B) :- [3] <> at(A, L), [3] <> at(B, L) .\n")
    assert main(["check", str(tmp_path / "a.dotr"), str(tmp_path / "b.dotr")]) == 0
    out = capsys.readouterr().out
    assert "  split by key: alarm/1 at 1, hot/1 at 1, ok/1 at 1, temp/2 at 1" in out
    assert ("  split by key: no (near(A, B) :- ...: no variable is at one argument of every atom and of "
            "the head)") in out


def test_a_tuple_window_keeps_a_program_on_one_key():
    """``[2 #] <> hot(X)`` holds the last two stream atoms of any predicate: a group given only
    its keys' ``cold`` facts would count other atoms (it once derived h0(a) from hot(a), which
    cold(a) had pushed out of the window). Found by the Spark steps' generated test."""
    text = "h0(X) :- [2 #] <> hot(X) .\nh1(X) :- cold(X), [2] <> cold(X) ."
    checked = check_text(text)
    assert split_keys(checked) is None
    assert "a tuple window counts the stream atoms of every predicate" in split_reason(checked)
    r = Reasoner(checked)
    [out] = [x.facts for x in r.run([(0, ["hot(a)", "cold(a)", "hot(b)"])])]
    assert out == ["h0(b)", "h1(a)"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(mixed_programs(), st.sampled_from([2, 3]), st.sampled_from(["ticks", "ms"]))
def test_generated_lars_rules_with_patterns_split_by_key_give_one_reasoners_output(case, groups, unit):
    """The rules' facts split by their key (sensor), the patterns' events by theirs (sensor or
    room); a program whose rules read a pattern's graph is not split."""
    text, elements = case
    _split_gives_one_reasoners_output(f"@timeunit {unit} .\n" + text, elements, groups)


def test_lars_rules_and_patterns_split_by_their_own_keys(tmp_path, capsys):
    text = BACKGROUND + RULES[0].format(w=3, c=30) + "\n" + PATTERNS[1].format(w=3) + "\n"
    keys = split_keys(check_text(text))
    assert isinstance(keys, JointKeys) and keys.events == {"RoomHeat": 0, "RoomSmoke": 0}
    (tmp_path / "a.dotr").write_text(text)
    (tmp_path / "b.dotr").write_text(text + PATTERNS[2].format(w=2) + "\n" + READS_GRAPHS.format(w=2, c="Cleared") + "\n")
    assert main(["check", str(tmp_path / "a.dotr"), str(tmp_path / "b.dotr")]) == 0
    out = capsys.readouterr().out
    assert "  split by key: hot/1 at 1, temp/2 at 1; events RoomHeat at 1, RoomSmoke at 1" in out
    assert "  split by key: no (the LARS rules read or derive what a pattern's graph constructs)" in out


def test_a_rule_reading_a_pattern_graph_keeps_the_program_on_one_key():
    """Warned graphs come from a pattern keyed by room and name a sensor, which the rules key:
    split, a group would build a graph whose sensor another group reports (checked by hand: with
    the check removed, 2, 3 and 4 groups each lose watch(s2))."""
    text = (BACKGROUND + RULES[0].format(w=3, c=10) + "\n" + PATTERNS[3].format(w=3) + "\n"
            + READS_GRAPHS.format(w=2, c="Warned") + "\n")
    checked = check_text(text)
    assert split_keys(checked) is None
    assert split_reason(checked) == "the LARS rules read or derive what a pattern's graph constructs"
    elements = [(0, ["smoke(s1)", "smoke(s3)"]), (1, ["smoke(s2)", "temp(s1, 20)", "smoke(s3)"]), (2, ["smoke(s1)"])]
    assert "watch(s2)" in _outputs(lambda: Reasoner(checked), elements, 1)[1]["facts"]


# ------------------------------------------------------------------ EP-SPARQL queries split by key
#: groups over companies (?x), one of them reading the background (:r), one binding another
#: variable (?y) only, and sequence operators of every kind (the reference test's)

EP_GROUPS = ("{ ?x :p ?v }", "{ ?x :q ?w }", "{ ?x :p ?v . ?x :q ?w }", "{ ?x :q ?w OPTIONAL { ?x :r ?y } }",
             "{ ?x :p 1 }", "{ ?x :r ?y }", "{ ?y :p ?v }")


@st.composite
def ep_programs(draw):
    """EP-SPARQL queries (select *, or a projection with or without ?x, distinct or not: a
    distinct one without the key is not split) over
    a background of :r facts and a stream of :p and :q readings of five companies."""
    queries = []
    for i in range(draw(st.integers(1, 3))):
        head = draw(st.sampled_from(["select *", "select ?x ?v", "select distinct ?x ?w", "select ?v ?w",
                                     "select distinct ?v"]))
        top = draw(st.sampled_from(["", "filter(getDURATION() >= 1)", "filter(?v > 0 || ?w > 0)"]))
        queries.append(f"query Q{i} := {head} where {draw(trees(groups=EP_GROUPS))} {top} within {draw(st.integers(1, 8))} .")
    companies = "abcde"
    background = " ".join(f":r({c}, n{draw(st.integers(0, 2))}) ." for c in companies if draw(st.booleans()))
    fact = st.builds(lambda c, p, v: f"<http://ex.org/{p}>({c},{v})", st.sampled_from(companies), st.sampled_from("pq"),
                     st.integers(0, 2))
    times = sorted(draw(st.sets(st.integers(0, 20), min_size=2, max_size=12)))
    text = "@prefix : <http://ex.org/> .\n" + background + "\n" + "\n".join(queries) + "\n"
    return text, [(t, draw(st.lists(fact, min_size=1, max_size=8))) for t in times]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(ep_programs(), st.sampled_from([2, 3]))
def test_generated_epsparql_queries_split_by_key_give_one_reasoners_output(case, groups):
    """The groups' solutions routed by the key variable's term; a query whose groups do not all
    bind one selected variable keeps the program on one key."""
    text, elements = case
    _split_gives_one_reasoners_output(text, elements, groups)


def test_check_says_how_queries_split_or_why_not(tmp_path, capsys):
    up = "query Up := select ?x ?v ?w where { ?x :p ?v } seq { ?x :q ?w } within 5 .\n"
    files = {"a": up, "b": up + "query Any := select ?v where { ?x :p ?v } seq { ?y :q ?w } within 5 .\n",
             "c": up + "query Mark := construct { ?x a :Seen } where { ?x :p ?v } seq { ?x :q ?w } within 5 .\n",
             "d": up + "hot(X) :- <http://ex.org/p>(X, V), V > 1 .\n@T late(X) :- [3] @T hot(X) .\n"}
    out = _checked(tmp_path, capsys, files)
    assert "  split by key: queries Up by ?x\n" in out
    assert "  split by key: no (query Any: no variable is bound by every group)" in out
    assert "  split by key: no (query Mark constructs triples (they re-enter the ontological stage))" in out
    # (the LARS rules' groups evaluate different time points, and a query answers at each)
    assert "  split by key: no (EP-SPARQL queries with LARS rules: the key groups evaluate different time points" in out


# ------------------------------------------------------------------ C-SPARQL queries split by key
#: Datalog rules of the ontological stage (the windows' entailments): keyed by the sensor, a
#: negation within it, a background join, and (in one program of eight) one that joins two
#: sensors (no key)
CS_RULES = [":hot(?s) :- :temp(?s, ?v), ?v > 1 .", ":warm(?s, ?r) :- :temp(?s, ?v), :located(?s, ?r) .",
            ":quiet(?s) :- :located(?s, ?r), not :hot(?s) .", ":near(?a, ?b) :- :located(?a, ?r), :located(?b, ?r) ."]
#: (select, where): keyed by ?s, a solution of the background alone, OPTIONAL with !bound,
#: aggregates with and without the key, a pattern joining two sensors, a FILTER, a subquery
#: whose ?s is not the outer ?s
CS_QUERIES = [("select ?s ?v", "{ ?s :temp ?v }"), ("select ?s", "{ ?s a :hot }"),
              ("select ?s ?r", "{ ?s :temp ?v . ?s :located ?r }"), ("select ?s ?r", "{ ?s :warm ?r }"),
              ("select ?s ?r", "{ ?s :located ?r }"), ("select ?s", "{ ?s a :quiet }"),
              ("select ?s ?v", "{ ?s :temp ?v OPTIONAL { ?s :ok ?o } FILTER(!bound(?o)) }"),
              ("select ?s (count(?v) as ?n)", "{ ?s :temp ?v } group by ?s"),
              ("select (count(?v) as ?n)", "{ ?s :temp ?v }"), ("select distinct ?v", "{ ?s :temp ?v }"),
              ("select ?s ?t", "{ ?s :temp ?v . ?t :temp ?v }"), ("select ?s ?v", "{ ?s :temp ?v FILTER(?v >= 2) }"),
              ("select ?s ?m", "{ ?s :temp ?v . { select (max(?v) as ?m) where { ?s :temp ?v } } }")]
CS_STREAMS = ["http://ex.org/readings", "http://ex.org/other", None]


@st.composite
def csparql_programs(draw):
    """C-SPARQL queries (time windows over two named streams and the default one, every
    stream operator) with Datalog rules over a background of sensors' rooms, and a stream of
    :temp and :ok readings of five sensors."""
    queries = []
    for i in range(draw(st.integers(1, 3))):
        select, where = draw(st.sampled_from(CS_QUERIES))
        op = draw(st.sampled_from(["", "istream ", "dstream "]))
        step = draw(st.integers(1, 3))
        stream = draw(st.sampled_from(CS_STREAMS[:2]))
        queries.append(f"query Q{i} := register compute every {step} as select {op}{select[7:]} from stream <{stream}> "
                       f"[range {draw(st.integers(step, 6))} step {step}] where {where} .")
    background = " ".join(f":located(s{k}, r{draw(st.integers(1, 2))}) ." for k in range(1, 6) if draw(st.booleans()))
    background += " :temp(s1, 3) ." * draw(st.booleans())
    rules = draw(st.lists(st.sampled_from(CS_RULES[:3]), max_size=3, unique=True)) + CS_RULES[3:] * (draw(st.integers(0, 7)) == 0)
    fact = st.builds(lambda p, s, v: f"<http://ex.org/{p}>(s{s},{v})", st.sampled_from(["temp", "temp", "ok"]),
                     st.integers(1, 5), st.integers(0, 3))
    times = sorted(draw(st.sets(st.integers(0, 20), min_size=1, max_size=10)))
    text = "@prefix : <http://ex.org/> .\n" + background + "\n" + "\n".join(rules + queries) + "\n"
    return text, [(t, draw(st.lists(fact, max_size=4)), draw(st.sampled_from(CS_STREAMS))) for t in times]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(csparql_programs(), st.sampled_from([2, 3]), st.sampled_from(["ticks", "ms"]))
def test_generated_csparql_queries_split_by_key_give_one_reasoners_output(case, groups, unit):
    """Each group's windows hold its keys' stream facts and the whole background; a stream with
    facts at t is non-empty in every group, so that every group evaluates and reports (an
    answer [] too) when one reasoner does; each reports the solutions of its keys."""
    text, elements = case
    _split_gives_one_reasoners_output(f"@timeunit {unit} .\n" + text, elements, groups)


def test_check_says_how_csparql_queries_split_or_why_not(tmp_path, capsys):
    hot = ("query Hot := register compute every 2 as select ?s (count(?v) as ?n) from stream :a [range 4 step 2] "
           "where { ?s :temp ?v } group by ?s .\n")
    files = {"a": hot,
             "b": hot + "query All := register compute every 2 as select (count(?v) as ?n) from stream :a "
                        "[range 4 step 2] where { ?s :temp ?v } .\n",
             "c": hot + "@profile rdfs .\n",
             "d": hot + "query Last := register compute every 2 as select ?s from stream :a [triples 5] where { ?s :temp ?v } .\n",
             "e": hot + "query Up := select ?s where { ?s :temp ?v } seq { ?s :temp ?w } within 5 .\n",
             "f": hot + "query Top := register compute every 2 as select ?s ?m from stream :a [range 4 step 2] "
                        "where { ?s :temp ?v . { select (max(?v) as ?m) where { ?s :temp ?v } } } .\n",
             "g": "query Path := register compute every 2 as select ?a ?c from stream :a [range 4 step 2] "
                  "where { ?a :link ?b . ?b :link ?c } .\n"}
    out = _checked(tmp_path, capsys, files)
    assert "  split by key: queries Hot by ?s; <http://ex.org/temp>/2 at 1\n" in out
    assert "  split by key: no (query All: no selected variable is bound in every solution" in out
    assert "  split by key: no (@profile rdfs: its rules read every predicate (a range axiom types the object))" in out
    assert "  split by key: no (query Last: a count window holds the last triples of every key)" in out
    assert "  split by key: queries Up by ?s; queries Hot by ?s; <http://ex.org/temp>/2 at 1\n" in out
    assert "  split by key: no (query Top: a subquery (its variables are not the outer query's))" in out
    assert ("  split by key: no (query Path: no variable is at one argument of every triple pattern and of the "
            "result)") in out


# ------------------------------------------------------------ engines of several kinds together
@st.composite
def programs_of_several_kinds(draw):
    """Two or more of: LARS rules (with patterns beside them, or not), EP-SPARQL queries,
    C-SPARQL queries with their Datalog rules, each over its own predicates of one stream."""
    kinds = draw(st.lists(st.sampled_from(["lars", "patterns", "ep", "csparql"]), min_size=2, max_size=4, unique=True))
    texts, elements = ["@prefix : <http://ex.org/> .\n"], []
    for kind in kinds:
        strategy = {"lars": lars_programs(), "patterns": mixed_programs(), "ep": ep_programs(), "csparql": csparql_programs()}
        text, part = draw(strategy[kind])
        if kind == "csparql":  # (the EP-SPARQL queries are Q0, Q1, ...)
            text = text.replace("query Q", "query C")
        texts.append(text.replace("@prefix : <http://ex.org/> .\n", "").replace(BACKGROUND, "") if kind != "lars"
                     else text)
        elements += part
    if "patterns" in kinds and "lars" not in kinds:
        texts.insert(1, BACKGROUND)
    return "".join(texts), sorted(elements, key=lambda element: element[0])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs_of_several_kinds(), st.sampled_from([2, 3]), st.sampled_from(["ticks", "ms"]))
def test_generated_programs_of_several_kinds_split_by_each_engines_keys_give_one_reasoners_output(case, groups, unit):
    """Each engine's part of a time point routed by its own keys (JointKeys) into the same
    groups: the engines do not meet, so each group's output is one reasoner's for its keys."""
    text, elements = case
    _split_gives_one_reasoners_output(f"@timeunit {unit} .\n" + text, elements, groups)
