"""What a program gives the engines, checked where it enters: time points, terms and facts in the
forms a Python program has them, turned into the int tuples the engines run on. Every public
entry of every stage reads its input through here, so that each takes the same forms and
refuses the same mistakes with the same errors (``FactError``, ``TimeError``, ...; time points are
checked by ``rules.engine.times``); the engines' inner loops then trust what they are given.

A *fact* is any of:

- a ground atom (``ir.Atom``); a unary IRI predicate (``:Sensor(:s1)``) is the ``rdf:type`` triple;
- its text in rule syntax: ``"temp(s1, 25)"``, ``":Sensor(:s1)"`` (prefixed names use the rule
  file's prefixes);
- a tuple ``(predicate, argument, ...)`` of terms: ``("temp", "s1", 25)``;
- an RDF triple of rdflib terms ``(subject, predicate, object)``;
- an interned pair ``((predicate id, arity), (id, ...))`` of the engine's term dictionary.

A *term* is a dotr term (``ir.Name``, ``ir.Num``, ``ir.Iri``, ``ir.Literal``), an rdflib term, a
Python int, float or bool (numpy's too), or a string written as in a fact: ``s1`` (a name),
``25``, ``<http://ex.org/s1>``, ``:s1``, ``"Kitchen"``, ``"Küche"@de``.

>>> from dotr.rules.engine.terms import TermDictionary
>>> read = FactReader(TermDictionary(), {"": "http://ex.org/"})
>>> read.atom(("temp", "s1", 25)) == read.atom("temp(s1, 25)") == ir.Atom(ir.Name("temp"), (ir.Name("s1"), ir.Num(25)))
True
>>> read.atom(":Sensor(:s1)").args
(Iri(value='http://ex.org/s1'), Iri(value='http://ex.org/Sensor'))
>>> read.atom(ir.Atom(ir.Name("temp"), (ir.Var("X"),)))
Traceback (most recent call last):
  ...
dotr.rules.lang.errors.FactError: temp(X): a fact has no variables (X)
"""

from __future__ import annotations

import numbers
import re
import sys
from typing import Any, Callable, Iterable

from dotr.rules.lang import ir
from dotr.rules.lang.errors import MAX_DIGITS, DotrError, FactError
from dotr.rules.lang.parser import KEYWORDS, parse
from dotr.rules.lang.printer import Printer
from dotr.rules.lang.queries.sparql import rdf_term

from .frames import facts_of
from .terms import FIRST_INT_ID, INT_OFFSET, TERM_CACHE, TermDictionary

Fact = Any  # one of the forms of the module docstring
RelKey = tuple[int, int]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_IRI = r"<[^<>\"{}|^`\\\s]+>"
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+\-]?\d+)?"
ARG = re.compile(rf"{_NAME}|{_IRI}|{_NUMBER}")
SIMPLE_FACT = re.compile(rf"({_NAME}|{_IRI})(?:\(((?:{_NAME}|{_IRI}|{_NUMBER})(?:,(?:{_NAME}|{_IRI}|{_NUMBER}))*)\))?")
_SIMPLE_TERM = re.compile(rf"{_NAME}|{_IRI}|{_NUMBER}")
_PUNCT_SPACE = re.compile(r"\s*([(),])\s*")
_BOOLEAN = ir.XSD + "boolean"


def tight(text: str) -> str:
    """A fact without the spaces around its brackets and commas (``p(0, 1)`` as ``p(0,1)``, as
    Laser++ writes facts), so that it takes the fast paths; text with quotes is left alone."""
    if " " in text and '"' not in text:
        return _PUNCT_SPACE.sub(r"\1", text).strip()
    return text


def simple_term(text: str) -> ir.Const:
    """The term of a name, an IRI in brackets or a number as written in a simple fact."""
    if text[0] == "<":
        return ir.Iri(text[1:-1])
    if text[0] == "-" or text[0].isdigit():
        if any(ch in text for ch in ".eE"):
            return ir.Num(float(text))
        if len(text) > MAX_DIGITS + 1:
            raise FactError(f"a fact has an integer of more than {MAX_DIGITS:,} digits")
        return ir.Num(int(text))
    return ir.Name(text)


