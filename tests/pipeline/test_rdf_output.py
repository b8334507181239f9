"""TriG and N-Quads written from the fact texts (pipeline/sinks/rdf.py) are the bytes the
rdflib-based writer wrote (tests/pipeline/rdf_reference.py), on generated time points: IRIs that
need escaping, prefixes that do and do not apply, literals of every kind, facts that are not
triples, literal subjects, pattern graphs, composite events and removed facts (``--changes``), one
time point after another through one writer (what it keeps from one to the next)."""

import io
import string

from hypothesis import given, settings, strategies as st

from dotr.pipeline.records import Result
from dotr.pipeline.sinks.rdf import RdfWriter
from dotr.rules import ir
from dotr.rules.engine.ntriples import document
from dotr.rules.engine.terms import format_term

from .rdf_reference import ReferenceRdfWriter

NAMESPACES = ["http://ex.org/", "http://ex.org/a/", "http://ex.org/a/b#", "urn:dotr:", "urn:x:",
              ir.XSD, "http://www.w3.org/1999/02/22-rdf-syntax-ns#"]
#: local names: plain ones (a prefix applies), and ones with characters TriG, N-Triples or the
#: fact's printed form treat apart
LOCAL = st.one_of(st.sampled_from(["a", "b", "Temp", "_x", "a-b", "c1", "integer", "x.y", "1a", "", "a:b"]),
                  st.text(string.ascii_letters + string.digits + ' <>"{}|^`\\,()é#/:', max_size=6))
LEXICAL = st.one_of(st.sampled_from(["", "x", "52", "true", "1", "a,b", "a>(b", 'say "hi"', "a\\", "\\\"",
                                     "line\nbreak", "tab\there", "cr\r", "é ü 字", ",", '",x']),
                    st.text(max_size=8))
#: (not xsd:token nor xsd:normalizedString: rdflib rewrote their whitespace, the writer keeps the
#: literal as dotr holds it and prints it in JSON Lines)
DATATYPES = st.one_of(st.sampled_from([ir.XSD + t for t in ("integer", "decimal", "double", "float", "boolean",
                                                          "date", "string", "int")]),
                      st.builds(lambda ns, local: ns + local, st.sampled_from(NAMESPACES), LOCAL))

iris = st.builds(lambda ns, local: ir.Iri(ns + local), st.sampled_from(NAMESPACES), LOCAL)
literals = st.one_of(
    st.builds(ir.Literal, LEXICAL),
    st.builds(lambda lex, lang: ir.Literal(lex, None, lang), LEXICAL, st.sampled_from(["en", "en-gb", "de-CH-1996"])),
    st.builds(lambda lex, dt: ir.Literal(lex, dt), LEXICAL, DATATYPES))
numbers = st.one_of(st.integers(-10**20, 10**20).map(ir.Num),
                    st.floats(allow_nan=True, allow_infinity=True).map(ir.Num),
                    st.sampled_from([2.5, -0.0, 1e20, 1.5e-7, 0.1]).map(ir.Num))
names = st.sampled_from(["roomA", "a", "true", "x_1"]).map(ir.Name)
terms = st.one_of(iris, iris, literals, numbers, names).map(ir.canonical)


@st.composite
def facts(draw) -> str:
    """A fact as the reasoner prints it (``format_fact``): mostly triples, and facts that are
    not (another arity, a name as predicate), literal subjects among them."""
    if draw(st.integers(0, 3)):  # a triple, mostly with an IRI subject
        args = (draw(st.one_of(iris, iris, terms)), draw(terms))
        pred = f"<{draw(iris).value}>"
    else:
        args = draw(st.lists(terms, min_size=0, max_size=3))
        pred = draw(st.one_of(iris.map(lambda t: f"<{t.value}>"), st.sampled_from(["p", "knows"])))
    return f"{pred}({','.join(format_term(a) for a in args)})" if args else pred


#: graph terms: what a pattern's construct or a query's template writes (no literal subject, no
#: IRI with a space other than ASCII's: rdflib's N-Triples parser, which the reference reads
#: graphs with, takes neither; no datatype IRI that needs escaping: rdflib writes it as it is)
graph_iris = st.builds(lambda ns, local: ir.Iri(ns + local), st.sampled_from(NAMESPACES),
                       st.text(string.ascii_letters + string.digits + '#/é <>"{}|^`\\,()', max_size=4))
