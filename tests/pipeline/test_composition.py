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
from tests.pipeline.composition_reference import CompositionReference, atom_of, triple_atom
from dotr.pipeline.input_facts import parse_fact
from dotr.ontology.turtle import in_order

EX = "http://ex.org/"
PEOPLE = ["a", "b", "c"]
PREFIXES = "@prefix : <http://ex.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"

#: Datalog rules: (text, feature); the stage split decides where each runs
DATALOG = [
    ("warm(X) :- hot(X), sensor(X) .", "datalog over background"),
    (":close(?x, ?y) :- :near(?y, ?x) .", "datalog over triples"),
    (":Watched(?x) :- :Reading(?x), :Device(?x) .", "datalog over turtle background"),
    ("calm(X) :- sensor(X), not hot(X) .", "datalog negation"),
    (":Suspect(?x) :- :flag(?x, :on) .", "datalog over pattern graphs"),
    ("reach(X, Y) :- link(X, Y) .\nreach(X, Z) :- reach(X, Y), link(Y, Z) .", "datalog recursion"),
    (":Thing(?x) :- :part(?x, ?y) .", "datalog over turtle background"),
]
TEMPORAL_DATALOG = ("alarm(X) :- h0(X), sensor(X) .", "datalog over temporal conclusions")

EVENTS = """event Rd(?x) := select ?x where { ?x a :Reading } .
event Hot(?x) := hot(?x), sensor(?x) .
event Flag(?x) := select ?x where { ?x :flag :on } .
event Sus(?x) := select ?x where { ?x a :Suspect } .
event Dev(?x) := select ?x where { ?x a :Device } .
event Close(?x) := select ?x where { ?x :close ?y } .
event Near(?x) := select distinct ?x where { { select ?x where { ?x :close ?y } } ?x :near ?y } .
"""
PATTERNS = {
    "P1": "pattern P1 from Rd and {sel} Hot(x = Rd.x) within {w} from Rd construct {{ ?x :flag :on }} with ?x = Rd.x .",
    "P2": "pattern P2 from Flag and each Rd(x = Flag.x) within {w} from Flag construct {{ ?x :mark :yes }} with ?x = Flag.x .",
    "P3": "pattern P3 from Sus construct {{ ?x :alert :on }} with ?x = Sus.x .",
    "P4": "pattern P4 from Hot and last Dev(x = Hot.x) within {w} from Hot construct {{ ?x :seen :on }} with ?x = Hot.x .",
    "P5": "pattern P5 from Close and each Hot within {w} from Close construct {{ ?x :pair ?y }} "
          "with ?x = Close.x, ?y = Hot.x consuming Hot .",
    # (DISTINCT over the selected ?x only; the subquery's ?y is not the outer ?y)
    "P6": "pattern P6 from Near and {sel} Rd(x = Near.x) within {w} from Near construct {{ ?x :near_seen :yes }} "
          "with ?x = Near.x .",
}

WINDOWS = ["", "[2] <> ", "[2] [] ", "[1] @T ", "<> ", "[] ", "@T ", "[3] <> ", "[1] [] "]
TUPLE_WINDOWS = ["[2 #] <> ", "[2 #] [] ", "[3 #] @T "]
STREAM_BASES = ["hot(X)", "cold(X)", ":Reading(X)"]
OTHER_BASES = ["sensor(X)", ":Device(X)", "warm(X)", "calm(X)", ":flag(X, :on)", ":Watched(X)"]


