"""The modules of a time point's path, compiled from their Python source, and the switch back
to that source.

``pip install`` compiles each module of :data:`MODULES` with Cython, from its unchanged ``.py``
file (``setup.py``), into an extension module of the same name beside it, which Python then
imports instead of the ``.py``. The ``.py`` stays the reference the compiled module is tested
against (``tests/pipeline/test_compiled.py``): with ``DOTR_PYTHON=1`` in the environment, dotr imports the
``.py`` of every such module. In a source tree (an editable install), a ``.py`` edited after it
was compiled is imported as it is, not its stale compiled module: :func:`stale` names those
(``pip install -e .`` compiles them again).

>>> "dotr.pipeline.reasoner" in MODULES
True
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from pathlib import Path

#: the compiled modules: reading, interning, the ontological stage's step, events, patterns, the
#: LARS engine (its windows, negation, store and fixpoint), concluding, printing and writing a
#: time point (the work done per record)
MODULES = frozenset({
    "dotr.pipeline.io", "dotr.pipeline.input_facts", "dotr.pipeline.reasoner", "dotr.pipeline.runner",
    "dotr.pipeline.conclude", "dotr.pipeline.files", "dotr.pipeline.history", "dotr.pipeline.output",
    "dotr.pipeline.printing", "dotr.pipeline.fact_texts", "dotr.pipeline.summary", "dotr.pipeline.sinks.jsonl",
    "dotr.ontology.stage", "dotr.ontology.materialise", "dotr.ontology.turtle",
    "dotr.temporal.patterns",
    "dotr.rules.engine.sparql.events", "dotr.rules.engine.sparql.conjunction",
    "dotr.rules.engine.sparql.thresholds",
    "dotr.rules.engine.ntriples", "dotr.rules.engine.builtins", "dotr.rules.engine.terms",
    "dotr.temporal.lars", "dotr.temporal.windows", "dotr.temporal.negation", "dotr.temporal.tuples",
    "dotr.temporal.background", "dotr.rules.engine.backends.dict_store", "dotr.rules.engine.fixpoint",
    "dotr.rules.engine.inputs", "dotr.rules.engine.frames",
})
# (``dotr.rules.engine.guard`` stays Python: the engines' long loops call its ``check``, and Python
# runs a signal's handler only between bytecodes it interprets; compiled, a SIGTERM would wait for
# the time point to end)

#: set to 1: import the ``.py`` of every compiled module (the reference path)
PYTHON_ONLY = "DOTR_PYTHON"


def _source(name: str) -> tuple[Path, Path | None] | None:
    """The ``.py`` of compiled module ``name`` and its compiled file (None: not compiled), or
    None when the module is not one of :data:`MODULES` or its package is not imported yet."""
    package, _, leaf = name.rpartition(".")
    if name not in MODULES or package not in sys.modules:
        return None
    for folder in getattr(sys.modules[package], "__path__", ()):
        source = Path(folder, leaf + ".py")
        if source.is_file():
            built = next((p for s in EXTENSION_SUFFIXES if (p := Path(folder, leaf + s)).is_file()), None)
            return source, built
    return None


def _in_source_tree(source: Path) -> bool:
    """Whether ``source`` is in a checkout (an editable install), not in an installed package,
    where file times say nothing of which file was made from which."""
    return any((folder / "pyproject.toml").is_file() for folder in source.parents[:4])


def _is_stale(source: Path, built: Path | None) -> bool:
    return built is not None and _in_source_tree(source) and source.stat().st_mtime > built.stat().st_mtime


def stale() -> list[str]:
    """The compiled modules whose ``.py`` was edited after they were compiled (in a source tree:
    their ``.py`` is imported).

    >>> set(stale()) <= MODULES
    True
    """
    for package in sorted({name.rpartition(".")[0] for name in MODULES}):
        importlib.import_module(package)
    return [name for name in sorted(MODULES) if (found := _source(name)) is not None and _is_stale(*found)]


class _SourceFinder:
    """Finds the ``.py`` of a compiled module when it is to be imported instead (``DOTR_PYTHON``,
    or a stale compiled module); else leaves the module to Python's own finders."""

    @staticmethod
    def find_spec(name: str, path=None, target=None) -> ModuleSpec | None:
        found = _source(name)
        if found is None or found[1] is None:
            return None
        source, built = found
        if os.environ.get(PYTHON_ONLY) == "1" or _is_stale(source, built):
            return importlib.util.spec_from_file_location(name, source)
        return None


def install() -> None:
    """Put the finder first (once): ``dotr/__init__.py`` does, before any compiled module is imported."""
    if not any(finder is _SourceFinder for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder)


def is_compiled(module) -> bool:
    """Whether ``module`` (imported) runs compiled."""
    return not str(getattr(module, "__file__", "")).endswith(".py")


def as_python() -> list[str]:
    """The modules of :data:`MODULES` that run from their ``.py`` in this process (``DOTR_PYTHON``,
    a stale build, no build); imports them.

    >>> set(as_python()) <= MODULES
    True
    """
    return [name for name in sorted(MODULES) if not is_compiled(importlib.import_module(name))]
