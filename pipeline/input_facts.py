"""Stream facts as text (``temp(r1,25)``, ``:Sensor(:s1)``): parsed into atoms
(``rules.engine.inputs.parse_fact``), checked as they are read (:func:`checked_fact`), and
interned into an ontological stage's ids (:func:`intern_all`, :func:`intern_input`), by fast paths for the simple
facts streams are made of and the rule grammar for any other."""

from __future__ import annotations

import re
from typing import Iterable

from dotr.ontology import OntologicalStage
from dotr.ontology.turtle import TokenTriple, intern_tokens
from dotr.rules import InputError, ir
from dotr.rules.engine.inputs import ARG, SIMPLE_FACT, parse_fact, parse_fact_with_grammar, simple_term, tight
from dotr.rules.engine.terms import TERM_CACHE
from dotr.rules.lang.errors import MAX_ARITY, MAX_DIGITS
from dotr.rules.lang.parser import KEYWORDS

__all__ = ["parse_fact", "parse_fact_with_grammar", "checked_fact", "fact_problem", "simple_facts",
           "simple_fact_list", "intern_all", "intern_input", "FACT_CACHE"]


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+\-]?\d+)?"
_LIST_IRI = r"<[^<>\"{}|^`\\\s,()]+>"  # (one with commas or brackets: the slow path, which splits it as before)
_ONE = rf"(?:{_NAME}|{_LIST_IRI})(?:\((?:{_NAME}|{_LIST_IRI}|{_NUMBER})(?:,(?:{_NAME}|{_LIST_IRI}|{_NUMBER}))*\))?"
_SIMPLE_LIST = re.compile(rf"\s*(?:{_ONE}(?:\s*,\s*{_ONE})*)?\s*")
_ONE_FACT = re.compile(_ONE)
_TOKEN_BREAK = re.compile(r"[(),\s]+")


#: a fact string shorter than this has at most MAX_ARITY arguments and no over-long number
_SHORT_FACT = 2 * MAX_ARITY + 3
_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1}}}")


def fact_problem(fact: str | ir.Atom) -> str | None:
    """Why a fact (a string :func:`checked_fact` gave, or an atom) cannot be a stream fact: more
    arguments than the store holds, an integer longer than can be read; None when it can.
    Cheap for the facts streams are made of (a short string is checked by its length).

    >>> fact_problem("p(a,b)"), fact_problem("p(" + ",".join("a" * 17) + ")")
    (None, 'a fact has 17 arguments: at most 16')
    """
    if type(fact) is str:
        if len(fact) < _SHORT_FACT:
            return None
        open_ = fact.find("(")
        arity = len(ARG.findall(fact, open_ + 1, len(fact) - 1)) if open_ > 0 else 0
        if len(fact) > MAX_DIGITS and _LONG_NUMBER.search(fact):
            return f"a fact has an integer of more than {MAX_DIGITS:,} digits"
    else:
        arity = len(fact.args)
    return f"a fact has {arity} arguments: at most {MAX_ARITY}" if arity > MAX_ARITY else None


def checked_fact(text: str, prefixes: dict[str, str] | None = None) -> str | ir.Atom:
    """A fact string as the stream gives it, checked: the string itself (without spaces around
    its brackets and commas) when it is a simple fact (names, IRIs and numbers, no keyword:
    :func:`intern_input` reads it without building terms), else its parsed atom
    (:class:`InputError` when it is not a fact).

    >>> checked_fact("temp(r1, 25)")  # (spaces around brackets and commas dropped)
    'temp(r1,25)'
    >>> checked_fact('name(s1,"Kitchen")')
    Atom(pred=Name(value='name'), args=(Name(value='s1'), Literal(lexical='Kitchen', datatype=None, lang=None)))
    """
    text = tight(text)
    fact: str | ir.Atom | None = None
    if SIMPLE_FACT.fullmatch(text) is not None:
        open_ = text.find("(")
        if open_ < 0 and text not in KEYWORDS or open_ > 0 and KEYWORDS.isdisjoint(
                (text[:open_], *text[open_ + 1:-1].split(","))):
            fact = text
    if fact is None:
        fact = parse_fact(text, prefixes)
    problem = fact_problem(fact)
    if problem is not None:
        raise InputError(problem)
    return fact


