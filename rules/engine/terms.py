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

import re
from typing import Iterable

from dotr.rules.lang.ir import NUMERIC_TYPES, XSD, Atom, Const, Iri, Literal, Name, Num, Term, canonical
from dotr.rules.lang.printer import number

_BOOLEAN = XSD + "boolean"
_DOUBLE = f"<{XSD}double>"


def _value(term: Term) -> object:
    if isinstance(term, Num):
        return term.value
    if isinstance(term, Literal):
        if term.datatype == _BOOLEAN:
            return term.lexical in ("true", "1")
        if term.datatype in NUMERIC_TYPES:  # ("0.0"^^xsd:double: the number 0.0)
            try:
                return float(term.lexical)
            except ValueError:
                return term.lexical
        return term.lexical
    if isinstance(term, Name):
        return term.value
    return None


#: Integers are not stored: integer v has the id INT_OFFSET + v (for |v| < 2**59), so that streams
#: of readings and time points (``@T``) do not grow the dictionary.
INT_OFFSET = 1 << 60
_INT_LIMIT = 1 << 59
FIRST_INT_ID = INT_OFFSET - _INT_LIMIT  #: ids from here up encode integers (the same in every dictionary)
#: how many entries a cache from a term's text (or rdflib node) to its id keeps before it starts
#: afresh: an integer's id needs no dictionary entry, so a stream of ever new integers would grow
#: such a cache for ever, where the dictionary's reclaiming never looks
TERM_CACHE = 1 << 17


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


#: ids are stored in chunks of this many (a power of two): a chunk whose terms were all forgotten
#: is dropped (``TermDictionary.forget``)
CHUNK_BITS = 14
_CHUNK = 1 << CHUNK_BITS
_MASK = _CHUNK - 1


