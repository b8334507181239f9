"""dotr's rule language: grammar, parser, IR, validation, analysis, printer, term dictionary.

>>> from rules import check_text
>>> result = check_text("alarm(R) :- [10] <> smoke(R), [10] [] hot(R).")
>>> result.ok, len(result.analysis.temporal)
(True, 1)
"""

from .analysis import Analysis, analyse
from .errors import (CODES, Diagnostic, DotrError, InputError, RuleError, RuleSyntaxError, TimeOrderError,
                     format_diagnostic)
from .loader import CheckResult, check, check_text, load
from .parser import parse, parse_with_diagnostics
from .printer import format_program, format_rule
from .terms import TermDictionary
from .validate import validate

__all__ = [
    "Analysis", "analyse", "CODES", "Diagnostic", "DotrError", "InputError", "RuleError", "RuleSyntaxError",
    "TimeOrderError",
    "format_diagnostic", "CheckResult", "check", "check_text", "load", "parse",
    "parse_with_diagnostics", "format_program", "format_rule", "TermDictionary", "validate",
]
