"""The examples in the docstrings of dotr's Python modules, run as doctests (pytest's own doctest
collection would import the source folders under their folder names, not as ``dotr.*``)."""

import doctest
import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from dotr import compiled


ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    names = ["dotr", "dotr.compiled"]
    for sub in ("rules", "ontology", "temporal", "pipeline", "examples"):
        package = importlib.import_module(f"dotr.{sub}")
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                  if not m.name.endswith("__main__")]
    return sorted(names)


def run_examples(name: str) -> tuple[int, int]:
    """(failed, attempted) of the examples of module ``name``."""
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # (the examples name files under examples/)
    module, report = importlib.import_module(name), ""
    if name in compiled.MODULES:  # (compiled from its .py: the examples run on the .py, in a process of their own)
        code = f"from tests.test_docstrings import run_examples; print(*run_examples({name!r}))"
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, compiled.PYTHON_ONLY: "1"})
        assert done.returncode == 0, done.stderr
        failed, attempted = map(int, done.stdout.split()[-2:])
        report = done.stdout
    elif compiled.is_compiled(module):
        pytest.skip("a compiled module (its docstrings are not examples)")
    else:
        failed, attempted = run_examples(name)
    assert failed == 0, f"{failed} of {attempted} examples failed in {name} (run: python -m doctest -v){report}"
