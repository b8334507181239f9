"""In tick mode every tick between two inputs is a time point: one where nothing holds is
skipped only when no event comes of the background alone either (a pattern reads one at every
tick)."""

from dotr.pipeline.reasoner import Reasoner
from dotr.rules import check_text


def test_an_event_of_the_background_alone_comes_at_every_tick_between_inputs():
    reasoner = Reasoner(check_text("""@prefix : <http://ex.org/> .
<http://ex.org/Device>(<http://ex.org/a>) .
h0(X) :- [2] <> hot(X) .
event Hot(?x) := hot(?x) .
event Dev(?x) := select ?x where { ?x a :Device } .
pattern P from Hot and last Dev(x = Hot.x) within 2 from Hot construct { ?x :seen :on } with ?x = Hot.x ."""))
    out = [(r.t, r.graphs) for r in reasoner.run([(0, []), (3, ["hot(<http://ex.org/a>)"])])]
    # (Dev at tick 2 is the one within 2 of Hot at 3: strictly less than 2 before it)
    assert out == [(0, []), (1, []), (2, []), (3, ["<http://ex.org/a> <http://ex.org/seen> <http://ex.org/on> .\n"])]


def test_a_tick_where_nothing_holds_and_no_event_comes_is_skipped():
    reasoner = Reasoner(check_text("h0(X) :- [2] <> hot(X) .\nevent Hot(?x) := hot(?x) .\n"
                                   "pattern P from Hot construct { ?x <http://ex.org/seen> 1 } with ?x = Hot.x ."))
    assert [r.t for r in reasoner.run([(0, ["hot(a)"]), (1000, ["hot(b)"])])] == [0, 1, 2, 3, 1000]