@st.composite
def programs(draw, lars: bool = True):
    """(rule text, ontology Turtle, features used); ``lars=False``: no temporal rules"""
    features = Counter()
    lines = [PREFIXES]
    if draw(st.booleans()):
        lines.append("@profile rdfs .")
        features["rdfs profile"] += 1
    for person in draw(st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=3, unique=True)):
        lines.append(f"sensor(:{person}) .")
        features["facts in the rule file"] += 1
    if draw(st.booleans()):
        lines.append(f":Device(:{draw(st.sampled_from(PEOPLE))}) .")
        features["facts in the rule file"] += 1
    for text, feature in draw(st.lists(st.sampled_from(DATALOG), max_size=4, unique=True)):
        lines.append(text)
        features[feature] += 1
    heads = draw(st.integers(0, 3)) if lars else 0
    for i in range(heads):
        for _ in range(draw(st.integers(1, 2))):
            lines.append(draw(lars_rule(i, features)))
    if heads and draw(st.booleans()):
        lines.append(TEMPORAL_DATALOG[0])
        features[TEMPORAL_DATALOG[1]] += 1
    chosen = draw(st.lists(st.sampled_from(sorted(PATTERNS)), max_size=4, unique=True))
    if chosen:
        lines.append(EVENTS)
        features["events"] += 1
        for name in chosen:
            sel = draw(st.sampled_from(["each", "last", "first", "not"]))
            lines.append(PATTERNS[name].format(sel=sel, w=draw(st.integers(1, 3))))
            features["patterns"] += 1
            if name in ("P2", "P3"):
                features["patterns over fed-back graphs"] += 1
        if "P1" in chosen and ("P2" in chosen or "P3" in chosen):
            features["pattern feeding a pattern"] += 1
    if heads and draw(st.booleans()):
        derived = [f"h{i}" for i in range(heads)] + ["warm"] * any(line.startswith("warm") for line in lines) \
            + [":Suspect"] * any(line.startswith(":Suspect") for line in lines) \
            + [":close"] * any(line.startswith(":close") for line in lines)
        lines.append(f"@output {', '.join(draw(st.lists(st.sampled_from(derived), min_size=1, unique=True)))} .")
        features["@output"] += 1
    turtle = [PREFIXES]
    for person in draw(st.lists(st.sampled_from(PEOPLE), max_size=2, unique=True)):
        turtle.append(f":{person} a :Device .")
        features["facts in turtle"] += 1
    if draw(st.booleans()):
        turtle.append(f":{draw(st.sampled_from(PEOPLE))} :part :{draw(st.sampled_from(PEOPLE))} .")
    if draw(st.booleans()):
        turtle.append(":Device rdfs:subClassOf :Thing . :near rdfs:subPropertyOf :close . :part rdfs:domain :Device .")
    return "\n".join(lines), "\n".join(turtle), features


@st.composite
def lars_rule(draw, i: int, features: Counter) -> str:
    """A rule for h<i>: a first atom that binds X (a window over a stream, background, derived
    or lower head's predicate, or h<i> itself: recursion), then maybe more atoms and a negation."""
    window = draw(st.sampled_from(WINDOWS + TUPLE_WINDOWS))
    if window in TUPLE_WINDOWS:
        base = draw(st.sampled_from(STREAM_BASES))
        features["tuple windows"] += 1
    else:
        base = draw(st.sampled_from(STREAM_BASES + OTHER_BASES + [f"h{j}(X)" for j in range(i + 1)]))
    recursive = base == f"h{i}(X)"
    if recursive and not window:
        window = "[1] <> "  # plain self-recursion derives nothing new: go through a window
    if recursive:
        features[f"recursion through {window.strip() or 'atom'}"] += 1
    features["whole-stream operators" if window in ("<> ", "[] ", "@T ") else "windows"] += bool(window)
    body = [f"{window}{base}"]
    if recursive or draw(st.booleans()):  # recursion needs a way in: a second rule or atom
        other = draw(st.sampled_from(["sensor(X)", "cold(X)", ":Device(X)", "hot(X)", "[2] <> cold(X)"]))
        body.append(other)
    if draw(st.booleans()):
        negated = draw(st.sampled_from(["hot(X)", "cold(X)", "sensor(X)", "warm(X)"] + [f"h{j}(X)" for j in range(i)]))
        body.append(f"not {draw(st.sampled_from(['', '[1] <> ', '[2] [] ']))}{negated}")
        features["negation"] += 1
    head = f"h{i}(X)"
    if "@T" in window and draw(st.booleans()):
        head = f"@T {head}"
        if draw(st.booleans()):
            head = f"@U h{i}(X)"
            body.append(f"U = T + {draw(st.integers(-1, 1))}")
        features["@ heads"] += 1
    return f"{head} :- {', '.join(body)} ."


