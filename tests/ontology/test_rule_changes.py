"""Rules changed on a materialised background (``Materialiser.changed_rules``, DRed): the store
is what materialising the background under the new rules from nothing gives, explicit facts
included, where the new program keeps some rules, drops others and adds its own, in the dict
engine and the native one: on chains of rules over a few relations (what a dropped rule derived
feeds the rules kept, recursion), and on random programs over triples (variable predicates,
comparisons, assignments)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.ontology.materialise import Materialiser
from dotr.rules import ir, parse
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import TermDictionary
from tests.ontology.reference import closure
from tests.strategies.triples import EX, interned, other, recursion, rules_, store_state, triple


RELATIONS = {"e": 2, "f": 2, "g": 2, "u": 1, "v": 1}
CONSTANTS = ["a", "b", "c", "d"]


@st.composite
def chain_rule(draw) -> str:
    """A rule over the few relations of RELATIONS (so that rules read what others derive)."""
    body, seen = [], []
    for _ in range(draw(st.integers(1, 2))):
        pred = draw(st.sampled_from(sorted(RELATIONS)))
        args = [draw(st.sampled_from(["X", "Y", "Z", "a"])) for _ in range(RELATIONS[pred])]
        body.append(f"{pred}({', '.join(args)})")
        seen += [a for a in args if a.isupper()]
    head = draw(st.sampled_from(["f", "g", "u", "v"]))
    args = [draw(st.sampled_from(seen or ["b"])) for _ in range(RELATIONS[head])]
    return f"{head}({', '.join(args)}) :- {', '.join(body)} ."


chain_facts = st.lists(st.one_of(
    st.tuples(st.sampled_from(["e", "f"]), st.sampled_from(CONSTANTS), st.sampled_from(CONSTANTS)),
    st.tuples(st.just("u"), st.sampled_from(CONSTANTS))), max_size=12)


@pytest.mark.parametrize("native", [False, True], ids=["dict", "native"])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(chain_rule(), min_size=1, max_size=5), st.lists(st.booleans(), min_size=5, max_size=5),
       st.lists(chain_rule(), max_size=3), chain_facts)
def test_changed_chains_of_rules_give_the_new_rules_materialisation(native, old, keep, added, facts):
    d = TermDictionary()
    new = [rule for rule, kept in zip(old, keep) if kept] + added
    changed = Materialiser(_rules(old), d, native=native)
    background = [(changed.relation(pred, len(args)), tuple(d.intern(ir.Name(a)) for a in args), INF)
                  for pred, *args in dict.fromkeys(facts)]
    _same_as_fresh(changed, background, new, d, native)


def _same_as_fresh(changed: Materialiser, background: list, new: list[str], d: TermDictionary, native: bool) -> None:
    changed.add(background)
    changed = changed.changed_rules(_rules(new))
    fresh = Materialiser(_rules(new), d, native=native)
    fresh.add(background)
    assert store_state(changed) == store_state(fresh)
    assert _explicit(changed) == _explicit(fresh)
    assert {(rel, fact) for rel, fact, _ in changed.store} == \
        closure(_rules(new), {(rel, fact) for rel, fact, _ in background}, d)
    later = background[:2] + [(rel, fact, 3) for rel, fact, _ in background[2:4]]  # (maintained on from there)
    changed.add(later)
    fresh.add(later)
    assert store_state(changed) == store_state(fresh)


def _explicit(m) -> set:
    return {(rel, fact, e) for rel, held in m.explicit.items() for fact, e in held.items()}


def _rules(texts: list[str]) -> list:
    return list(parse(f"@prefix : <{EX}> .\n" + "\n".join(texts)).rules)


@pytest.mark.parametrize("native", [False, True], ids=["dict", "native"])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(rules_(), min_size=1, max_size=4), recursion, st.lists(rules_(), max_size=3), recursion,
       st.lists(st.booleans(), min_size=4, max_size=4), st.lists(triple, max_size=10), st.lists(other, max_size=4))
def test_changed_rules_give_the_new_rules_materialisation(native, old, old_extra, added, new_extra, keep, graph,
                                                          others):
    new = [rule for rule, kept in zip(old, keep) if kept] + added
    d = TermDictionary()
    background = [(rel, fact, INF) for rel, fact in dict.fromkeys(interned(d, graph, others))]
    _same_as_fresh(Materialiser(_rules(old + [old_extra]), d, native=native), background, new + [new_extra], d,
                   native)


def test_a_rule_no_longer_maintained_takes_its_conclusions_along_and_keeps_what_others_derive():
    d = TermDictionary()
    m = Materialiser(_rules(["reach(X, Y) :- edge(X, Y) .", "reach(X, Z) :- reach(X, Y), edge(Y, Z) .",
                             "linked(X) :- reach(X, Y) .", "linked(X) :- node(X) ."]), d)
    edge, node, reach, linked = (m.relation(n, a) for n, a in (("edge", 2), ("node", 1), ("reach", 2), ("linked", 1)))
    a, b, c = (d.intern(parse(f"x({n}) .").facts[0].args[0]) for n in "abc")
    m.add([(edge, (a, b), INF), (edge, (b, c), INF), (node, (c,), INF)])
    m = m.changed_rules(_rules(["reach(X, Y) :- edge(X, Y) .", "linked(X) :- reach(X, Y) .",
                                "linked(X) :- node(X) ."]))  # (no transitive closure any more)
    assert sorted(m.store.relation(reach).facts) == [(a, b), (b, c)]
    assert sorted(m.store.relation(linked).facts) == sorted([(a,), (b,), (c,)])
    assert m.explicit[edge] == {(a, b): INF, (b, c): INF}
