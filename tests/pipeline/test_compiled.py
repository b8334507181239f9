"""The compiled modules of a time point's path (``dotr.compiled``) against their Python source:
the same ``dotr run`` command lines, once in a process on the compiled modules and once with
``DOTR_PYTHON=1`` on the ``.py`` files, give the same exit codes, the same messages and the same
output bytes. The command lines: every bundled example with each output form, and generated
programs of every stage (background changes, Turtle payloads, the RDFS profile, LARS, events,
patterns feeding patterns) with their streams."""

import json
import os
import subprocess
import sys
import types
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr import compiled
from tests.strategies.composition import programs, streams_with_changes

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if (p / "rules.dotr").is_file())
#: the output forms each example is written in
FORMS = [[], ["--full-iris"], ["--changes"], ["--format", "nquads"], ["--all-time-points", "--format", "trig"]]


def both_ways(cases: list[list[str]], tmp: Path) -> tuple[dict, dict]:
    """The runs of ``cases`` (``dotr run`` argument lists) on the compiled modules and on their source."""
    (tmp / "cases.json").write_text(json.dumps(cases))
    out = []
    for python_only in (False, True):
        env = {k: v for k, v in os.environ.items() if k != compiled.PYTHON_ONLY}
        if python_only:
            env[compiled.PYTHON_ONLY] = "1"
        done = subprocess.run([sys.executable, "-m", "tests.pipeline.run_cases", str(tmp / "cases.json")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout))
    return out[0], out[1]


def _agree(cases: list[list[str]], tmp: Path) -> None:
    built, source = both_ways(cases, tmp)
    assert source["as python"] == sorted(compiled.MODULES) and built["as python"] == compiled.stale()
    for args, a, b in zip(cases, built["runs"], source["runs"]):
        assert a == b, args


def test_the_compiled_modules_are_the_ones_imported():
    """Every module of ``MODULES`` is compiled, and imported compiled; unless its ``.py`` was
    edited since (a source tree: then the ``.py`` runs, and ``stale`` names it)."""
    assert compiled.as_python() == compiled.stale()


def test_the_examples_agree(tmp_path):
    cases = []
    for example in EXAMPLES:
        for n, form in enumerate(FORMS):
            args = ["run", "-q", "--rules", str(example / "rules.dotr"), "--input", str(example / "stream.jsonl"),
                    "--output", str(tmp_path / f"{example.name}-{n}.out"), *form]
            if (example / "ontology.ttl").is_file():
                args += ["--ontology", str(example / "ontology.ttl")]
            cases.append(args)
    _agree(cases, tmp_path)


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(programs(), streams_with_changes(), st.booleans()), min_size=30, max_size=30))
def test_generated_programs_agree(tmp_path_factory, drawn):
    tmp = tmp_path_factory.mktemp("compiled")
    cases = []
    for n, ((rules, turtle, _), records, changes) in enumerate(drawn):
        (tmp / f"{n}.dotr").write_text(rules)
        (tmp / f"{n}.ttl").write_text(turtle)
        with open(tmp / f"{n}.jsonl", "w") as f:
            for t, facts, payload, change in records:
                record = {"t": t, "facts": facts, **({"turtle": payload} if payload else {}),
                          **({"background": change} if change else {})}
                f.write(json.dumps(record) + "\n")
        cases.append(["run", "-q", "--rules", str(tmp / f"{n}.dotr"), "--ontology", str(tmp / f"{n}.ttl"),
                      "--input", str(tmp / f"{n}.jsonl"), "--output", str(tmp / f"{n}.out"), "--full-iris",
                      *(["--changes"] if changes else [])])
    _agree(cases, tmp)


def test_python_only_imports_every_source(tmp_path):
    env = {**os.environ, compiled.PYTHON_ONLY: "1"}
    code = "import dotr.compiled; print(len(dotr.compiled.as_python()))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.strip() == str(len(compiled.MODULES)), done.stderr


def test_an_edited_source_is_imported_instead_of_its_stale_compiled_module(tmp_path, monkeypatch):
    """In a checkout (a folder with pyproject.toml above), a ``.py`` newer than its compiled
    module is found instead of it; in an installed package, file times decide nothing."""
    package = tmp_path / "tree" / "pkg"
    package.mkdir(parents=True)
    source, built = package / "mod.py", package / f"mod{EXTENSION_SUFFIXES[0]}"
    source.write_text("X = 1\n")
    built.write_bytes(b"")
    monkeypatch.setattr(compiled, "MODULES", frozenset({"pkg.mod"}))
    monkeypatch.setitem(sys.modules, "pkg", types.SimpleNamespace(__path__=[str(package)]))
    monkeypatch.delenv(compiled.PYTHON_ONLY, raising=False)

    def found() -> str | None:
        spec = compiled._SourceFinder.find_spec("pkg.mod")
        return spec and spec.origin

    os.utime(source, (1000, 1000))
    os.utime(built, (2000, 2000))
    assert found() is None  # (compiled after its source: Python's own finders take the compiled one)
    monkeypatch.setenv(compiled.PYTHON_ONLY, "1")
    assert found() == str(source)
    monkeypatch.delenv(compiled.PYTHON_ONLY)
    os.utime(source, (3000, 3000))
    assert found() is None  # (no pyproject.toml: an installed package)
    (tmp_path / "tree" / "pyproject.toml").write_text("")
    assert found() == str(source) and compiled.stale() == ["pkg.mod"]
