"""The stages composed, through ``dotr run``: generated whole programs (background facts in the
rule file and in Turtle, Datalog rules, the RDFS profile, windowed and whole-stream LARS rules
with negation, tuple windows, ``@`` heads and recursion through every operator, events, patterns
whose graphs feed other patterns and rules) agree with the literal composition of the stage
references (``composition_reference``); and one test per defect the composition once had."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from unittest import mock

import pytest
import rdflib
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from dotr.pipeline.cli import main
from dotr.pipeline.reasoner import Reasoner
from dotr.rules import check
from tests.pipeline.composition_reference import CompositionReference, atom_of, reference_output, triple_atom
from tests.pipeline.runs import facts_by_time, run_text
from tests.strategies.composition import PREFIXES, programs, streams, streams_with_changes
from dotr.pipeline.input_facts import parse_fact
from dotr.ontology.turtle import in_order


def dotr_run(tmp: Path, rules: str, turtle: str, records, *options: str) -> tuple[int, list[dict]]:
    (tmp / "rules.dotr").write_text(rules)
    (tmp / "bg.ttl").write_text(turtle)
    with open(tmp / "stream.jsonl", "w") as f:
        for t, facts, payload, *change in records:
            record = {"t": t, "facts": facts}
            if payload:
                record["turtle"] = payload
            if change and change[0]:
                record["background"] = change[0]
            f.write(json.dumps(record) + "\n")
    out = tmp / "out.jsonl"
    code = main(["run", "-q", "--rules", str(tmp / "rules.dotr"), "--ontology", str(tmp / "bg.ttl"),
                 "--input", str(tmp / "stream.jsonl"), "--output", str(out), "--full-iris", *options])
    return code, [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


COVERAGE: Counter = Counter()


def _agree(tmp: Path, program, records, include_background: bool, changes: bool = False) -> None:
    rules, turtle, features = program
    (tmp / "rules.dotr").write_text(rules)
    checked = check(tmp / "rules.dotr")
    assume(checked.ok)  # (a generated negation can close a cycle: not a program)
    options = ["--include-background"] if include_background else []
    code, actual = dotr_run(tmp, rules, turtle, records, *options)
    assert code == 0
    expected = reference_output(tmp / "rules.dotr", turtle, records, include_background)
    assert actual == expected, (rules, turtle, records)
    COVERAGE.update(features)
    if changes:
        _changes_agree(tmp, rules, turtle, records, options, actual)


def _changes_agree(tmp: Path, rules: str, turtle: str, records, options: list[str], full: list[dict]) -> None:
    """``--changes`` (what came and went, kept from the engines' changes) adds up to the facts
    printed in full at every time point."""
    code, changed = dotr_run(tmp, rules, turtle, records, "--changes", *options)
    assert code == 0
    printed = {record["t"]: record["facts"] for record in full}
    held: set = set()
    for record in changed:
        assert not held & set(record["facts"]) and set(record["removed"]) <= held, record
        held = (held - set(record["removed"])) | set(record["facts"])
        assert sorted(held) == printed.get(record["t"], []), (record["t"], rules, records)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), streams_with_changes(), st.booleans())
def test_background_changes_in_the_stream_agree_with_recomputing_from_scratch(tmp_path_factory, program, records,
                                                                            include_background):
    """Each change takes effect at its record's time point: dotr run (DRed on the
    materialisation, events and patterns over it) against the reference recomputing the
    background's closure from scratch; --changes adds up to the same. The terms nothing refers
    to are forgotten as soon as the stream's new terms outnumber those held
    (``Reasoner.reclaim_terms``)."""
    with mock.patch.object(Reasoner, "reclaim_every", 0):
        _agree(tmp_path_factory.mktemp("case"), program, records, include_background, changes=True)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), streams(), st.booleans())
def test_dotr_run_agrees_with_the_composed_references(tmp_path_factory, program, records, include_background):
    _agree(tmp_path_factory.mktemp("case"), program, records, include_background)


def ms_mode_agrees(tmp: Path, program, records, include_background: bool) -> None:
    """With ``@timeunit ms``, ``dotr run`` evaluates the records' time points and between them
    only those where the output can change: at those, it prints the reference's record; at every
    millisecond it skips, the reference holds the facts of the last one printed, and nothing
    else (no graph, no placement), or, in a program without temporal rules, nothing at all (the
    ontological stage's conclusions hold at their record's time point: their end is not
    printed, docs/language.md). Without patterns: an event whose solution is the background's
    alone happens only at the time points evaluated (docs/language.md), where the reference,
    stepped at every millisecond, has one at each."""
    rules, turtle, features = program
    assume("pattern" not in rules)
    rules = rules.replace(PREFIXES, PREFIXES + "@timeunit ms .\n", 1)
    (tmp / "rules.dotr").write_text(rules)
    checked = check(tmp / "rules.dotr")
    assume(checked.ok)
    options = ["--all-time-points"] + (["--include-background"] if include_background else [])
    code, actual = dotr_run(tmp, rules, turtle, records, *options)
    assert code == 0
    printed = {r["t"]: r for r in actual}
    by_time: dict[int, list] = {}
    for t, facts, payload in records:
        atoms = by_time.setdefault(t, [])
        atoms += [atom_of(parse_fact(f)) for f in facts]
        if payload:
            atoms += [triple_atom(*tr) for tr in in_order(list(rdflib.Graph().parse(data=payload, format="turtle")))]
    reference = CompositionReference(checked, [triple_atom(*tr) for tr in rdflib.Graph().parse(data=turtle, format="turtle")],
                                     include_background)
    first, last = min(by_time), max(by_time)
    held: dict | None = None
    for u in range(first, last + 1):
        expected = reference.step(u, by_time.get(u, [])) or {"t": u, "facts": []}
        if u in printed:
            assert printed[u] == expected, (u, rules, turtle, records)
            held = printed[u]
        else:
            assert held is not None and (expected == {"t": u, "facts": held["facts"]} or not checked.analysis.temporal
                                         and expected == {"t": u, "facts": []}), (u, rules, turtle, records)
    COVERAGE.update(features)


@st.composite
def sparse_streams(draw):
    """Records with gaps of up to 7 ms between them (the windows are 1-3 wide: time points go
    unevaluated)."""
    records = draw(streams())
    t, out = 0, []
    for _, facts, payload in records:
        t += draw(st.sampled_from([0, 1, 2, 4, 7]))
        out.append((t, facts, payload))
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), sparse_streams(), st.booleans())
def test_ms_mode_prints_the_references_records_where_it_evaluates_and_skips_only_where_nothing_changes(
        tmp_path_factory, program, records, include_background):
    ms_mode_agrees(tmp_path_factory.mktemp("case"), program, records, include_background)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), streams(), st.booleans())
def test_dotr_run_agrees_with_the_composed_references_at_length(tmp_path_factory, program, records, include_background):
    _agree(tmp_path_factory.mktemp("case"), program, records, include_background)


# ---------------------------------------------------------------------------------------------
# The defects the composition had, each through ``dotr run``


def test_temporal_rules_see_the_background(tmp_path):
    rules = """sensor(s1) .
    alert(S) :- [5] [] hot(S), sensor(S) .
    odd(S) :- [5] <> hot(S), not sensor(S) .
    dev(X) :- [2] <> ping(X), :Device(X) .
    """
    out = run_text(tmp_path, rules, [{"t": 0, "facts": ["hot(s1)", "hot(s2)", "ping(<http://ex.org/d1>)"]},
                                     {"t": 1, "facts": ["hot(s1)"]}], PREFIXES + ":d1 a :Device .")
    assert facts_by_time(out) == {t: ["alert(s1)", "dev(<http://ex.org/d1>)", "odd(s2)"] for t in (0, 1)}


def test_whole_stream_operators_print_their_conclusions(tmp_path):
    rules = "ever(X) :- <> visit(X) .\nseen_at(X, T) :- @T visit(X) .\nalways(X) :- [] visit(X) ."
    out = run_text(tmp_path, rules, [{"t": 0, "facts": ["visit(a)"]}, {"t": 2, "facts": ["visit(b)"]}])
    assert facts_by_time(out) == {0: ["always(a)", "ever(a)", "seen_at(a,0)"],
                                  1: ["ever(a)", "seen_at(a,0)"],
                                  2: ["ever(a)", "ever(b)", "seen_at(a,0)", "seen_at(b,2)"]}


def test_background_consequences_wait_for_include_background(tmp_path):
    rules = "@profile rdfs .\nsensor(s1) .\nwatched(S) :- [3] [] sensor(S) .\nseen(X) :- [2] <> hot(X) ."
    turtle = PREFIXES + ":d1 a :Device . :Device rdfs:subClassOf :Thing ."
    records = [{"t": 0, "facts": ["hot(a)"]}]
    assert facts_by_time(run_text(tmp_path, rules, records, turtle)) == {0: ["seen(a)"]}
    with_background = facts_by_time(run_text(tmp_path, rules, records, turtle, "--include-background"))[0]
    assert "watched(s1)" in with_background and "seen(a)" in with_background
    assert "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>(<http://ex.org/d1>,<http://ex.org/Thing>)" \
        in with_background  # what the profile derives from the background alone
    assert "sensor(s1)" not in with_background  # the background given is no conclusion


FEEDBACK = """:Suspect(?p) :- :follows(?p, ?q) .
event Visit(?p) := select ?p where { ?p :visits ?x } .
event Follow(?p) := select ?p where { ?p :follows ?q } .
event Sus(?p) := select ?p where { ?p a :Suspect } .
pattern P1 from Visit construct { ?p :follows :x } with ?p = Visit.p .
pattern P2 from Follow construct { ?p :tracked :yes } with ?p = Follow.p .
pattern P3 from Sus construct { ?p :flag :red } with ?p = Sus.p .
pattern P4 from Visit and each Follow within 5 from Visit construct { ?p :again :yes } with ?p = Follow.p .
"""


def test_fed_back_graphs_make_each_match_once_and_events_see_rules_over_them(tmp_path):
    visit = {"turtle": "@prefix : <http://ex.org/> . :a :visits :m ."}
    out = run_text(tmp_path, FEEDBACK, [{"t": 0, **visit}, {"t": 1, **visit}])
    graph = lambda p, o: f"<http://ex.org/a> <http://ex.org/{p}> <http://ex.org/{o}> .\n"  # noqa: E731
    # P2 fires on P1's graph, P3 on what a Datalog rule derives from it: once each
    assert out[0]["graphs"] == [graph("flag", "red"), graph("follows", "x"), graph("tracked", "yes")]
    # the Follow event of 0 entered the buffer once: one match for `each`
    assert out[1]["graphs"] == [graph("again", "yes"), graph("flag", "red"), graph("follows", "x"),
                                graph("tracked", "yes")]
    assert out[0]["facts"] == ["<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>(<http://ex.org/a>,<http://ex.org/Suspect>)"]


def test_recursion_through_windows_is_evaluated(tmp_path):
    rules = """p(X) :- [3] [] p(X), q(X) .
    p(X) :- r(X) .
    s(X) :- [2] @T p(X), T > 0 .
    p(X) :- s(X), q(X) .
    sustained(X) :- [3] <> sustained(X) .
    sustained(X) :- start(X) .
    """
    q = ["q(a)", "q(b)"]
    out = run_text(tmp_path, rules, [{"t": 0, "facts": ["r(a)", "start(c)", *q]}, {"t": 1, "facts": ["r(b)", *q]},
                                     {"t": 2, "facts": q}, {"t": 3, "facts": ["q(a)"]}])
    assert facts_by_time(out) == {0: ["p(a)", "sustained(c)"], 1: ["p(b)", "s(b)", "sustained(c)"],
                                  2: ["p(b)", "s(b)", "sustained(c)"], 3: ["s(b)", "sustained(c)"]}


def test_negation_through_recursion_is_a_positioned_error(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text("p(X) :- q(X), not [3] <> p(X) .\n")
    (tmp_path / "s.jsonl").write_text('{"t": 0, "facts": ["q(a)"]}\n')
    assert main(["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "r.dotr:1:" in err and "error[E201]" in err and "Traceback" not in err


def test_a_conclusion_placed_ahead_is_reported_once(tmp_path):
    out = run_text(tmp_path, "@U later(X) :- [3] @T p(X), U = T + 2 .", [{"t": 0, "facts": ["p(a)"]}, {"t": 4, "facts": []}])
    assert out == [{"t": 0, "facts": [], "at": {"2": ["later(a)"]}}]


def test_trig_refuses_atoms_that_are_not_triples(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text(PREFIXES + "alarm(X) :- hot(X) .\n:Hot(?x) :- hot(?x) .\n")
    (tmp_path / "s.jsonl").write_text('{"t": 0, "facts": ["hot(<http://ex.org/a>)"]}\n')
    args = ["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"), "--format", "trig"]
    assert main(args) == 2
    assert "alarm/1" in capsys.readouterr().err
    (tmp_path / "r.dotr").write_text(PREFIXES + "@output :Hot .\nalarm(X) :- hot(X) .\n:Hot(?x) :- hot(?x) .\n")
    assert main([*args, "-q", "--output", str(tmp_path / "out.trig")]) == 0
    dataset = rdflib.Dataset()
    dataset.parse(data=(tmp_path / "out.trig").read_text(), format="trig")
    assert {o for _, _, o, _ in dataset.quads()} == {rdflib.URIRef("http://ex.org/Hot")}


@pytest.mark.parametrize("fmt", ["trig", "nquads"])
def test_rdf_formats_refuse_queries_that_answer(tmp_path, capsys, fmt):
    """A SELECT or ASK query's answers have no place in TriG or N-Quads: refused before the run
    (they were dropped without a word); a CONSTRUCT query's graph is written."""
    window = "from stream :st [range 2 step 1] where { ?s :p ?o }"
    (tmp_path / "s.jsonl").write_text('{"t": 0, "facts": [":p(:a, :b)"]}\n')
    args = ["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"), "--format", fmt,
            "--output", str(tmp_path / "out"), "-q"]
    for form in ("select ?s", "ask"):
        (tmp_path / "r.dotr").write_text(PREFIXES + f"query Q := register compute every 1 as {form} {window} .\n")
        assert main(args) == 2
        assert "these queries answer with solutions or a boolean: Q" in capsys.readouterr().err
    # EP-SPARQL's SELECT too (its answers were still dropped)
    (tmp_path / "r.dotr").write_text(PREFIXES + "query E := select ?s where { ?s :p ?o } seq { ?s :p ?o } .\n")
    assert main(args) == 2
    assert "these queries answer with solutions or a boolean: E" in capsys.readouterr().err
    (tmp_path / "r.dotr").write_text(PREFIXES + f"query Q := register compute every 1 as construct {{ ?s :q ?o }} {window} .\n")
    assert main(args) == 0
    dataset = rdflib.Dataset()
    dataset.parse(data=(tmp_path / "out").read_text(), format=fmt)
    assert {p for _, p, _, _ in dataset.quads()} == {rdflib.URIRef("http://ex.org/q")}


