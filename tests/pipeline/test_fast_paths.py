"""The pipeline's fast paths give exactly what their references give: parse_fact what the rule
grammar gives, the graphs' N-Triples text what rdflib's serializer writes; pattern graphs are
interned only when something reads them; the printed facts kept from one time point to the next
are those sorted afresh."""

import functools
import json

from hypothesis import given, settings, strategies as st

from dotr.rules import InputError
from dotr.pipeline.reasoner import Reasoner
from dotr.pipeline.input_facts import checked_fact, intern_all, intern_input, parse_fact, parse_fact_with_grammar, simple_fact_list, simple_facts
from dotr.pipeline.fact_texts import FactTexts, _changed
from dotr.pipeline.io import _split_facts
from dotr.pipeline.printing import _TERM, EncodedFacts, Readable
from dotr.rules import check_text, ir
from dotr.rules.engine.terms import TermDictionary, format_fact
from dotr.rules.engine.ntriples import document, document_with_rdflib

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
iris = st.from_regex(r"<http://ex\.org/[a-z#/]{0,8}>", fullmatch=True)
numbers = st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?", fullmatch=True)
args = st.lists(st.one_of(names, iris, numbers, st.sampled_from(["not", "from", "box", "each"])), max_size=4)


def outcome(parse, text):
    try:
        return parse(text)
    except InputError:
        return "error"


@settings(max_examples=400, deadline=None)
@given(st.one_of(names, iris, st.sampled_from(["not", "event", "diamond"])), st.none() | args)
def test_fast_path_agrees_with_the_grammar(pred, arguments):
    text = pred if arguments is None else f"{pred}({','.join(arguments)})"
    assert outcome(parse_fact, text) == outcome(parse_fact_with_grammar, text)


odd_iris = st.from_regex(r"<http://ex\.org/[a-z,()]{0,6}>", fullmatch=True)  # commas and parentheses inside
facts = st.builds(lambda pred, arguments: pred if arguments is None else f"{pred}({','.join(arguments)})",
                  st.one_of(names, iris, odd_iris, st.sampled_from(["not", "p"])),
                  st.none() | st.lists(st.one_of(names, iris, odd_iris, numbers, st.sampled_from(["not", "a b", ""])),
                                       max_size=3))


@settings(max_examples=200, deadline=None)
@given(st.lists(facts, min_size=1, max_size=12))
def test_interning_fact_strings_agrees_with_the_grammar(texts):
    """intern_input's split and regex paths (the token cache filling as the facts come) give the
    ids of the facts the grammar reads, or the same error."""
    stage = Reasoner(check_text("p(a) .")).ontology
    for text in texts + texts:
        expected = outcome(lambda x: stage.intern(parse_fact_with_grammar(x)), text)
        assert outcome(lambda x: intern_input(stage, x), text) == expected, text


@settings(max_examples=200, deadline=None)
@given(st.lists(facts, min_size=1, max_size=12), st.sampled_from([",", ", ", " , "]))
def test_reading_and_interning_a_record_at_once_agrees_with_one_fact_at_a_time(texts, separator):
    """A Laser++ line's facts read in one pass (simple_facts), and a JSON record's checked at
    once (simple_fact_list), are what checked_fact gives each;
    intern_all gives intern_input's ids, the token cache filling as the facts come."""
    line = separator.join(texts)
    fast = simple_facts(line)
    if fast is not None:
        assert fast == [checked_fact(f) for f in _split_facts(line)]
    fast = simple_fact_list(texts)  # (a JSON record's)
    if fast is not None:
        assert fast == [checked_fact(f) for f in texts]
    bulk, one = Reasoner(check_text("p(a) .")).ontology, Reasoner(check_text("p(a) .")).ontology
    for batch in (texts, texts):
        expected = [outcome(lambda x: intern_input(one, x), text) for text in batch]
        if "error" in expected:
            assert outcome(lambda x: intern_all(bulk, x), batch) == "error"
            return
        assert intern_all(bulk, batch) == expected, batch



@settings(max_examples=300, deadline=None)
@given(st.lists(st.sets(st.tuples(st.sampled_from(["q", "r", "_h"]), st.integers(0, 6))), max_size=8))
def test_printed_facts_kept_between_time_points_are_those_sorted_afresh(points):
    """FactTexts gives each time point's texts sorted and each once, as sorting them afresh does:
    facts coming and going, texts shared by two facts (r prints like q), facts not printed (_h)."""
    def text(rel, fact):
        return "" if rel == "_h" else f"q({fact[0]})" if fact[0] % 3 == 0 else f"{rel}({fact[0]})"
    texts = FactTexts(text)
    for items in points:
        items = {(rel, (n,)) for rel, n in items}
        assert texts.update(items) == sorted({text(*item) for item in items} - {""})
        assert texts.changes is None or set(texts.changes[0]).isdisjoint(texts.changes[1])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sets(st.integers(0, 30), max_size=25), st.booleans()), max_size=10))
