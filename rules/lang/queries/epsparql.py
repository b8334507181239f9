"""EP-SPARQL query text (``query Name := select|construct ...``) parsed into an operator tree.

The temporal operators, the nesting of ``{ ... }`` blocks and the query's head are read by a small
tokenizer that respects braces, strings, IRIs and comments; every group (a block with triple
patterns), every FILTER and BIND and the SELECT projection is parsed by rdflib's SPARQL parser,
so errors point into the ``.dotr`` file. A block that contains only blocks, operators, FILTERs and
BINDs combines its blocks over time; a block with triple patterns is a group, matched on one time
point's knowledge (``temporal.epsparql`` evaluates the tree; docs/language.md "Queries").

>>> from dotr.rules.lang.ir import SparqlText
>>> q, diags = parse_epsparql("Drop", SparqlText('''select ?c where { ?c :price ?p1 } seq
...     { ?c :price ?p2 } filter(?p2 < ?p1 * 0.7 && getDURATION() < 30)'''), {"": "http://ex.org/"})
>>> diags, q.horizon, len(q.groups)
([], 29, 2)
>>> describe(q.root)
'filter(seq(g0, g1))'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal

from ..errors import Diagnostic
from ..ir import UNIT_MS, SparqlText, Span, iso_duration_ms
from . import joins
from .sparql import parse_select, parse_template

#: EP-SPARQL operators (lower case) and the paper's algebra names
OPERATORS = {"seq": "SeqJoin", "equals": "EqJoin", "optionalseq": "SeqRightJoin",
             "equalsoptional": "EqLeftJoin", "and": "Join", "union": "Union", "optional": "LeftJoin"}
#: getDURATION(), getSTARTTIME(), getENDTIME() become these variables in filters
DURATION, START, END = "_epduration_", "_epstarttime_", "_ependtime_"
_FUNCTIONS = {"duration": DURATION, "starttime": START, "endtime": END}
#: horizon of a query without a duration bound, per time unit (a warning says it is used)
DEFAULT_HORIZON = {"ticks": 1000, "ms": 3_600_000}

_SELECT_PREFIX = "SELECT * WHERE "
_FILTER_PREFIX = "SELECT * WHERE { "


# ------------------------------------------------------------------------------------ tree

@dataclass(frozen=True)
class Group:
    """A SPARQL group, matched at one time point; ``text`` is ``SELECT * WHERE { ... }``."""

    index: int
    text: SparqlText


@dataclass(frozen=True)
class Combine:
    """``left OP right``; ``condition`` is an optional form's join condition (the FILTERs written
    in its optional operand's block), None for true."""

    op: str
    left: "Node"
    right: "Node"
    condition: tuple[SparqlText, ...] = ()


@dataclass(frozen=True)
class Filter:
    """FILTERs (``SELECT * WHERE { FILTER(...) }`` texts) over a combination's solutions."""

    inner: "Node"
    conditions: tuple[SparqlText, ...]


@dataclass(frozen=True)
class Bind:
    """BINDs (``SELECT * WHERE { BIND(...) }`` texts) over a combination's solutions."""

    inner: "Node"
    binds: tuple[SparqlText, ...]


Node = Group | Combine | Filter | Bind


@dataclass(frozen=True)
class EpQuery:
    """A parsed EP-SPARQL query. ``projection`` is ``SELECT <vars> WHERE {}`` (None for
    CONSTRUCT); ``template`` the CONSTRUCT template's triples (rdflib terms); ``horizon`` the
    duration bound (from ``within`` or a top-level ``getDURATION() <(=) d`` filter), None if there
    is none."""

    name: str
    form: str
    root: Node
    groups: tuple[Group, ...]
    projection: SparqlText | None = None
    star: bool = False
    distinct: bool = False
    template: tuple = ()
    horizon: int | None = None
    span: Span | None = field(default=None, compare=False)
    #: the embedded SELECTs (groups, filters, binds, projection) parsed, by text: the engine's
    selects: dict = field(default_factory=dict, compare=False, repr=False)


