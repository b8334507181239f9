"""dotr, a stream reasoner: its public API in one import.

The code lives in the subpackages ``dotr.rules`` (the rule language and the evaluation core),
``dotr.ontology`` (the per-time-point stage), ``dotr.temporal`` (LARS, patterns, EP-SPARQL) and
``dotr.pipeline`` (their composition, the command, the Spark job); the names below are the ones a
program embedding dotr needs. They are imported when first used, so that ``import dotr`` costs
nothing until then.

>>> import dotr
>>> dotr.check_text("alarm(R) :- [10] <> smoke(R).").ok
True
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from dotr.compiled import install as _install_finder

__version__ = "0.1.0"

_install_finder()  # (before any compiled module is imported: DOTR_PYTHON, an edited source tree)

#: public name -> the module that defines it
_EXPORTS = {
    "check": "dotr.rules", "check_text": "dotr.rules", "load": "dotr.rules", "parse": "dotr.rules",
    "CheckResult": "dotr.rules", "TermDictionary": "dotr.rules", "ir": "dotr.rules",
    "DotrError": "dotr.rules", "InputError": "dotr.rules", "RuleError": "dotr.rules",
    "RuleSyntaxError": "dotr.rules", "TimeOrderError": "dotr.rules",
    "Reasoner": "dotr.pipeline.reasoner", "Result": "dotr.pipeline.records",
    "explain": "dotr.pipeline.explain", "NothingToExplain": "dotr.pipeline.explain",
    "frame": "dotr.pipeline.objects", "examples": "dotr.examples",
    "TimeError": "dotr.rules", "FactError": "dotr.rules", "EventError": "dotr.rules", "FrameError": "dotr.rules",
    "UsageError": "dotr.rules", "MissingDependency": "dotr.rules", "BackgroundError": "dotr.rules",
    "OntologicalStage": "dotr.ontology", "CSparqlEngine": "dotr.ontology.csparql",
    "LarsEngine": "dotr.temporal.lars", "PatternEngine": "dotr.temporal.patterns",
    "EpSparqlEngine": "dotr.temporal.epsparql",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # (for type checkers and editors: the same names, imported eagerly)
    from dotr.ontology import OntologicalStage
    from dotr.ontology.csparql import CSparqlEngine
    from dotr.pipeline.reasoner import Reasoner
    from dotr.pipeline.records import Result
    from dotr import examples
    from dotr.pipeline.explain import NothingToExplain, explain
    from dotr.pipeline.objects import frame
    from dotr.rules import (BackgroundError, CheckResult, DotrError, EventError, FactError, FrameError, InputError,
                            MissingDependency, RuleError, RuleSyntaxError, TermDictionary, TimeError, TimeOrderError,
                            UsageError, check, check_text, ir, load, parse)
    from dotr.temporal.epsparql import EpSparqlEngine
    from dotr.temporal.lars import LarsEngine
    from dotr.temporal.patterns import PatternEngine


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dotr' has no attribute {name!r}")
    value = import_module(module) if module == f"dotr.{name}" else getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
