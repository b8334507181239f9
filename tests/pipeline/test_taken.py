"""The records a run takes without reordering (``io.taken``'s single loop) are those the
reference composition takes, gap bound, filter and order check one after the other, and the
same records are rejected for the same reasons."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dotr.pipeline.io import Record, _with_raw, bounded_gaps, in_order, taken
from dotr.rules import InputError


def reference(items, reject, max_gap, after):
    def good():
        for item in bounded_gaps(items, max_gap, after):
            if isinstance(item, InputError):
                reject(item)
            elif after is None or item.t > after:
                yield item

    def late(record, reason):
        reject(_with_raw(InputError(reason, record.line), record.raw))

    return in_order(good(), 0, late)


item = st.one_of(st.integers(-3, 40).map(lambda t: ("record", t)), st.just(("bad", None)))


@settings(max_examples=300, deadline=None)
@given(st.lists(item, max_size=30), st.sampled_from([0, 1, 3, 10]), st.one_of(st.none(), st.integers(-2, 20)))
def test_taken_in_one_loop_is_the_reference_composition(shape, max_gap, after):
    def items():
        return [Record(n, t, [], f"r{n}") if kind == "record" else _with_raw(InputError("bad", n), f"r{n}")
                for n, (kind, t) in enumerate(shape, start=1)]

    def run(take):
        rejected = []
        kept = [(r.line, r.t) for r in take(items(), rejected.append, max_gap, after)]
        return kept, [(str(e), getattr(e, "raw", None)) for e in rejected]

    assert run(lambda i, r, g, a: taken(i, r, g, a)) == run(reference)
