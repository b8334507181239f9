"""dotr's rules: the language front end (``rules.lang``: grammar, parser, IR, validation,
analysis, printer, loader, diagnostics, and ``rules.lang.queries`` for SPARQL, EP-SPARQL and
C-SPARQL) and the evaluation core both stages run on (``rules.engine``: term dictionary,
builtins, the dict and native fact stores, join plans, columnar closure, SPARQL expressions).

>>> from dotr.rules import check_text
>>> result = check_text("alarm(R) :- [10] <> smoke(R), [10] [] hot(R).")
>>> result.ok, len(result.analysis.temporal)
(True, 1)
"""

from .lang.analysis import Analysis, analyse
from .lang.errors import (CODES, BackgroundError, Diagnostic, DotrError, EventError, FactError, FrameError,
                          InputError, MissingDependency, RuleError, RuleSyntaxError, TimeError, TimeOrderError, UsageError,
                          format_diagnostic)
from .lang.loader import CheckResult, check, check_text, load
from .lang.parser import parse, parse_with_diagnostics
from .lang.printer import format_program, format_rule
from .engine.terms import TermDictionary
from .lang import ir
from .lang.validate import validate

__all__ = [
    "Analysis", "analyse", "CODES", "Diagnostic", "DotrError", "InputError", "RuleError", "RuleSyntaxError",
    "TimeOrderError", "TimeError", "FactError", "EventError", "FrameError", "UsageError", "MissingDependency",
    "BackgroundError", "format_diagnostic", "CheckResult", "check", "check_text", "load", "parse",
    "parse_with_diagnostics", "format_program", "format_rule", "TermDictionary", "validate", "ir",
]