def test_encoded_facts_kept_between_records_are_those_encoded_afresh(points):
    """The JSON arrays of printed facts, kept from the last array written and changed by what
    came and went, are those encoded afresh, also when some time points are not written."""
    texts, kept = FactTexts(lambda rel, fact: f"<http://ex.org/p>(<http://ex.org/{fact[0]}>)"), \
        EncodedFacts(Readable({"": "http://ex.org/"}))
    for numbers, written in points:
        facts = texts.update({("p", (n,)) for n in numbers})
        if written:
            assert kept.array(facts, texts.changes) == EncodedFacts(Readable({"": "http://ex.org/"})).array(facts)


@settings(max_examples=300, deadline=None)
@given(st.sets(st.text("abc", max_size=4), max_size=60), st.data())
def test_printed_texts_changed_in_place_are_those_sorted_afresh(texts, data):
    """The list of printed texts changed by binary search gives what sorting afresh gives (few
    changes: insertions and removals next to each other, at the ends, at one place)."""
    gone = data.draw(st.lists(st.sampled_from(sorted(texts)), unique=True, max_size=4)) if texts else []
    new = data.draw(st.lists(st.text("abcd", max_size=4).filter(lambda x: x not in texts), unique=True, max_size=4))
    assert _changed(sorted(texts), gone, sorted(new)) == sorted((texts - set(gone)) | set(new))

terms = st.one_of(
    st.builds(ir.Iri, st.from_regex(r"http://ex\.org/[a-z0-9#/:._-]{0,8}", fullmatch=True)),
    st.builds(ir.Num, st.integers(-10**6, 10**6) | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)),
    st.builds(ir.Name, st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True)),
    # (no line separators: the reference splits rdflib's output at str.splitlines, which breaks them)
    st.builds(ir.Literal, st.text(st.characters(blacklist_categories=["Cc", "Zl", "Zp", "Cs"]), max_size=5)
              | st.sampled_from(['a"b', "x\\y"]), st.none(), st.sampled_from([None, "en", "de-ch"])),
    st.builds(ir.Literal, st.from_regex(r"[0-9]{1,3}", fullmatch=True),
              st.sampled_from(["http://www.w3.org/2001/XMLSchema#integer", "http://ex.org/dt"]), st.none()),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(terms, st.builds(ir.Iri, st.sampled_from(["http://ex.org/p", "http://ex.org/q"])), terms),
                min_size=1, max_size=6))
def test_graph_text_agrees_with_rdflib(triples):
    assert document(triples) == document_with_rdflib(triples)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(terms, st.builds(ir.Iri, st.sampled_from(["http://ex.org/p", "http://ex.org/q"])), terms),
                max_size=4), st.lists(st.integers(0, 3), max_size=4))
def test_readable_graphs_agree_with_reading_each_term(triples, repeats):
    """The printer's lines as dotr writes them (and the same tails again, as fresh blank nodes
    repeat them) read as the general term reader reads them."""
    text = document(triples) + "".join(document([triples[i]]) for i in repeats if i < len(triples))
    printer = Readable({"ex": "http://ex.org/"})
    general = [[printer.term(t) for t in _TERM.findall(line)[:3]] for line in text.splitlines() if line.strip()]
    assert printer.graph(text) == general
    assert printer.graph(text) == general  # (again: from the printer's memory)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(terms, st.builds(ir.Iri, st.sampled_from(["http://ex.org/p", "http://ex.org/q"])), terms),
                max_size=4), st.lists(st.integers(0, 3), max_size=4),
       st.sampled_from(["", '<http://ex.org/s> <http://ex.org/p> "é" .\n', "<http://ex.org/s>  <http://ex.org/p> 1 .\n",
                        " <http://ex.org/p> <http://ex.org/o> .\n", " \n"]))
def test_a_graphs_json_is_that_of_its_readable_triples(triples, repeats, extra_line):
    """The JSON of a graph made from the kept JSON of its lines' ends is ``json.dumps`` of its
    readable triples, for lines as dotr writes them, the same ends again, a term that is not
    ASCII, and a line written otherwise (two spaces, no subject, a blank line)."""
    text = document(triples) + "".join(document([triples[i]]) for i in repeats if i < len(triples))
    printer, reference = Readable({"ex": "http://ex.org/"}), Readable({"ex": "http://ex.org/"})
    for doc in (text, text + extra_line, text):
        assert printer.graph_json(doc) == json.dumps(reference.graph(doc), ensure_ascii=False)


