"""Bad input gets a positioned error or a rejected record, never a traceback (docs/cli.md)."""

import json

import pytest

from dotr.pipeline.cli import main

RULES = "h(X) :- p(X).\n"


@pytest.mark.parametrize("source, message", [
    ("event E(x) := p(x) .", "error[E308]: an event parameter is a variable, not x"),
    ("@output Alarm .\nalarm(X) :- p(X).", "error[E308]: Alarm is a variable"),
    ("@prefix : <http://ex.org/> .\nevent E(?x) := select ?x where { ?x :p/:q ?y } .",
     "error[E401]: property paths are not supported"),
    ("@prefix : <http://ex.org/> .\nquery Q := select ?x where { ?x :p/:q ?y } within 5 .",
     "error[E401]: property paths are not supported"),
])
def test_check_reports_instead_of_crashing(tmp_path, capsys, source, message):
    (tmp_path / "r.dotr").write_text(source)
    assert main(["check", str(tmp_path / "r.dotr")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def _run(tmp_path, data: bytes, *options):
    (tmp_path / "r.dotr").write_text(RULES)
    (tmp_path / "s.jsonl").write_bytes(data)
    out = tmp_path / "out.jsonl"
    code = main(["run", "-q", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"),
                 "--output", str(out), *options])
    rejects = tmp_path / "out.jsonl.rejects.jsonl"
    return code, out.read_text() if out.exists() else "", \
        [json.loads(line) for line in rejects.read_text().splitlines()] if rejects.exists() else []


@pytest.mark.parametrize("data, kept, rejected", [
    (b'{"t": 0, "facts": ["p(\xff)"]}\n{"t": 1, "facts": ["p(a)"]}\n', '{"t": 1, "facts": ["h(a)"]}\n',
     (1, "the line is not valid UTF-8")),
    (b'{"t": 3, "facts": ["p(a)"]}\n{"t": 1, "facts": ["p(b)"]}\n{"t": 4, "facts": ["p(c)"]}\n',
     '{"t": 3, "facts": ["h(a)"]}\n{"t": 4, "facts": ["h(c)"]}\n', (2, "time 1 is before 3, already evaluated")),
    (b'{"t": 1, "t": 2, "facts": ["p(a)"]}\n{"t": 3, "facts": ["p(b)"]}\n', '{"t": 3, "facts": ["h(b)"]}\n',
     (1, 'a record has one "t"')),
], ids=["not utf-8", "late", "duplicate t"])
def test_a_bad_record_stops_the_run_or_is_rejected_in_skip_mode(tmp_path, data, kept, rejected):
    assert _run(tmp_path, data)[0] == 3
    code, out, rejects = _run(tmp_path, data, "--on-error", "skip")
    assert code == 0 and out == kept
    assert [(r["line"], r["reason"]) for r in rejects] == [rejected]


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("dotr ")


def test_check_prints_the_warnings_of_a_valid_file(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text("@prefix : <http://ex.org/> .\n"
                                     "query Q := select ?x where { ?x :p ?y } seq { ?x :q ?z } .\n")
    assert main(["check", "-q", str(tmp_path / "r.dotr")]) == 0
    assert "warning[W410]" in capsys.readouterr().err


def test_explain_exits_1_when_it_explains_nothing(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text(RULES)
    (tmp_path / "s.jsonl").write_text('{"t": 0, "facts": ["p(a)"]}\n')
    args = ["explain", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"), "--at", "0"]
    assert main([*args, "h(a)"]) == 0
    assert main([*args, "h(zz)"]) == 1
    assert main([*args, "3"]) == 1  # no graph 3
    assert "h(zz): does not hold at 0" in capsys.readouterr().err


@pytest.mark.parametrize("stray", ["{", "(", "<http://ex.org/open"])
def test_an_unclosed_bracket_is_reported_at_once(stray):
    """A stray bracket before many lines of IRIs made the lexer try every split of them (a 12-line
    file ran for minutes); now it is a syntax error found in linear time."""
    import time

    from dotr.rules import check_text

    lines = [f"<http://ex.org/a{i}>(X) :- <http://ex.org/b{i}>(X), <http://ex.org/c>(X) ." for i in range(60)]
    text = "@prefix : <http://ex.org/> .\nevent E(?x) := select ?x where " + stray + " ?x <http://ex.org/p> ?y\n" + \
        "\n".join(lines)
    started = time.perf_counter()
    result = check_text(text)
    assert not result.ok and time.perf_counter() - started < 2.0


def test_stream_facts_use_the_rule_files_prefixes(tmp_path, capsys):
    """The docs' own example fact ``:s1(:locA)`` was rejected: prefixed names in stream facts
    take the rule file's prefixes."""
    rules = tmp_path / "r.dotr"
    rules.write_text("@prefix : <http://ex.org/> .\nplaced(S, L) :- :Sensor(S), :at(S, L) .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text(json.dumps({"t": 12, "facts": ["temp(r1,25)", ":Sensor(:s1)", ":at(:s1, :locA)"]}) + "\n")
    out = tmp_path / "o.jsonl"
    assert main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["facts"] == ["placed(:s1,:locA)"]
    stream.write_text(json.dumps({"t": 1, "facts": ["nope:x(1)"]}) + "\n")
    assert main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out)]) == 3
    assert "not a fact: 'nope:x(1)'" in capsys.readouterr().err


def test_a_malformed_owl_file_and_a_directory_are_one_line_errors(tmp_path, capfd):
    rules, stream = tmp_path / "r.dotr", tmp_path / "s.jsonl"
    rules.write_text("b(X) :- a(X) .\n")
    stream.write_text('{"t": 1, "facts": ["a(1)"]}\n')
    bad = tmp_path / "bad.owl"
    bad.write_text('<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
                   '<owl:Class rdf:about="x"></rdf:RDF>\n')
    for ontology, reason in ((bad, "unbound prefix: line 2"), (tmp_path, "a directory, not an RDF file")):
        assert main(["run", "--rules", str(rules), "--ontology", str(ontology), "--input", str(stream)]) == 2
        err = capfd.readouterr().err
        assert reason in err and "Traceback" not in err, err


@pytest.mark.parametrize("text", ["d(X) :- [1E4003000] <> p(X) .",
                                  "event A(?x) := a(?x) .\nevent B(?x) := b(?x) .\n"
                                  "pattern P from B and each A within 1E400 from B ."])
def test_an_infinite_window_or_duration_is_an_error_with_its_position(text):
    """Found by the fuzz test: a window of 1E4003000 ticks crashed building the LARS engine."""
    from dotr.rules import check_text

    result = check_text(text, "r.dotr")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert errors and errors[0].code == "E308" and errors[0].span is not None and "finite" in errors[0].message


def test_found_by_the_fuzz_test():
    """A tuple window over a variable predicate that rules derive crashed check (E202's message);
    a number too large for a float (1E400, infinity) broke the generated join code at run time."""
    from dotr.pipeline.reasoner import Reasoner
    from dotr.rules import check_text

    result = check_text("P(X, Y) :- q(P, X, Y) .\nt(X) :- [5 #] <> Z(X, Y) .")
    assert {d.code for d in result.diagnostics} == {"E308", "E202"}
    reasoner = Reasoner(check_text("h(X) :- p(X), X < 1E400 .\nk(T) :- p(T), T = 1E400 * 2 ."))
    assert reasoner.step(0, ["p(1)"]).facts == ["h(1)"]  # (1E400 * 2 has no number value: no k)


def test_stream_facts_of_an_arity_the_rules_never_use_are_noticed_once(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text("hot(X) :- temp(X, V), V > 30.\n")
    (tmp_path / "s.txt").write_text("1 : temp(a, 3, 4)\n2 : temp(a, 40)\n3 : temp(b, 3, 5)\n")
    out = tmp_path / "o.jsonl"
    assert main(["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.txt"),
                 "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("the stream gives temp with 3 arguments, the rules use temp with 2") == 1
    assert out.read_text() == '{"t": 2, "facts": ["hot(a)"]}\n'


def test_run_prints_the_warnings_of_its_rules(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text("smoke(X) :- sensor(X).\nalarm(X) :- smokee(X).\n")
    (tmp_path / "s.txt").write_text("1 : sensor(a)\n")
    assert main(["run", "-q", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.txt"),
                 "--output", str(tmp_path / "o.jsonl")]) == 0
    assert "warning[W301]: no rule or fact derives smokee" in capsys.readouterr().err


def test_infinite_numbers_and_literal_subjects_in_every_output_format(tmp_path):
    """1E400 is infinity: it prints as an xsd:double literal ("INF"), which N-Quads can read
    back, not as Python's inf (a typed literal keeps its datatype); RDF formats leave out triples
    with a literal subject (RDFS's rdfs_full derives some), which JSON Lines keeps."""
    import rdflib

    (tmp_path / "r.dotr").write_text("@prefix : <http://ex.org/> .\n@profile rdfs_full .\n:r(:x, X) :- p(X).\n"
                                     ":q(X, Y) :- :p(X, Y).\n")
    (tmp_path / "s.jsonl").write_text(json.dumps({"t": 1, "facts": [
        "p(1E400)", "p(-1e999)", 'p("1E400"^^xsd:float)', ':p(:a, "NaN"^^xsd:double)', ':p(:b, "x")']}) + "\n")
    printed = {}
    for fmt in ("jsonl", "nquads", "trig"):
        out = tmp_path / f"o.{fmt}"
        assert main(["run", "-q", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"),
                     "--output", str(out), "--format", fmt, "--full-iris"]) == 0
        printed[fmt] = out.read_text()
    facts = json.loads(printed["jsonl"])["facts"]
    double = "^^<http://www.w3.org/2001/XMLSchema#double>"
    assert f'<http://ex.org/r>(<http://ex.org/x>,"INF"{double})' in facts
    assert f'<http://ex.org/r>(<http://ex.org/x>,"-INF"{double})' in facts
    assert '<http://ex.org/r>(<http://ex.org/x>,"INF"^^<http://www.w3.org/2001/XMLSchema#float>)' in facts
    assert any(f.startswith('<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>("x",') for f in facts)
    for fmt, parser in (("nquads", "nquads"), ("trig", "trig")):
        dataset = rdflib.Dataset()
        dataset.parse(data=printed[fmt], format=parser)
        triples = list(dataset.quads())
        assert triples and not any(isinstance(s, rdflib.Literal) for s, *_ in triples)
        objects = {o for s, p, o, _ in triples if p == rdflib.URIRef("http://ex.org/r")}
        assert {o.toPython() for o in objects} >= {float("inf"), float("-inf")}
    assert f'"INF"{double}' in printed["nquads"]


def test_a_record_longer_than_the_bound_is_a_bad_record_and_is_never_held_whole(tmp_path):
    big = json.dumps({"t": 2, "facts": [f"p(x{i})" for i in range(20_000)]})
    data = f'{{"t": 1, "facts": ["p(a)"]}}\n{big}\n{{"t": 3, "facts": ["p(c)"]}}\n'.encode()
    assert _run(tmp_path, data, "--max-record-size", "1000")[0] == 3
    code, out, rejects = _run(tmp_path, data, "--max-record-size", "1000", "--on-error", "skip")
    assert code == 0 and out == '{"t": 1, "facts": ["h(a)"]}\n{"t": 3, "facts": ["h(c)"]}\n'
    assert [(r["line"], r["reason"]) for r in rejects] == [(2, "the record has more than 1,000 bytes "
                                                               "(--max-record-size)")]
    assert rejects[0]["record"] == big[:200]
    code, out, _ = _run(tmp_path, data, "--max-record-size", "0")  # no bound
    assert code == 0 and out.count("\n") == 3


def test_options_spark_does_not_have_are_refused_before_it_starts(capsys):
    for option in (["--follow"], ["--snapshot", "s.pickle"]):
        assert main(["run", "--engine", "spark", "--rules", "examples/fire/rules.dotr", *option]) == 2
        assert f"{option[0]} cannot be used with --engine spark" in capsys.readouterr().err
