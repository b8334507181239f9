"""Start-up parses each query text once: checking a rule file keeps the parsed queries (events'
SELECTs, C-SPARQL and EP-SPARQL queries, construct templates) and the engines take them from
there. Examples with every kind of query are built with every parser of the engines replaced
by one that fails."""

from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import pytest

from dotr.pipeline.reasoner import Reasoner
from dotr.rules import load

EXAMPLES = Path(__file__).parents[2] / "examples"
PARSERS = ["dotr.rules.engine.sparql.algebra.parse_select", "dotr.ontology.csparql.parse_csparql", "dotr.temporal.epsparql.parse_epsparql",
           "dotr.temporal.patterns.parse_template"]


@pytest.mark.parametrize("example", ["citybench", "fire", "stocks", "traffic"])
def test_the_engines_do_not_parse_a_query_again(example):
    checked = load(EXAMPLES / example / "rules.dotr")
    with ExitStack() as stack:
        for target in PARSERS:
            stack.enter_context(mock.patch(target, side_effect=AssertionError(f"{target} called")))
        reasoner = Reasoner(checked)
    assert reasoner.patterns is not None or reasoner.queries is not None or reasoner.csparql is not None