graph_literals = st.builds(lambda lex, dt: ir.Literal(lex, dt), LEXICAL, st.sampled_from(
    [ir.XSD + t for t in ("decimal", "double", "boolean", "date", "int")] + ["http://ex.org/t"]))
graph_terms = st.one_of(graph_iris, numbers.filter(lambda n: n.value == n.value), literals.filter(
    lambda lit: lit.datatype is None), graph_literals, names).map(ir.canonical)
graphs = st.lists(st.tuples(graph_iris, graph_iris, graph_terms), min_size=1, max_size=4).map(document)
events = st.fixed_dictionaries({
    "type": st.sampled_from(["Fire", "Alarm"]), "pattern": st.sampled_from(["Fire", 'a "quoted"\npattern']),
    "attributes": st.dictionaries(st.sampled_from(["area", "temp", "who"]), terms.map(format_term), max_size=3)})


@st.composite
def results(draw) -> list[Result]:
    """Time points in order, each drawing facts partly from those before (facts that hold on);
    with ``--changes`` (drawn), each keeping the added facts and listing the removed ones."""
    pool: list[str] = []
    out = []
    changes, previous = draw(st.booleans()), set()
    for t in range(draw(st.integers(1, 4))):
        new = draw(st.lists(facts(), max_size=6))
        kept = draw(st.lists(st.sampled_from(pool), max_size=6)) if pool else []
        pool += new
        result = Result(t, sorted(set(new + kept)), graphs=draw(st.lists(graphs, max_size=2)),
                        events=draw(st.lists(events, max_size=2)))
        if changes:
            previous = result.keep_changes(previous)
        out.append(result)
    return out


PREFIX_SETS = [{}, {"": "http://ex.org/", "ex": "http://ex.org/a/", "b": "http://ex.org/a/b#"},
               {"dotr": "urn:x:", "x": "http://ex.org/a/b#"}]


def _written(writer_class, batch, prefixes, full_iris, fmt, **options) -> str:
    out = io.StringIO()
    writer = writer_class(out, prefixes, full_iris, fmt, **options)
    for result in batch:
        writer.write(result)
    return out.getvalue()


@settings(max_examples=300, deadline=None)
@given(results(), st.sampled_from(PREFIX_SETS), st.booleans(), st.sampled_from(["trig", "nquads"]),
       st.sampled_from([200_000, 2]))
def test_the_same_bytes_as_the_rdflib_writer(batch, prefixes, full_iris, fmt, bound):
    expected = _written(ReferenceRdfWriter, batch, prefixes, full_iris, fmt)
    assert _written(RdfWriter, batch, prefixes, full_iris, fmt, bound=bound) == expected


def test_a_fact_that_holds_on_is_written_with_the_prefixes_of_each_time_point():
    """``dotr:`` is a prefix only at a time point with events: a fact kept from one without
    events is written again with it."""
    fact = "<urn:dotr:p>(<urn:dotr:a>,<urn:dotr:b>)"
    batch = [Result(0, [fact]), Result(1, [fact], events=[{"type": "Fire", "pattern": "Fire", "attributes": {}}]),
             Result(2, [fact])]
    written = _written(RdfWriter, batch, {}, False, "trig")
    assert "dotr:a dotr:p dotr:b ." in written and "<urn:dotr:a> <urn:dotr:p> <urn:dotr:b> ." in written
    assert written == _written(ReferenceRdfWriter, batch, {}, False, "trig")


def test_a_graph_line_with_a_literal_subject_is_left_out():
    """RDF has no literal subjects: such a line of a pattern's graph is left out, as such a fact
    is (the rdflib writer failed on it)."""
    doc = document([(ir.Num(1), ir.Iri("http://ex.org/p"), ir.Iri("http://ex.org/o")),
                    (ir.Iri("http://ex.org/s"), ir.Iri("http://ex.org/p"), ir.Literal("x"))])
    assert _written(RdfWriter, [Result(5, graphs=[doc])], {}, True, "nquads") == \
        '<http://ex.org/s> <http://ex.org/p> "x" <urn:dotr:t:5> .\n'
