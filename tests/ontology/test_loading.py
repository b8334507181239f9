"""The background readers against the reference (rdflib's parse, terms as ``rdf_term`` makes
them): the compiled N-Triples scanner and pyoxigraph give the same graph on generated documents
and on real files, up to the names of blank nodes."""

from collections import Counter
from pathlib import Path

import pytest
import rdflib
from hypothesis import HealthCheck, given, settings, strategies as st
from rdflib.compare import to_isomorphic

from dotr.ontology.background import load_background
from dotr.ontology.rdf_files import BackgroundError, TripleBatch, _oxigraph, read_document
from dotr.rules.engine.nt_scan import scan
from dotr.rules.lang.ir import Iri, Literal, Num
from dotr.rules.lang.queries.sparql import BNODE_PREFIX, rdf_term

ROOT = Path(__file__).resolve().parents[2]
XSD = "http://www.w3.org/2001/XMLSchema#"
CITYBENCH = next((p / "shared" / "data" / "citybench" for p in ROOT.parents
                  if (p / "shared" / "data" / "citybench").is_dir()), None)


def _graph(triples) -> rdflib.Graph:
    """dotr terms back as an rdflib graph (blank nodes as blank nodes), to compare up to their names."""
    def node(term):
        if type(term) is str:
            term = Iri(term)
        if isinstance(term, Iri):
            return rdflib.BNode(term.value) if term.value.startswith(BNODE_PREFIX) else rdflib.URIRef(term.value)
        if isinstance(term, Num):  # (numbers compare by value: canonical() made them so on both sides)
            return rdflib.Literal(repr(float(term.value)), datatype=rdflib.URIRef(XSD + "double"))
        return rdflib.Literal(term.lexical, lang=term.lang, datatype=term.datatype)

    g = rdflib.Graph()
    for s, p, o in triples:
        g.add((node(s), node(p), node(o)))
    return g


def _batch_triples(batch: TripleBatch) -> list[tuple]:
    t, terms = batch.triples, batch.terms
    return [(terms[t[k]], terms[t[k + 1]], terms[t[k + 2]]) for k in range(0, len(t), 3)]


def _reference(data: bytes, fmt: str, base: str) -> list[tuple]:
    g = rdflib.Dataset() if fmt in ("nquads", "trig") else rdflib.Graph()
    g.parse(data=data, format={"turtle": "turtle", "nt": "nt", "xml": "xml", "nquads": "nquads", "trig": "trig",
                               "n3": "n3"}[fmt], publicID=base)
    quads = g.quads((None, None, None, None)) if fmt in ("nquads", "trig") else ((*t, None) for t in g)
    return [tuple(rdf_term(x) for x in q[:3]) for q in quads]


def _same(a, b) -> bool:
    if len(a) > 2000:  # (isomorphism is slow on large graphs: blank nodes as one placeholder, and counted)
        return _blanked(a) == _blanked(b) and _blanks(a) == _blanks(b)
    return to_isomorphic(_graph(a)) == to_isomorphic(_graph(b))


def _is_blank(term) -> bool:
    return (term if type(term) is str else getattr(term, "value", "")).__str__().startswith(BNODE_PREFIX)


def _blanked(triples) -> Counter:
    return Counter(tuple("_" if _is_blank(t) else Iri(t) if type(t) is str else t for t in triple)
                   for triple in triples)


def _blanks(triples) -> int:
    return len({t for triple in triples for t in triple if _is_blank(t)})


# ------------------------------------------------------------------------------ generated
_label = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,5}", fullmatch=True)
_iri = st.one_of(
    st.builds(lambda a, b: f"http://ex.org/{a}/{b}", _label, _label),
    st.builds(lambda a: f"http://ex.org/n#{a}", _label),
    st.builds(lambda a: f"urn:x:{a}%20y", _label),
    st.builds(lambda a: f"http://ex.org:8080/{a}?q=1", _label),
    st.builds(lambda a: f"http://ex.org/caf\u00e9/{a}", _label),  # (not the scanner's: pyoxigraph reads it)
)
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_literal = st.one_of(
    st.builds(lambda s: (s, None, None), _text),
    st.builds(lambda s, lang: (s, lang, None), _text, st.sampled_from(["en", "EN-us", "de-CH-1996", "fr"])),
    st.builds(lambda n: (str(n), None, XSD + "integer"), st.integers(-10**20, 10**20)),
    st.builds(lambda s: (s, None, XSD + "decimal"), st.sampled_from(["1.50", "-0.0", "3", "1e3"])),
    st.builds(lambda s: (s, None, XSD + "double"), st.sampled_from(["1.5E2", "INF", "-0", "2.0"])),
    st.builds(lambda s: (s, None, XSD + "boolean"), st.sampled_from(["true", "false", "1", "0"])),
    st.builds(lambda s: (s, None, XSD + "dateTime"), st.sampled_from(["2020-01-01T00:00:00Z", "2020-01-01T10:00:00"])),
    st.builds(lambda s: (s, None, XSD + "string"), _text),
    st.builds(lambda s: (s, None, "http://ex.org/dt"), _text),
)


def _nt_term(term) -> str:
    kind, value = term
    if kind == "iri":
        return f"<{value}>"
    if kind == "blank":
        return f"_:{value}"
    lexical, lang, datatype = value
    escaped = lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"' + (f"@{lang}" if lang else f"^^<{datatype}>" if datatype else "")