def test_csparql_answers_an_empty_list_for_a_window_without_solutions(tmp_path):
    rules = """query Q := register compute every 1 as select ?s from stream <http://ex.org/s1> [range 2 step 1]
        where { ?s :hot true } .\n"""
    records = [{"t": 0, "stream": "<http://ex.org/s1>", "turtle": "@prefix : <http://ex.org/> . :a :cold true ."},
               {"t": 1, "stream": "http://ex.org/s1", "turtle": "@prefix : <http://ex.org/> . :b :hot true ."}]
    out = run_text(tmp_path, rules, records)
    # the stream named in angle brackets, as the rule file writes it, is the same stream
    assert [r.get("answers") for r in out[:2]] == [{"Q": []}, {"Q": [{"s": "<http://ex.org/b>"}]}]


def test_the_timeline_starts_at_the_first_record(tmp_path):
    out = run_text(tmp_path, "steady(X) :- [] temp(X) .\nsteady3(X) :- [3] [] temp(X) .",
                   [{"t": 5, "facts": ["temp(a)"]}, {"t": 6, "facts": ["temp(a)"]}, {"t": 7, "facts": []}])
    assert facts_by_time(out) == {5: ["steady(a)", "steady3(a)"], 6: ["steady(a)", "steady3(a)"]}


