"""The term dictionary both stages share: every constant interned to an int.

Inner loops of the engines see only int tuples; the dictionary maps back for output and keeps the
Python value of literals beside the id for filters and arithmetic. Numeric literals are
canonical: ``"25"^^xsd:integer`` and ``25`` are the same term.

>>> d = TermDictionary()
>>> a = d.intern(Num(25))
>>> d.intern(Literal("25", XSD + "integer")) == a
True
>>> d.value(a) + 1
26
>>> d.term(d.intern(Name("roomA")))
Name(value='roomA')
"""

from __future__ import annotations

from typing import Iterable

from dotr.rules.lang.ir import XSD, Const, Iri, Literal, Name, Num, canonical
from dotr.rules.lang.printer import number

_BOOLEAN = XSD + "boolean"
_DOUBLE = f"<{XSD}double>"


def _value(term: Const) -> object:
    if isinstance(term, Num):
        return term.value
    if isinstance(term, Literal):
        if term.datatype == _BOOLEAN:
            return term.lexical in ("true", "1")
        return term.lexical
    if isinstance(term, Name):
        return term.value
    return None


#: Integers are not stored: integer v has the id INT_OFFSET + v (for |v| < 2**59), so that streams
#: of readings and time points (``@T``) do not grow the dictionary.
INT_OFFSET = 1 << 60
_INT_LIMIT = 1 << 59
FIRST_INT_ID = INT_OFFSET - _INT_LIMIT  #: ids from here up encode integers (the same in every dictionary)


def _int_of(term) -> int | None:
    if isinstance(term, Num) and not isinstance(term.value, bool):
        v = term.value
        if isinstance(v, float):
            if not v.is_integer():
                return None
            v = int(v)
        if -_INT_LIMIT < v < _INT_LIMIT:
            return v
    return None


class TermDictionary:
    """term <-> int; ``value(id)`` is the Python value (number, string, bool) or None for IRIs."""

    __slots__ = ("_ids", "_names", "_iris", "_terms", "_values", "_keys")

    def __init__(self) -> None:
        self._ids: dict[Const, int] = {}  # every term but names and IRIs
        self._names: dict[str, int] = {}  # names by their text (a dataclass hashes slowly)
        self._iris: dict[str, int] = {}  # IRIs by their text
        self._terms: list[Const] = []
        self._values: list[object] = []
        self._keys: list[tuple] = []  # sort_key of each stored term

    def intern(self, term: Const) -> int:
        """The id of ``term``, assigning the next free id to a new term."""
        if type(term) is Name:
            return self.intern_name(term.value)
        if type(term) is Iri:
            return self.intern_iri(term.value)
        found = self._ids.get(term)
        if found is not None:
            return found
        term = canonical(term)
        v = _int_of(term)
        if v is not None:
            return INT_OFFSET + v
        found = self._ids.get(term)
        if found is None:
            found = len(self._terms)
            self._terms.append(term)
            self._values.append(_value(term))
            self._keys.append(_sort_key(term))
            self._ids[term] = found
        return found

    def intern_name(self, value: str) -> int:
        """``intern(Name(value))``, faster (for the names a stream brings)."""
        found = self._names.get(value)
        if found is None:
            found = self._names[value] = len(self._terms)
            self._terms.append(Name(value))
            self._values.append(value)
            self._keys.append((1, 0, value))
        return found

    def intern_iri(self, value: str) -> int:
        """``intern(Iri(value))``, faster (for the IRIs of a background)."""
        found = self._iris.get(value)
        if found is None:
            found = self._iris[value] = len(self._terms)
            self._terms.append(Iri(value))
            self._values.append(None)
            self._keys.append((2, 0, value))
        return found

    def number(self, value: object) -> int | None:
        """The id of the number ``value`` (None stays None: an undefined result)."""
        if value is None:
            return None
        if type(value) is int and -_INT_LIMIT < value < _INT_LIMIT:
            return INT_OFFSET + value
        return self.intern(Num(value))

    def intern_all(self, terms: Iterable[Const]) -> tuple[int, ...]:
        return tuple(self.intern(t) for t in terms)

    def lookup(self, term: Const) -> int | None:
        """The id of ``term`` if it was interned, else None (never assigns)."""
        if type(term) is Name:
            return self._names.get(term.value)
        if type(term) is Iri:
            return self._iris.get(term.value)
        found = self._ids.get(term)
        if found is not None:
            return found
        term = canonical(term)
        v = _int_of(term)
        return INT_OFFSET + v if v is not None else self._ids.get(term)

    def term(self, term_id: int) -> Const:
        if term_id >= FIRST_INT_ID:
            return Num(term_id - INT_OFFSET)
        return self._terms[term_id]

    def value(self, term_id: int) -> object:
        if term_id >= FIRST_INT_ID:
            return term_id - INT_OFFSET
        return self._values[term_id]

    def sort_key(self, term_id: int) -> tuple:
        """A key that orders terms by what they are, not by their ids (which depend on the order
        they were interned in): numbers by value first, then names, IRIs and other literals by
        their text. Two dictionaries order the same terms alike.

        >>> d = TermDictionary()
        >>> ids = [d.intern(t) for t in (Iri("http://ex.org/b"), Name("z"), Num(2.5), Num(-1))]
        >>> [d.term(i) for i in sorted(ids, key=d.sort_key)]  # doctest: +NORMALIZE_WHITESPACE
        [Num(value=-1), Num(value=2.5), Name(value='z'), Iri(value='http://ex.org/b')]
        """
        if term_id >= FIRST_INT_ID:
            return (0, term_id - INT_OFFSET, "")
        return self._keys[term_id]

    def sort_rows(self, rows: list[tuple[int, ...]]) -> None:
        """Sort tuples of term ids in place by their terms (``sort_key``, first position first)."""
        keys = self._keys
        rows.sort(key=lambda row: [keys[i] if i < FIRST_INT_ID else (0, i - INT_OFFSET, "") for i in row])

    def __len__(self) -> int:
        """The number of stored terms (integers are not stored)."""
        return len(self._terms)

    def __contains__(self, term: Const) -> bool:
        return self.lookup(term) is not None

    def truncate(self, size: int) -> None:
        """Forget every term but the first ``size`` (their ids stay)."""
        for term in self._terms[size:]:
            if type(term) is Name:
                del self._names[term.value]
            elif type(term) is Iri:
                del self._iris[term.value]
            else:
                del self._ids[term]
        del self._terms[size:], self._values[size:], self._keys[size:]

    def snapshot(self) -> list[Const]:
        """The terms in id order: ``TermDictionary.restore(d.snapshot())`` gives the same ids."""
        return list(self._terms)

    @classmethod
    def restore(cls, terms: Iterable[Const]) -> "TermDictionary":
        d = cls()
        for term in terms:
            d.intern(term)
        return d


