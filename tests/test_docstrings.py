"""The examples in the docstrings of dotr's Python modules, run as doctests (pytest's own doctest
collection would import the source folders under their folder names, not as ``dotr.*``)."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    names = ["dotr"]
    for sub in ("rules", "ontology", "temporal", "pipeline", "examples"):
        package = importlib.import_module(f"dotr.{sub}")
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                  if not m.name.endswith("__main__")]
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # (the examples name files under examples/)
    module = importlib.import_module(name)
    if not module.__file__.endswith(".py"):
        pytest.skip("a compiled module (its docstrings are not examples)")
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} examples failed in {name} (run: python -m doctest -v)"