class TermDictionary:
    """term <-> int; ``value(id)`` is the Python value (number, string, bool) or None for IRIs.

    Each id's term, value and sort key are kept in chunks of ``2**CHUNK_BITS`` ids (three lists
    of chunks): the terms a stream brought and nothing refers to any more can be forgotten
    (:meth:`forget`), and a chunk of forgotten ids then costs nothing."""

    __slots__ = ("_ids", "_names", "_iris", "_terms", "_values", "_keys", "_size", "_held")

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}  # every term but names and IRIs
        self._names: dict[str, int] = {}  # names by their text (a dataclass hashes slowly)
        self._iris: dict[str, int] = {}  # IRIs by their text
        # per chunk, its ids' terms (None: every one forgotten; an IRI's value, a str, until term()
        # makes its Iri)
        self._terms: list[list | None] = []
        self._values: list[list | None] = []
        self._keys: list[list | None] = []  # sort_key of each stored term
        self._held: list[int] = []  # per chunk, how many of its terms are not forgotten
        self._size = 0  # the ids given

    def _add(self, term: Term | None, value: object, key: tuple | None) -> int:
        """Give the next id to ``term`` (None: a forgotten id, as :meth:`load` restores one)."""
        i = self._size
        if not i & _MASK:
            self._terms.append([])
            self._values.append([])
            self._keys.append([])
            self._held.append(0)
        chunk = i >> CHUNK_BITS
        self._terms[chunk].append(term)
        self._values[chunk].append(value)
        self._keys[chunk].append(key)
        if term is not None:
            self._held[chunk] += 1
        self._size = i + 1
        return i

    def intern(self, term: Term) -> int:
        """The id of ``term``, assigning the next free id to a new term (a variable has one too:
        the LARS engine's node for a variable predicate)."""
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
            found = self._ids[term] = self._add(term, _value(term), _sort_key(term))
        return found

    def intern_name(self, value: str) -> int:
        """``intern(Name(value))``, faster (for the names a stream brings)."""
        found = self._names.get(value)
        if found is None:
            found = self._names[value] = self._add(Name(value), value, (1, 0, value))
        return found

    def intern_iri(self, value: str) -> int:
        """``intern(Iri(value))``, faster (for the IRIs of a background: the ``Iri`` itself is
        made when :meth:`term` first asks for it)."""
        found = self._iris.get(value)
        if found is None:
            found = self._iris[value] = self._add(value, None, (2, 0, value))
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
        """The term of ``term_id`` (of an id :meth:`forget` forgot: None, or an error once its
        whole chunk is forgotten; nothing may ask)."""
        if term_id >= FIRST_INT_ID:
            return Num(term_id - INT_OFFSET)
        chunk = self._terms[term_id >> CHUNK_BITS]
        term = chunk[term_id & _MASK]
        if type(term) is str:  # an IRI's value (intern_iri): its Iri made once, now
            term = chunk[term_id & _MASK] = Iri(term)
        return term

    def value(self, term_id: int) -> object:
        if term_id >= FIRST_INT_ID:
            return term_id - INT_OFFSET
        return self._values[term_id >> CHUNK_BITS][term_id & _MASK]

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
        return self._keys[term_id >> CHUNK_BITS][term_id & _MASK]

    def sort_rows(self, rows: list[tuple[int, ...]]) -> None:
        """Sort tuples of term ids in place by their terms (``sort_key``, first position first)."""
        key = self.sort_key
        rows.sort(key=lambda row: [key(i) for i in row])

    def __len__(self) -> int:
        """The number of ids given (integers have none; forgotten terms keep theirs)."""
        return self._size

    def held(self) -> int:
        """The number of terms held (the ids given, less those forgotten)."""
        return sum(self._held)

    def __contains__(self, term: Const) -> bool:
        return self.lookup(term) is not None

    def _unlink(self, term: Const | None) -> None:
        if type(term) is Name:
            del self._names[term.value]
        elif type(term) is Iri:
            del self._iris[term.value]
        elif type(term) is str:  # (an IRI's value: intern_iri)
            del self._iris[term]
        elif term is not None:
            del self._ids[term]

    def truncate(self, size: int) -> None:
        """Forget every term but the first ``size`` (their ids stay)."""
        for i in range(size, self._size):
            self._unlink(self.term(i))
        chunks = -(-size // _CHUNK)
        for lists in (self._terms, self._values, self._keys):
            del lists[chunks:]
            if size & _MASK and lists[-1] is not None:
                del lists[-1][size & _MASK:]
        del self._held[chunks:]
        if size & _MASK:
            self._held[-1] = sum(term is not None for term in self._terms[-1] or ())
        self._size = size

    def forget(self, start: int, live: set[int]) -> int:
        """Forget the terms from id ``start`` on whose ids are not in ``live`` (nothing refers to
        them any more): their memory is freed (a whole chunk of them at once), their ids are
        never given again (interned again, a term gets a new id), and ``term`` of such an id is
        None. Returns how many were forgotten.

        >>> d = TermDictionary()
        >>> a, b, c = (d.intern(Name(x)) for x in "abc")
        >>> d.forget(1, {c}), d.term(b), d.term(c), d.intern(Name("b")), len(d), d.held()
        (1, None, Name(value='c'), 3, 4, 3)
        """
        forgotten = 0
        for chunk in range(start >> CHUNK_BITS, len(self._terms)):
            terms = self._terms[chunk]
            if terms is None or not self._held[chunk]:
                continue
            values, keys, first = self._values[chunk], self._keys[chunk], chunk << CHUNK_BITS
            for offset in range(max(start - first, 0), len(terms)):
                term = terms[offset]
                if term is not None and first + offset not in live:
                    self._unlink(term)
                    terms[offset] = values[offset] = keys[offset] = None
                    self._held[chunk] -= 1
                    forgotten += 1
            self._drop_if_empty(chunk)
        return forgotten

    def _drop_if_empty(self, chunk: int) -> None:
        """A chunk whose ids are all given and forgotten holds nothing: dropped."""
        terms = self._terms[chunk]
        if terms is not None and not self._held[chunk] and len(terms) == _CHUNK:
            self._terms[chunk] = self._values[chunk] = self._keys[chunk] = None

    def snapshot(self, start: int = 0) -> list[Const | int]:
        """The terms in id order from id ``start`` on, each run of forgotten ids as its length:
        ``TermDictionary.restore(d.snapshot())`` gives the same ids."""
        out: list = []

        def hole(n: int) -> None:
            if out and type(out[-1]) is int:
                out[-1] += n
            else:
                out.append(n)

        for chunk in range(start >> CHUNK_BITS, len(self._terms)):
            first = chunk << CHUNK_BITS
            terms = self._terms[chunk]
            if terms is None:
                hole(_CHUNK - max(start - first, 0))
                continue
            for term in terms[max(start - first, 0):]:
                if term is not None:
                    out.append(Iri(term) if type(term) is str else term)
                else:
                    hole(1)
        return out

    def load(self, terms: Iterable[Const | int]) -> None:
        """Intern a :meth:`snapshot`'s terms (a run of forgotten ids: its length) after those
        held: a dictionary holding the terms that came before them gets the same ids."""
        for term in terms:
            if type(term) is int:  # (forgotten ids: kept as holes, whole chunks of them dropped)
                for _ in range(term):
                    self._add(None, None, None)
                    if not self._size & _MASK:
                        self._drop_if_empty(len(self._terms) - 1)
            elif self.intern(term) != self._size - 1:  # (a state file's: its readers make it a StateFileError)
                raise ValueError(f"the term {term!r} is in the snapshot twice")

    @classmethod
    def restore(cls, terms: Iterable[Const | int]) -> "TermDictionary":
        d = cls()
        d.load(terms)
        return d


def _sort_key(term: Term) -> tuple:
    if isinstance(term, Num):
        return (0, term.value, "")
    if isinstance(term, Name):
        return (1, 0, term.value)
    if isinstance(term, Iri):
        return (2, 0, term.value)
    if isinstance(term, Literal):
        value = _value(term)
        if isinstance(value, float):  # a typed number: among the numbers
            return (0, value, term.lexical)
        return (3, 0, f"{term.lexical}\0{term.lang or ''}\0{term.datatype or ''}")
    return (4, 0, repr(term))  # not a constant (the LARS engine interns a variable predicate)


#: the characters an IRI may not hold as they are in N-Triples, Turtle and the rule language
_IRI_UNSAFE = re.compile(r'[<>"{}|^`\\\x00-\x20]')
_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}
_STRING_UNSAFE = re.compile(r'[\\"\n\r]')


