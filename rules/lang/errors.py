"""The project's one error hierarchy, and diagnostics that point into source files.

Every error dotr raises derives from :class:`DotrError`. Problems found in rule files are
collected as :class:`Diagnostic` objects (code, message, span, hint) so that all of them can be
reported at once; :func:`format_diagnostic` renders one the way compilers do:

>>> d = Diagnostic("E101", "variable Y in the head is not bound by the body",
...                Span("r.dotr", 1, 6), hint="bind Y in a positive body atom")
>>> print(format_diagnostic(d, "h(X, Y) :- p(X)."))
r.dotr:1:6: error[E101]: variable Y in the head is not bound by the body
    h(X, Y) :- p(X).
         ^
  hint: bind Y in a positive body atom
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .ir import Span

#: Stable diagnostic codes (documented in docs/language.md).
CODES: dict[str, str] = {
    "E001": "syntax error",
    "E002": "import error",
    "E101": "unsafe variable in the head",
    "E102": "unsafe variable in a negated literal",
    "E103": "unsafe variable in a comparison",
    "E104": "@T head with unbound T",
    "E201": "negation through recursion",
    "E202": "tuple window over a derived predicate",
    "E301": "predicate used with different arities",
    "E302": "unknown event type",
    "E303": "pattern reference to an event not bound earlier",
    "E304": "unknown prefix",
    "E305": "time unit without @timeunit ms",
    "E306": "unknown predicate",
    "E307": "IRI predicate with other than one or two arguments",
    "E308": "invalid declaration value",
    "E309": "duplicate name",
    "E310": "integer with too many digits",
    "E311": "atom with too many arguments",
    "E401": "SPARQL error",
    "E402": "event parameter not bound by its query or body",
    "E403": "variable not allowed in a pattern",
    "E404": "construct variable not defined by with",
    "E405": "aggregate or consuming clause names an event the pattern does not bind",
    "E410": "malformed EP-SPARQL, C-SPARQL or RSP-QL query",
    "E411": "unreadable or invalid duration",
    "E412": "a query's from file cannot be read",
    "W301": "a body predicate that nothing derives looks like one that is derived",
    "W302": "a variable predicate bound nowhere else",
    "W303": "_ as an argument (a constant)",
    "W304": "true or false as a body atom",
    "W305": "a body whose atoms share no variable across groups (a cross product)",
    "W410": "EP-SPARQL query without a duration bound",
}


#: the most arguments an atom may have (the native fact store's rows)
MAX_ARITY = 16
#: the most digits an integer may have (Python's bound on converting text to an integer)
MAX_DIGITS = 4300


class DotrError(Exception):
    """Base class of every error dotr raises."""


class InputError(DotrError):
    """A stream record could not be read (``line`` is its line number, ``source`` its file when
    it is not the one input)."""

    def __init__(self, message: str, line: int | None = None, source: str | None = None):
        self.line, self.source = line, source
        super().__init__(f"line {line}: {message}" if line is not None else message)


class TimeError(InputError, ValueError):
    """A time point that is not an integer, or a time until which facts hold that is before
    their time point."""


class TimeOrderError(TimeError):
    """A time point given to an engine out of order (before, or not after, the last one)."""


class FactError(InputError, ValueError):
    """A fact given to an engine that is not one: a variable in it, a value that is no term, a
    tuple of another shape, or (for an engine that reads only its rules' relations) a relation
    its rules do not have, or one with another number of arguments."""


class EventError(InputError, ValueError):
    """Events given to the pattern engine that are not the program's: an event type it does not
    declare, or a row with another number of attributes than the type has."""


class FrameError(InputError, ValueError):
    """A DataFrame whose columns are none of the shapes dotr reads (docs/api.md, "Objects in
    and out")."""


class BackgroundError(DotrError):
    """A background file could not be read (or refers to what dotr does not read: an external
    XML entity, an import it was not allowed to follow)."""


class UsageError(DotrError, ValueError):
    """An API called in a way it cannot be (the message says what to do instead)."""


class MissingDependency(DotrError, ImportError):
    """A feature needs a package that is not installed (the message says which extra brings
    it: ``pip install 'dotr[spark]'``, ``pip install 'dotr[pandas]'``)."""


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a source file: a stable code, a message, where, and how to fix it."""

    code: str
    message: str
    span: Span | None
    hint: str | None = None
    severity: str = field(default="error")


class RuleError(DotrError):
    """Rule files have errors; ``diagnostics`` holds all of them, ``str()`` renders them."""

    def __init__(self, diagnostics: list[Diagnostic], sources: dict[str, str] | None = None):
        self.diagnostics = list(diagnostics)
        self.sources = dict(sources or {})
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(format_diagnostic(d, self._source(d)) for d in self.diagnostics)

    def _source(self, d: Diagnostic) -> str | None:
        if d.span is None:
            return None
        if d.span.path in self.sources:
            return self.sources[d.span.path]
        try:
            return Path(d.span.path).read_text(encoding="utf-8")
        except OSError:
            return None


class RuleSyntaxError(RuleError):
    """A rule file could not be parsed (code E001)."""


def format_diagnostic(d: Diagnostic, source: str | None = None) -> str:
    """``path:line:col: error[CODE]: message``, then the source line with a caret and the hint."""
    where = f"{d.span}: " if d.span else "dotr: "  # (no position: the file itself, e.g. one that cannot be read)
    lines = [f"{where}{d.severity}[{d.code}]: {d.message}"]
    if d.span and source is not None:
        text = _lines(source)
        if 0 < d.span.line <= len(text):
            line = text[d.span.line - 1].replace("\t", " ")
            lines.append("    " + line)
            lines.append("    " + " " * (d.span.column - 1) + "^")
    if d.hint:
        lines.append(f"  hint: {d.hint}")
    return "\n".join(lines)


@lru_cache(maxsize=4)
def _lines(source: str) -> list[str]:
    """A source's lines, split once for all the diagnostics of a file (each one shows a line)."""
    return source.splitlines()
