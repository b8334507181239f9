"""A run resumed from a snapshot gives what the uninterrupted run gives (``dotr run --snapshot``
then ``--resume``; the Spark job restores the temporal state the same way at every micro-batch):
generated LARS programs and pattern programs, each with its ontological stage, generated streams,
a cut anywhere."""

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dotr.pipeline import state_file
from dotr.pipeline.reasoner import Reasoner
from dotr.rules import check_text
from dotr.rules.lang.errors import DotrError
from tests.strategies import lars, patterns


def outputs(text: str, stream: list[list[str]], cut: int | None = None, temporal: bool = False,
            reclaim: bool = False) -> list[tuple[dict, list[str]]]:
    """The records of a run over ``stream`` (time point i: ``stream[i]``) and the composite
    events emitted, continued at time point ``cut`` by a reasoner restored from a snapshot read
    back from a state file: a whole one (``--snapshot``), or for ``temporal`` the temporal
    state only, on a reasoner built afresh from the rules (a checkpoint's, the Spark job's)."""
    checked = check_text(text)
    assume(checked.ok)
    try:
        reasoner = Reasoner(checked)
    except (DotrError, ValueError):
        assume(False)
    records = []
    for t, facts in enumerate(stream):
        if t == cut and temporal:
            _, state = state_file.decode(state_file.encode("test", reasoner.temporal_snapshot()), "test")
            reasoner = Reasoner(checked)
            reasoner.restore_temporal(state)
        elif t == cut:
            _, state = state_file.decode(state_file.encode("test", reasoner.snapshot()), "test")
            reasoner = Reasoner.restore(checked, state)
        records += [(result.to_json(), result.events) for result in reasoner.run([(t, facts)])]
        if reclaim:
            reasoner.reclaim_terms()
    return records


SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@SETTINGS
@given(lars.programs(), lars.streams(), st.integers(1, 10), st.booleans(), st.booleans())
def test_a_resumed_lars_program_gives_the_uninterrupted_output(text, stream, cut, temporal, reclaim):
    stream = stream + [[]] * 4
    assert outputs(text, stream, cut, temporal, reclaim) == outputs(text, stream)


@SETTINGS
@given(patterns.programs(), patterns.streams(), st.integers(1, 8), st.booleans(), st.booleans())
def test_a_resumed_pattern_program_gives_the_uninterrupted_output(text, stream, cut, temporal, reclaim):
    facts = [[f"{etype.lower()}({k}, {v})" for etype, k, v in events] for events in stream]
    assert outputs(text, facts, cut, temporal, reclaim) == outputs(text, facts)
