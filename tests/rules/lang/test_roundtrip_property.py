"""Generated programs print and re-parse to the same IR; the fast driver agrees with lark on them."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.rules import format_program, ir, parse
from dotr.rules.lang.parser import _Builder, _lark

_KEYWORDS = {"not", "diamond", "box", "mod", "event", "pattern", "query", "and", "from", "each", "last",
             "first", "within", "between", "where", "construct", "with", "emit", "consuming", "as", "avg",
             "sum", "min", "max", "count", "ms", "s", "sec", "h"}
lower = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in _KEYWORDS)
upper = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,5}", fullmatch=True)
variables = st.one_of(upper.map(ir.Var), lower.map(lambda s: ir.Var("?" + s)))
numbers = st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
                    .filter(lambda f: f != 0 or str(f)[0] != "-")).map(ir.Num)
iris = st.sampled_from(["http://ex.org/", "http://www.w3.org/2001/XMLSchema#", "urn:x:"]).flatmap(
    lambda base: lower.map(lambda local: ir.Iri(base + local)))
literals = st.builds(
    ir.Literal,
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=8),
    st.one_of(st.none(), st.sampled_from([ir.XSD + "string", ir.XSD + "dateTime", "http://ex.org/dt"])),
)
constants = st.one_of(lower.map(ir.Name), numbers, iris, literals)
terms = st.one_of(variables, constants)
predicates = st.one_of(lower.map(ir.Name), iris)


@st.composite
def atoms(draw):
    pred = draw(predicates)
    if isinstance(pred, ir.Iri):
        return ir.Atom(pred, tuple(draw(st.lists(terms, min_size=2, max_size=2))))
    return ir.Atom(pred, tuple(draw(st.lists(terms, max_size=3))))


exprs = st.recursive(
    st.one_of(variables, numbers),
    lambda inner: st.builds(ir.BinOp, st.sampled_from(["+", "-", "*", "/", "mod"]), inner, inner),
    max_leaves=5,
)
windows = st.one_of(
    st.none(),
    st.builds(ir.Window, st.integers(0, 10**5)),
    st.builds(ir.Window, st.integers(0, 100), st.sampled_from(["ms", "s", "sec", "min", "h"])),
    st.builds(ir.Window, st.integers(0, 100), st.none(), st.just(True)),
)
time_terms = st.one_of(upper.map(ir.Var), st.integers(0, 10**4).map(ir.Num))
ops = st.one_of(st.builds(ir.Diamond), st.builds(ir.Box), st.builds(ir.At, time_terms))
body_literals = st.one_of(
    st.builds(ir.AtomLiteral, atoms(), st.booleans()),
    st.builds(ir.TemporalLiteral, windows, ops, atoms(), st.booleans()),
    st.builds(ir.Comparison, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), exprs, exprs),
)
rules_ = st.builds(ir.Rule, atoms(), st.lists(body_literals, min_size=0, max_size=4).map(tuple),
                   st.one_of(st.none(), time_terms))
facts = st.builds(ir.Rule, atoms())
declarations = st.one_of(
    st.builds(ir.PrefixDecl, lower, st.sampled_from(["http://ex.org/", "http://other.org/ns#"])),
    st.builds(ir.TimeUnitDecl, st.sampled_from(["ms", "ticks"])),
    st.builds(ir.ProfileDecl, st.sampled_from(["rdfs", "owl2rl"])),
    st.builds(ir.OutputDecl, st.lists(predicates, min_size=1, max_size=3).map(tuple)),
)
programs = st.lists(st.one_of(rules_, facts, declarations), max_size=6).map(lambda s: ir.Program(tuple(s)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_print_then_parse_gives_the_same_program(program):
    text = format_program(program)
    assert parse(text) == program, text


@settings(max_examples=100, deadline=None)
@given(programs)
def test_fast_driver_and_lark_agree(program):
    text = format_program(program)
    assert parse(text).statements == _Builder("<string>").transform(_lark().parse(text))