def describe(node: Node) -> str:
    """The tree in short form: ``seq(g0, g1)``."""
    if isinstance(node, Group):
        return f"g{node.index}"
    if isinstance(node, Combine):
        return f"{node.op}({describe(node.left)}, {describe(node.right)})"
    return f"{'filter' if isinstance(node, Filter) else 'bind'}({describe(node.inner)})"


def is_epsparql(text: SparqlText) -> bool:
    """Whether a query's text is EP-SPARQL (starts with ``select`` or ``construct``)."""
    return re.match(r"\s*(select|construct)\b", text.text, re.IGNORECASE) is not None


# ------------------------------------------------------------------------------- tokenizer

_IRI = re.compile(r"<[^<>\"{}|^`\\\s]*>")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"\d+(?![A-Za-z_])")
_OTHER = re.compile(r"[^\s{}()#]+")
_STRING = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'(?:[^\\]|\\.)*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


class _Error(Exception):
    def __init__(self, offset: int, message: str, code: str = "E410", hint: str | None = None):
        super().__init__(message)
        self.offset, self.message, self.code, self.hint = offset, message, code, hint


@dataclass
class _Token:
    kind: str  # "block", "paren", "word", "number"
    start: int
    end: int
    value: str


def _skip_balanced(text: str, i: int, open_: str, close: str) -> int:
    """The offset after the bracket closing the one at ``i``."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            m = _STRING.match(text, i)
            if m is None:
                raise _Error(i, "unterminated string")
            i = m.end()
            continue
        if c == "<":
            m = _IRI.match(text, i)
            if m is not None:
                i = m.end()
                continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise _Error(i - 1 if i else 0, f"'{open_}' is never closed", hint=f"add the matching '{close}'")


def _tokens(text: str, start: int, end: int) -> list[_Token]:
    out = []
    i = start
    while i < end:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            j = text.find("\n", i)
            i = end if j < 0 or j > end else j
        elif c in "{(":
            j = _skip_balanced(text, i, c, "}" if c == "{" else ")")
            out.append(_Token("block" if c == "{" else "paren", i, j, text[i:j]))
            i = j
        elif (m := _WORD.match(text, i)) is not None:
            out.append(_Token("word", i, m.end(), m.group().lower()))
            i = m.end()
        elif (m := _NUMBER.match(text, i)) is not None:
            out.append(_Token("number", i, m.end(), m.group()))
            i = m.end()
        else:
            m = _OTHER.match(text, i)
            out.append(_Token("other", i, m.end(), m.group()))
            i = m.end()
    return out


# ---------------------------------------------------------------------------------- parser

class _Parser:
    def __init__(self, name: str, text: SparqlText, prefixes: dict[str, str], ms: bool):
        self.name, self.sparql, self.src = name, text, text.text
        self.prefixes, self.ms = prefixes, ms
        self.groups: list[Group] = []
        self.group_index: dict[str, int] = {}
        self.selects: dict[str, object] = {}  # the embedded SELECTs parsed, by text
        self.diags: list[Diagnostic] = []
        self.within: int | None = None

    # -- positions
    def span(self, offset: int) -> Span | None:
        base = self.sparql.span
        if base is None:
            return None
        line = self.src.count("\n", 0, offset)
        if line == 0:
            return Span(base.path, base.line, base.column + offset)
        return Span(base.path, base.line + line, offset - self.src.rfind("\n", 0, offset))

    def embedded(self, prefix: str, offset: int, body: str) -> SparqlText:
        """``prefix + body`` as SPARQL text whose positions map to ``body`` at ``offset``."""
        at = self.span(offset)
        if at is not None:
            at = Span(at.path, at.line, at.column - len(prefix))
        return SparqlText(prefix + body, span=at)

    # -- query
    def query(self) -> EpQuery:
        src = self.src
        tokens = _tokens(src, 0, len(src))
        if not tokens or tokens[0].value not in ("select", "construct"):
            raise _Error(0, "an EP-SPARQL query starts with select or construct")
        form = tokens[0].value
        projection, star, distinct, template = None, False, False, ()
        if form == "select":
            k = 1
            while k < len(tokens) and tokens[k].kind != "block" and tokens[k].value != "where":
                k += 1
            if k == len(tokens):
                raise _Error(len(src) - 1, "the query has no where clause", hint="select ?x where { ... }")
            head = src[tokens[0].start:tokens[k].start].rstrip()
            projection = self.rewrite(self.embedded("", tokens[0].start, head + " WHERE {}"), tokens[0].start)
            self.select(projection)
            words = head.split()
            distinct = len(words) > 1 and words[1].lower() in ("distinct", "reduced")
            star = words[-1] == "*"
            rest = tokens[k:]
        else:
            if len(tokens) < 2 or tokens[1].kind != "block":
                raise _Error(tokens[0].end, "construct needs a template { ... }")
            triples, diags = parse_template(self.embedded("", tokens[1].start, tokens[1].value), self.prefixes)
            self.diags += diags
            template = tuple(triples or ())
            rest = tokens[2:]
        if rest and rest[0].value == "where":
            rest = rest[1:]
        if not rest:
            raise _Error(len(src) - 1, "the query has no where clause")
        root = self.combination(rest, top=True)
        horizon = self.bound(root)
        if self.within is not None:
            horizon = self.within if horizon is None else min(horizon, self.within)
        return EpQuery(self.name, form, root, tuple(self.groups), projection, star, distinct, template,
                       horizon, self.sparql.span, self.selects)

    def select(self, text: SparqlText) -> None:
        """Parse an embedded SELECT (a group, filter, bind or the projection), keeping it for the engine."""
        query, diags = parse_select(text, self.prefixes)
        self.diags += diags
        if query is not None:
            self.selects[text.text] = query

    def combination(self, tokens: list[_Token], top: bool = False,
                    collect: list | None = None) -> Node:
        """Blocks combined by operators, then BINDs and FILTERs (the FILTERs go to ``collect``
        instead when given: an optional operand's join condition)."""
        terms: list = []  # alternating operands and operators (juxtaposition: "and")
        filters: list[SparqlText] = []
        binds: list[SparqlText] = []
        k = 0
        pending_op: tuple[str, int] | None = None
        while k < len(tokens):
            tok = tokens[k]
            if tok.kind == "word" and tok.value in ("filter", "bind"):
                if k + 1 >= len(tokens) or tokens[k + 1].kind != "paren":
                    raise _Error(tok.end, f"{tok.value} needs a parenthesised expression")
                arg = tokens[k + 1]
                body = self.src[tok.start:arg.end] + " }"
                text = self.rewrite(self.embedded(_FILTER_PREFIX, tok.start, body), tok.start)
                self.select(text)
                (filters if tok.value == "filter" else binds).append(text)
                k += 2
                continue
            if tok.kind == "word" and tok.value == "within":
                if not top:
                    raise _Error(tok.start, "within bounds the whole query: write it at the end")
                k = self.within_clause(tokens, k)
                continue
            if tok.kind == "word" and tok.value in OPERATORS:
                if pending_op is not None:
                    raise _Error(tok.start, f"{pending_op[0]} needs a group after it")
                if not terms:
                    raise _Error(tok.start, f"{tok.value} needs a group before it")
                pending_op = (tok.value, tok.start)
                k += 1
                continue
            if tok.kind != "block":
                raise _Error(tok.start, f"unexpected '{self.src[tok.start:tok.end]}'",
                             hint="groups are written { ... } and combined with seq, equals, "
                                  "optionalseq, equalsoptional, and, union, optional; then filter(...)")
            if terms and pending_op is None:
                pending_op = ("and", tok.start)
            if pending_op is not None:
                terms.append(pending_op)
                pending_op = None
            terms.append(tok)
            k += 1
        if pending_op is not None:
            raise _Error(pending_op[1], f"{pending_op[0]} needs a group after it")
        if not terms:
            raise _Error(tokens[0].start if tokens else 0, "no group to match", hint="write { ?s ?p ?o }")
        node = self.combine(terms)
        if binds:
            node = Bind(node, tuple(binds))
        if collect is not None:
            collect.extend(filters)
        elif filters:
            node = Filter(node, tuple(filters))
        return node

    def combine(self, terms: list) -> Node:
        """Fold operands left to right; ``union`` binds tighter than the other operators."""
        operands: list = [terms[0]]
        ops: list[str] = []
        for k in range(1, len(terms), 2):
            op, tok = terms[k][0], terms[k + 1]
            if op == "union":
                operands[-1] = ("union", operands[-1], tok)
            else:
                ops.append(op)
                operands.append(tok)
        conditions: list[list[SparqlText]] = [[] for _ in operands]
        nodes = []
        for i, item in enumerate(operands):
            # the optional operand of an optional form gives its block's FILTERs as the condition
            collect = None
            if (i > 0 and ops[i - 1] in ("optional", "equalsoptional")) or \
                    (i < len(ops) and ops[i] == "optionalseq"):
                collect = conditions[i]
            nodes.append(self.operand(item, collect))
        node = nodes[0]
        for i, op in enumerate(ops):
            condition = conditions[i] if op == "optionalseq" else conditions[i + 1]
            node = Combine(op, node, nodes[i + 1], tuple(condition))
        return node

    def operand(self, item, collect: list | None) -> Node:
        if isinstance(item, tuple):  # union
            return Combine("union", self.operand(item[1], None), self.block(item[2], None))
        return self.block(item, collect)

    def block(self, tok: _Token, collect: list | None) -> Node:
        inner = _tokens(self.src, tok.start + 1, tok.end - 1)
        is_combination = bool(inner) and inner[0].kind == "block" and all(
            t.kind in ("block", "paren") or t.value in OPERATORS or t.value in ("filter", "bind") for t in inner)
        if is_combination:
            return self.combination(inner, collect=collect)
        return self.group(tok)

    def group(self, tok: _Token) -> Group:
        text = self.embedded(_SELECT_PREFIX, tok.start, tok.value)
        key = " ".join(tok.value.split())
        if key in self.group_index:
            return self.groups[self.group_index[key]]
        self.select(text)
        found = Group(len(self.groups), text)
        self.groups.append(found)
        self.group_index[key] = found.index
        return found

    def within_clause(self, tokens: list[_Token], k: int) -> int:
        if k + 1 >= len(tokens) or tokens[k + 1].kind != "number":
            raise _Error(tokens[k].end, "within needs a duration: within 30 (ticks) or within 30 s")
        size, k = int(tokens[k + 1].value), k + 2
        if k < len(tokens) and tokens[k].kind == "word" and tokens[k].value in UNIT_MS:
            if not self.ms:
                raise _Error(tokens[k].start, f"duration {size} {tokens[k].value} uses a time unit", "E305",
                             "declare '@timeunit ms .' or give the duration in ticks")
            size, k = size * UNIT_MS[tokens[k].value], k + 1
        self.within = size
        return k

    # -- filters
    def rewrite(self, text: SparqlText, offset: int) -> SparqlText:
        """getDURATION() etc. as variables and xsd:duration literals as numbers, columns kept
        (``offset``: where the text starts in the query, for errors)."""
        def function(m):
            name = _FUNCTIONS[m.group(1).lower()]
            return "?" + name + " " * (len(m.group()) - len(name) - 1)

        def duration(m):
            return str(self.duration(m.group(1), offset)).ljust(len(m.group()))
        body = re.sub(r"\bget(DURATION|STARTTIME|ENDTIME)\s*\(\s*\)", function, text.text, flags=re.IGNORECASE)
        body = re.sub(r'"([^"]*)"\^\^(?:xsd:duration|<http://www\.w3\.org/2001/XMLSchema#duration>)', duration, body)
        return SparqlText(body, span=text.span)

    def duration(self, lexical: str, offset: int) -> int:
        amount = iso_duration_ms(lexical)
        if amount is None:
            self.diags.append(Diagnostic("E411", f'"{lexical}" is not a duration this engine reads',
                                         self.span(offset), "write PnW, PnD, PTnH, PTnM, PTnS (no years or months)"))
            return 0
        if not self.ms:
            self.diags.append(Diagnostic("E305", f'xsd:duration "{lexical}" uses a time unit',
                                         self.span(offset), "declare '@timeunit ms .' or compare getDURATION() with ticks"))
            return 0
        return round(amount)

    def bound(self, root: Node) -> int | None:
        """The duration bound of a top-level ``getDURATION() < d`` (or ``<=``) conjunct."""
        if not isinstance(root, Filter):
            return None
        found = None
        for text in root.conditions:
            query = self.selects.get(text.text)
            if query is None:
                continue
            node = query.algebra["p"]
            while node.name not in ("Filter",) and "p" in node:
                node = node.p
            if node.name != "Filter":
                continue
            for limit in _duration_limits(node.expr):
                found = limit if found is None else min(found, limit)
        return found


def _duration_limits(expr):
    """Upper bounds on getDURATION() that a filter expression's conjuncts state."""
    from rdflib.term import BNode, Variable

    name = getattr(expr, "name", None)
    if name == "ConditionalAndExpression":
        for part in [expr.expr] + list(expr.other or []):
            yield from _duration_limits(part)
    elif name == "RelationalExpression" and expr.op in ("<", "<=", ">", ">="):
        left, right, op = expr.expr, expr.other, expr.op
        if isinstance(right, Variable) and str(right) == DURATION:
            left, right, op = right, left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        if isinstance(left, Variable) and str(left) == DURATION and op in ("<", "<="):
            value = getattr(right, "value", None) if not isinstance(right, (Variable, BNode)) else None
            if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
                yield math.ceil(value) - 1 if op == "<" else math.floor(value)  # durations are integers


def cross_product_warnings(query: EpQuery) -> list[Diagnostic]:
    """W305 for the first cross product of ``query``: in a group, or between the operands of an
    operator that joins them (all but ``union``).

    >>> q, diags = parse_epsparql("Q", SparqlText("select * where { ?a :p ?b } seq { ?c :p ?d } within 5"),
    ...                           {"": "http://ex.org/"})
    >>> [d.message for d in diags]
    ['the operands of seq in query Q share no variable: every match of one is combined with every match of the other']
    """
    what = f"query {query.name}"
    for group in query.groups:
        found = joins.query_warnings(group.text, query.selects[group.text.text].algebra["p"], what)
        if found:
            return found
    selects = query.selects

    def first_group(node: Node) -> Group:
        while not isinstance(node, Group):
            node = node.left if isinstance(node, Combine) else node.inner
        return node

    def variables(node: Node) -> set[str]:
        if isinstance(node, Group):
            return joins.scope(selects[node.text.text].algebra["p"])
        if isinstance(node, Combine):
            return variables(node.left) | variables(node.right)
        inner = variables(node.inner)
        if isinstance(node, Bind):
            inner |= {v for b in node.binds for v in joins.expression_vars(selects[b.text].algebra["p"])}
        return inner

    def walk(node: Node) -> Diagnostic | None:
        if isinstance(node, Group):
            return None
        if not isinstance(node, Combine):
            return walk(node.inner)
        inside = walk(node.left)
        if inside is None and node.op != "union":
            left, right = variables(node.left), variables(node.right)
            condition = {v for c in node.condition for v in joins.expression_vars(selects[c.text].algebra["p"])}
            if left and right and not left & (right | condition):
                return joins.operands_warning(what, node.op, right, first_group(node.right).text)
        return inside or walk(node.right)

    found = walk(query.root)
    return [found] if found is not None else []


def parse_epsparql(name: str, text: SparqlText, prefixes: dict[str, str], ms: bool = False
                   ) -> tuple[EpQuery | None, list[Diagnostic]]:
    """The query's tree and its diagnostics (errors, and the W410 warning of an unbounded query).
    ``ms``: the program declares ``@timeunit ms`` (durations then count milliseconds)."""
    parser = _Parser(name, text, prefixes, ms)
    try:
        query = parser.query()
    except _Error as err:
        return None, parser.diags + [Diagnostic(err.code, err.message, parser.span(err.offset), err.hint)]
    if any(d.severity == "error" for d in parser.diags):
        return None, parser.diags
    diags = parser.diags + cross_product_warnings(query)
    if query.horizon is None:
        horizon = DEFAULT_HORIZON["ms" if ms else "ticks"]
        diags.append(Diagnostic("W410", f"query {name} is unbounded: partial matches are kept for the default "
                                f"horizon of {horizon} {'ms' if ms else 'ticks'}", text.span,
                                "bound it: filter(getDURATION() < d) or within d", severity="warning"))
    return query, diags