def parse_fact(text: str, prefixes: dict[str, str] | None = None) -> ir.Atom:
    """A ground atom in rule syntax, such as ``temp(r1,25)`` or ``<http://ex.org/s1>(<http://ex.org/locA>)``;
    identifiers are constants whatever their case; prefixed names use ``prefixes`` (the rule
    file's). :class:`FactError` when the text is not a fact.

    >>> parse_fact("temp(r1,-2.5)")
    Atom(pred=Name(value='temp'), args=(Name(value='r1'), Num(value=-2.5)))
    >>> parse_fact(":Sensor(:s1)", {"": "http://ex.org/"})  # a class membership: an rdf:type triple
    Atom(pred=Iri(value='http://www.w3.org/1999/02/22-rdf-syntax-ns#type'), args=(Iri(value='http://ex.org/s1'), Iri(value='http://ex.org/Sensor')))
    """
    simple = SIMPLE_FACT.fullmatch(tight(text))
    if simple is not None:  # names, IRIs and numbers only: no need for the grammar
        pred, args = simple.groups()
        terms = [simple_term(a) for a in ARG.findall(args)] if args else []
        head = simple_term(pred)
        if isinstance(head, (ir.Name, ir.Iri)) and not any(isinstance(x, ir.Name) and x.value in KEYWORDS
                                                             for x in [head, *terms]):
            if isinstance(head, ir.Iri) and len(terms) == 1:  # a class membership: an rdf:type triple
                return ir.Atom(ir.Iri(ir.RDF_TYPE), (terms[0], head))
            return ir.Atom(head, tuple(terms))
    return parse_fact_with_grammar(text, prefixes)


def parse_fact_with_grammar(text: str, prefixes: dict[str, str] | None = None) -> ir.Atom:
    """:func:`parse_fact` through the rule grammar (every form; the fast path's reference)."""
    declared = "".join(f"@prefix {p}: <{iri}> .\n" for p, iri in (prefixes or {}).items())
    try:
        rule = parse(f"{declared}_fact :- {text} .", "<record>").rules[0]
    except DotrError as err:
        raise FactError(f"not a fact: {text!r}") from err
    if len(rule.body) != 1 or not isinstance(rule.body[0], ir.AtomLiteral) or rule.body[0].negated:
        raise FactError(f"not a fact: {text!r}")
    atom = rule.body[0].atom
    if isinstance(atom.pred, ir.Var):
        atom = ir.Atom(ir.Name(atom.pred.name), atom.args)
    return ir.Atom(atom.pred, tuple(ir.Name(a.name) if isinstance(a, ir.Var) else a for a in atom.args))


def term_of(value: object, prefixes: dict[str, str] | None = None) -> ir.Const:
    """The dotr term of one term as a program gives it (see the module docstring).

    >>> term_of("s1"), term_of(25), term_of("<http://ex.org/a>"), term_of('"Kitchen"')
    (Name(value='s1'), Num(value=25), Iri(value='http://ex.org/a'), Literal(lexical='Kitchen', datatype=None, lang=None))
    >>> term_of("hello world")
    Traceback (most recent call last):
      ...
    dotr.rules.lang.errors.FactError: 'hello world' is not a term (a string is written in quotes: '"hello world"')
    """
    kind = type(value)
    if kind is ir.Name or kind is ir.Iri or kind is ir.Literal or kind is ir.Num:
        return value  # type: ignore[return-value]
    if kind is str:
        return _term_of_text(value, prefixes)  # type: ignore[arg-type]
    if kind is bool or isinstance(value, bool):
        return ir.Literal("true" if value else "false", _BOOLEAN)
    if kind is int or kind is float:
        return ir.Num(value)  # type: ignore[arg-type]
    if isinstance(value, numbers.Integral):
        return ir.Num(int(value))
    if isinstance(value, numbers.Real):
        return ir.Num(float(value))
    rdflib_types = rdflib_node_types()
    if isinstance(value, ir.Var) or rdflib_types is not None and isinstance(value, rdflib_types[1]):
        raise FactError(f"{value!r}: a fact has no variables")
    if rdflib_types is not None and isinstance(value, rdflib_types[0]):
        try:
            return rdf_term(value)
        except TypeError:
            pass
    raise FactError(f"{value!r} is not a term (a term is a dotr or rdflib term, a number, or a string written "
                    "as in a fact: s1, <http://ex.org/s1>, \"text\")")


