"""Time points between Spark stages: an :class:`~pipeline.records.Enriched` as bytes.

Term ids are local to a process's dictionary. Reasoners built from the same files agree on the ids
of the terms they hold after construction (the rules' and the background's: the *base*); every
other term travels as the term itself and is interned again on the receiving side.

>>> from dotr import examples
>>> from dotr.pipeline.reasoner import Reasoner
>>> fire = examples.path("fire")
>>> a = Reasoner.from_files(fire / "rules.dotr", [fire / "ontology.ttl"])
>>> b = Reasoner.from_files(fire / "rules.dotr", [fire / "ontology.ttl"])
>>> point = a.enrich(1, ["temp(r9,50)"])
>>> decoded = decode_point(encode_point(point, a.dictionary, a.base_terms), b.dictionary)
>>> [b.ontology.format_fact(rel, fact) for rel, fact in decoded.stream]
['temp(r9,50)']
"""

from __future__ import annotations

import pickle
from typing import Callable

from dotr.rules.engine.terms import FIRST_INT_ID, TermDictionary

from .records import Enriched



def _mapped(ids: Callable[[tuple], tuple], stream: list, conclusions: list, events: dict, streams: dict) -> tuple:
    """A time point's facts and event rows with their term ids passed through ``ids``."""

    def facts(items: list) -> list:
        return [(ids(rel[:1]) + rel[1:], ids(fact)) for rel, fact in items]

    return (facts(stream), facts(conclusions), {name: [ids(row) for row in rows] for name, rows in events.items()},
            {name: facts(items) for name, items in streams.items()})


def encode_point(point: Enriched, d: TermDictionary, base: int) -> bytes:
    """``point`` as bytes; ids below ``base`` (and integers) stay, other terms go along."""
    local: dict[int, int] = {}

    def ids(row: tuple) -> tuple:
        out = []
        for i in row:
            if base <= i < FIRST_INT_ID:
                i = -1 - local.setdefault(i, len(local))
            out.append(i)
        return tuple(out)

    parts = (point.stream, point.conclusions, point.events, point.streams)
    shared = len(d) <= base  # no term beyond the base (ids are given in order): every id stays as it is
    stream, conclusions, events, streams = parts if shared else _mapped(ids, *parts)
    solutions = [[(tuple(sol), tuple(sol.values()) if shared else ids(tuple(sol.values()))) for sol in group]
                 for group in point.solutions]
    body = (point.t, stream, conclusions, events, point.expiries, solutions, streams, point.group)
    return pickle.dumps((body, [d.term(i) for i in local]), protocol=pickle.HIGHEST_PROTOCOL)


def decode_point(data: bytes, d: TermDictionary) -> Enriched:
    """The time point :func:`encode_point` wrote, with ids of ``d``."""
    (t, stream, conclusions, events, expiries, solutions, streams, group), terms = pickle.loads(data)
    local = [d.intern(term) for term in terms]

    def ids(row: tuple) -> tuple:
        if not row or min(row) >= 0:  # only shared ids (most rows): as they are
            return row
        return tuple(local[-1 - i] if i < 0 else i for i in row)

    if terms:  # else only shared ids: as they are
        stream, conclusions, events, streams = _mapped(ids, stream, conclusions, events, streams)
    return Enriched(t, stream, conclusions, events, expiries,
                    [[dict(zip(names, ids(values))) for names, values in group] for group in solutions],
                    streams, group)
