"""The public API is typed: mypy checks a user's script against dotr's own annotations (a
mistake in the script is found, a correct one passes), and the API's own modules are clean
under mypy. The package is laid out as installed (``dotr.rules`` is the folder
``rules/``...) by links in a temporary folder, as the wheel lays it out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # (mypy: about a minute)

ROOT = Path(__file__).resolve().parents[1]

#: the modules checked clean: the API's own (the names of ``import dotr``, errors, the checked
#: boundary, objects out, explain) and the engines' (each stage's, the whole temporal stage, the
#: Reasoner's)
PUBLIC = ["dotr", "dotr.compiled", "dotr.examples", "dotr.rules", "dotr.rules.lang.errors", "dotr.rules.engine.inputs",
          "dotr.rules.engine.frames", "dotr.pipeline.records", "dotr.pipeline.objects", "dotr.pipeline.extras",
          "dotr.pipeline.explain", "dotr.ontology", "dotr.ontology.stage", "dotr.ontology.csparql",
          "dotr.temporal", "dotr.temporal.lars", "dotr.temporal.background", "dotr.temporal.negation",
          "dotr.temporal.tuples", "dotr.temporal.windows", "dotr.temporal.keys", "dotr.temporal.patterns",
          "dotr.temporal.epsparql", "dotr.pipeline.reasoner", "dotr.examples.workloads.dotr_paper",
          "dotr.examples.workloads.stream_files", "dotr.examples.workloads.lubm_like",
          "dotr.examples.workloads.citybench", "dotr.examples.workloads.rule_files"]

SCRIPT = '''import dotr
from dotr.rules import ir

fire = dotr.examples.path("fire")
r = dotr.Reasoner.from_files(fire / "rules.dotr", [fire / "ontology.ttl"])
result: dotr.Result = r.step(1, ["temp(s1, 25)"])
texts: list[str] = result.facts
atoms: list[ir.Atom] = result.atoms()
engine = dotr.LarsEngine(dotr.parse("hot(X) :- temp(X) .").rules)
out: list[str] = engine.format(engine.step(0, ["temp(a)"]))
'''


def _layout(tmp_path: Path) -> Path:
    package = tmp_path / "typed" / "dotr"
    package.mkdir(parents=True)
    for path in (ROOT / "dotr").iterdir():  # (its modules, and py.typed)
        if path.suffix in (".py", ".typed"):
            (package / path.name).symlink_to(path)
    for name in ("rules", "ontology", "temporal", "pipeline", "examples"):
        (package / name).symlink_to(ROOT / name)
    return package.parent


def _mypy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MYPYPATH": str(_layout(tmp_path))}
    return subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir",
                           str(tmp_path / "cache"), *args], cwd=tmp_path, capture_output=True, text=True, env=env)


def test_the_public_entry_modules_are_clean_under_mypy(tmp_path):
    proc = _mypy(tmp_path, *(arg for module in PUBLIC for arg in ("-m", module)))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("line,error", [("", None), ("wrong: int = result.facts", "Incompatible types in assignment")])
def test_a_users_script_is_checked_against_dotrs_types(tmp_path, line, error):
    (tmp_path / "script.py").write_text(SCRIPT + line + "\n")
    proc = _mypy(tmp_path, "script.py")
    if error is None:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert error in proc.stdout and "script.py:11" in proc.stdout, proc.stdout