def _sort_key(term: Const) -> tuple:
    if isinstance(term, Num):
        return (0, term.value, "")
    if isinstance(term, Name):
        return (1, 0, term.value)
    if isinstance(term, Iri):
        return (2, 0, term.value)
    if isinstance(term, Literal):
        return (3, 0, f"{term.lexical}\0{term.lang or ''}\0{term.datatype or ''}")
    return (4, 0, repr(term))  # not a constant (the LARS engine interns a variable predicate)


def format_term(term: Const) -> str:
    """A term in canonical output form: IRIs as ``<...>``, names and numbers as written, other
    literals in N-Triples form.

    >>> format_term(Iri("http://ex.org/a")), format_term(Num(-2)), format_term(Literal("x", lang="en"))
    ('<http://ex.org/a>', '-2', '"x"@en')
    """
    if isinstance(term, Iri):
        return f"<{term.value}>"
    if isinstance(term, Name):
        return term.value
    if isinstance(term, Num):
        return number(term.value, _DOUBLE) if isinstance(term.value, float) else str(term.value)
    from rdflib import Literal as RdfLiteral, URIRef

    return RdfLiteral(term.lexical, lang=term.lang, datatype=URIRef(term.datatype) if term.datatype else None).n3()


def format_fact(d: TermDictionary, rel: tuple, fact: tuple) -> str:
    """A fact in canonical output form: ``pred(arg,...)``, no spaces (as docs/cli.md prints facts)."""
    pred = d.term(rel[0])
    name = pred.value if isinstance(pred, Name) else f"<{pred.value}>"
    if not fact:
        return name
    return f"{name}({','.join(format_term(d.term(i)) for i in fact)})"


__all__ = ["format_term", "format_fact", "TermDictionary", "canonical", "Iri", "Literal", "Name", "Num", "XSD"]
