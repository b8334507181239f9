"""Parse rule-language text into the IR (:mod:`rules.lang.ir`).

The grammar is ``grammar.lark`` (LALR, contextual lexer); a lark Transformer builds the IR while
parsing, so no parse tree is kept. A syntax error does not stop the parse: the statement holding
it is reported and skipped, and parsing resumes at the next statement, so one run reports every
syntax error of a file.

>>> prog = parse('@prefix : <http://ex.org/> . alarm(R) :- [3] <> :smoke(R, X), X > 2 .')
>>> prog.rules[0].head
Atom(pred=Name(value='alarm'), args=(Var(name='R'),))
>>> prog.rules[0].body[0].atom.pred
Iri(value='http://ex.org/smoke')
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer  # Token: tokens of the lark fallback
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ir
from .errors import MAX_DIGITS, Diagnostic, RuleSyntaxError
from .lalr import DriverError, FastLALR

_MAX_SYNTAX_ERRORS = 50


def _nested(depth: int) -> str:
    """A regex for text with balanced brackets (``{}`` and ``()``) up to ``depth`` levels, strings
    and IRIs kept whole (so brackets inside them do not count). Each piece of text matches one way
    only (a ``<`` that starts an IRI is the IRI's) and the repetitions are possessive: an unclosed
    bracket fails in linear time, where backtracking tried every split (25 s for a stray ``{``).
    Either kind of bracket closes either (``{ ... )``): the query's own parser then reports the
    mismatch. Telling the kinds apart doubled the regex at each level (31 KB at depth 6, 0.1 s to
    compile at every start-up of a rule file with a query; 0.9 KB and 2 ms as it is)."""
    atom = r'"(?:[^"\\\n]|\\.)*+"' + r"|'(?:[^'\\\n]|\\.)*+'" + _IRI_OR_LT + r"|#[^\n]*+"
    inner = atom + r"|[^{}()\"'<#]++"
    for _ in range(depth):
        inner = atom + r"|[^{}()\"'<#]++" + r"|[{(](?:" + inner + r")*+[})]"
    return inner


_IRI_OR_LT = r"|<[^<>\"{}|^`\\\s]*+>|<(?![^<>\"{}|^`\\\s]*>)"
_INNER = _nested(6)
#: A brace group such as a construct template: ``{ _:f a :Fire ; :at ?room }``.
BRACED = r"\{(?:" + _INNER + r")*+\}"
#: SPARQL, EP-SPARQL, C-SPARQL or RSP-QL text up to (not including) the statement's final ``.``: a
#: ``.`` outside brackets, strings and SPARQL's ``#`` comments ends it when followed by white space,
#: a comment or the end of the input.
SPARQL_TEXT = (
    r"(?i:select|construct|ask|describe|register)\s(?:"
    + r'"(?:[^"\\\n]|\\.)*"'
    + r"|'(?:[^'\\\n]|\\.)*'"
    + r"|\#[^\n]*+"
    + r"|<[^<>\"{}|^`\\\s]*>"
    + r"|\{(?:" + _INNER + r")*+\}"
    + r"|\((?:" + _INNER + r")*+\)"
    + r"|\.(?=[^\s%])"
    + r"|[^{}()\".%]"
    + r")*+"
)


_GRAMMAR = Path(__file__).with_name("grammar.lark").read_text(encoding="utf-8")
#: the grammar's keywords (``not``, ``from``, ``each``, ...): a fact with one as an argument is
#: read through the grammar, not by the pipeline's fast path
KEYWORDS = frozenset(re.findall(r'"([a-z]+)"', _GRAMMAR))


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = _GRAMMAR
    grammar += f"\nSPARQL_TEXT.4: /{SPARQL_TEXT}/\nBRACED: /{BRACED}/\n"
    return Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=False, cache=_cache_file())


def _cache_file() -> str | bool:
    """Where lark keeps the parser it built from the grammar (0.5 s to build, 30 ms to load; lark
    names the entry by the grammar's and its own version's digest): the user's cache directory
    (``$XDG_CACHE_HOME/dotr``, else ``~/.cache/dotr``; ``DOTR_NO_CACHE=1``: none). Not the shared
    temporary directory, where another user could plant the pickled file."""
    if os.environ.get("DOTR_NO_CACHE"):
        return False
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dotr"
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return str(base / "grammar.lark.cache")


@lru_cache(maxsize=1)
def _driver() -> FastLALR:
    return FastLALR(_lark())


class _Builder(Transformer):
    """Builds IR nodes bottom-up; spans come from tokens."""

    def __init__(self, path: str):
        super().__init__()
        self.reset(path)

    def reset(self, path: str) -> None:
        """Ready for another text (the driver's callbacks, bound to this builder, are reused)."""
        self.path = path
        self.prefixes: dict[str, str] = dict(ir.DEFAULT_PREFIXES)
        self.diagnostics: list[Diagnostic] = []

    def _span(self, tok: Token) -> ir.Span:
        return ir.Span(self.path, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column)

    # -- terms
    def var(self, c):
        tok = c[0]
        span = self._span(tok)
        if tok.type == "QVAR" or tok[0].isupper():
            return ir.Var(str(tok), span=span)
        return ir.Name(str(tok), span=span)

    def name(self, c):  # a predicate: upper-case names are variables (triples of any predicate)
        tok = c[0]
        if tok[0].isupper():
            return ir.Var(str(tok), span=self._span(tok))
        return ir.Name(str(tok), span=self._span(tok))

    def pname(self, c):
        tok = c[0]
        prefix, _, local = str(tok).partition(":")
        base = self.prefixes.get(prefix)
        if base is None:
            self.diagnostics.append(
                Diagnostic("E304", f"unknown prefix '{prefix}:'", self._span(tok),
                           hint=f"declare it: @prefix {prefix}: <http://...> .")
            )
            base = prefix + ":"
        return ir.Iri(base + local, span=self._span(tok))

    def iri(self, c):
        return ir.Iri(_unescape(str(c[0])[1:-1]), span=self._span(c[0]))

    def number(self, c):
        text = "".join(str(t) for t in c)
        if any(ch in text for ch in ".eE"):
            return ir.Num(float(text), span=self._span(c[0]))
        if len(text.lstrip("+-")) > MAX_DIGITS:
            self.diagnostics.append(Diagnostic("E310", f"an integer of {len(text.lstrip('+-')):,} digits: at most "
                                                       f"{MAX_DIGITS:,}", self._span(c[0]),
                                               hint="write it as a decimal or a string"))
            return ir.Num(0, span=self._span(c[0]))
        return ir.Num(int(text), span=self._span(c[0]))

    def rdf_literal(self, c):
        tok = c[0]
        lexical = _unescape(str(tok)[1:-1])
        datatype = lang = None
        if len(c) > 1:
            if isinstance(c[1], ir.Iri):
                datatype = c[1].value
            else:
                lang = str(c[1])[1:]
        return ir.Literal(lexical, datatype, lang, span=self._span(tok))

    # -- atoms and literals
    def atom(self, c):
        pred, args = c[0], tuple(c[1:])
        if isinstance(pred, ir.Iri) and len(args) == 1:
            return ir.Atom(ir.Iri(ir.RDF_TYPE), (args[0], pred), span=pred.span)
        return ir.Atom(pred, args, span=pred.span)

    def cmp(self, c):
        return c[0]

    def comparison(self, c):
        left, op, right = c
        return ir.Comparison(str(op), left, right, span=_first_span(left) or self._span(op))

    def binop(self, c):
        left, op, right = c
        return ir.BinOp(str(op), left, right, span=_first_span(left))

    def atom_literal(self, c):
        return ir.AtomLiteral(c[0], span=c[0].span)

    def neg_atom_literal(self, c):
        return ir.AtomLiteral(c[1], negated=True, span=self._span(c[0]))

    def temporal(self, c):
        window = c[0] if isinstance(c[0], ir.Window) else None
        op, atom = c[-2], c[-1]
        return ir.TemporalLiteral(window, op, atom, span=(window or op).span)

    def temporal_literal(self, c):
        return c[0]

    def neg_temporal_literal(self, c):
        t = c[1]
        return ir.TemporalLiteral(t.window, t.op, t.atom, negated=True, span=self._span(c[0]))

    def time_window(self, c):
        size = self.number([c[1]]).value
        unit = str(c[2]) if len(c) > 2 else None
        return ir.Window(size, unit, span=self._span(c[0]))

    def tuple_window(self, c):
        return ir.Window(self.number([c[1]]).value, None, True, span=self._span(c[0]))

    def unit(self, c):
        return c[0]

    def temporal_op(self, c):
        tok = c[0]
        if tok.type in ("DIAMOND", "DIAMOND_KW"):
            return ir.Diamond(span=self._span(tok))
        return ir.Box(span=self._span(tok))

    def at(self, c):
        return ir.At(c[0], span=c[0].span)

    def body(self, c):
        return tuple(c)

    # -- statements
    def head(self, c):
        return (c[0], None)

    def at_head(self, c):
        return (c[1], c[0])

    def rule(self, c):
        (atom, at), body = c[0], (c[1] if len(c) > 1 else ())
        return ir.Rule(atom, body, at, span=(at.span if at is not None else atom.span))

    def prefix_decl(self, c):
        pname, iri = c
        prefix, _, local = str(pname).partition(":")
        if local:
            self.diagnostics.append(
                Diagnostic("E308", f"'{pname}' is not a prefix name", self._span(pname),
                           hint="write the prefix with a colon and nothing after it, such as ex:")
            )
        self.prefixes[prefix] = str(iri)[1:-1]
        return ir.PrefixDecl(prefix, str(iri)[1:-1], span=self._span(pname))

    def timeunit_decl(self, c):
        return ir.TimeUnitDecl(str(c[0]), span=self._span(c[0]))

    def profile_decl(self, c):
        return ir.ProfileDecl(str(c[0]), span=self._span(c[0]))

    def import_decl(self, c):
        return ir.ImportDecl(_unescape(str(c[0])[1:-1]), span=self._span(c[0]))

    def output_decl(self, c):
        return ir.OutputDecl(tuple(c), span=c[0].span)

    def sparql(self, c):
        return ir.SparqlText(str(c[0]).rstrip(), span=self._span(c[0]))

    def event_decl(self, c):
        name, params, last = c[0], tuple(c[1:-1]), c[-1]
        if isinstance(last, ir.SparqlText):
            return ir.EventDecl(str(name), params, query=last, span=self._span(name))
        return ir.EventDecl(str(name), params, body=last, span=self._span(name))

    def query_decl(self, c):
        return ir.QueryDecl(str(c[0]), c[1], span=self._span(c[0]))

    # -- patterns
    def selection(self, c):
        return str(c[0])

    def alias(self, c):
        return ("alias", str(c[0]))

    def constraints(self, c):
        return tuple(c)

    def constraint(self, c):
        attr, op, value = c
        return ir.Constraint(str(attr), str(op), value, span=self._span(attr))

    def duration(self, c):
        return (self.number([c[0]]).value, str(c[1]) if len(c) > 1 else None, self._span(c[0]))

    def within(self, c):
        keyword, (size, unit, _), ref = c
        return ir.Within(size, unit, str(ref), span=self._span(keyword))

    def between(self, c):
        return ir.Between(str(c[1]), str(c[2]), span=self._span(c[0]))

    def _event_ref(self, c, selection):
        name, rest = c[0], c[1:]
        constraints, alias, scope = (), None, None
        for part in rest:
            if isinstance(part, tuple) and part and part[0] == "alias":
                alias = part[1]
            elif isinstance(part, tuple):
                constraints = part
            else:
                scope = part
        return ir.EventRef(str(name), constraints, alias, selection, scope, span=self._span(name))

    def terminator(self, c):
        return self._event_ref(c, None)

    def selected_item(self, c):
        return self._event_ref(c[1:], c[0])

    def negated_item(self, c):
        return self._event_ref(c[1:], "not")

    def attr_ref(self, c):
        event, _, attr = str(c[0]).partition(".")
        return ir.AttrRef(event, attr, span=self._span(c[0]))

    def agg_func(self, c):
        return c[0]

    def aggregate(self, c):
        func, name, rest = c[0], c[1], c[2:]
        constraints, attr = (), None
        for part in rest[:-1]:
            if isinstance(part, tuple):
                constraints = part
            else:
                attr = str(part)
        return ir.Aggregate(str(func), str(name), constraints, attr, rest[-1], span=self._span(func))

    def aggregate_ref(self, c):
        func, ref, scope = c
        event, _, attr = str(ref).partition(".")
        return ir.Aggregate(str(func), event, (), attr, scope, span=self._span(func))

    def pcomparison(self, c):
        return self.comparison(c)

    def where_clause(self, c):
        return ("where", tuple(c))

    def construct_clause(self, c):
        return ("construct", ir.SparqlText(str(c[0]), span=self._span(c[0])))

    def binding(self, c):
        return ir.Binding(str(c[0]), c[2], span=self._span(c[0]))

    def with_clause(self, c):
        return ("bindings", tuple(c))

    def emit_binding(self, c):
        return ir.Binding(str(c[0]), c[2], span=self._span(c[0]))

    def emit_clause(self, c):
        return ("emit", ir.Emit(str(c[0]), tuple(c[1:]), span=self._span(c[0])))

    def consuming_clause(self, c):
        return ("consuming", tuple(str(t) for t in c))

    def pattern_decl(self, c):
        name, terminator, rest = c[0], c[1], c[2:]
        items = tuple(r for r in rest if isinstance(r, ir.EventRef))
        clauses = dict(r for r in rest if isinstance(r, tuple))
        return ir.PatternDecl(str(name), terminator, items, span=self._span(name), **clauses)

    def start(self, c):
        return tuple(c)


def _first_span(node) -> ir.Span | None:
    return getattr(node, "span", None)


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    """A string's or IRI's text with its escapes read (``\\n``, ``\\"``, ``\\u0041``, ...)."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(_escaped, text)


_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")


def _escaped(m: re.Match) -> str:
    code = m.group(1) or m.group(2)
    if code is not None:
        value = int(code, 16)
        return chr(value) if value <= 0x10FFFF else m.group(0)
    return _ESCAPES.get(m.group(3), m.group(0))


# ------------------------------------------------------------------------------ error recovery


def _statement_ends(text: str) -> list[int]:
    """Offsets of the ``.`` that end statements: outside strings, IRIs, braces and comments, and
    followed by white space, a comment or the end of the text (parentheses are not counted, so
    that one unclosed ``(`` costs one statement, not the rest of the file)."""
    ends, depth, i, n = [], 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "%" or (ch == "/" and text.startswith("//", i)):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch == "<" and depth == 0:
            m = re.compile(r"<[^<>\"{}|^`\\\s]*>").match(text, i)
            if m:
                i = m.end()
                continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == "." and depth == 0 and (i + 1 == n or text[i + 1].isspace() or text[i + 1] == "%"):
            ends.append(i)
        i += 1
    return ends


def _describe_expected(expected: set[str]) -> str:
    terminals = {t.name: t for t in _lark().terminals}
    shown = []
    for name in sorted(expected):
        t = terminals.get(name)
        if t is not None and t.pattern.type == "str":
            shown.append(f"'{t.pattern.value}'")
        else:
            shown.append({"NAME": "a name", "QVAR": "a ?variable", "PNAME": "a prefixed name",
                          "IRIREF": "an <IRI>", "NUMBER": "a number", "STRING": "a string",
                          "SPARQL_TEXT": "SPARQL text", "BRACED": "a { template }",
                          "ATTR_REF": "Event.attribute", "LANGTAG": "a language tag"}.get(name, name))
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    return ", ".join(shown)


def _syntax_diagnostic(err: UnexpectedInput, text: str, path: str) -> tuple[Diagnostic, int]:
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        lines = text.rstrip().splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        expected = getattr(err, "expected", set())
        msg = "unexpected end of input"
        if expected:
            msg += f"; expected {_describe_expected(set(expected))}"
        return Diagnostic("E001", msg, ir.Span(path, line, col),
                          hint="every statement ends with ' .'"), len(text)
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = getattr(err, "accepts", None) or err.expected  # accepts: exact, expected: LALR lookaheads
        msg = f"unexpected '{tok!s:.40}'; expected {_describe_expected(set(expected))}"
        return Diagnostic("E001", msg, ir.Span(path, tok.line, tok.column)), tok.start_pos or 0
    assert isinstance(err, UnexpectedCharacters)
    ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else "?"
    msg = f"unexpected character '{ch}'"
    if err.allowed:
        msg += f"; expected {_describe_expected(set(err.allowed))}"
    return Diagnostic("E001", msg, ir.Span(path, err.line, err.column)), err.pos_in_stream


def _blank_statement(text: str, pos: int) -> str:
    """``text`` with the statement around offset ``pos`` replaced by spaces (lines kept)."""
    ends = _statement_ends(text)
    start = max((e + 1 for e in ends if e < pos), default=0)
    end = min((e + 1 for e in ends if e >= pos), default=len(text))
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


_BUILDERS = threading.local()  # per thread: a builder and the driver's callbacks bound to it


def _builder(path: str) -> tuple[_Builder, list]:
    """A builder reset for ``path`` and its callbacks (making the callbacks takes a millisecond:
    a fact read through the grammar paid that each time)."""
    cached = getattr(_BUILDERS, "cached", None)
    if cached is None:
        builder = _Builder(path)
        cached = _BUILDERS.cached = (builder, _driver().callbacks(builder))
    cached[0].reset(path)
    return cached


def parse_with_diagnostics(text: str, path: str = "<string>") -> tuple[ir.Program, list[Diagnostic]]:
    """Parse ``text``; return the program of every well-formed statement and all diagnostics
    found while parsing (syntax errors, unknown prefixes)."""
    diagnostics: list[Diagnostic] = []
    current = text
    for _ in range(_MAX_SYNTAX_ERRORS + 1):
        builder, callbacks = _builder(path)
        try:
            statements = _driver().parse(current, callbacks)
        except DriverError:
            builder = _Builder(path)
            try:  # lark itself gives the diagnostic (and is the reference should the driver err)
                statements = builder.transform(_lark().parse(current))
            except VisitError as exc:  # pragma: no cover - a builder bug, not user input
                raise exc.orig_exc from exc
            except UnexpectedInput as err:
                diag, pos = _syntax_diagnostic(err, current, path)
                diagnostics.append(diag)
                current = _blank_statement(current, pos)
                continue
        diagnostics.extend(builder.diagnostics)
        return ir.Program(statements, path=path), diagnostics
    return ir.Program((), path=path), diagnostics


def parse(text: str, path: str = "<string>") -> ir.Program:
    """Parse rule-language text; raise :class:`RuleSyntaxError` listing every syntax error.

    >>> parse("p(a). q(X) :- p(X).").facts
    (Atom(pred=Name(value='p'), args=(Name(value='a'),)),)
    >>> parse("q(X) :- p(X)", path="r.dotr")
    Traceback (most recent call last):
    ...
    dotr.rules.lang.errors.RuleSyntaxError: r.dotr:1:13: error[E001]: unexpected end of input; expected ...
    """
    program, diagnostics = parse_with_diagnostics(text, path)
    if diagnostics:
        raise RuleSyntaxError(diagnostics, {path: text})
    return program