def rdflib_node_types() -> tuple[type, type] | None:
    """rdflib's ``Node`` and ``Variable`` once rdflib is imported, else None: nothing is an
    rdflib term before, and dotr imports rdflib only for what needs it (a query, RDF read or
    written through rdflib): 40 ms of a start-up otherwise."""
    rdflib_term = sys.modules.get("rdflib.term")
    return None if rdflib_term is None else (rdflib_term.Node, rdflib_term.Variable)


def rdf_triple(fact: tuple | list) -> bool | None:
    """Whether ``fact`` is an RDF triple of rdflib terms (None: one of them is a variable).

    >>> rdf_triple(("temp", "s1", 25))
    False
    """
    rdflib_types = rdflib_node_types()
    if rdflib_types is None or len(fact) != 3 or not all(isinstance(x, rdflib_types[0]) for x in fact):
        return False
    return None if any(isinstance(x, rdflib_types[1]) for x in fact) else True


def _term_of_text(text: str, prefixes: dict[str, str] | None) -> ir.Const:
    if _SIMPLE_TERM.fullmatch(text) is not None and text not in KEYWORDS:
        return simple_term(text)
    try:
        atom = parse_fact_with_grammar(f"_term({text})", prefixes)
    except FactError:
        atom = None
    if atom is None or len(atom.args) != 1 or isinstance(atom.args[0], ir.Var):
        hint = f" (a string is written in quotes: {_quoted(text)!r})" if '"' not in text else ""
        raise FactError(f"{text!r} is not a term{hint}") from None
    return atom.args[0]  # type: ignore[return-value]


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ground(atom: ir.Atom) -> ir.Atom:
    """``atom`` when it is a fact (no variable; a name or IRI predicate), else :class:`FactError`;
    a class membership ``C(s)`` as its ``rdf:type`` triple."""
    variables = [t.name for t in (atom.pred, *atom.args) if type(t) is ir.Var]
    if variables:
        raise FactError(f"{format_atom(atom)}: a fact has no variables ({', '.join(variables)})")
    for arg in atom.args:
        if type(arg) not in (ir.Name, ir.Num, ir.Iri, ir.Literal):
            raise FactError(f"{format_atom(atom)}: {arg!r} is not a term")
    if type(atom.pred) is ir.Iri and len(atom.args) == 1:
        return ir.Atom(ir.Iri(ir.RDF_TYPE), (atom.args[0], atom.pred))
    if type(atom.pred) not in (ir.Name, ir.Iri):
        raise FactError(f"{atom!r}: a fact's predicate is a name or an IRI")
    return atom