def simple_facts(text: str) -> list[str] | None:
    """The facts of a comma-separated list when every one is simple and written tight (names,
    IRIs and numbers, no space inside, no keyword): as :func:`checked_fact` gives them; else
    None. Split at ``", "``, each fact is checked on its own (:func:`_is_simple`: one set probe
    for a fact seen before); with any other separator the list is read by one regex.

    >>> simple_facts("p(0,1), q(a) ,r")
    ['p(0,1)', 'q(a)', 'r']
    >>> simple_facts("p(0, 1)"), simple_facts("p(not)"), simple_facts('p("a")')
    (None, None, None)
    """
    facts = text.strip().split(", ")  # (the common separator: each piece checked on its own)
    if _SIMPLE.issuperset(facts) or all(map(_is_simple, facts)):  # (every one seen before: one C call)
        return facts
    if _SIMPLE_LIST.fullmatch(text) is None or not KEYWORDS.isdisjoint(_TOKEN_BREAK.split(text)):
        return None
    return _ONE_FACT.findall(text)


def simple_fact_list(facts: list) -> list[str] | None:
    """``facts`` (a record's fact strings) when every one is simple and written tight, as
    :func:`checked_fact` gives them; else None.

    >>> simple_fact_list(["p(0,1)", "q"]), simple_fact_list(["p(0, 1)"]), simple_fact_list(["p", 1])
    (['p(0,1)', 'q'], None, None)
    """
    return facts if _SIMPLE.issuperset(facts) or all(map(_is_simple, facts)) else None


def _is_simple(fact) -> bool:
    """Whether ``fact`` is a simple fact string written tight (a fact of names, IRIs and numbers,
    no keyword). The strings found simple are remembered (the last ``FACT_CACHE`` of them): a
    stream repeats its facts, and a remembered one costs one set probe."""
    if type(fact) is not str:
        return False
    if fact in _SIMPLE:
        return True
    if _ONE_FACT.fullmatch(fact) is None or not KEYWORDS.isdisjoint(_TOKEN_BREAK.split(fact)):
        return False
    if len(_SIMPLE) >= FACT_CACHE:
        _SIMPLE.clear()
    _SIMPLE.add(fact)
    return True


_SIMPLE: set[str] = set()


def intern_all(stage: OntologicalStage, facts: Iterable) -> list[tuple]:
    """:func:`intern_input` of each fact; a tight fact string seen before in one dict probe (the
    last ``FACT_CACHE`` distinct ones are kept), one whose predicate and arguments were all seen
    before in one probe each.

    >>> from dotr import examples
    >>> from dotr.rules import check
    >>> stage = OntologicalStage(check(examples.path("cooling") / "rules.dotr"))
    >>> intern_all(stage, ["temp(25)", "temp(25)"]) == [intern_input(stage, "temp(25)")] * 2
    True
    """
    known, get, out = stage.fact_ids, stage.token_ids.get, []
    append = out.append
    if len(known) > FACT_CACHE:
        known.clear()
    if type(facts) is list:
        try:  # (every fact a string seen before, as a stream that repeats its facts has them)
            if all(map(known.__contains__, facts)):
                return list(map(known.__getitem__, facts))
        except TypeError:  # (an unhashable fact, read below)
            pass
    rdf_type = None
    for fact in facts:
        if type(fact) is str:
            hit = known.get(fact)
            if hit is not None:
                append(hit)
                continue
            if fact[-1:] == ")":
                # (split at the first bracket and the commas: when every piece is a token seen
                # before, the split was right; a token never starts as an IRI cut short does)
                open_ = fact.find("(")
                pieces = fact[open_ + 1:-1].split(",")
                ids = [get(piece) for piece in pieces]
                pred = get(fact[:open_])
                if pred is None or None in ids:
                    if not _is_simple(fact):  # (else each piece is a name, an IRI or a number)
                        ids = None
                    else:  # (ids in the order the grammar's path gives them)
                        if pred is None:
                            pred = _intern_token(stage, fact[:open_])
                        ids = [_intern_token(stage, p) if i is None else i for i, p in zip(ids, pieces)]
                if ids is not None:
                    if fact[0] == "<" and len(ids) == 1:  # a class membership: an rdf:type triple
                        if rdf_type is None:
                            rdf_type = stage.dictionary.intern(ir.Iri(ir.RDF_TYPE))
                        append(known.setdefault(fact, ((rdf_type, 2), (ids[0], pred))))
                    else:
                        append(known.setdefault(fact, ((pred, len(ids)), tuple(ids))))
                    continue
            if " " not in fact:  # (tight: a term not seen before)
                append(_intern_text(stage, fact))
                continue
        append(intern_input(stage, fact))
    return out