_subject = st.one_of(st.tuples(st.just("iri"), _iri), st.tuples(st.just("blank"), _label))
_object = st.one_of(_subject, st.tuples(st.just("literal"), _literal))
_triples = st.lists(st.tuples(_subject, _iri.map(lambda i: ("iri", i)), _object), min_size=1, max_size=12)


def _document(triples, crlf: bool, comments: bool) -> bytes:
    lines = [f"{_nt_term(s)} {_nt_term(p)}\t{_nt_term(o)} ." for s, p, o in triples]
    if comments:
        lines.insert(0, "# a comment")
        lines.append("")
    return ("\r\n" if crlf else "\n").join(lines).encode() + b"\n"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_triples, st.booleans(), st.booleans())
def test_n_triples_readers_agree_with_rdflib(triples, crlf, comments):
    data = _document(triples, crlf, comments)
    expected = _reference(data, "nt", "file:///bg.nt")
    batch = read_document(data, "nt", "bg.nt", "file:///bg.nt")  # the scanner where it can
    assert _same(_batch_triples(batch), expected)
    assert _same(_batch_triples(_oxigraph(data, "nt", "bg.nt", "file:///bg.nt")), expected)
    plain = all(t[0] != "iri" or t[1].isascii() for triple in triples for t in triple) and \
        all(t[0] != "literal" or not any(c in t[1][0] for c in '"\\\n\r') for t in (tr[2] for tr in triples))
    assert (scan(data) is not None) == plain  # the scanner reads what it should, and no more


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_triples, st.sampled_from(["turtle", "xml", "nquads", "trig", "n3"]))
def test_every_format_agrees_with_rdflib(triples, fmt):
    if fmt in ("nquads", "trig"):  # the same lines in a named graph
        lines = _document(triples, False, False).decode().splitlines()
        text = "\n".join(f"{line[:-1]} <http://ex.org/g> ." for line in lines) if fmt == "nquads" \
            else "<http://ex.org/g> {\n" + "\n".join(lines) + "\n}"
        data = text.encode()
    else:
        graph = rdflib.Graph()
        graph.parse(data=_document(triples, False, False), format="nt")
        try:
            data = graph.serialize(format=fmt).encode()
        except Exception:  # (rdflib's writers cannot write every graph: RDF/XML's element names, controls)
            return
    try:
        expected = _reference(data, fmt, "file:///bg")
    except Exception:  # (nor can its readers read every document it writes: some non-ASCII literals, controls)
        return
    assert _same(_batch_triples(read_document(data, fmt, "bg", "file:///bg")), expected)


def test_scanner_refuses_what_it_does_not_read():
    for line in [b'<rel> <http://e/p> <http://e/o> .', b'<http://e/s> <http://e/p> "a\\"b" .',
                 b'<http://e/s> <http://e/p> <http://e/o>', b'<http://e/s> <http://e/p> <http://e/o> . # c',
                 b'<http://e:x/s> <http://e/p> <http://e/o> .', b'<http://e/s#a#b> <http://e/p> <http://e/o> .',
                 b'<http://e/s> <http://e/p> <http://e/%zz> .', b'@prefix : <http://e/> .']:
        assert scan(line + b"\n") is None, line


def test_literal_terms_as_before():
    data = ('<http://e/s> <http://e/p> "1"^^<http://www.w3.org/2001/XMLSchema#boolean>, "x"@EN, "007"^^'
            '<http://www.w3.org/2001/XMLSchema#integer>, "2.50"^^<http://www.w3.org/2001/XMLSchema#decimal> .').encode()
    terms = read_document(data, "turtle", "bg.ttl", "file:///bg.ttl").terms
    assert terms[2:] == [Literal("true", XSD + "boolean"), Literal("x", lang="en"), Num(7), Num(2.5)]


# ------------------------------------------------------------------------------ real files
REAL = sorted([*ROOT.glob("examples/*/*.ttl"), *ROOT.glob("examples/*/*.nt"), *ROOT.glob("tests/**/*.ttl"),
               *ROOT.glob("tests/**/*.nt"), *ROOT.glob("tests/**/*.rdf")])


@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(ROOT)))
def test_real_files_agree_with_rdflib(path):
    fmt = {".ttl": "turtle", ".nt": "nt", ".rdf": "xml"}[path.suffix]
    data = path.read_bytes()
    try:
        expected = _reference(data, fmt, path.resolve().as_uri())
    except Exception:
        pytest.skip("not a file rdflib reads")
    (batch,) = load_background([path], notice=lambda text: None)
    assert _same(_batch_triples(batch), expected)


@pytest.mark.skipif(CITYBENCH is None, reason="the CityBench sample is not beside the project")
def test_citybench_sensor_repository_agrees_with_rdflib():
    path = CITYBENCH / "SensorRepository.n3"
    (batch,) = load_background([path])
    assert len(batch) == 44213
    assert _same(_batch_triples(batch), _reference(path.read_bytes(), "n3", path.resolve().as_uri()))


def test_bad_n_triples_falls_back_and_names_the_line(tmp_path):
    path = tmp_path / "bad.nt"
    path.write_text("<http://e/s> <http://e/p> <http://e/o> .\n<http://e/s> <http://e/p> .\n")
    with pytest.raises(BackgroundError, match=r"bad.nt.*line 2"):
        load_background([path])
