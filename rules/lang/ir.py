"""The intermediate representation of rule programs: frozen dataclasses with source spans.

Every node carries an optional ``span`` (file, line, column) that is excluded from equality and
hashing, so two programs that say the same thing compare equal wherever they were written:

>>> Var("X", span=Span("a.dotr", 1, 1)) == Var("X")
True
>>> Atom(Name("p"), (Var("X"), Num(1))).predicate_key
('p', 2)
"""

from __future__ import annotations

import re
from decimal import Decimal

from dataclasses import dataclass, field
from typing import Union, overload

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
OWL = "http://www.w3.org/2002/07/owl#"
RDF_TYPE = RDF + "type"

#: Prefixes every program knows without declaring them (a declaration overrides them).
DEFAULT_PREFIXES: dict[str, str] = {"rdf": RDF, "rdfs": RDFS, "xsd": XSD, "owl": OWL}

#: Time units accepted after ``@timeunit ms``, in milliseconds.
UNIT_MS: dict[str, int] = {"ms": 1, "s": 1000, "sec": 1000, "min": 60_000, "h": 3_600_000}

_ISO_DURATION = re.compile(r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")


def iso_duration_ms(lexical: str) -> float | None:
    """An ISO 8601 / ``xsd:duration`` of weeks, days, hours, minutes and seconds in milliseconds;
    None for other text (years and months have no fixed length).

    >>> iso_duration_ms("PT10S"), iso_duration_ms("P1DT0.5S"), iso_duration_ms("P1M"), iso_duration_ms("PT")
    (10000.0, 86400500.0, None, None)
    """
    m = _ISO_DURATION.fullmatch(lexical)
    if m is None or lexical in ("P", "PT") or lexical.endswith("T"):
        return None
    weeks, days, hours, minutes, seconds = (float(g) if g else 0 for g in m.groups())
    return ((((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000


@dataclass(frozen=True, slots=True)
class Span:
    """Where a node was written: 1-based line and column of its first character."""

    path: str
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


def _span() -> Span | None:
    return field(default=None, compare=False, hash=False, repr=False, kw_only=True)  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------- terms


@dataclass(frozen=True, slots=True)
class Var:
    """A variable, written ``?x`` or ``X`` (the name keeps the ``?`` when written with one)."""

    name: str
    span: Span | None = _span()

    @property
    def key(self) -> str:
        """The name without a leading ``?``."""
        return self.name[1:] if self.name.startswith("?") else self.name


@dataclass(frozen=True, slots=True)
class Name:
    """A plain constant name such as ``a``, ``roomA`` or ``x1``."""

    value: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Num:
    """A number written without quotes: ``42`` (int) or ``-3.5`` (float)."""

    value: int | float
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Iri:
    """An IRI, always stored expanded (prefixed names are expanded at parse time)."""

    value: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Literal:
    """A quoted literal with an optional datatype IRI or language tag."""

    lexical: str
    datatype: str | None = None
    lang: str | None = None
    span: Span | None = _span()


Const = Union[Name, Num, Iri, Literal]
Term = Union[Var, Const]


# ---------------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class BinOp:
    """Arithmetic ``left op right`` with op one of ``+ - * / mod``."""

    op: str
    left: Expr
    right: Expr
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class AttrRef:
    """``Event.attr`` inside a pattern: an attribute of an event bound earlier (or an alias)."""

    event: str
    attr: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``avg(HighTemp.v within 5 min from Smoke)``; ``attr`` is None for ``count(E ...)``."""

    func: str
    event: str
    constraints: tuple[Constraint, ...]
    attr: str | None
    scope: Scope
    span: Span | None = _span()


Expr = Union[Term, BinOp, AttrRef, Aggregate]


# -------------------------------------------------------------------------------- rule literals


@dataclass(frozen=True, slots=True)
class Atom:
    """``pred(args)``; a unary IRI predicate is stored as the ``rdf:type`` triple it stands for.
    A variable predicate (``P(X, Y)``, ``?p(?s, ?o)``) ranges over the triples of every IRI
    predicate."""

    pred: Name | Iri | Var
    args: tuple[Term, ...]
    span: Span | None = _span()

    @property
    def predicate_key(self) -> tuple[str, int]:
        """``(name, IRI or variable name, arity)``."""
        return (self.pred.name if isinstance(self.pred, Var) else self.pred.value, len(self.args))


@dataclass(frozen=True, slots=True)
class Window:
    """A window: ``size`` ticks, ``size`` of ``unit``, or (``tuple``) the last ``size`` stream atoms."""

    size: int | float
    unit: str | None = None
    tuple: bool = False
    span: Span | None = _span()

    def length(self) -> int:
        """The window length in time points (milliseconds when a unit is given), or atoms."""
        if self.unit is None:
            return int(self.size)
        return int(self.size * UNIT_MS[self.unit])


@dataclass(frozen=True, slots=True)
class Diamond:
    """``<>`` / ``diamond``: at some time point of the window."""

    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Box:
    """``[]`` / ``box``: at every time point of the window."""

    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class At:
    """``@T``: at time T (binds a variable, or checks a bound variable or a number)."""

    time: Term
    span: Span | None = _span()


TemporalOp = Union[Diamond, Box, At]


@dataclass(frozen=True, slots=True)
class AtomLiteral:
    """A body atom, possibly negated: ``p(X)`` or ``not p(X)``."""

    atom: Atom
    negated: bool = False
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class TemporalLiteral:
    """``[window] op atom`` (window optional: the whole stream so far), possibly negated."""

    window: Window | None
    op: TemporalOp
    atom: Atom
    negated: bool = False
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=``; ``=`` with one unbound side assigns."""

    op: str
    left: Expr
    right: Expr
    span: Span | None = _span()


BodyLiteral = Union[AtomLiteral, TemporalLiteral, Comparison]


@dataclass(frozen=True, slots=True)
class Rule:
    """``head :- body .``; ``at`` is the T of an ``@T head``; an empty body makes a fact."""

    head: Atom
    body: tuple[BodyLiteral, ...] = ()
    at: Term | None = None
    span: Span | None = _span()

    @property
    def is_fact(self) -> bool:
        return not self.body and self.at is None

    @property
    def is_temporal(self) -> bool:
        """True when the rule has a window/temporal atom or an ``@T`` head."""
        return self.at is not None or any(isinstance(lit, TemporalLiteral) for lit in self.body)


# -------------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class PrefixDecl:
    prefix: str
    iri: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class TimeUnitDecl:
    unit: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class ProfileDecl:
    profile: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class ImportDecl:
    path: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class OutputDecl:
    preds: tuple[Name | Iri, ...]
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class SparqlText:
    """SPARQL (or EP-SPARQL / C-SPARQL) text kept verbatim; ``span`` is where it starts."""

    text: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class EventDecl:
    """``event Name(?a, ?b) := select ... .`` or ``event Name(A, B) := body .``"""

    name: str
    params: tuple[Var, ...]
    query: SparqlText | None = None
    body: tuple[BodyLiteral, ...] = ()
    span: Span | None = _span()

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(p.key if isinstance(p, Var) else str(getattr(p, "value", p)) for p in self.params)

    @property
    def definition(self) -> tuple:
        """What the event's rows depend on (its query or body, and its parameters): two events
        with the same definition have the same rows at every time point."""
        return (self.query.text if self.query is not None else repr(self.body), self.attributes)


# -------------------------------------------------------------------------------------- patterns


@dataclass(frozen=True, slots=True)
class Constraint:
    """``attr op expr`` inside ``Event(...)``: compares the event's attribute with ``expr``."""

    attr: str
    op: str
    value: Expr
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Within:
    """``within duration from Ref``: times in [t_Ref - duration, t_Ref)."""

    duration: int | float
    unit: str | None
    ref: str
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Between:
    """``between A and B``: times in [t_A, t_B)."""

    start: str
    end: str
    span: Span | None = _span()


Scope = Union[Within, Between]


@dataclass(frozen=True, slots=True)
class EventRef:
    """An event in a pattern: the terminator (no selection, no scope) or a later item."""

    event: str
    constraints: tuple[Constraint, ...] = ()
    alias: str | None = None
    selection: str | None = None  # "each" | "last" | "first" | "not" (negation); None: terminator
    scope: Scope | None = None
    span: Span | None = _span()

    @property
    def label(self) -> str:
        """The name other clauses use for this event (the alias, or the event type)."""
        return self.alias or self.event


@dataclass(frozen=True, slots=True)
class Binding:
    """``?var = expr`` (in ``with``) or ``attr = expr`` (in ``emit``)."""

    name: str
    value: Expr
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Emit:
    """``emit Name(attr = expr, ...)``: a composite event other patterns may use."""

    event: str
    bindings: tuple[Binding, ...]
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class PatternDecl:
    name: str
    terminator: EventRef
    items: tuple[EventRef, ...] = ()
    where: tuple[Comparison, ...] = ()
    construct: SparqlText | None = None
    bindings: tuple[Binding, ...] = ()
    emit: Emit | None = None
    consuming: tuple[str, ...] = ()
    span: Span | None = _span()

    @property
    def refs(self) -> tuple[EventRef, ...]:
        return (self.terminator, *self.items)


@dataclass(frozen=True, slots=True)
class QueryDecl:
    """``query Name := <EP-SPARQL or C-SPARQL text> .`` (the text is parsed by the query engine)."""

    name: str
    query: SparqlText
    span: Span | None = _span()


Statement = Union[
    PrefixDecl, TimeUnitDecl, ProfileDecl, ImportDecl, OutputDecl, Rule, EventDecl, PatternDecl, QueryDecl
]


@dataclass(frozen=True, slots=True)
class Program:
    """The statements of one file (or of a file and its imports, in order)."""

    statements: tuple[Statement, ...]
    path: str = field(default="<string>", compare=False)
    #: the statements of each kind, found once (a program of 10,000 rules is asked often)
    _by_kind: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _of(self, kind: type) -> tuple:
        found = self._by_kind.get(kind)
        if found is None:
            found = self._by_kind[kind] = tuple(s for s in self.statements if isinstance(s, kind))
        return found

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(s for s in self.statements if isinstance(s, Rule) and not s.is_fact)

    @property
    def facts(self) -> tuple[Atom, ...]:
        return tuple(s.head for s in self.statements if isinstance(s, Rule) and s.is_fact)

    @property
    def events(self) -> tuple[EventDecl, ...]:
        return self._of(EventDecl)

    @property
    def patterns(self) -> tuple[PatternDecl, ...]:
        return self._of(PatternDecl)

    @property
    def queries(self) -> tuple[QueryDecl, ...]:
        return self._of(QueryDecl)

    @property
    def profiles(self) -> tuple[str, ...]:
        return tuple(d.profile for d in self._of(ProfileDecl))

    @property
    def outputs(self) -> tuple[Name | Iri, ...]:
        return tuple(p for d in self._of(OutputDecl) for p in d.preds)

    @property
    def prefixes(self) -> dict[str, str]:
        result = dict(DEFAULT_PREFIXES)
        result.update((d.prefix, d.iri) for d in self._of(PrefixDecl))
        return result

    @property
    def timeunit(self) -> str:
        """``"ms"`` or ``"ticks"`` (the default)."""
        decls = self._of(TimeUnitDecl)
        return decls[-1].unit if decls else "ticks"


# ------------------------------------------------------------------------------ literals
_INTEGER_TYPES = {XSD + t for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
    "negativeInteger", "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte")}
#: literals whose value is a number although they are not the rule language's numbers
NUMERIC_TYPES = {XSD + t for t in ("decimal", "double", "float")} | _INTEGER_TYPES
_DECIMAL = XSD + "decimal"
_FLOATING = {XSD + "double", XSD + "float"}
_STRING = XSD + "string"


@overload
def canonical(term: Const) -> Const: ...


@overload
def canonical(term: Term) -> Term: ...


def canonical(term: Term) -> Term:
    """The representative of ``term``: integer literals and decimals with a fraction become
    numbers (which print back as the same Turtle literal: ``25``, ``2.5``), ``xsd:string`` plain,
    language tags lower case (as RDF 1.1 allows: they compare without case). Doubles, floats and
    whole decimals keep their datatype: ``"0.0"^^xsd:double`` is not the integer 0, and prints with
    its datatype (its value is still a number: filters, comparisons and arithmetic see 0.0); a
    whole decimal is written in its canonical form, ``"3.0"``; a double's or a float's lexical
    form is normalised as rdflib normalises it, infinities as XSD writes them (``"INF"``).

    >>> canonical(Literal("25", XSD + "integer")), canonical(Literal("2.50", XSD + "decimal"))
    (Num(value=25), Num(value=2.5))
    >>> canonical(Literal("0.0", XSD + "double")) == Literal("0.0", XSD + "double")
    True
    >>> canonical(Literal("03", XSD + "decimal")).lexical
    '3.0'
    >>> [canonical(Literal(x, XSD + "double")).lexical for x in ("5E1", "1E400", "-INF", "1.5e-7")]
    ['50.0', 'INF', '-INF', '1.5e-07']
    """
    if isinstance(term, Literal) and term.lang is not None and not term.lang.islower():
        return Literal(term.lexical, None, term.lang.lower())
    if isinstance(term, Literal) and term.datatype is not None:
        if term.datatype in _INTEGER_TYPES:
            try:
                return Num(int(term.lexical))
            except ValueError:
                return term
        if term.datatype == _DECIMAL:
            try:
                value = Decimal(term.lexical)
            except ArithmeticError:
                return term
            if not value.is_finite():
                return term
            if value != value.to_integral_value():
                return Num(float(value))
            return Literal(f"{int(value)}.0", _DECIMAL)
        if term.datatype in _FLOATING:
            try:
                value = float(term.lexical)
            except ValueError:
                return term
            return Literal(_float_lexical(value), term.datatype)
        if term.datatype == _STRING:
            return Literal(term.lexical)
    return term


def _float_lexical(value: float) -> str:
    """A double's or a float's lexical form as rdflib normalises it (``"5E1"`` is ``"50.0"``),
    infinities and NaN as XSD writes them (``"INF"``, ``"-INF"``, ``"NaN"``)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    return repr(value)
