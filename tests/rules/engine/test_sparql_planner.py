"""The SPARQL planner (``rules.engine.sparql``) against rdflib's SPARQL evaluator on generated
queries and graphs: nested groups, OPTIONAL (with filters), UNION, MINUS, FILTER, BIND, VALUES,
subqueries (with their own variables), DISTINCT and aggregates, each query compared as a bag of
solutions over its selected variables, on both fact stores.

rdflib is itself wrong on some shapes, which the generator avoids:
- a subquery joined after a pattern that binds one of its unselected variables is evaluated with
  that variable bound (its unselected variables are named apart here: ?i1, ?i2);
- a filter (or an OPTIONAL's condition) nested below a join sees the variables bound outside its
  group (rdflib evaluates a join's right side under the left side's bindings): generated filters
  read only variables their own group binds;
- MINUS and OPTIONAL whose right side is a group with variables bound outside it only, the same
  (``{ ?a :v ?v . { MINUS { ?a :v ?v } } }``: rdflib removes the solution, which the empty
  solution before the MINUS, sharing no variable with it, keeps): below the query's group, their
  variables not bound before them in their group are renamed apart;
- an OPTIONAL in a nested group that shares a variable with the patterns outside the group but not
  with those before it in its group (a pattern that is not "well designed": ``?a :q ?a {
  OPTIONAL { ?a :p ?b } }`` keeps ``?a`` unextended, where the group's own solutions do not join):
  below the query's group, an OPTIONAL's variables not bound before it are renamed apart;
- VALUES on the left of an OPTIONAL (first in its group, or in a group before it): the rows the
  OPTIONAL does not extend are lost (VALUES come last, in the query's group, here);
- VALUES with a row twice gives it once (a bag has it twice): rows are distinct here;
- GROUP BY over no solutions gives one solution binding nothing (none is right);
- SUM over a string raises and AVG gives 0 (the aggregate should be unbound): not generated;
- a string ordered against a number (``FILTER("x" > 0)``, a type error: the filter fails) is true
  for ``>`` and ``>=``: no ordering comparison is generated over data with strings.

Where dotr's bag differs from rdflib's all the same, pyoxigraph (which passes the W3C SPARQL test
suite) decides: rdflib is wrong on shapes the generator does not avoid too (an OPTIONAL first in
a group, then a pattern, then a subquery selecting the pattern's variable: rdflib gives the
subquery's repeated solutions once; ``test_rdflib_loses_repeated_solutions_after_a_leading_optional``).
"""

from __future__ import annotations

import re
from collections import Counter

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rdflib import RDF, Literal, Namespace

from dotr.rules import ir
from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.sparql.algebra import compile_select
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.queries.sparql import parse_select, rdf_term
from tests.rules.engine.sparql_reference import comparable

EX = Namespace("http://ex.org/")
PREFIXES = {"": "http://ex.org/"}
NODES = ["a", "b", "c", "d"]
ENTITIES = ["?a", "?b", "?c", "?d"]  # variables bound to nodes
VALUES = ["?v", "?w"]  # variables bound to the objects of :v (numbers, now and then a string)

triples = st.lists(st.one_of(
    st.tuples(st.sampled_from(NODES).map(EX.term), st.sampled_from([EX.p, EX.q, EX.r]),
              st.sampled_from(NODES).map(EX.term)),
    st.tuples(st.sampled_from(NODES).map(EX.term), st.just(EX.v),
              st.one_of(st.integers(0, 5).map(Literal), st.sampled_from([Literal("x"), Literal(2.5)]))),
    st.tuples(st.sampled_from(NODES).map(EX.term), st.just(RDF.type), st.sampled_from([EX.C, EX.D])),
), max_size=14)


