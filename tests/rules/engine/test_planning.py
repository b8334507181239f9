"""The join planner (rules.engine.planning) on the rules of tests/rules/engine/fixtures/plans.txt: each
rule's plans print as the fixture says (join order, keys, bindings and where each test runs).
The three back ends that execute these plans are compared with the reference evaluator in
tests/ontology/test_materialise.py (one suite over every back end)."""

from pathlib import Path

import pytest

from dotr.rules import parse
from dotr.rules.engine.planning import Unsupported, plan_rule
from dotr.rules.engine.terms import TermDictionary

FIXTURE = Path(__file__).parent / "fixtures" / "plans.txt"


def _cases():
    text = "\n".join(line for line in FIXTURE.read_text().splitlines() if not line.startswith("#"))
    for block in text.strip().split("\n\n\n"):
        first, _, plans = block.strip().partition("\n")
        hoist = first.startswith("hoist ")
        yield pytest.param(first.removeprefix("hoist "), hoist, plans, id=first[:40])


@pytest.mark.parametrize("rule, hoist, expected", list(_cases()))
def test_plans_as_in_the_fixture(rule, hoist, expected):
    r = parse(rule).rules[0]
    plans = plan_rule(r.head, r.body, TermDictionary(), hoist=hoist)
    assert "\n\n".join(str(p) for p in plans) == expected


def test_an_unsafe_rule_has_no_plan():  # (checking rejects it first: E103)
    r = parse("q(X) :- p(X), Y > 3 .").rules[0]
    with pytest.raises(Unsupported, match="unbound"):
        plan_rule(r.head, r.body, TermDictionary())
