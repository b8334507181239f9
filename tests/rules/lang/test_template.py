"""A pattern's construct template read by dotr's own reader is the template rdflib's SPARQL
parser reads, term for term, on generated templates (terms of every kind the reader takes, and
some it leaves to rdflib: a decimal, an escape, an undeclared prefix, a literal subject, a
nested blank node); a program of plain templates and events defined by rule bodies never
loads rdflib."""


from hypothesis import given, settings
from hypothesis import strategies as st

from dotr.rules.lang.ir import SparqlText
from dotr.rules.lang.queries.sparql import parse_template
from dotr.rules.lang.queries.template import _term_of_node, _triple_key, read_template, template_triples

from tests.rules.lang.run_imports import imported_by_run

PREFIXES = {"": "http://ex.org/", "ex": "http://ex.org/ns#", "my-p_2": "http://p.org/"}

subjects = st.sampled_from(["?s", "$s", "?x1", "_:b", "_:m0", ":a", "ex:thing", "<http://o.org/x>", "my-p_2:s-1"])
verbs = st.sampled_from(["a", ":p", "ex:q", "<http://o.org/p#r>", "?p", "my-p_2:_v"])
objects = st.one_of(subjects, st.sampled_from([
    '"x"', '""', '"a b"', '"é"', '"x"@en', '"x"@EN-gb', '"5"^^<http://www.w3.org/2001/XMLSchema#integer>',
    '"5"^^ex:dt', "7", "-3", "0", "123456789"]))
#: what the reader leaves to rdflib
others = st.sampled_from(["1.5", '"a\\"b"', "undeclared:x", "true", "[ :p 1 ]", "007", "'single'", "1e3"])


@st.composite
def templates(draw):
    text, first = [], True
    for _ in range(draw(st.integers(1, 3))):
        if not first:
            text.append(draw(st.sampled_from([" . ", " .\n", "\t. # a comment\n "])))
        first = False
        text.append(draw(subjects))
        for k in range(draw(st.integers(1, 3))):
            if k:
                text.append(draw(st.sampled_from([" ; ", ";", " ;; "])))
            text.append(" " + draw(verbs) + " ")
            text.append(draw(st.sampled_from([", ", " ,"])).join(
                draw(st.lists(st.one_of(objects, others) if draw(st.booleans()) else objects, min_size=1, max_size=2))))
        if draw(st.booleans()):
            text.append(draw(st.sampled_from([" ;", " ; "])))
    return "{ " + "".join(text) + draw(st.sampled_from(["", " .", " . "])) + " }"


@settings(max_examples=400, deadline=None)
@given(templates())
def test_a_plain_template_is_read_as_rdflib_reads_it(text):
    parsed, diags = parse_template(SparqlText(text), PREFIXES)
    own = read_template(text, PREFIXES)
    if parsed is None:  # (what rdflib rejects, the reader leaves to it)
        assert own is None and diags
        return
    reference = sorted((tuple(map(_term_of_node, triple)) for triple in parsed), key=_triple_key)
    if own is not None:
        assert sorted(own, key=_triple_key) == reference
    assert template_triples(SparqlText(text), PREFIXES) == (reference, [])


def test_a_program_with_plain_templates_and_rule_events_does_not_load_rdflib(tmp_path):
    rules = tmp_path / "match.dotr"
    rules.write_text("""@prefix : <http://example.org/bench#> .
@timeunit ms .
event A(?key, ?id) := a(?key, ?id) .
event B(?key, ?id) := b(?key, ?id) .
pattern Match from B and each A(key = B.key) within 1000 ms from B
  construct { _:m :key ?k ; :id ?i } with ?k = B.key, ?i = A.id .
""")
    (tmp_path / "s.jsonl").write_text('{"t": 1, "facts": ["a(1,2)"]}\n{"t": 5, "facts": ["b(1,3)"]}\n')
    assert imported_by_run(rules, tmp_path / "s.jsonl", tmp_path / "out.jsonl") == []
    assert "<urn:dotr:match:Match:5:" in (tmp_path / "out.jsonl").read_text()