class _Query:
    """Draws a query text; ``bound`` tracks the variables the group being drawn binds."""

    def __init__(self, draw):
        self.draw = draw
        self.fresh = 0

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def triple(self, entities: list[str]) -> str:
        kind = self.draw(st.integers(0, 9))
        s = self.pick(entities + [":" + n for n in NODES[:2]])
        if kind < 5:
            return f"{s} {self.pick([':p', ':q', ':r'])} {self.pick(entities + [':a', ':c'])}"
        if kind < 7:
            return f"{s} :v {self.pick(VALUES + ['2', '4'])}"
        if kind < 9:
            return f"{s} a {self.pick([':C', ':D', '?k'])}"
        return f"{s} ?pred {self.pick(entities)}"

    def expr(self, names: list[str], depth: int = 0) -> str:
        values = [n for n in names if n in VALUES]
        entities = [n for n in names if n not in VALUES and n not in ("?pred", "?k")]
        kind = self.draw(st.integers(0, 8 if depth < 2 else 4))
        if kind <= 1 and values:
            return f"{self.pick(values)} {self.pick(['<', '<=', '>', '>=', '=', '!='])} {self.draw(st.integers(0, 5))}"
        if kind == 2 and len(values) >= 1:
            left = self.pick(values)
            return f"{left} {self.pick(['+', '-', '*'])} {self.pick(values + ['1'])} {self.pick(['<', '>='])} 4"
        if kind == 3 and entities:
            return f"{self.pick(entities)} {self.pick(['=', '!='])} {self.pick(entities + [':a', ':b'])}"
        if kind == 4 and names:
            return f"{self.pick(['', '!'])}bound({self.pick(names)})"
        if kind in (5, 6):
            op = "&&" if kind == 5 else "||"
            return f"({self.expr(names, depth + 1)} {op} {self.expr(names, depth + 1)})"
        if kind == 7:
            return f"!({self.expr(names, depth + 1)})"
        if values:
            return f"{self.pick(values)} < {self.pick(values)}"
        return "true"

    def _private(self, inner: str, new: list[str], bound: list[str]) -> tuple[str, list[str]]:
        """``inner`` with its variables outside ``bound`` renamed apart, and those it may bind."""
        self.fresh += 1

        def rename(match: re.Match) -> str:
            name = match.group(0)
            return name if name in bound else f"{name}_{self.fresh}"

        return re.sub(r"\?\w+", rename, inner), [n for n in new if n in bound]

    def group(self, depth: int, entities: list[str]) -> tuple[str, list[str]]:
        """A group graph pattern's inside, and the variables it may bind."""
        parts, names, values = [], [], []

        def add(text: str, new: list[str]) -> None:
            parts.append(text)
            names.extend(n for n in new if n not in names)

        for _ in range(self.draw(st.integers(1, 3 if depth < 2 else 2))):
            kind = self.draw(st.integers(0, 11 if depth < 2 else 1))
            if kind <= 2:
                block = [self.triple(entities) for _ in range(self.draw(st.integers(1, 3)))]
                add(" . ".join(block) + " .", _vars(" ".join(block)))
            elif kind == 3:
                inner, new = self.group(depth + 1, entities)
                add("{ " + inner + " }", new)
            elif kind == 4:
                inner, new = self.group(depth + 1, entities)
                if depth > 0:  # (well designed: see the module's docstring)
                    inner, new = self._private(inner, new, names)
                add("OPTIONAL { " + inner + " }", new)
            elif kind == 5:
                left, new1 = self.group(depth + 1, entities)
                right, new2 = self.group(depth + 1, entities)
                add("{ " + left + " } UNION { " + right + " }", new1 + new2)
            elif kind == 6:
                inner, _ = self.group(depth + 1, entities)
                if depth > 0:  # (its variables bound outside its group only: see the module's docstring)
                    inner, _ = self._private(inner, [], names)
                add("MINUS { " + inner + " }", [])
            elif kind == 7 and names:
                parts.append(f"FILTER({self.expr(names)})")
            elif kind == 8 and names:
                self.fresh += 1
                target = f"?z{self.fresh}"
                source = self.pick(names)
                value = source if source not in VALUES else f"{source} * 2"
                add(f"BIND({value} AS {target})", [])
            elif kind == 9 and depth == 0:
                var = self.pick(entities)
                rows = " ".join(self.draw(st.lists(st.sampled_from([":a", ":b", ":c", "UNDEF"]), min_size=1,
                                                   max_size=3, unique=True)))
                values.append((f"VALUES {var} {{ {rows} }}", [var]))
            elif kind == 10:
                inner, new = self.group(depth + 1, entities + ["?i1", "?i2"])
                selected = [n for n in new if n not in ("?i1", "?i2")] or ["?a"]
                distinct = self.pick(["", "DISTINCT "])
                add("{ SELECT " + distinct + " ".join(selected) + " WHERE { " + inner + " } }", selected)
            else:
                block = [self.triple(entities) for _ in range(2)]
                add(" . ".join(block) + " .", _vars(" ".join(block)))
        for text, new in values:  # (last in the group: see the module's docstring)
            add(text, new)
        return " ".join(parts), names


