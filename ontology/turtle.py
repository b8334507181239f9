"""A fast reader for Turtle shaped like N-Triples: stream records and background files.

Stream records are small graphs (a reading, an observation): a few triples of IRIs, prefixed
names, ``a`` and integers, with ``@prefix`` / ``PREFIX`` lines, ``;`` and ``,``; background files
are often N-Triples. rdflib takes about 0.3 ms to parse such a record (a ``Graph`` and its parser
per record) and 50 us a line of N-Triples; this reader takes a few microseconds. Its triples hold
the terms' texts as :class:`TokenTriple` s, interned with one dictionary probe per term
(:func:`intern_tokens`). Anything else (strings, decimals, blank nodes, collections, ``@base``,
escapes, relative IRIs) makes :func:`read` return None, and the caller parses the text
with rdflib: the fast path is taken only where it gives rdflib's terms
(tests/pipeline/test_turtle.py compares the two on generated records).

>>> read('@prefix : <http://ex.org/> . :s1 :temp 25 ; a :Sensor .')
[('<http://ex.org/s1>', '<http://ex.org/temp>', '25'), ('<http://ex.org/s1>', '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>', '<http://ex.org/Sensor>')]
>>> read(':s1 :name "x" .') is None  # a string literal: rdflib reads it
True
"""

from __future__ import annotations

import re

from dotr.rules.engine.terms import TERM_CACHE, TermDictionary, format_term
from dotr.rules.lang.ir import RDF_TYPE, Num
from dotr.rules.lang.queries.sparql import rdf_term

_RDF_TYPE = f"<{RDF_TYPE}>"

# one token: an absolute IRI, an integer, a prefixed name (simple local part), a prefix
# declaration's name, punctuation, or a directive
_TOKEN = re.compile(r"""\s*(?:
    (?P<iri><[A-Za-z][A-Za-z0-9+.-]*:[^<>"{}|^`\\\s]*>)
  | (?P<int>[+-]?[0-9]+)(?=[\s.;,]|$)(?!\.[0-9])
  | "(?P<typed>[+-]?[0-9]+)"\^\^<http://www\.w3\.org/2001/XMLSchema\#integer>
  | (?P<pname>(?:[A-Za-z][A-Za-z0-9_-]*)?:(?:[A-Za-z_][A-Za-z0-9_-]*)?)(?=[\s.;,]|$)
  | (?P<punct>[.;,])
  | (?P<a>a)(?=\s)
  | (?P<directive>@prefix|(?i:prefix)(?=\s))
  | (?P<comment>\#[^\n]*)
)""", re.VERBOSE)


def in_order(triples: list) -> list:
    """A record's triples as the graph they make (a triple written twice is one) in their defined
    order: a graph has none, so they arrive (for tuple windows) in the order of their printed
    terms, ``<iri>`` and numbers as written; the same whether this reader or rdflib read them."""
    if len(triples) < 2:
        return list(triples)
    return sorted(set(triples), key=_printed)


def _printed(triple) -> tuple:
    if type(triple) is TokenTriple:
        return triple
    return tuple(format_term(rdf_term(node)) for node in triple)


class TokenTriple(tuple):
    """``(subject, predicate, object)`` as term texts, ``<iri>`` or an integer, or as other
    constants (the literals of a background file: ``ontology.rdf_files``)."""

    __slots__ = ()


def intern_tokens(triple: TokenTriple, d: TermDictionary, cache: dict) -> tuple:
    """``((p, 2), (s, o))`` for a triple of tokens; ``cache`` maps tokens to ids."""
    s, p, o = (cache.get(token) for token in triple)
    if s is None or p is None or o is None:
        if len(cache) >= TERM_CACHE:
            cache.clear()
        s, p, o = (cache[token] if token in cache else cache.setdefault(token, _intern_token(token, d))
                   for token in triple)
    return (p, 2), (s, o)


def _intern_token(token, d: TermDictionary) -> int:
    if type(token) is not str:
        return d.intern(token)
    return d.intern_iri(token[1:-1]) if token[0] == "<" else d.intern(Num(int(token)))


def read(text: str) -> list[TokenTriple] | None:
    """The triples of ``text``, or None when it is not N-Triples-shaped Turtle (see above)."""
    prefixes: dict[str, str] = {}
    out: list[TokenTriple] = []
    tokens = _tokens(text)
    if tokens is None:
        return None
    n, i = len(tokens), 0
    while i < n:
        kind, value = tokens[i]
        if kind == "directive":  # @prefix p: <iri> .   or   PREFIX p: <iri>
            if i + 2 >= n or tokens[i + 1][0] != "pname" or not tokens[i + 1][1].endswith(":") \
                    or tokens[i + 2][0] != "iri":
                return None
            prefixes[tokens[i + 1][1][:-1]] = tokens[i + 2][1][1:-1]
            i += 3
            if value == "@prefix":
                if i >= n or tokens[i] != ("punct", "."):
                    return None
                i += 1
            continue
        subject = _term(kind, value, prefixes)
        if subject is None or subject[0] != "<":
            return None
        i += 1
        while True:  # predicate object (, object)* (; predicate ...)* .
            if i >= n:
                return None
            kind, value = tokens[i]
            predicate = _RDF_TYPE if kind == "a" else _term(kind, value, prefixes)
            if predicate is None or predicate[0] != "<":
                return None
            i += 1
            while True:
                if i >= n:
                    return None
                obj = _term(*tokens[i], prefixes)
                if obj is None:
                    return None
                out.append(TokenTriple((subject, predicate, obj)))
                i += 1
                if i < n and tokens[i] == ("punct", ","):
                    i += 1
                    continue
                break
            if i < n and tokens[i] == ("punct", ";"):
                i += 1
                while i < n and tokens[i] == ("punct", ";"):
                    i += 1
                if i < n and tokens[i] == ("punct", "."):
                    break
                continue
            break
        if i >= n or tokens[i] != ("punct", "."):
            return None
        i += 1
    return out


def _tokens(text: str) -> list[tuple[str, str]] | None:
    out = []
    pos, end = 0, len(text.rstrip())
    match = _TOKEN.match
    while pos < end:
        m = match(text, pos)
        if m is None:
            return None
        kind = m.lastgroup
        if kind != "comment":
            out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _term(kind: str, value: str, prefixes: dict[str, str]) -> str | None:
    if kind == "iri":
        return value
    if kind == "int" or kind == "typed":
        return str(int(value))  # as rdflib reads it: "007" is 7
    if kind == "pname":
        prefix, _, local = value.partition(":")
        base = prefixes.get(prefix)
        return None if base is None else f"<{base}{local}>"
    return None
