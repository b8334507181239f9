"""An event's SELECT read by dotr's own reader (``rules.lang.queries.select``) is the query the
SPARQL planner makes of rdflib's algebra: the same selected variables, atoms and comparisons on
generated queries (terms of every kind the reader takes, filters anywhere in the group, and
what it leaves to rdflib: DISTINCT, a negative number or a decimal in a filter, ``=``, ``&&``,
an OPTIONAL, a blank node, a selected variable no triple binds), the same rows on generated
stores, the same diagnostics from ``dotr check``; a program whose events are such queries
never loads rdflib."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from dotr.rules import check_text, ir
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.sparql.algebra import compile_query_event as compile_by_rdflib
from dotr.rules.engine.sparql.event_compiler import compile_event
from dotr.rules.engine.sparql.operators import BGP
from dotr.rules.engine.sparql.planner import compile_pattern
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.ir import SparqlText
from dotr.rules.lang.queries.select import read_select
from dotr.rules.lang.queries.sparql import parse_select

from tests.rules.lang.run_imports import imported_by_run

PREFIXES = {"": "http://ex.org/", "ex": "http://ex.org/ns#"}

subjects = st.sampled_from(["?s", "$s", "?x", ":a", "ex:b", "<http://ex.org/a>"])
verbs = st.sampled_from(["a", ":p", ":q", "ex:q", "<http://ex.org/p>", "?p"])
objects = st.one_of(subjects, st.sampled_from(["?v", "?w", "3", "0", "-2", '"x"', '"x"@en', ":C"]))
operands = st.sampled_from(["?v", "?w", "?s", "3", "0", "12"])
ops = st.sampled_from(["<", "<=", ">", ">="])
#: what the reader leaves to rdflib
others = st.sampled_from(["FILTER(?v = 3)", "FILTER(?v > -1)", "FILTER(?v > 1.5)", "FILTER(?v > 1 && ?w < 4)",
                          "OPTIONAL { ?s :r ?o }", "_:b :p ?v .", "FILTER(?v + 1 > ?w)", "{ ?s :p ?v }"])


@st.composite
def queries(draw):
    body = []
    for _ in range(draw(st.integers(1, 3))):
        s, p = draw(st.one_of(st.just("?s"), subjects)), draw(verbs)
        body.append(f"{s} {p} " + " , ".join(draw(st.lists(st.one_of(st.just("?v"), objects), min_size=1, max_size=2))))
        if draw(st.booleans()):
            body.append(f"; {draw(verbs)} {draw(objects)}")
        body.append(draw(st.sampled_from([" . ", " .\n", " "])))
        if draw(st.integers(0, 2)) == 0:
            body.append(f"{draw(st.sampled_from(['filter', 'FILTER', 'Filter']))}"
                        f"{draw(st.sampled_from(['', ' ']))}({draw(operands)} {draw(ops)} {draw(operands)})"
                        f"{draw(st.sampled_from(['', ' . ', ' ']))}")
        if draw(st.integers(0, 5)) == 0:
            body.append(draw(others) + " ")
    common = st.sampled_from(["?s", "$s", "?s", "?v"])  # (mostly variables every query has)
    variables = draw(st.lists(st.one_of(common, st.sampled_from(["?w", "?x", "?p"])) if draw(st.booleans())
                              else common, min_size=1, max_size=3))
    head = draw(st.sampled_from(["select", "select", "SELECT", "select distinct"]))
    selected = "*" if draw(st.integers(0, 3)) == 0 else " ".join(variables)
    where = draw(st.sampled_from(["where ", "WHERE ", ""]))
    return f"{head} {selected} {where}{{ {''.join(body)}}}"


@settings(max_examples=500, deadline=None)
@given(queries())
def test_a_simple_select_is_read_as_the_planner_reads_rdflibs(text):
    own = read_select(text, PREFIXES)
    query, _ = parse_select(SparqlText(text), PREFIXES)
    if own is None:
        return
    assert query is not None, "the reader read a query rdflib rejects"
    root = compile_pattern(query.algebra["p"], TermDictionary())
    assert isinstance(root, BGP) and not root.residual
    assert own.vars == tuple(str(v) for v in query.algebra["PV"])
    assert Counter(own.atoms) == Counter(root.conj.atoms)
    assert Counter(own.comparisons) == Counter(root.conj.extra)


facts = st.lists(st.tuples(st.sampled_from([":p", ":q", "ex:q", ir.RDF_TYPE]),
                           st.sampled_from([":a", "ex:b", ":c"]),
                           st.sampled_from([":a", ":C", "0", "2", "3", "5", "14", '"x"'])), max_size=12)


@settings(max_examples=300, deadline=None)
@given(queries(), facts)
def test_an_event_of_a_simple_select_has_the_rows_rdflibs_gives(text, data):
    own = read_select(text, PREFIXES)
    if own is None or not own.vars:
        return
    params = ", ".join("?" + v for v in own.vars)
    checked = check_text(f"@prefix : <http://ex.org/> .\n@prefix ex: <http://ex.org/ns#> .\n"
                         f"event E({params}) := {text} .\n")
    assert checked.ok, checked.diagnostics
    event = checked.program.events[0]
    d, store = TermDictionary(), DictStore()
    for p, s, o in data:
        pred = ir.Iri(p) if p.startswith("http") else ir.Iri(PREFIXES[p.split(":")[0]] + p.split(":")[1])
        obj = ir.Num(int(o)) if o.isdigit() else ir.Literal("x") if o.startswith('"') else \
            ir.Iri(PREFIXES[""] + o[1:])
        store.add((d.intern(pred), 2), (d.intern(ir.Iri(PREFIXES[""] + s[1:] if s[0] == ":" else
                                                        PREFIXES["ex"] + s[3:])), d.intern(obj)), 10)
    ours = compile_event(event, checked.program.prefixes, d, checked.queries)
    reference = compile_by_rdflib(event, checked.program.prefixes, d, checked.queries)
    assert ours.conjunction is not None
    assert ours.run(store) == reference.run(store)


@settings(max_examples=200, deadline=None)
@given(queries())
def test_dotr_check_says_the_same_of_a_simple_select_as_of_rdflibs(text):
    source = f"@prefix : <http://ex.org/> .\n@prefix ex: <http://ex.org/ns#> .\nevent E(?s) := {text} .\n"
    own = check_text(source)
    import dotr.rules.lang.validate as validate

    reader, validate.read_select = validate.read_select, lambda *_: None
    try:
        reference = check_text(source)
    finally:
        validate.read_select = reader
    assert [str(d) for d in own.diagnostics] == [str(d) for d in reference.diagnostics]
    assert own.analysis.graphs_reach_events == reference.analysis.graphs_reach_events


def test_a_program_of_simple_event_queries_does_not_load_rdflib(tmp_path):
    rules = tmp_path / "hot.dotr"
    rules.write_text("""@prefix : <http://example.org/> .
event Hot(?s, ?v) := select ?s ?v where { ?s :temp ?v filter(?v > 30) } .
event Warm(?s, ?v) := select ?s ?v where { ?s :temp ?v filter(?v > 20) } .
pattern Alarm from Hot and last Warm(s = Hot.s) within 10 from Hot
  construct { _:m :sensor ?s } with ?s = Hot.s .
""")
    (tmp_path / "s.jsonl").write_text('{"t": 1, "facts": [":temp(:a, 25)"]}\n{"t": 5, "facts": [":temp(:a, 35)"]}\n')
    assert imported_by_run(rules, tmp_path / "s.jsonl", tmp_path / "out.jsonl") == []
    assert "<urn:dotr:match:Alarm:5:" in (tmp_path / "out.jsonl").read_text()