def iri_text(iri: str) -> str:
    """An IRI as N-Triples, Turtle and the rule language write it: ``<...>``, with each character
    an IRI may not hold as it is written ``\\uXXXX`` (it reads back as the same IRI).

    >>> print(iri_text("http://ex.org/a"), iri_text("http://ex.org/x>y"))
    <http://ex.org/a> <http://ex.org/x\\u003Ey>
    """
    if _IRI_UNSAFE.search(iri) is None:
        return f"<{iri}>"
    return "<" + _IRI_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04X}", iri) + ">"


def literal_text(lexical: str, datatype: str | None = None, lang: str | None = None) -> str:
    """A literal as N-Triples writes it: quoted, with its backslashes, quotes and line breaks
    escaped, then its language tag or datatype.

    >>> print(literal_text('say "hi"\\nnow', lang="en"))
    "say \\"hi\\"\\nnow"@en
    """
    text = '"' + (_STRING_UNSAFE.sub(lambda m: _STRING_ESCAPES[m.group()], lexical)
                  if _STRING_UNSAFE.search(lexical) else lexical) + '"'
    return f"{text}@{lang}" if lang else f"{text}^^{iri_text(datatype)}" if datatype else text


def format_term(term: Const) -> str:
    """A term in canonical output form: IRIs as ``<...>``, names and numbers as written, other
    literals in N-Triples form (every term reads back, in the rule language, as itself).

    >>> format_term(Iri("http://ex.org/a")), format_term(Num(-2)), format_term(Literal("x", lang="en"))
    ('<http://ex.org/a>', '-2', '"x"@en')
    """
    if isinstance(term, Iri):
        return iri_text(term.value)
    if isinstance(term, Name):
        return term.value
    if isinstance(term, Num):
        return number(term.value, _DOUBLE) if isinstance(term.value, float) else str(term.value)
    return literal_text(term.lexical, term.datatype, term.lang)


def fact_atom(d: TermDictionary, rel: tuple, fact: tuple) -> Atom:
    """The atom of an interned fact: its predicate and arguments as terms (a class membership as
    its ``rdf:type`` triple)."""
    return Atom(d.term(rel[0]), tuple(d.term(i) for i in fact))  # type: ignore[arg-type]


def format_fact(d: TermDictionary, rel: tuple, fact: tuple) -> str:
    """A fact in canonical output form: ``pred(arg,...)``, no spaces (as docs/cli.md prints facts)."""
    pred = d.term(rel[0])
    name = pred.value if isinstance(pred, Name) else f"<{pred.value}>"
    if not fact:
        return name
    return f"{name}({','.join(format_term(d.term(i)) for i in fact)})"


__all__ = ["format_term", "format_fact", "TermDictionary", "canonical", "Iri", "Literal", "Name", "Num", "XSD"]
