"""A temporal stage split by key (Reasoner.keep_group): the groups' merged outputs are one
reasoner's output, for the fire example and the DOTR-style workload with large time points."""

import random

import pytest

from benchmarks.patterns import EX, background, program
from pipeline.embedded import Reasoner, merge_records, split_keys
from rules import check_text
from temporal.keys import EventPartition


def _outputs(make, elements, groups: int) -> list[dict]:
    if groups == 1:
        return [r.to_json() for r in make().run(elements) if not r.is_empty()]
    reasoners = [make() for _ in range(groups)]
    for g, r in enumerate(reasoners):
        r.keep_group(EventPartition(split_keys(r.checked), groups, r.dictionary), g)
    by_t: dict[int, list[dict]] = {}
    for r in reasoners:
        for result in r.run(elements):
            if not result.is_empty():
                by_t.setdefault(result.t, []).append(result.to_json())
    return [merge_records(records) for _, records in sorted(by_t.items())]


def _dotr_stream(points: int, per_point: int) -> list:
    rnd = random.Random(5)
    return [(t * 1000, [f"<{EX}{'read_valA' if rnd.random() < 0.2 else 'read_valB'}>"
                        f"(<{EX}sensor{rnd.randrange(500)}>,{rnd.randrange(100)})" for _ in range(per_point)])
            for t in range(points)]


@pytest.mark.parametrize("groups", [2, 3])
def test_the_fire_example_split_by_key_gives_one_reasoners_output(groups):
    make = lambda: Reasoner.from_files("examples/fire/rules.dotr", ["examples/fire/ontology.ttl"])  # noqa: E731
    elements = [(10, ["temp(r1,50)", "smoke(r1)"]), (11, ["temp(r2,60)", "temp(r1,40)"]),
                (12, ["smoke(r2)", "smoke(r1)", "temp(r3,70)"]), (20, ["smoke(r3)", "smoke(r2)"])]
    assert _outputs(make, elements, groups) == _outputs(make, elements, 1)


@pytest.mark.parametrize("groups", [2, 5])
def test_the_dotr_workload_split_by_room_gives_one_reasoners_output(groups):
    checked = check_text(program(rules=3))
    bg = background(200)
    make = lambda: Reasoner(checked, bg)  # noqa: E731
    assert split_keys(checked) == {"A": 1, "B": 1}  # (sensor, room, value): by room
    elements = _dotr_stream(40, 60)
    expected = _outputs(make, elements, 1)
    assert sum(len(r.get("graphs", ())) for r in expected) > 100
    assert _outputs(make, elements, groups) == expected


def test_a_program_that_cannot_be_split_is_refused():
    r = Reasoner.from_files("examples/cooling/rules.dotr", ["examples/cooling/ontology.ttl"])
    assert split_keys(r.checked) is None
    with pytest.raises(ValueError, match="cannot be split"):
        r.keep_group(EventPartition({}, 2, r.dictionary), 0)