def test_graphs_that_nothing_reads_do_not_grow_the_dictionary():
    # no LARS rule and no event reads the Fire graphs: their fresh IRIs are never interned
    reasoner = Reasoner(check_text("""event Smoke(?area) := smoke(?area) .
pattern Fire from Smoke construct { _:f a <http://x/Alarm> ; <http://x/area> ?a } with ?a = Smoke.area ."""))
    sizes = []
    for t in range(1, 6):
        assert len(reasoner.step(t, ["smoke(a1)", "smoke(a2)"]).graphs) == 2
        sizes.append(len(reasoner.dictionary))
    assert sizes == sizes[:1] * 5


def test_a_stream_of_ever_new_integers_keeps_the_term_caches_bounded(monkeypatch):
    """An integer's id needs no dictionary entry, so the dictionary's reclaiming never clears
    the caches from a term's text (or rdflib node) to its id: each starts afresh at its bound
    (here 8), and the ids are those of a stage that never did."""
    import rdflib

    from dotr.ontology import turtle
    from dotr.pipeline import input_facts
    from dotr.rules.engine import inputs

    for module in (input_facts, turtle, inputs):
        monkeypatch.setattr(module, "TERM_CACHE", 8)
    rules = check_text("a(X) :- b(X, Y) .")
    stage, reference = Reasoner(rules).ontology, Reasoner(rules).ontology
    for n in range(100):  # fact strings, then Turtle's triples (the same cache), then rdflib's
        fact = f"b({n % 3},{1000 + n})"
        assert intern_all(stage, [fact]) == [intern_input(reference, fact)]
        assert len(stage.token_ids) <= 8
    for n in range(100):
        triple = turtle.read(f"<http://x/s> <http://x/p> {2000 + n} .")[0]
        assert intern_all(stage, [triple]) == [intern_input(reference, triple)]
        assert len(stage.token_ids) <= 8
    for n in range(100):
        node_triple = (rdflib.URIRef("http://x/s"), rdflib.URIRef("http://x/p"), rdflib.Literal(3000 + n))
        assert stage.intern(node_triple) == reference.intern(node_triple)
        assert len(stage._read.node_ids) <= 8


@functools.cache
def _dotr_rules():
    from dotr.examples.workloads.dotr_paper import background, program

    return check_text(program(rules=2)), background(20)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read_valA", "read_valB"]), st.sampled_from(["sensor1", "sensor7", "sensorNew"]),
                          st.integers(0, 99)), max_size=8))
def test_time_points_cross_between_processes_intact(readings):
    """A time point encoded by one reasoner and decoded by another built from the same files
    holds the same terms: with only background terms (sent as ids as they are) and with new ones."""
    from dotr.examples.workloads.dotr_paper import EX
    from dotr.pipeline.wire import decode_point, encode_point

    checked, triples = _dotr_rules()
    sender, receiver = Reasoner(checked, triples), Reasoner(checked, triples)
    receiver.dictionary.intern(ir.Iri(EX + "other"))  # the receiver's own terms: ids differ
    point = sender.enrich(1, [f"<{EX}{p}>(<{EX}{s}>,{v})" for p, s, v in readings])
    got = decode_point(encode_point(point, sender.dictionary, sender._base_terms), receiver.dictionary)

    def terms(reasoner, p):
        term = reasoner.dictionary.term
        return ([(term(rel[0]), tuple(map(term, fact))) for rel, fact in p.stream + p.conclusions],
                {name: [tuple(map(term, row)) for row in rows] for name, rows in p.events.items()}, p.expiries)

    assert terms(receiver, got) == terms(sender, point)
    placed = {r for r in readings if r[1] != "sensorNew"}  # (the new sensor is in no room: no event)
    assert sum(map(len, point.events.values())) == len(placed)


