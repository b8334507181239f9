"""The term dictionary: terms interned to ids, numbers encoded in theirs; an IRI interned by its
value (``intern_iri``, as a background's are) keeps the value until ``term`` asks for its ``Iri``;
snapshots, forgetting and truncating see the ``Iri`` all the same."""

from hypothesis import given
from hypothesis import strategies as st

from dotr.rules import ir
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.ir import Iri, Name

EX = "http://ex.org/"


@given(st.lists(st.tuples(st.booleans(), st.text(alphabet="abc", min_size=1, max_size=2)), max_size=30), st.data())
def test_iris_interned_by_value_read_like_iris(entries, data):
    d = TermDictionary()
    ids = [d.intern_iri(EX + text) if is_iri else d.intern(Name(text)) for is_iri, text in entries]
    terms = list(dict.fromkeys(Iri(EX + text) if is_iri else Name(text) for is_iri, text in entries))
    assert d.snapshot() == terms
    assert TermDictionary.restore(d.snapshot()).snapshot() == terms
    assert [d.lookup(Iri(EX + text) if is_iri else Name(text)) for is_iri, text in entries] == ids
    live = set(data.draw(st.lists(st.integers(0, len(terms)), max_size=len(terms))))
    start = data.draw(st.integers(0, len(terms)))
    gone = [i for i in range(start, len(terms)) if i not in live]
    assert d.forget(start, live) == len(gone)
    assert [d.term(i) for i in range(len(terms))] == [None if i in gone else t for i, t in enumerate(terms)]
    for i in gone:  # interned again: a new id
        again = d.intern_iri(terms[i].value) if type(terms[i]) is Iri else d.intern(terms[i])
        assert again >= len(terms)
    d.truncate(len(terms))  # (the new ids forgotten again)
    assert [d.lookup(t) for t in terms] == [None if i in gone else i for i in range(len(terms))]
    assert [d.term(i) for i in range(len(terms))] == [None if i in gone else t for i, t in enumerate(terms)]


def test_term_dictionary_interns_and_keeps_values():
    d = TermDictionary()
    ids = d.intern_all([ir.Name("a"), ir.Num(3), ir.Iri("http://ex.org/x"), ir.Literal("hi"), ir.Name("a")])
    three = ids[1]
    assert ids == (0, three, 1, 2, 0)
    assert len(d) == 3  # integers are encoded in their id, not stored
    assert d.value(three) == 3 and d.term(three) == ir.Num(3) and d.value(1) is None and d.value(2) == "hi"
    assert d.intern(ir.Literal("3", ir.XSD + "integer")) == three
    assert d.intern(ir.Literal("2.50", ir.XSD + "decimal")) == d.intern(ir.Num(2.5))  # prints as 2.5: a number
    # a double, or a whole decimal, keeps its datatype (it would print as the integer 3): a term
    # of its own, whose value is the number
    double = d.intern(ir.Literal("3.0", ir.XSD + "double"))
    assert double != three and d.value(double) == 3.0 and d.term(double) == ir.Literal("3.0", ir.XSD + "double")
    assert d.intern(ir.Literal("3.0", ir.XSD + "decimal")) not in (three, double)
    assert d.intern(ir.Num(-7)) == d.number(-7) and d.value(d.number(-7)) == -7
    assert d.intern(ir.Literal("hi", ir.XSD + "string")) == 2
    assert d.value(d.intern(ir.Literal("true", ir.XSD + "boolean"))) is True
    assert d.lookup(ir.Name("zzz")) is None and len(d) == 7
    assert d.value(d.intern(ir.Num(2.5))) == 2.5
    restored = TermDictionary.restore(d.snapshot())
    assert [restored.term(i) for i in range(len(d))] == [d.term(i) for i in range(len(d))]
