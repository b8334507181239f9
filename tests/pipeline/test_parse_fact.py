"""The fast path of parse_fact gives exactly what the rule grammar gives."""

from hypothesis import given, settings, strategies as st

from pipeline.embedded import InputError, parse_fact, parse_fact_with_grammar

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