@st.composite
def streams(draw):
    """Records: (t, facts as text, Turtle payload or None)."""
    t = draw(st.integers(0, 3))
    out = []
    for _ in range(draw(st.integers(1, 6))):
        t += draw(st.sampled_from([0, 1, 1, 2]))
        facts = []
        for _ in range(draw(st.integers(0, 3))):
            pred = draw(st.sampled_from(["hot", "cold", "link"]))
            args = [f"<{EX}{draw(st.sampled_from(PEOPLE))}>" for _ in range(2 if pred == "link" else 1)]
            facts.append(f"{pred}({','.join(args)})")
        turtle = None
        triples = draw(st.lists(st.sampled_from(  # readings as often as the nine :near pairs
            [f":{p} a :Reading ." for p in PEOPLE * 3] + [f":{p} :near :{q} ." for p in PEOPLE for q in PEOPLE]),
            max_size=2))
        if triples:
            turtle = "@prefix : <http://ex.org/> .\n" + "\n".join(triples)
        out.append((t, facts, turtle))
    return out


def reference_output(rules: Path, turtle: str, records, include_background: bool) -> list[dict]:
    checked = check(rules)
    background = [triple_atom(*tr) for tr in rdflib.Graph().parse(data=turtle, format="turtle")]
    reference = CompositionReference(checked, background, include_background)
    by_time: dict[int, list] = {}
    changes: dict[int, tuple[list, list]] = {}
    for t, facts, payload, *change in records:
        if change and change[0]:
            add, remove = changes.setdefault(t, ([], []))
            add += [atom_of(parse_fact(f, reference.prefixes)) for f in change[0].get("add", [])]
            remove += [atom_of(parse_fact(f, reference.prefixes)) for f in change[0].get("remove", [])]
        atoms = by_time.setdefault(t, [])
        atoms += [atom_of(parse_fact(f)) for f in facts]
        if payload:
            # (a graph has no order: its triples arrive in the order pipeline.turtle defines)
            atoms += [triple_atom(*tr) for tr in in_order(list(rdflib.Graph().parse(data=payload, format="turtle")))]
    times = sorted(by_time)
    if checked.analysis.temporal:
        times = list(range(times[0], times[-1] + 1))
    out = []
    for t in times:
        if t in changes:  # (from t on: removals, then additions)
            reference.change_background(*changes[t])
        if (record := reference.step(t, by_time.get(t, []))) is not None:
            out.append(record)
    return out


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


#: background facts a stream may add or remove (in the rule file, in Turtle, or new)
CHANGEABLE = [f"sensor(:{p})" for p in PEOPLE] + [f":Device(:{p})" for p in PEOPLE] + \
    [f":part(:{p}, :{q})" for p in PEOPLE for q in PEOPLE[:2]] + [":subClassOf(:Device, :Thing)".replace(
        ":subClassOf", "rdfs:subClassOf")]


@st.composite
def streams_with_changes(draw):
    """Records that may also change the background: (t, facts, Turtle or None, change or None)."""
    records = draw(streams())
    out = []
    for t, facts, payload in records:
        change = None
        if draw(st.integers(0, 2)) == 0:
            change = {key: draw(st.lists(st.sampled_from(CHANGEABLE), min_size=1, max_size=2, unique=True))
                      for key in draw(st.sampled_from([["add"], ["remove"], ["add", "remove"]]))}
        out.append((t, facts, payload, change))
    return out


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


def run_text(tmp: Path, rules: str, records: list[dict], turtle: str = PREFIXES, *options: str) -> list[dict]:
    (tmp / "rules.dotr").write_text(PREFIXES + rules)
    (tmp / "bg.ttl").write_text(turtle)
    (tmp / "stream.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp / "out.jsonl"
    code = main(["run", "-q", "--rules", str(tmp / "rules.dotr"), "--ontology", str(tmp / "bg.ttl"),
                 "--input", str(tmp / "stream.jsonl"), "--output", str(out), "--full-iris", *options])
    assert code == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def facts_by_time(records: list[dict]) -> dict[int, list[str]]:
    return {r["t"]: r["facts"] for r in records}


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