@settings(max_examples=100, deadline=None)
@given(st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_a_record_with_graphs_is_written_as_json_dumps_writes_it(facts, at, graphs, answers, events):
    """The JSON Lines writer places a record's graphs, made apart, where ``json.dumps`` of the
    whole readable record places them (after "at", before "answers" and "events")."""
    import io

    from dotr.pipeline.records import Result
    from dotr.pipeline.sinks.jsonl import JsonlWriter

    graph = "<urn:m:1> <http://ex.org/p> <http://ex.org/o> .\n<urn:m:1> <http://ex.org/q> \"é\" .\n"
    result = Result(4, ["<http://ex.org/a>(1)"] if facts else [], {7: ["b(2)"]} if at else {},
                    [graph, graph] if graphs else [], [{"type": "E", "attributes": {"x": "<http://ex.org/o>"}}]
                    if events else [], answers={"Q": [{"v": "<http://ex.org/o>"}]} if answers else {})
    out = io.StringIO()
    JsonlWriter(out, {"ex": "http://ex.org/"}, False).write(result)
    record = Readable({"ex": "http://ex.org/"}).record(result.to_json())
    assert out.getvalue() == json.dumps(record, ensure_ascii=False) + "\n"


#: fact strings as a stream writes them, and strings JSON escapes or that are no facts
record_facts = st.lists(st.one_of(facts, st.text(max_size=6), st.sampled_from(['a"b', "a\\b", "p(\t1)", "é(1)", ""])),
                        max_size=3)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.integers(-10**19, 10**19), st.sampled_from([0, -0, 1 << 62, -(1 << 62) + 1])), record_facts,
       st.sampled_from([{}, {"indent": None, "separators": (",", ":")}, {"ensure_ascii": False}]),
       st.sampled_from(["{text}", " {text} ", '{{"t": 01, "facts": []}}', '{{"t": 1, "facts": ["a""b"]}}',
                        '{{"t": 1, "facts": ["a"], "t": 2}}', "{text}x"]))
def test_a_usual_record_is_read_as_the_json_parser_reads_it(t, given, dumps, shape):
    """The usual record (``{"t": ..., "facts": [...]}`` as ``json.dumps`` writes it, its
    strings with nothing to unescape) is read without the JSON parser: the same record, or the
    same error, as the parser's path gives, for any time, any strings, other spacings and texts
    that are no JSON."""
    from dotr.pipeline import io

    text = shape.format(text=json.dumps({"t": t, "facts": given}, **dumps))

    def read(pattern):
        plain, io._PLAIN_RECORD = io._PLAIN_RECORD, pattern
        try:
            return [(r.line, r.t, r.facts, r.raw, r.stream, r.background, r.program)
                    if isinstance(r, io.Record) else (type(r), str(r)) for r in io.read_jsonl([text], 3)]
        finally:
            io._PLAIN_RECORD = plain

    never = io.re.compile(r"(?!)")
    assert read(io._PLAIN_RECORD) == read(never)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(-(1 << 59) + 1, (1 << 59) - 1), st.sampled_from([0, -1, (1 << 59) - 1, -(1 << 59) + 1])))
def test_an_integers_texts_are_written_from_its_id_as_from_its_term(value):
    """An integer's id holds it: its N-Triples texts (a graph's) and its canonical text (a
    match's digest) are written from the id, as from the term the dictionary makes of it."""
    from dotr.rules.engine.ntriples import IdTexts, term_text
    from dotr.rules.engine.terms import FIRST_INT_ID, INT_OFFSET, TermDictionary, format_term

    d = TermDictionary()
    i = d.number(value)
    assert i >= FIRST_INT_ID
    assert IdTexts(d).both(i) == (term_text(d.term(i)), term_text(d.term(i), True))
    assert str(i - INT_OFFSET) == format_term(d.term(i))


canonical_terms = st.one_of(
    st.builds(ir.Name, st.from_regex(r"[A-Za-z_é][A-Za-zé0-9_]{0,5}", fullmatch=True)),
    st.builds(ir.Num, st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)),
    st.builds(ir.Iri, st.from_regex(r"http://(ex|other)\.org/[a-z#/]{0,6}", fullmatch=True)),
    st.builds(ir.Literal, st.text(st.characters(codec="utf-8"), max_size=5),
              st.sampled_from([None, "http://www.w3.org/2001/XMLSchema#date"]), st.none()))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([ir.Name("q"), ir.Iri("http://ex.org/p"), ir.Iri(ir.RDF_TYPE)]), st.lists(canonical_terms, max_size=3))
def test_a_fact_of_names_and_numbers_is_encoded_as_the_readable_path_encodes_it(pred, terms):
    """A printed fact of names and numbers is written as it is, in quotes; any other through its
    readable form: the same JSON either way."""
    d = TermDictionary()
    text = format_fact(d, (d.intern(pred), len(terms)), tuple(d.intern(t) for t in terms))
    readable = Readable({"": "http://ex.org/"})
    assert EncodedFacts(readable)._encode(text) == json.dumps(readable.fact(text), ensure_ascii=False)
