"""dotr.explain from a live reasoner: the same derivation as re-running the stream, without
evaluating anything again."""

import pytest

import dotr
from dotr.pipeline.io import read_jsonl

FIRE = dotr.examples.path("fire")
TARGET = "<http://example.org/building#is_in_room>(<http://example.org/building#s2>,<http://example.org/building#roomA>)"


def _elements(prefixes):
    with open(FIRE / "stream.jsonl", encoding="utf-8") as f:
        return [(item.t, item.facts) for item in read_jsonl(f, prefixes=prefixes)]


def test_a_live_reasoner_explains_its_last_time_point_as_a_rerun_does():
    rerun = dotr.Reasoner.from_files(FIRE / "rules.dotr", [FIRE / "ontology.ttl"])
    expected = dotr.explain(rerun, TARGET, _elements(rerun.program.prefixes), 12)
    live = dotr.Reasoner.from_files(FIRE / "rules.dotr", [FIRE / "ontology.ttl"])
    for _ in live.run(_elements(live.program.prefixes)):
        pass
    steps = []
    live.step = lambda *args: steps.append(args)  # (nothing may be evaluated again)
    assert dotr.explain(live, TARGET) == expected
    assert any(line.endswith(": input at 12") for line in expected), expected
    assert dotr.explain(live, "0")[0].startswith("graph 0 at 12: pattern Fire")
    assert steps == []


def test_nothing_evaluated_yet_is_nothing_to_explain():
    with pytest.raises(dotr.NothingToExplain):
        dotr.explain(dotr.Reasoner(dotr.check_text("p(X) :- q(X) .")), "p(a)")


def test_heads_of_rules_with_not_and_of_tuple_windows_are_explained():
    """A rule with ``not`` or a tuple window is kept by a view, whose heads no rule reads are held
    by the view, not the store: explain found no derivation for them."""
    r = dotr.Reasoner(dotr.check_text("a(X) :- [3] <> p(X), not [3] <> q(X) .\nc(X) :- [2 #] <> p(X) ."))
    r.step(1, ["p(1)", "q(2)", "p(2)"])
    r.step(2, ["p(3)"])
    assert dotr.explain(r, "a(1)") == ["a(1): by a(X) :- [3] <> p(X), not [3] <> q(X) .",
                                       "  [3] <> p(1): held in the window"]
    assert dotr.explain(r, "c(3)") == ["c(3): by c(X) :- [2 #] <> p(X) .", "  [2 #] <> p(3): held in the window"]
    with pytest.raises(dotr.NothingToExplain, match="a.2.: does not hold at 2"):
        dotr.explain(r, "a(2)")
