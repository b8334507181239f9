"""An event's SELECT read without rdflib when it is one basic graph pattern with simple filters.

A query ``SELECT ?a ?b`` (or ``SELECT *``), ``WHERE`` or not, whose group holds triples of the
plain terms a construct template may have (``template``: variables, IRIs, prefixed names of the
rule file's prefixes, ``a``, integers and strings without escapes; no blank node) and
``FILTER(x op y)``, ``op`` one of ``<``, ``<=``, ``>``, ``>=`` and ``x``, ``y`` variables or
integers without a sign, is read here: its atoms (a triple ``s p o`` as ``p(s, o)``) and its
comparisons are those the SPARQL planner makes of rdflib's algebra
(``rules.engine.sparql.planner``), every selected and compared variable one of the triples'. Any
other query (and any error) goes to rdflib's SPARQL parser (``sparql.parse_select``). A program
whose event queries are all read here never loads rdflib or the SPARQL compiler.

>>> q = read_select("select ?s ?v where { ?s :temp ?v ; a :Sensor filter(?v >= 30) }", {"": "http://ex.org/"})
>>> q.vars, [(a.pred.value[-4:], [t.name for t in a.args if isinstance(t, ir.Var)]) for a in q.atoms]
(('s', 'v'), [('temp', ['s', 'v']), ('type', ['s'])])
>>> q.comparisons
(Comparison(op='>=', left=Var(name='v'), right=Num(value=30)),)
>>> read_select("select distinct ?s where { ?s :temp ?v }", {"": "http://ex.org/"}) is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import ir
from .joins import pattern_warnings
from .template import _RDF_TYPE, _TOKEN, _XSD_INTEGER, rdf_literal, read_tokens, read_triples

_SELECT_TOKEN = re.compile(_TOKEN.pattern + r"""
  | (?P<keyword>(?i:select|where|filter)(?![A-Za-z0-9_:\-]))
  | (?P<op><=|>=|<|>)
  | (?P<paren>[()*])
""", re.X)


@dataclass(frozen=True)
class SimpleSelect:
    """A SELECT of one basic graph pattern: the selected variables (``*``: the pattern's, in
    alphabetical order), the atoms and the comparisons."""

    vars: tuple[str, ...]
    atoms: tuple[ir.Atom, ...]
    comparisons: tuple[ir.Comparison, ...]

    def bound(self) -> set[str]:
        """The variables the atoms bind."""
        return set().union(*(_names((a.pred, *a.args)) for a in self.atoms))

    def reads(self) -> set:
        """The predicate keys the atoms read (as ``sparql.query_reads``)."""
        from ..analysis import ANY_TRIPLE

        keys: set = set()
        for atom in self.atoms:
            p, o = atom.pred, atom.args[1]
            if not isinstance(p, ir.Iri):
                keys.add(ANY_TRIPLE)
            elif p == _RDF_TYPE:
                keys.add((o, 1) if isinstance(o, ir.Iri) else (p, 2))
            else:
                keys.add((p, 2))
        return keys

    def warnings(self, text: ir.SparqlText, what: str) -> list:
        """W305 for a cross product (as ``joins.query_warnings``)."""
        return pattern_warnings(text, [_names((a.pred, *a.args)) for a in self.atoms],
                                [_names((c.left, c.right)) for c in self.comparisons], what)


def read_select(text: str, prefixes: dict[str, str]) -> SimpleSelect | None:
    """The query ``text`` as the module docstring says, or None."""
    tokens = read_tokens(text, _SELECT_TOKEN)
    if not tokens or not _is(tokens[0], "keyword", "select"):
        return None
    i = 1
    star = i < len(tokens) and _is(tokens[i], "paren", "*")
    if star:
        i += 1
    selected = []
    while i < len(tokens) and tokens[i][0] == "var":
        selected.append(tokens[i][1].group()[1:])
        i += 1
    if star == bool(selected) or len(set(selected)) < len(selected):
        return None
    if i < len(tokens) and _is(tokens[i], "keyword", "where"):
        i += 1
    if len(tokens) < i + 2 or not _is(tokens[i], "punct", "{") or not _is(tokens[-1], "punct", "}"):
        return None
    blocks: list[list] = [[]]
    comparisons = []
    body, j = tokens[i + 1:-1], 0
    while j < len(body):
        if _is(body[j], "keyword", "filter"):
            comparison = _comparison(body[j + 1:j + 6])
            if comparison is None:
                return None
            comparisons.append(comparison)
            j += 6
            if j < len(body) and _is(body[j], "punct", "."):
                j += 1
            blocks.append([])
        elif body[j][0] in ("keyword", "op", "paren"):
            return None
        else:
            blocks[-1].append(body[j])
            j += 1
    triples = []
    for block in blocks:
        found = read_triples(block, prefixes, blanks=False) if block else []
        if found is None:
            return None
        triples += found
    query = SimpleSelect(tuple(selected), tuple(ir.Atom(p, (s, o)) for s, p, o in triples), tuple(comparisons))
    names = query.bound()
    compared = set().union(*(_names((c.left, c.right)) for c in comparisons))
    if not triples or not set(selected) <= names or not compared <= names:
        return None
    return SimpleSelect(tuple(sorted(names)), query.atoms, query.comparisons) if star else query


def _names(terms) -> set[str]:
    """The names of the variables among ``terms``."""
    return {t.name for t in terms if isinstance(t, ir.Var)}


def _is(token: tuple[str, re.Match], kind: str, text: str) -> bool:
    return token[0] == kind and token[1].group().lower() == text


def _comparison(tokens: list) -> ir.Comparison | None:
    """``( x op y )`` as a comparison, or None."""
    if len(tokens) != 5 or not _is(tokens[0], "paren", "(") or tokens[2][0] != "op" \
            or not _is(tokens[4], "paren", ")"):
        return None
    left, right = _operand(tokens[1]), _operand(tokens[3])
    if left is None or right is None:
        return None
    return ir.Comparison(tokens[2][1].group(), left, right)


def _operand(token: tuple[str, re.Match]) -> ir.Term | None:
    kind, match = token
    if kind == "var":
        return ir.Var(match.group()[1:])
    if kind == "integer" and not match.group().startswith("-"):  # (rdflib reads -3 as an expression)
        term = rdf_literal(match.group(), _XSD_INTEGER, None)
        return term if isinstance(term, ir.Num) else None
    return None
