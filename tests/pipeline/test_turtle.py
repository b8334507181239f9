"""The fast Turtle reader (ontology/turtle.py) gives rdflib's facts: generated records, shaped like
N-Triples or not, are read both ways and interned; where the fast reader declines (None), the
record is one rdflib must read. And a stream of Turtle records through ``dotr run`` gives the
same output as the same facts written as fact strings."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
import rdflib

from dotr.ontology import turtle
from dotr.pipeline.cli import main
from dotr.pipeline.reasoner import Reasoner
from dotr.pipeline.input_facts import intern_input
from dotr.rules import check_text

EX = "http://ex.org/"
iri = st.sampled_from([f"<{EX}s1>", f"<{EX}p>", ":s2", ":q", "ex:o", "ex:", ":a-b_c", f"<{EX}a,b>", "<rel>",
                       "ex:1x", "_:b1", "[]"])
obj = st.one_of(iri, st.sampled_from(["25", "-3", "0", "007", "+4", "2.5", "1e3", '"x"', '"x"@en',
                                      '"5"^^<http://www.w3.org/2001/XMLSchema#integer>', "true", "a"]))
space = st.sampled_from([" ", "  ", "\n", "\t"])


@st.composite
def records(draw):
    lines = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from([f"@prefix : <{EX}> .", f"PREFIX : <{EX}>", f"prefix : <{EX}>"])))
    lines.append(draw(st.sampled_from([f"@prefix ex: <{EX}x/> .", f"PREFIX ex: <{EX}x/>", "", "# a comment"])))
    for _ in range(draw(st.integers(0, 3))):
        s = draw(iri)
        groups = []
        for _ in range(draw(st.integers(1, 2))):
            p = draw(st.one_of(iri, st.just("a")))
            objects = draw(st.lists(obj, min_size=1, max_size=2))
            groups.append(f"{p} {', '.join(objects)}")
        end = draw(st.sampled_from([" .", ".", " ;.", " . "]))
        lines.append(f"{s}{draw(space)}{(' ;' + draw(space)).join(groups)}{end}")
    return "\n".join(lines)


def _interned(stage, facts):
    return sorted({intern_input(stage, f) for f in facts})  # (a graph is a set: repeats are one fact)


@settings(max_examples=600, deadline=None)
@given(records())
def test_the_fast_reader_gives_rdflibs_facts_or_declines(text):
    stage = Reasoner(check_text("")).ontology
    fast = turtle.read(text)
    try:
        graph = list(rdflib.Graph().parse(data=text, format="turtle"))
    except Exception:
        assert fast is None, text  # rdflib rejects it: the fast path must not accept it
        return
    if fast is not None:
        if any(isinstance(node, rdflib.BNode) for triple in graph for node in triple):
            raise AssertionError(f"blank nodes taken by the fast path: {text!r}")
        assert _interned(stage, fast) == _interned(stage, set(graph)), text


def test_the_scenarios_records_take_the_fast_path():
    text = f"@prefix : <{EX}> .\n:sensor3 :read_valA 42 .\n"
    assert turtle.read(text) == [(f"<{EX}sensor3>", f"<{EX}read_valA>", "42")]


def test_turtle_records_through_dotr_run(tmp_path):
    rules = tmp_path / "r.dotr"
    rules.write_text(f"@prefix : <{EX}> .\nhot(S) :- [3] <> :temp(S, V), V > 30 .\n")
    turtle_stream, fact_stream = tmp_path / "t.jsonl", tmp_path / "f.jsonl"
    turtle_stream.write_text("\n".join(json.dumps({"t": t, "turtle": f"@prefix : <{EX}> . :s{t % 3} :temp {20 + 5 * t} ."})
                                       for t in range(8)) + "\n")
    fact_stream.write_text("\n".join(json.dumps({"t": t, "facts": [f"<{EX}temp>(<{EX}s{t % 3}>,{20 + 5 * t})"]})
                                     for t in range(8)) + "\n")
    for stream in (turtle_stream, fact_stream):
        assert main(["run", "--rules", str(rules), "--input", str(stream), "--output", str(stream) + ".out", "-q"]) == 0
    out = (tmp_path / "t.jsonl.out").read_text()
    assert out == (tmp_path / "f.jsonl.out").read_text() and "hot(:s0)" in out


def test_a_number_where_a_predicate_stands_is_a_bad_record_rejected_with_its_line(tmp_path):
    """rdflib reads ``:s 1 :o`` (a literal predicate); the record is rejected as it is read."""
    (tmp_path / "r.dotr").write_text("@prefix : <http://ex.org/> .\nq(X) :- :p(X, Y) .\n")
    records = [{"t": 1, "turtle": "@prefix : <http://ex.org/> . :s :p :o ."},
               {"t": 2, "turtle": "@prefix : <xample.org/> . :s 1 :o ."},
               {"t": 3, "background": {"add": "@prefix : <http://ex.org/> . 1 :p :o ."}}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "o.jsonl"
    assert main(["run", "-q", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"), "--output",
                 str(out), "--on-error", "skip", "--full-iris"]) == 0
    rejects = [json.loads(line) for line in (tmp_path / "o.jsonl.rejects.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"].split(",")[0]) for r in rejects] == [
        (2, "the predicate of a triple is an IRI"), (3, "the subject of a triple is an IRI or a blank node")]
    assert json.loads(out.read_text().splitlines()[0])["facts"] == ["q(<http://ex.org/s>)"]