def _vars(text: str) -> list[str]:
    out: list[str] = []
    for word in text.replace("(", " ").replace(")", " ").split():
        if word.startswith("?") and word not in out:
            out.append(word.rstrip("."))
    return out


@st.composite
def queries(draw) -> str:
    q = _Query(draw)
    where, names = q.group(0, ENTITIES)
    kind = draw(st.integers(0, 5))
    if kind == 0 and names:
        key = draw(st.sampled_from(names))
        counted = draw(st.sampled_from(names))
        aggregate = draw(st.sampled_from([f"COUNT({counted})", f"COUNT(DISTINCT {counted})", "COUNT(*)",
                                          "SUM(?v)", "AVG(?v)", "MIN(?v)", "MAX(?v)"]))
        return f"SELECT {key} ({aggregate} AS ?n) WHERE {{ {where} }} GROUP BY {key}"
    if kind == 1:
        return f"SELECT * WHERE {{ {where} }}"
    selected = draw(st.lists(st.sampled_from(names or ["?a"]), min_size=1, max_size=3, unique=True))
    return f"SELECT {draw(st.sampled_from(['', 'DISTINCT ']))}{' '.join(selected)} WHERE {{ {where} }}"


def _store(kind, data, d: TermDictionary):
    store = kind(lambda pid: isinstance(d.term(pid), ir.Iri))
    for s, p, o in data:
        store.add((d.intern(rdf_term(p)), 2), (d.intern(rdf_term(s)), d.intern(rdf_term(o))), INF)
    return store


def _expected(query: str, data) -> Counter:
    graph = rdflib.Graph()
    for t in data:
        graph.add(t)
    result = graph.query("PREFIX : <http://ex.org/>\n" + query)
    if " GROUP BY " in query:
        where = query[query.index(" WHERE ") + 7:query.rindex(" GROUP BY ")]
        if not graph.query("PREFIX : <http://ex.org/>\nSELECT * WHERE " + where).bindings:
            return Counter()  # (rdflib: one empty solution; a group over no solutions has none)
    names = set(result.vars)
    # (the bindings: iterating the result leaves out a solution that binds no selected variable)
    return Counter(frozenset((str(k), comparable(rdf_term(v))) for k, v in row.items() if k in names and v is not None)
                   for row in result.bindings)


def _actual(query: str, data, kind) -> Counter:
    d = TermDictionary()
    text = ir.SparqlText(query)
    parsed, diags = parse_select(text, PREFIXES)
    assert parsed is not None, diags
    names = [str(v) for v in parsed.algebra["PV"]]
    store = _store(kind, data, d)
    return Counter(frozenset((n, comparable(d.term(sol[n]))) for n in names if n in sol)
                   for sol in compile_select(text, PREFIXES, d, parsed).run(store))


def _ox_term(term):
    if isinstance(term, Literal):
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype))) if term.datatype \
            else ox.Literal(str(term), language=term.language)
    return ox.NamedNode(str(term))


def _rdflib_term(term):
    if isinstance(term, ox.Literal):
        return Literal(term.value, lang=term.language, datatype=None if term.language else rdflib.URIRef(term.datatype.value))
    return rdflib.BNode(term.value) if isinstance(term, ox.BlankNode) else rdflib.URIRef(term.value)


