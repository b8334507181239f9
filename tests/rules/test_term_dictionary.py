"""The term dictionary: an IRI interned by its value (``intern_iri``, as a background's are) keeps
the value until ``term`` asks for its ``Iri``; snapshots, forgetting and truncating see the
``Iri`` all the same."""

from hypothesis import given
from hypothesis import strategies as st

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
