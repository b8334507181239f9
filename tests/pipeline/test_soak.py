"""A stream of ever new names through a fixed window: the reasoner keeps the memory of what its
window holds, not of every name the stream ever gave (``Reasoner.reclaim_terms``)."""

import gc
import tracemalloc
from unittest import mock

from dotr.pipeline import input_facts
from dotr.pipeline.reasoner import Reasoner
from dotr.rules import check_text
from dotr.rules.engine import terms


@mock.patch.multiple(terms, CHUNK_BITS=8, _CHUNK=256, _MASK=255)  # (small chunks: dropped soon)
def test_memory_stays_flat_on_a_stream_of_ever_new_terms():
    reasoner = Reasoner(check_text("seen(X) :- [10] <> p(X) .\nboth(X, Y) :- q(X, Y), [5] <> p(X) ."))
    reasoner.reclaim_every = 3000
    tracemalloc.start()
    try:
        marks = {}
        for t in range(24_000):
            result = reasoner.step(t, [f"p(c{t})", f"q(c{t}, e{t})"])
            if t in (6_000, 23_999):  # (after a reclaim; the bounded cache of fact strings emptied)
                held = reasoner.dictionary.held() - reasoner.base_terms  # (reclaimed as the stream went)
                reasoner.reclaim_terms()
                input_facts._SIMPLE.clear()
                gc.collect()
                marks[t] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert sorted(result.facts) == sorted([f"both(c{t},e{t})" for t in [23_999]] +
                                          [f"seen(c{t})" for t in range(23_989, 24_000)])  # ([10]: t-10 to t)
    d = reasoner.dictionary
    assert len(d) - reasoner.base_terms >= 48_000  # (every name had an id)
    assert held <= 2 * 3000 + 40  # (those since the last reclaim, and the window's)
    assert d.held() - reasoner.base_terms < 40  # (the window's)
    assert marks[23_999] < marks[6_000] * 1.25, marks  # (four times the terms; the same memory)
