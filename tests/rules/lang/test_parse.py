"""Parsing: the valid corpus round-trips through the printer; the fast driver agrees with lark;
spans point where the text is."""

from pathlib import Path

import pytest

from dotr.rules import check, check_text, format_program, parse
from dotr.rules import ir
from dotr.rules.lang.parser import _Builder, _lark, parse_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "tests/rules/lang/corpus/valid").glob("*.dotr")) + sorted((ROOT / "examples").glob("*/rules.dotr"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_valid_corpus_checks_and_round_trips(path):
    result = check(path)
    assert result.ok, result.diagnostics
    text = format_program(result.program)
    assert parse(text) == result.program
    assert format_program(parse(text)) == text


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_driver_agrees_with_lark(path):
    text = path.read_text()
    reference = _Builder(str(path)).transform(_lark().parse(text))
    program, diags = parse_with_diagnostics(text, str(path))
    assert program.statements == reference
    # equality ignores spans: compare them too
    assert [s.span for s in program.statements] == [s.span for s in reference]


def test_corpus_covers_every_construct():
    programs = [check(p).program for p in CORPUS]
    statements = [s for p in programs for s in p.statements]
    kinds = {type(s) for s in statements}
    assert kinds >= {ir.PrefixDecl, ir.TimeUnitDecl, ir.ProfileDecl, ir.OutputDecl, ir.Rule,
                     ir.EventDecl, ir.PatternDecl, ir.QueryDecl}
    literals = [lit for s in statements if isinstance(s, ir.Rule) for lit in s.body]
    ops = {type(l.op) for l in literals if isinstance(l, ir.TemporalLiteral)}
    assert ops == {ir.Diamond, ir.Box, ir.At}
    windows = {(l.window.tuple, l.window.unit is not None) for l in literals
               if isinstance(l, ir.TemporalLiteral) and l.window is not None}
    assert windows == {(False, False), (True, False), (False, True)}
    assert any(isinstance(l, ir.TemporalLiteral) and l.window is None for l in literals)
    assert any(getattr(l, "negated", False) and isinstance(l, ir.TemporalLiteral) for l in literals)
    assert {l.op for l in literals if isinstance(l, ir.Comparison)} == {"=", "!=", "<", "<=", ">", ">="}
    patterns = [s for s in statements if isinstance(s, ir.PatternDecl)]
    selections = {i.selection for p in patterns for i in p.items}
    assert selections == {"each", "last", "first", "not"}
    assert any(p.emit for p in patterns) and any(p.consuming for p in patterns)
    assert any(isinstance(i.scope, ir.Between) for p in patterns for i in p.items)


def test_spans_point_at_the_source():
    program = parse("@prefix : <http://ex.org/> .\n\nh(X) :-\n  [3] <> :p(X, Y),\n  Y > 2 .", "a.dotr")
    rule = program.rules[0]
    assert str(rule.span) == "a.dotr:3:1"
    window_lit, comparison = rule.body
    assert str(window_lit.span) == "a.dotr:4:3"
    assert str(window_lit.atom.span) == "a.dotr:4:10"
    assert str(window_lit.atom.args[1].span) == "a.dotr:4:16"
    assert str(comparison.span) == "a.dotr:5:3"


def test_unary_iri_atom_is_a_class_membership():
    atom = parse("@prefix : <http://ex.org/> . :Room(:r1).").facts[0]
    assert atom == ir.Atom(ir.Iri(ir.RDF_TYPE), (ir.Iri("http://ex.org/r1"), ir.Iri("http://ex.org/Room")))


def test_keywords_stay_usable_as_names_where_no_keyword_fits():
    program = parse("s(min) :- h(X, sec), count(X), min(X), s(ms) .")
    assert [lit.atom.pred.value for lit in program.rules[0].body] == ["h", "count", "min", "s"]


def test_variables_and_constants():
    (rule,) = parse("p(X, ?y, x, _y) :- q(X, ?y, x, _y).").rules
    assert rule.head.args == (ir.Var("X"), ir.Var("?y"), ir.Name("x"), ir.Name("_y"))


def test_numbers_and_literals():
    (fact,) = parse('p(-3, 2.5, 1e3, "a\\"b", "7"^^xsd:integer, "hi"@en-GB).').facts
    assert fact.args == (ir.Num(-3), ir.Num(2.5), ir.Num(1000.0), ir.Literal('a"b'),
                         ir.Literal("7", ir.XSD + "integer"), ir.Literal("hi", lang="en-GB"))


def test_sparql_text_keeps_dots_strings_and_nested_groups():
    (event,) = parse('event E(?a) := select ?a where { ?a <http://x.org/p> "a . b" . { ?a :q 1.5 } } .\n'
                     '@prefix : <http://e/> .').events
    assert event.query.text == 'select ?a where { ?a <http://x.org/p> "a . b" . { ?a :q 1.5 } }'


@pytest.mark.parametrize("text,line,column", [
    ('event E(?a) := select ?a where { ?a <http://e/p> (1 } .\n', 1, 32),
    ('event E(?a) := select ?a where { ?a <http://e/p> 1 .\n', 1, 32),
    ('event E(?a) := select ?a where { ?a <http://e/p> ( ?b } ) .\n', 1, 32),
    ('event A(?k) := select ?k where { ?k <http://e/p> ?b } .\n'
     'pattern P from A construct { _:m <http://e/k> (?k } with ?k = A.k .\n', 2, 28),
])
def test_a_query_or_template_whose_brackets_do_not_pair_is_a_syntax_error_at_its_opening_brace(text, line, column):
    """The lexer's bracket regex lets either kind close either below the outermost group (it
    grows linearly with the nesting depth); an outermost group that does not close is still the
    lexer's error, at its brace."""
    (diagnostic,) = check_text(text, "r.dotr").diagnostics
    assert (diagnostic.code, diagnostic.span.line, diagnostic.span.column) == ("E001", line, column)
    assert diagnostic.message.startswith("unexpected character '{'")


def test_brackets_that_do_not_pair_inside_a_query_are_the_query_parsers_error():
    (diagnostic,) = [d for d in check_text('event E(?a) := select ?a where { ?a <http://e/p> ?b . { ?a <http://e/q> ( ?b } ) } .\n',
                                           "r.dotr").diagnostics if d.severity == "error"]
    assert diagnostic.code == "E401"
