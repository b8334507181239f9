"""W305 in queries: an event's SELECT, an EP-SPARQL and a C-SPARQL query whose parts share no
variable once joined as the planner joins them (not where a pattern is merely written apart from
the group that uses its variables, as CityBench writes its type patterns)."""

import pytest

from dotr.examples.workloads.citybench import queries
from dotr.rules import check_text

P = "@prefix : <http://e/> .\n"


def _w305(source: str) -> list[tuple[int, int]]:
    diags = check_text(P + source, "q.dotr").diagnostics
    assert not [d for d in diags if d.severity == "error"], diags
    return [(d.span.line - 1, d.span.column) for d in diags if d.code == "W305"]


def _event(where: str) -> str:
    return f"event E(?a) := select ?a where {{ {where} }} .\n"


@pytest.mark.parametrize("where,expected", [
    ("?a :p ?b . ?c :q ?d", [(1, 45)]),  # (at ?c, the second group's first variable)
    ("?a :p ?b . { ?c :q ?d } { ?e :r ?b }", [(1, 47)]),
    ("?a :p ?b OPTIONAL { ?x :q ?y }", [(1, 54)]),
    ("{ SELECT ?k WHERE { ?k :r ?j } } ?a :p ?b", [(1, 67)]),
    ("?a :p ?b . VALUES ?z { 1 2 }", [(1, 52)]),
    ("?a :p ?b . _:n :q ?d", [(1, 45)]),
], ids=["two patterns", "nested groups", "optional", "subquery", "values", "blank node"])
def test_a_join_without_a_shared_variable_is_warned_at_the_second_group(where, expected):
    assert _w305(_event(where)) == expected


@pytest.mark.parametrize("where", [
    "?t a :L . ?u a :L . { ?a :p ?t } { ?c :p ?u . ?a :near ?c }",  # (CityBench's type patterns apart)
    "?a :p ?v . ?c :q ?w FILTER(?v < ?w)",  # (a join condition, as a comparison in a rule)
    "?a :p ?v . BIND(?v + 1 AS ?w) ?c :q ?w",
    "?a :p ?b OPTIONAL { ?x :q ?y FILTER(?y > ?b) }",
    "{ ?a :p ?b } UNION { ?c :q ?d }",  # (a union joins nothing)
    "?a :p ?b MINUS { ?c :q ?d }",
    "?a :p ?b . ?c :q ?b",
    "?a :p 1 . :x :q :y",  # (a pattern without variables is a test)
    "GRAPH ?g { ?a :p ?b } ?g :from ?c",
])
def test_joined_parts_are_not_warned_about(where):
    assert _w305(_event(where)) == []


def test_a_filter_conjunct_links_only_its_own_variables():
    assert _w305(_event("?a :p ?v . ?c :q ?w FILTER(?v > 1 && ?w > 2)")) == [(1, 45)]


def test_epsparql_operands_that_share_no_variable():
    query = "query S := select * where {{ ?a :p ?b }} {op} {{ {right} }} within 9 .\n"
    assert _w305(query.format(op="seq", right="?c :p ?d")) == [(1, 46)]
    assert _w305(query.format(op="and", right="?c :p ?d")) == [(1, 46)]
    assert _w305(query.format(op="seq", right="?a :p ?d")) == []
    assert _w305(query.format(op="union", right="?c :p ?d")) == []
    # a group of its own, and the optional form's condition linking them
    assert _w305("query S := select * where { ?a :p ?b . ?c :p ?d } seq { ?a :q ?e } within 9 .\n") == [(1, 40)]
    assert _w305("query S := select * where { ?a :p ?b } optional { ?c :p ?d filter(?d > ?b) } within 9 .\n") == []


def test_csparql():
    query = ("query C := register query C as select * from stream <http://s> [range 3 step 1] "
             "where {{ ?a :p ?b . {more} }} .\n")
    assert _w305(query.format(more="?c :q ?d")) == [(1, 100)]
    assert _w305(query.format(more="?b :q ?d")) == []


def test_the_citybench_queries_as_written_are_not_warned_about(tmp_path):
    (tmp_path / "repository.n3").write_text("")
    for name, forms in queries().items():
        for form in ("written", "reshaped"):
            if forms.get(form):
                text = forms[form].replace("<repository>", f"<{(tmp_path / 'repository.n3').as_uri()}>")
                diags = check_text(f"@timeunit ms .\nquery {name} := {text} .\n", "q.dotr").diagnostics
                assert not diags, (name, form, diags)
