"""The installed `dotr` command."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _dotr() -> list[str]:
    """The console script installed with this interpreter (a virtualenv's own, not another on
    the PATH), else ``python -m dotr``."""
    exe = Path(sys.executable).with_name("dotr")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dotr"]


def test_check_examples_exit_zero_with_summary():
    examples = sorted(str(p) for p in (ROOT / "examples").glob("*/rules.dotr"))
    assert len(examples) >= 3
    proc = subprocess.run([*_dotr(), "check", *examples], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(": ok") == len(examples)
    assert "ontological" in proc.stdout and "strat" in proc.stdout


def test_check_invalid_exits_two(tmp_path):
    bad = tmp_path / "bad.dotr"
    bad.write_text("h(X) :- p(Y).\n")
    proc = subprocess.run([*_dotr(), "check", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{bad}:1:3: error[E101]" in proc.stderr


def test_check_writes_the_dependency_graph(tmp_path):
    """``dotr check --graph``: every predicate a node, every body-to-head dependency an edge,
    negation dashed, the temporal stage's predicates boxes."""
    import re

    rules = tmp_path / "r.dotr"
    rules.write_text("hot(X) :- temp(X, T), T > 100 .\nalarm(X) :- [3] [] hot(X), not ok(X) .\n")
    proc = subprocess.run([*_dotr(), "check", "-q", "--graph", str(tmp_path / "g.dot"), str(rules)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    dot = (tmp_path / "g.dot").read_text()
    edges = set(re.findall(r'"([^"]+)" -> "([^"]+)"( \[style=dashed)?', dot))
    assert edges == {("temp/2", "hot/1", ""), ("hot/1", "alarm/1", ""), ("ok/1", "alarm/1", " [style=dashed")}
    assert re.search(r'"alarm/1" \[shape=box, label="alarm/1\\nstratum 1"\]', dot)
    assert re.search(r'"hot/1" \[shape=ellipse', dot) and dot.startswith("digraph dependencies {")
    proc = subprocess.run([*_dotr(), "check", "--graph", str(tmp_path / "g.dot"), str(rules), str(rules)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("dotr: --graph")


def test_spark_engine_without_pyspark_is_one_line_saying_what_to_install(monkeypatch, capsys):
    """pyspark is an extra: without it, --engine spark says what to install (no traceback)."""
    from importlib.util import find_spec

    from dotr.pipeline import extras
    from dotr.pipeline.cli import main

    monkeypatch.setattr(extras, "find_spec", lambda name: None if name == "pyspark" else find_spec(name))
    fire = ROOT / "examples" / "fire"
    code = main(["run", "--engine", "spark", "--rules", str(fire / "rules.dotr"), "--ontology",
                 str(fire / "ontology.ttl"), "--input", str(fire / "stream.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == "dotr: --engine spark needs pyspark: pip install 'dotr[spark]'\n"
