"""A pattern's ``construct`` template as triples of dotr terms, read without rdflib when it is
plain triples.

Each term of a triple is a variable (``ir.Var``, named without its ``?``), a blank node
(:class:`Blank`: a fresh IRI per match) or a constant (a dotr term, as ``sparql.rdf_term`` makes
it of rdflib's). A template of triples whose terms are variables, IRIs, prefixed names of the rule
file's prefixes with plain local names, ``a``, blank node labels, integers and strings without
escapes (with a language tag or a datatype), written with ``.``, ``;`` and ``,`` and comments, is
read here; any other (and any error) goes to rdflib's SPARQL parser (``sparql.parse_template``),
whose triples are turned into the same terms. A program whose templates are all plain, and whose
events are rule bodies, so never loads rdflib (0.17 s of a start).

>>> from dotr.rules.lang.ir import SparqlText
>>> triples, _ = template_triples(SparqlText("{ _:m :key ?k ; a :Match }"), {"": "http://ex.org/"})
>>> [[str(term) if isinstance(term, Blank) else term.name if isinstance(term, ir.Var) else term.value
...   for term in triple] for triple in triples]
[['m', 'http://ex.org/key', 'k'], ['m', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 'http://ex.org/Match']]
"""

from __future__ import annotations

import re

from .. import ir
from ..errors import Diagnostic
from ..ir import SparqlText
from .sparql import parse_template, rdf_term


class Blank(str):
    """A blank node of a template, by its label."""

    __slots__ = ()


_TOKEN = re.compile(r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<var>[?$][A-Za-z_][A-Za-z0-9_]*)
  | (?P<iri><[A-Za-z][A-Za-z0-9+.\-]*:[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<blank>_:[A-Za-z0-9_]+)
  | (?P<pname>(?:[A-Za-z][A-Za-z0-9_\-]*)?:[A-Za-z_][A-Za-z0-9_\-]*)
  | (?P<string>"[^"\\\r\n]*")(?:@(?P<lang>[A-Za-z]+(?:-[A-Za-z0-9]+)*)
                               |\^\^(?:(?P<dt_iri><[A-Za-z][A-Za-z0-9+.\-]*:[^<>"{}|^`\\\x00-\x20]*>)
                                      |(?P<dt_pname>(?:[A-Za-z][A-Za-z0-9_\-]*)?:[A-Za-z_][A-Za-z0-9_\-]*)))?
  | (?P<integer>-?(?:0|[1-9][0-9]{0,17}))(?![0-9eE]|\.[0-9])
  | (?P<a>a)(?=[\s<?$_":])
  | (?P<punct>[{}.;,])
""", re.X)
_RDF_TYPE = ir.Iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
_XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def template_triples(text: SparqlText, prefixes: dict[str, str]) -> tuple[list | None, list[Diagnostic]]:
    """The triples of a ``construct`` template ``{ ... }`` (terms as the module docstring says),
    and any diagnostics."""
    triples = read_template(text.text, prefixes)
    if triples is None:
        parsed, diags = parse_template(text, prefixes)
        if parsed is None:
            return None, diags
        triples = [tuple(map(_term_of_node, triple)) for triple in parsed]
    else:
        diags = []
    return sorted(triples, key=_triple_key), diags  # (in one order, whoever read them: rdflib sorts its own)


def _triple_key(triple: tuple) -> tuple:
    return tuple((type(term).__name__, term.name if isinstance(term, ir.Var) else str(term) if isinstance(term, Blank)
                  else repr(term)) for term in triple)


def _term_of_node(node):
    from rdflib.term import BNode, Variable  # (the template was not plain: rdflib read it)

    if isinstance(node, Variable):
        return ir.Var(str(node))
    if isinstance(node, BNode):
        return Blank(node)
    return rdf_term(node)


def read_template(text: str, prefixes: dict[str, str]) -> list[tuple] | None:
    """The triples of a plain template (the module docstring), or None for any other text."""
    tokens = read_tokens(text, _TOKEN)
    if tokens is None or len(tokens) < 2 or tokens[0][1].group() != "{" or tokens[-1][1].group() != "}":
        return None
    return read_triples(tokens[1:-1], prefixes)


def read_tokens(text: str, pattern: re.Pattern) -> list[tuple[str, re.Match]] | None:
    """The tokens of ``text`` but spaces and comments, as (kind, match), or None where
    ``pattern`` reads no token."""
    tokens, pos = [], 0
    while pos < len(text):
        match = pattern.match(text, pos)
        if match is None:  # (something no token reads)
            return None
        pos = match.end()
        kind = "string" if match.group("string") else match.lastgroup
        if kind != "space":
            tokens.append((kind, match))
    return tokens


def read_triples(tokens: list[tuple[str, re.Match]], prefixes: dict[str, str], blanks: bool = True
                 ) -> list[tuple] | None:
    """The triples of plain tokens (subjects with their lists of predicates and objects, each
    ended by ``.``), or None for any other tokens (and with ``blanks`` false, for a blank node)."""
    out: list[tuple] = []
    i, n = 0, len(tokens)

    def term(position: str):
        nonlocal i
        if i >= n:
            return None
        kind, m = tokens[i]
        i += 1
        if kind == "var":
            return ir.Var(m.group()[1:])
        if kind == "a":
            return _RDF_TYPE if position == "verb" else None
        if kind == "iri":
            return ir.Iri(m.group()[1:-1])
        if kind == "pname":
            return _expanded(m.group(), prefixes)
        if position == "verb":
            return None
        if kind == "blank":
            return Blank(m.group()[2:]) if blanks else None
        if position == "subject":
            return None
        if kind == "integer":
            return rdf_literal(m.group(), _XSD_INTEGER, None)
        if kind == "string":
            datatype = m.group("dt_iri")[1:-1] if m.group("dt_iri") else \
                _expanded(m.group("dt_pname"), prefixes) if m.group("dt_pname") else None
            if isinstance(datatype, ir.Iri):
                datatype = datatype.value
            elif m.group("dt_pname"):
                return None  # (an undeclared prefix)
            return rdf_literal(m.group("string")[1:-1], datatype, m.group("lang"))
        return None

    def punct(value: str) -> bool:
        nonlocal i
        if i < n and tokens[i][0] == "punct" and tokens[i][1].group() == value:
            i += 1
            return True
        return False

    while i < n:
        subject = term("subject")
        if subject is None:
            return None
        while True:
            verb = term("verb")
            if verb is None:
                return None
            while True:
                obj = term("object")
                if obj is None:
                    return None
                out.append((subject, verb, obj))
                if not punct(","):
                    break
            if not punct(";"):
                break
            while punct(";"):
                pass
            if i >= n or tokens[i][0] == "punct":  # (a list that ends with ';')
                break
        if not punct(".") and i < n:
            return None
    return out


def _expanded(pname: str, prefixes: dict[str, str]) -> ir.Iri | None:
    prefix, local = pname.split(":", 1)
    namespace = prefixes.get(prefix)
    return None if namespace is None else ir.Iri(namespace + local)


def rdf_literal(lexical: str, datatype: str | None, lang: str | None) -> ir.Const:
    """A literal of a template as ``rdf_term`` makes it of rdflib's."""
    return ir.canonical(ir.Literal(lexical, datatype, lang))