def test_within_excludes_an_event_exactly_that_far_back_as_t_rex(tmp_path):
    rules = """event A(?x) := a(?x) .\nevent B(?x) := b(?x) .
    pattern P from B and each A within 3 from B construct { :m :saw ?x } with ?x = A.x ."""
    out = run_text(tmp_path, rules, [{"t": 0, "facts": ["a(<http://ex.org/early>)"]},
                                     {"t": 1, "facts": ["a(<http://ex.org/late>)"]}, {"t": 3, "facts": ["b(x)"]}])
    assert out == [{"t": 3, "facts": [], "graphs": ["<http://ex.org/m> <http://ex.org/saw> <http://ex.org/late> .\n"]}]


def test_the_time_point_after_a_record_is_evaluated_where_something_printed_can_change(tmp_path):
    """ms mode: after a record's facts expire, a time point is evaluated only when something
    printed can change there: here an event with a solution over the background alone (each
    evaluated time point gives it to the pattern), or a rule under a negation."""
    records = [{"t": 1000, "facts": [":ping(:s1)"]}, {"t": 3000, "facts": [":ping(:s1)"]}]
    quiet = "@timeunit ms .\nevent Ping(?s) := :ping(?s) .\npattern P from Ping construct { ?s :seen :yes } with ?s = Ping.s ."
    assert [r["t"] for r in run_text(tmp_path, quiet, records)] == [1000, 3000]
    background = quiet + "\n:sensor(:s1) .\nevent Bg(?s) := :sensor(?s) .\n" \
        "pattern Q from Bg construct { ?s :alive :yes } with ?s = Bg.s ."
    # (the graph built at each one holds there, so its expiry makes the next one evaluated too)
    assert [r["t"] for r in run_text(tmp_path, background, records)][:3] == [1000, 1001, 1002]
    negation = "@timeunit ms .\n:sensor(:s1) .\n:idle(?s) :- :sensor(?s), not :ping(?s) ."
    assert [r["t"] for r in run_text(tmp_path, negation, records)][:2] == [1001, 1002]


def test_an_at_window_in_ms_mode_binds_every_millisecond_its_atom_held(tmp_path):
    """``[20] @T q(X)`` over a q concluded through a 10 ms diamond: T takes each of the eleven
    milliseconds q held (they are evaluated: each gives T a new value), and they leave the window
    one by one. (Once, only the evaluated time points were bound: r(a,102) never appeared.)"""
    rules = "@timeunit ms .\nq(X) :- [10] <> p(X) .\nr(X, T) :- [20] @T q(X) ."
    out = facts_by_time(run_text(tmp_path, rules, [{"t": 100, "facts": ["p(<a>)"]}, {"t": 200, "facts": []}]))
    held = [f"r(<a>,{t})" for t in range(100, 111)]
    assert sorted(out) == list(range(100, 112)) + list(range(121, 131))  # (112-120: the same as 111)
    assert out[111] == held and out[125] == held[5:] and out[130] == held[10:]
