"""Start-up parses each query text once: checking a rule file keeps the parsed queries (events'
SELECTs, C-SPARQL and EP-SPARQL queries, construct templates) and the engines take them from
there. Examples with every kind of query are built with every parser of the engines replaced
by one that fails. A program without queries imports neither rdflib nor the SPARQL compiler."""

import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import pytest

from dotr.pipeline.reasoner import Reasoner
from dotr.rules import load

EXAMPLES = Path(__file__).parents[2] / "examples"
PARSERS = ["dotr.rules.engine.sparql.algebra.parse_select", "dotr.ontology.csparql.parse_csparql", "dotr.temporal.epsparql.parse_epsparql",
           "dotr.temporal.patterns.template_triples"]


@pytest.mark.parametrize("example", ["citybench", "fire", "stocks", "traffic"])
def test_the_engines_do_not_parse_a_query_again(example):
    checked = load(EXAMPLES / example / "rules.dotr")
    with ExitStack() as stack:
        for target in PARSERS:
            stack.enter_context(mock.patch(target, side_effect=AssertionError(f"{target} called")))
        reasoner = Reasoner(checked)
    assert reasoner.patterns is not None or reasoner.queries is not None or reasoner.csparql is not None


def test_a_program_without_queries_runs_without_rdflib_or_the_sparql_compiler(tmp_path):
    """rdflib's import is 40 ms of a 0.3 s start-up: dotr imports it (and its SPARQL compiler) for
    what needs it only. The cooling example has Datalog and LARS rules, an ontology in Turtle
    and a JSON Lines stream."""
    script = f"""
import sys
from dotr.pipeline.cli import main
code = main(["run", "-q", "--rules", {str(EXAMPLES / "cooling" / "rules.dotr")!r},
             "--ontology", {str(EXAMPLES / "cooling" / "ontology.ttl")!r},
             "--input", {str(EXAMPLES / "cooling" / "stream.jsonl")!r}, "--output", {str(tmp_path / "out.jsonl")!r}])
print(code, sorted(m for m in sys.modules if m in ("rdflib", "dotr.rules.engine.sparql.algebra")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["0", "[]"], done.stdout + done.stderr
    assert (tmp_path / "out.jsonl").read_text().count("\n") > 0
