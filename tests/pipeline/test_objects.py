"""Results as objects: atoms, an rdflib Graph per time point, a DataFrame over time that
Reasoner.run reads back as the same facts."""

import pytest
import rdflib

import dotr
from dotr.rules import ir

pd = pytest.importorskip("pandas")

RULES = """@prefix : <http://ex.org/> .
:at(?s, ?room) :- :is_at(?s, ?loc), :in_room(?loc, ?room) .
warm(S, V) :- [2] <> temp(S, V), V > 20 .
label(S, "Küche"@de) :- temp(S, V) .
"""


def _results():
    r = dotr.Reasoner(dotr.check_text(RULES), background=[":in_room(:locA, :roomA)"])
    return list(r.run([(1, [":is_at(:s1, :locA)", "temp(s1, 25.5)"]), (3, ["temp(s2, -4)"])]))


def test_a_frame_of_results_reads_back_as_the_same_facts():
    results = _results()
    again = dotr.Reasoner(dotr.check_text("@prefix : <http://ex.org/> .\n"
                                          "copy(P) :- warm(S, V), P = V .\n"))  # (any program: only the input is compared)
    frame = dotr.frame(results)
    assert list(frame.columns) == ["t", "predicate", "arg1", "arg2"]
    from dotr.rules.engine.frames import stream_of
    read = stream_of(frame)
    assert [(t, sorted(again.ontology.format_fact(*again.ontology.intern(f)) for f in facts)) for t, facts, _ in read] \
        == [(r.t, sorted(r.facts)) for r in results if r.facts]


def test_atoms_and_graphs_hold_the_results_terms():
    first = _results()[0]
    assert ir.Atom(ir.Name("warm"), (ir.Name("s1"), ir.Num(25.5))) in first.atoms()
    assert ir.Atom(ir.Name("label"), (ir.Name("s1"), ir.Literal("Küche", None, "de"))) in first.atoms()
    ex = rdflib.Namespace("http://ex.org/")
    assert set(first.graph()) == {(ex.s1, ex.at, ex.roomA)}