def _by_oxigraph(query: str, data) -> Counter:
    """The bag of solutions pyoxigraph gives, as :func:`_expected` gives rdflib's."""
    store = ox.Store()
    for triple in data:
        store.add(ox.Quad(*map(_ox_term, triple)))
    result = store.query("PREFIX : <http://ex.org/>\n" + query)
    names = [v.value for v in result.variables]
    return Counter(frozenset((n, comparable(rdf_term(_rdflib_term(sol[n])))) for n in names if sol[n] is not None)
                   for sol in result)


def _compare(query: str, data) -> None:
    if "SUM(" in query or "AVG(" in query or re.search(r" [<>]=? ", query):
        assume(not any(isinstance(o, Literal) and isinstance(o.value, str) for _, _, o in data))
    expected = _expected(query, data)
    for kind in (DictStore, NativeStore):
        actual = _actual(query, data, kind)
        if actual != expected:  # (rdflib can be wrong: the module docstring)
            expected = _by_oxigraph(query, data)
        assert actual == expected, (kind.__name__, query)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(queries(), triples)
def test_queries_agree_with_rdflib(query, data):
    _compare(query, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(queries(), triples)
def test_queries_agree_with_rdflib_long(query, data):
    _compare(query, data)


def test_rdflib_loses_repeated_solutions_after_a_leading_optional():
    """The subquery gives ?a = :a twice (once per :p object), each joining ?a :p ?a: two solutions,
    as dotr and pyoxigraph give; rdflib gives one."""
    data = [(EX.a, EX.p, EX.a), (EX.a, EX.p, EX.b)]
    query = "SELECT ?a WHERE { OPTIONAL { ?x :v ?y . } ?a :p ?a . { SELECT ?a WHERE { ?a :p ?i1 . } } }"
    two = Counter({frozenset({("a", ir.Iri(str(EX.a)))}): 2})
    assert _by_oxigraph(query, data) == two and _expected(query, data) != two
    for kind in (DictStore, NativeStore):
        assert _actual(query, data, kind) == two
    _compare(query, data)


CITYBENCH_SHAPES = {
    # the type patterns outside the groups that use their variables, as CityBench writes them
    "apart": """SELECT ?o1 ?o2 ?v1 ?v2 WHERE { ?p1 a :Level . ?p2 a :Level .
        { ?o1 :property ?p1 . ?o1 :value ?v1 . ?o1 :by :s1 . }
        { ?o2 :property ?p2 . ?o2 :value ?v2 . ?o2 :by :s2 . } }""",
    "filter across groups": """SELECT ?o1 ?o2 WHERE { ?p1 a :Level . ?p2 a :Level .
        { ?o1 :property ?p1 . ?o1 :value ?v1 . ?o1 :by :s1 . }
        { ?o2 :property ?p2 . ?o2 :value ?v2 . ?o2 :by :s2 . }
        FILTER(?v1 < 1 || ?v2 < 1) }""",
}


@pytest.mark.parametrize("shape", CITYBENCH_SHAPES)
def test_groups_written_apart_join_as_one_conjunction(shape):
    """The CityBench shape: many :Level properties, few observations of two sensors. The groups
    and the type patterns become one conjunction, which starts from a sensor's observations and
    reads each :Level membership as a test of a property already bound: no Level x Level cross
    product (which joining the groups as written builds)."""
    data = [(EX[f"level{i}"], RDF.type, EX.Level) for i in range(300)]
    for n in range(3):
        for s, o in (("s1", f"x{n}"), ("s2", f"y{n}")):
            data += [(EX[o], EX.property, EX[f"level{n}"]), (EX[o], EX.value, Literal(n)), (EX[o], EX.by, EX[s])]
    query = CITYBENCH_SHAPES[shape]
    d = TermDictionary()
    store = _store(DictStore, data, d)
    root = compile_select(ir.SparqlText(query), PREFIXES, d)._root
    conj = getattr(root, "inner", root).conj
    atoms = conj.order(store, ())
    preds = [conj.atoms[i].pred.value.rsplit("/", 1)[-1] for i in atoms]
    assert preds[0] == "by"
    for i, k in enumerate(atoms):
        atom = conj.atoms[k]
        if atom.args[1] == ir.Iri("http://ex.org/Level"):  # its property is bound before it
            assert any(conj.atoms[j].args[1] == atom.args[0] for j in atoms[:i])
    _compare(query, data)
