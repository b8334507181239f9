"""One checked boundary: every public entry of every stage refuses the same mistakes with a
documented DotrError subclass naming the bad element (issue 38, item 4), and reads the same
forms of facts; the caller's objects are not frozen unless asked (item 5)."""

import gc

import pytest
import rdflib

import dotr
from dotr.rules import EventError, FactError, FrameError, TimeError, TimeOrderError, ir

pd = pytest.importorskip("pandas")

EX = "http://ex.org/"
RULES = f"@prefix : <{EX}> .\nalarm(X) :- smoke(X) .\n"


def _stage():
    return dotr.OntologicalStage(dotr.check_text(RULES))


def _lars():
    return dotr.LarsEngine(dotr.parse("hot(X) :- [3] <> temp(X, V), V > 30 .").rules)


def _patterns():
    return dotr.PatternEngine(dotr.parse("event Smoke(?area) := smoke(?area) .\n"
                                         "pattern Fire from Smoke emit Fire(area = Smoke.area) ."))


def test_the_ontological_stage_refuses_backward_float_and_until_before_t():
    stage = _stage()
    stage.process(5, ["smoke(r1)"])
    with pytest.raises(TimeOrderError, match="time point 3 is before 5"):
        stage.process(3, ["smoke(r2)"])
    with pytest.raises(TimeError, match="6.5"):
        stage.process(6.5, [])
    with pytest.raises(TimeError, match="until 4 is before the time point 6"):
        stage.process(6, ["smoke(r3)"], until=4)
    with pytest.raises(FactError, match="a fact has no variables"):
        stage.process(7, [ir.Atom(ir.Name("smoke"), (ir.Var("X"),))])


def test_the_lars_engine_refuses_wrong_arities_unknown_relations_and_str_relations():
    engine = _lars()
    with pytest.raises(FactError, match="the rules use temp with 2 arguments, not 1"):
        engine.step(0, ["temp(s1)"])
    with pytest.raises(FactError, match="no rule reads or derives tmep"):
        engine.step(0, [("tmep", "s1", 35)])
    with pytest.raises(FactError, match=r"\(.s1., 35\) is not a term"):
        engine.step(0, [("temp", ("s1", 35))])  # a relation as str where a key goes
    with pytest.raises(TimeError):
        engine.step(1.0, [])
    assert engine.format(engine.step(0, [("temp", "s1", 35)])) == ["hot(s1)"]  # nothing was lost before


def test_the_pattern_engine_refuses_unknown_types_and_short_rows():
    engine = _patterns()
    with pytest.raises(EventError, match="'Smok'.*not declared"):
        engine.step(1, {"Smok": [("a1",)]})
    with pytest.raises(EventError, match="is not a tuple of 1 value"):
        engine.step(1, {"Smoke": [()]})
    with pytest.raises(EventError, match="emitted by a pattern"):
        engine.step(1, {"Fire": [("a1",)]})
    assert len(engine.step(1, {"Smoke": [("a1",)]}).matches) == 1


def test_the_reasoner_refuses_float_times_and_bad_elements():
    r = dotr.Reasoner(dotr.check_text(RULES))
    with pytest.raises(TimeError):
        r.step(1.5, ["smoke(r1)"])
    with pytest.raises(dotr.InputError, match="an element of a stream"):
        list(r.run([(1,)]))
    r.step(2, ["smoke(r1)"])
    with pytest.raises(TimeOrderError):
        r.step(2, [])


def test_a_reasoner_asked_for_its_next_change_before_any_step_has_none():
    r = dotr.Reasoner(dotr.check_text("alarm(R) :- [10] <> smoke(R) .\n"))
    assert r.next_change() is None
    r.step(3, ["smoke(r1)"])
    assert r.next_change() == 4


def test_a_dataframe_of_another_shape_is_an_error_not_its_column_names():
    """A column t made 'alarm :- t.' fire: the frame was iterated as its column names."""
    r = dotr.Reasoner(dotr.check_text("alarm :- t .\n"))
    with pytest.raises(FrameError, match=r"columns \['t', 'value'\]"):
        r.step(1, pd.DataFrame({"t": [1], "value": [2]}))
    with pytest.raises(FrameError):
        _stage().process(1, pd.DataFrame({"x": [1]}))


def test_every_stage_takes_the_same_forms_of_facts():
    smoke = [ir.Atom(ir.Name("smoke"), (ir.Name("r1"),)), "smoke(r1)", ("smoke", "r1"),
             pd.DataFrame({"predicate": ["smoke"], "arg1": ["r1"]})]
    for given in smoke:
        stage = _stage()
        facts = given if isinstance(given, pd.DataFrame) else [given]
        stage.process(1, facts)
        assert stage.format_fact(*next(iter(stage.conclusions(1)))) == "alarm(r1)", given
    g = rdflib.Graph()
    g.add((rdflib.URIRef(EX + "a"), rdflib.URIRef(EX + "p"), rdflib.Literal(3)))
    engine = dotr.LarsEngine(dotr.parse(f"@prefix : <{EX}> .\nq(X, V) :- :p(X, V) .").rules, prefixes={"": EX})
    expected = ["q(<http://ex.org/a>,3)"]
    assert engine.format(engine.step(0, g)) == expected
    assert engine.format(engine.step(1, [":p(:a, 3)"])) == expected
    assert engine.format(engine.step(2, pd.DataFrame({"subject": [":a"], "predicate": [":p"], "object": [3]}))) == expected


def test_a_reasoner_freezes_the_callers_objects_only_when_asked():
    before = gc.get_freeze_count()
    mine = [{"a": 1} for _ in range(100)]
    dotr.Reasoner(dotr.check_text(RULES))
    dotr.OntologicalStage(dotr.check_text(RULES))
    assert gc.get_freeze_count() == before
    try:
        dotr.Reasoner(dotr.check_text(RULES), freeze_gc=True)
        assert gc.get_freeze_count() >= before + len(mine)
    finally:
        gc.unfreeze()