#: how many distinct fact strings :func:`intern_all` keeps the ids of (then it starts afresh)
FACT_CACHE = 1 << 16


def intern_input(stage: OntologicalStage, fact) -> tuple:
    """``(relation, ids)`` of an input fact for ``stage``: a fact string (``temp(25)``; the ids
    of the names, IRIs and numbers seen before come from ``stage.token_ids``), a
    :class:`~pipeline.turtle.TokenTriple`, a ground atom, an rdflib triple, or an already
    interned fact.

    >>> from dotr import examples
    >>> from dotr.rules import check
    >>> stage = OntologicalStage(check(examples.path("cooling") / "rules.dotr"))
    >>> intern_input(stage, "temp(25)") == stage.intern(parse_fact("temp(25)"))
    True
    """
    if type(fact) is TokenTriple:  # the fast Turtle reader's: term texts
        return intern_tokens(fact, stage.dictionary, stage.token_ids)
    if not isinstance(fact, str):
        return stage.intern(fact)
    text, cache = tight(fact), stage.token_ids
    # first without a regex: split at the parentheses and commas; when every piece is a token
    # seen before (whole names, IRIs and numbers only), the split was right
    open_ = text.find("(")
    pieces = [text] if open_ < 0 else [text[:open_], *text[open_ + 1:-1].split(",")] if text[-1] == ")" else []
    ids = [cache.get(piece) for piece in pieces]
    if not ids or None in ids:
        return _intern_text(stage, text)
    if pieces[0][0] == "<" and len(ids) == 2:  # a class membership: an rdf:type triple
        return (stage.dictionary.intern(ir.Iri(ir.RDF_TYPE)), 2), (ids[1], ids[0])
    return (ids[0], len(ids) - 1), tuple(ids[1:])


def _intern_token(stage: OntologicalStage, token: str) -> int:
    """The id of a token of a simple fact not seen before (a name, IRI or number, as the
    simple-fact patterns read it; not a keyword); remembered in ``stage.token_ids``."""
    d = stage.dictionary
    if token[0].isalpha() or token[0] == "_":
        term_id = d.intern_name(token)
    elif token.isdecimal():  # (an integer has its id without the dictionary)
        term_id = d.number(int(token))
    else:
        term_id = d.intern(simple_term(token))
    tokens = stage.token_ids
    if len(tokens) >= TERM_CACHE:
        tokens.clear()
    tokens[token] = term_id
    return term_id


def _intern_text(stage: OntologicalStage, text: str) -> tuple:
    """:func:`intern_input` of a tight fact string with a term not seen before (read by regex,
    its new tokens remembered), or of any other form (the grammar)."""
    cache = stage.token_ids
    simple = SIMPLE_FACT.fullmatch(text)
    if simple is None:
        return stage.intern(parse_fact(text, stage.program.prefixes))
    pred, args = simple.groups()
    pieces = [pred, *ARG.findall(args)] if args else [pred]
    ids = []
    for token in pieces:
        i = cache.get(token)
        if i is None:
            if token in KEYWORDS:
                return stage.intern(parse_fact(text, stage.program.prefixes))
            i = _intern_token(stage, token)
        ids.append(i)
    if pieces[0][0] == "<" and len(ids) == 2:  # a class membership: an rdf:type triple
        return (stage.dictionary.intern(ir.Iri(ir.RDF_TYPE)), 2), (ids[1], ids[0])
    return (ids[0], len(ids) - 1), tuple(ids[1:])
