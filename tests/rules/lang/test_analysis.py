"""Stage split and strata."""

import networkx as nx
from hypothesis import given, strategies as st

from dotr.rules import check_text, ir
from dotr.rules.lang.analysis import stratify


def heads(rules):
    return [r.head.pred.value for r in rules]


def test_stage_split_follows_dependencies():
    result = check_text("""
        @prefix : <http://ex.org/> .
        :located(S, R) :- :attached(S, D), :inRoom(D, R).      % ontological
        :Hot(R) :- :located(S, R), :reads(S, V), V > 60.        % ontological
        warm(R) :- [10] <> :Hot(R).                             % temporal (window)
        alert(R) :- warm(R), :Room(R).                          % temporal (depends on warm)
        @T seen(R) :- [3] @T :Hot(R).                           % temporal (@ head)
        quiet(R) :- :Room(R), not :Hot(R).                      % ontological, stratum 1
    """)
    assert result.ok, result.diagnostics
    a = result.analysis
    ex = "http://ex.org/"
    assert heads(a.ontological) == [ex + "located", ir.RDF_TYPE, "quiet"]
    assert heads(a.temporal) == ["warm", "alert", "seen"]
    assert a.rule_strata == (0, 0, 0, 0, 0, 1)


def test_rules_over_pattern_output_stay_ontological():
    # a pattern's graph goes through the ontological stage again at its time point: a Datalog
    # rule over it stays there (events see what it derives), and it alone makes the graphs go back
    program = """
        @prefix : <http://ex.org/> .
        event E(?x) := select ?x where { ?x a :Reading } .
        pattern P from E construct { ?x a :Alarm } with ?x = E.x .
        :Monitored(X) :- :Sensor(X), :placed(X, Y).
        :Critical(X) :- READ(X), :Sensor(X).
    """
    result = check_text(program.replace("READ", ":Alarm"))
    assert result.ok, result.diagnostics
    assert len(result.analysis.ontological) == 2 and not result.analysis.temporal
    assert result.analysis.graphs_reach_events
    # classes are told apart: a rule over another class does not need the graphs
    assert not check_text(program.replace("READ", ":Broken")).analysis.graphs_reach_events
    # a template whose class is a variable gives every class
    variable_class = program.replace("READ", ":Broken").replace("{ ?x a :Alarm } with ?x = E.x",
                                                                "{ ?x a ?c } with ?x = E.x, ?c = E.x")
    assert check_text(variable_class).analysis.graphs_reach_events


def test_class_variable_reads_every_class():
    result = check_text("""
        @prefix : <http://ex.org/> .
        rdf:type(X, C) :- :sub(D, C), rdf:type(X, D).
        :Odd(X) :- :n(X), not :Even(X).
        :Even(X) :- :n(X), not :Odd(X).
    """)
    assert [d.code for d in result.diagnostics] == ["E201"]


def test_strata_stack_up():
    result = check_text("a(X) :- b(X).\nc(X) :- b(X), not a(X).\nd(X) :- c(X), not a(X).\ne(X) :- b(X), not d(X).")
    assert result.analysis.rule_strata == (0, 1, 1, 2)
    assert result.analysis.stratum_count == 3


def test_recursion_without_negation_is_fine():
    result = check_text("path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\n"
                        "unreachable(X, Y) :- node(X), node(Y), not path(X, Y).")
    assert result.ok
    assert result.analysis.rule_strata == (0, 0, 1)


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.booleans()), max_size=20))
def test_strata_are_the_least_fixpoint(edges):
    """stratify against its definition: the least strata with s(v) >= s(u) over an edge u -> v,
    s(v) > s(u) over a negative one, none when a negative edge is in a cycle (stratify takes
    networkx's components in the order Tarjan's algorithm finds them: each after those it reaches)."""
    graph = nx.DiGraph()
    for u, v, negative in edges:
        graph.add_edge(u, v, negative=negative or graph.get_edge_data(u, v, {}).get("negative", False))
    strata, cycles = stratify(graph)
    cyclic = {(u, v) for u, v, negative in graph.edges(data="negative") if negative and nx.has_path(graph, v, u)}
    assert {edge for component in cycles for edge in component} == cyclic
    if cyclic:
        return
    least = dict.fromkeys(graph, 0)
    changed = True
    while changed:
        changed = False
        for u, v, negative in graph.edges(data="negative"):
            if least[v] < least[u] + negative:
                least[v], changed = least[u] + negative, True
    assert strata == least