class FactReader:
    """Facts in any of the forms of the module docstring as ``(relation, ids)`` of
    ``dictionary``, checked; ``relation`` (optional) checks each relation a fact has and returns
    why it is not one the engine reads (None: it is)."""

    def __init__(self, dictionary: TermDictionary, prefixes: dict[str, str] | None = None,
                 relation: Callable[[RelKey], str | None] | None = None):
        self.dictionary = dictionary
        self.prefixes = prefixes or {}
        self.relation = relation
        self.node_ids: dict[Any, int] = {}  # rdflib term -> id, to skip conversion

    def __call__(self, fact: Fact) -> tuple[RelKey, tuple[int, ...]]:
        """``(relation, ids)`` of ``fact``, interned; :class:`FactError` when it is not a fact."""
        if type(fact) is tuple and len(fact) == 2 and type(fact[0]) is tuple:
            item = self._interned(fact)
        elif type(fact) is tuple and rdf_triple(fact):
            item = self._triple(fact)
        else:
            atom = self.atom(fact)
            d = self.dictionary
            item = (d.intern(atom.pred), len(atom.args)), tuple(d.intern(a) for a in atom.args)  # type: ignore[arg-type]
        if self.relation is not None:
            why = self.relation(item[0])
            if why is not None:
                raise FactError(f"{_shown(fact)}: {why}")
        return item

    def all(self, facts: Iterable[Fact]) -> list[tuple[RelKey, tuple[int, ...]]]:
        """:meth:`__call__` of each fact (a DataFrame: its rows, ``rules.engine.frames``)."""
        return [self(f) for f in facts_of(facts)]

    def atom(self, fact: Fact) -> ir.Atom:
        """The ground atom of a fact given as an atom, text or tuple of terms."""
        if isinstance(fact, ir.Atom):
            return ground(fact)
        if type(fact) is str:
            return ground(parse_fact(fact, self.prefixes))
        if type(fact) in (tuple, list) and fact:
            triple = rdf_triple(fact)
            if triple is None:
                raise FactError(f"{_shown(fact)}: a fact has no variables")
            if triple:
                s, p, o = (rdf_term(x) for x in fact)
                return ground(ir.Atom(p, (s, o)))  # type: ignore[arg-type]
            pred = term_of(fact[0], self.prefixes)
            if type(pred) not in (ir.Name, ir.Iri):
                raise FactError(f"{_shown(fact)}: the first item is the predicate, a name or an IRI")
            return ground(ir.Atom(pred, tuple(term_of(x, self.prefixes) for x in fact[1:])))  # type: ignore[arg-type]
        raise FactError(f"{_shown(fact)} is not a fact (a fact is an atom, its text such as \"temp(s1, 25)\", a "
                        "tuple (predicate, argument, ...), or an RDF triple of rdflib terms)")

    def _triple(self, fact: tuple) -> tuple[RelKey, tuple[int, int]]:
        ids = self.node_ids
        try:
            s, p, o = ids[fact[0]], ids[fact[1]], ids[fact[2]]
        except KeyError:
            if len(ids) >= TERM_CACHE:
                ids.clear()
            for node in fact:
                if node not in ids:
                    try:
                        ids[node] = self.dictionary.intern(rdf_term(node))
                    except TypeError:
                        raise FactError(f"{_shown(fact)}: {node!r} is not an RDF term") from None
            s, p, o = ids[fact[0]], ids[fact[1]], ids[fact[2]]
        if type(self.dictionary.term(p)) is not ir.Iri:
            raise FactError(f"{_shown(fact)}: the predicate of a triple is an IRI")
        return (p, 2), (s, o)

    def _interned(self, fact: tuple) -> tuple:
        rel, ids = fact
        size = len(self.dictionary)
        if not (len(rel) == 2 and type(rel[0]) is int and type(rel[1]) is int and type(ids) is tuple
                and len(ids) == rel[1] and all(type(i) is int for i in ids)):
            raise FactError(f"{fact!r} is not an interned fact ((predicate id, arity), (id, ...)) with as many "
                            "ids as its arity (give a fact of names and values as a tuple or text instead)")
        for i in (rel[0], *ids):
            if not (0 <= i < size or FIRST_INT_ID <= i < 2 * INT_OFFSET - FIRST_INT_ID):
                raise FactError(f"{fact!r}: {i} is not a term id of this engine's dictionary")
        return fact


def format_atom(atom: ir.Atom) -> str:
    """An atom in rule syntax (IRIs in full)."""
    return Printer().atom(atom)


def _shown(fact: object) -> str:
    """A fact as an error message names it."""
    if isinstance(fact, ir.Atom):
        try:
            return format_atom(fact)
        except Exception:  # (an atom with a value no printer knows)
            return repr(fact)
    return repr(fact)


def relation_check(dictionary: TermDictionary, relations: Iterable[RelKey], any_triple: bool = False
                   ) -> Callable[[RelKey], str | None]:
    """A ``FactReader`` relation check for an engine that reads only ``relations`` (and, with
    ``any_triple``, every binary IRI relation: a rule with a variable predicate reads them)."""
    known = set(relations)
    arities: dict[int, set[int]] = {}
    for pred, arity in known:
        arities.setdefault(pred, set()).add(arity)

    def check(rel: RelKey) -> str | None:
        if rel in known:
            return None
        if any_triple and rel[1] == 2 and type(dictionary.term(rel[0])) is ir.Iri:
            return None
        term = dictionary.term(rel[0])
        name = term.value if type(term) is ir.Name else f"<{term.value}>" if type(term) is ir.Iri else repr(term)
        used = arities.get(rel[0])
        if used:
            counts = " or ".join(str(n) for n in sorted(used))
            return f"the rules use {name} with {counts} argument{'s' * (counts != '1')}, not {rel[1]}"
        return f"no rule reads or derives {name}"

    return check
