"""rdflib's SPARQL evaluator as the reference for the SPARQL engine's tests, and the one
normalisation both sides need: a number is compared by its value (rdflib types integer products
as xsd:decimal, where SPARQL makes them integers)."""

from __future__ import annotations

from dotr.rules import ir
from dotr.rules.lang.ir import NUMERIC_TYPES


def comparable(term):
    """``term`` (a dotr term), numbers as their values."""
    if isinstance(term, ir.Num):
        return ("number", float(term.value))
    if isinstance(term, ir.Literal) and term.datatype in NUMERIC_TYPES:
        try:
            return ("number", float(term.lexical))
        except ValueError:
            return term
    return term
