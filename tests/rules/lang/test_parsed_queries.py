"""A checked program's queries are parsed once: by the checker, and in a process the program is
carried to (pickled, as to a Spark worker), once there at their first use, however many engines
are built from it."""

import pickle
from unittest import mock

from dotr.ontology.csparql import CSparqlEngine
from dotr.rules import check_text
from dotr.rules.lang.queries import csparql

PROGRAM = """@prefix : <http://ex.org/> .
query A := register compute every 1 as select ?s from stream :st [range 2 step 1] where { ?s :p ?o } .
query B := register compute every 1 as select ?s from stream :st [range 2 step 1] where { ?s :p ?o } .
"""


def test_queries_are_parsed_once_in_each_process():
    checked = check_text(PROGRAM)
    assert checked.ok
    with mock.patch("dotr.ontology.csparql.parse_csparql", wraps=csparql.parse_csparql) as parse:
        CSparqlEngine(checked)
        CSparqlEngine(checked)
        assert parse.call_count == 0  # (the checker's parses are used)
    carried = pickle.loads(pickle.dumps(checked))
    with mock.patch("dotr.ontology.csparql.parse_csparql", wraps=csparql.parse_csparql) as parse:
        engines = [CSparqlEngine(carried) for _ in range(3)]
        assert parse.call_count == 2  # (A and B, once each: the same text under two names)
    assert [query.name for query in engines[0].queries] == ["A", "B"]
