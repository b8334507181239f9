"""The window atoms of LARS rules as the engine stores them: their kinds, the auxiliary relation
that stands for each, horizon arithmetic, and what each kind does (:class:`Window`).

A window kind is one behaviour object (:data:`WINDOWS`, ``Kind.window``): what the window keeps
(a diamond with horizons, incrementally; the others drawn at each time point), how it expires, its
next change, and what an atom placed in the past does to it. The engine asks it once per window
per time point (and per atom an ``@`` head places into the window's past); the state it reads and
keeps is the engine's (``temporal.lars.LarsEngine``: the box windows' runs, the tuple windows'
recent atoms), which state files carry.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from dotr.rules.engine.backends.dict_loops import box_facts
from dotr.rules.engine.store import INF, FactItem, RelKey

if TYPE_CHECKING:
    from dotr.temporal.lars import LarsEngine


class Kind(StrEnum):
    """The window atoms' kinds (the value names the auxiliary relation)."""

    DIAMOND = "dia"  # [n] <> p, <> p: maintained incrementally, with horizons
    BOX = "box"
    AT = "at"
    TUPLE_DIAMOND = "tdia"
    TUPLE_BOX = "tbox"
    TUPLE_AT = "tat"

    @property
    def tuple_based(self) -> bool:
        """Whether the window counts atoms (``[n #]``) rather than time points."""
        return self.window.tuple_based

    @property
    def operator(self) -> str:
        """The operator as a rule writes it: ``<>``, ``[]`` or ``@``.

        >>> Kind.TUPLE_BOX.operator, Kind.AT.operator
        ('[]', '@')
        """
        return {"dia": "<>", "box": "[]", "at": "@"}[self.value.removeprefix("t")]

    @property
    def window(self) -> Window:
        """The kind's behaviour.

        >>> Kind.TUPLE_AT.window.with_time, Kind.DIAMOND.window.per_time
        (True, False)
        """
        return WINDOWS[self]


@dataclass
class _Aux:
    """An auxiliary relation standing for one window atom ``[window] op base`` (what
    ``LarsEngine.window_of`` tells of a rewritten rule's relation)."""

    rel: RelKey
    base: RelKey
    kind: Kind
    size: int  # window length in time points or atoms; INF for the whole stream

    @property
    def window(self) -> Window:
        return WINDOWS[self.kind]


def _add(e: int, n: int) -> int:
    return INF if e >= INF or n >= INF else min(e + n, INF)


class Window:
    """What the engine does with the window atoms of one kind. The defaults: nothing drawn at a
    time point, no next change of its own, nothing recorded of a placement (a diamond's, whose
    auxiliary facts the engine derives as the base's are: the base's horizon plus the window's
    length)."""

    kind: Kind
    #: recomputed at every time point once its base is complete (a strict edge, as for a
    #: negation), not kept with horizons
    per_time = True
    tuple_based = False
    #: its facts end with the time point the base held at (``@T``): they record the past
    with_time = False
    #: over a fact that holds at every time point it holds at every time point
    lasting = False
    #: an atom of its base placed in the past changes it (:meth:`placed`)
    sees_placements = False

    def ratchets(self, aux: _Aux) -> bool:
        """Whether, in a recursion, its horizons would rise by the window's length at each round
        (the rules there are evaluated in full at each time point)."""
        return False

    def facts(self, engine: LarsEngine, aux: _Aux, t: int, disable: bool) -> list[FactItem]:
        """The auxiliary facts at ``t`` (its base is complete, or ``disable`` is False: it may
        still grow at t)."""
        return []

    def next_change(self, engine: LarsEngine, aux: _Aux, last: int, candidates: list[int]) -> None:
        """Add to ``candidates`` the time points after ``last`` where the window can change other
        than by a horizon passing, something given or placed."""

    def placed(self, engine: LarsEngine, aux: _Aux, fact: tuple, when: int, now: int) -> list[FactItem]:
        """The auxiliary facts of the base's ``fact`` placed at ``when`` < ``now`` (what the
        window records of it)."""
        return []


class _Diamond(Window):
    kind = Kind.DIAMOND
    per_time = False

    def ratchets(self, aux: _Aux) -> bool:
        return 0 < aux.size < INF


class _Box(Window):
    """``[n] [] p``: the facts of p whose runs (kept per base relation, ``engine._occ``) cover the
    window; Laser2's rule disabling skips the coverage checks for n time points after one where p
    has no fact."""

    kind = Kind.BOX
    lasting = True
    sees_placements = True

    def facts(self, engine: LarsEngine, aux: _Aux, t: int, disable: bool) -> list[FactItem]:
        base_facts = engine.store.relation(aux.base).facts
        out: list[FactItem] = []
        first = engine.start if aux.size >= INF else max(engine.start, t - aux.size)
        if disable and engine._disable and engine._disable_from <= aux.size < INF and not base_facts:
            engine._disabled_until[aux.rel] = t + aux.size
        occ, rel = engine._occ[aux.base], aux.rel
        if engine._disabled_until.get(aux.rel, -1) >= t:
            for f in base_facts:
                runs = occ.get(f)
                if not runs or runs[-1][1] < t:
                    record(occ, f, t, t)
            engine.disabled_checks += len(base_facts)
            return out
        # (each fact's run extended to t; a run that covers the window holds t: the last one, unless
        # one was placed ahead; compiled)
        box_facts(base_facts, occ, rel, t, first, out, record, covered)
        return out

    def next_change(self, engine: LarsEngine, aux: _Aux, last: int, candidates: list[int]) -> None:
        if aux.size < INF:  # where a box over a fact that holds on fills
            runs = engine._occ.get(aux.base, {})
            for fact in engine.store.relation(aux.base).facts:
                filled = runs[fact][-1][0] + aux.size if fact in runs else None
                if filled is not None and filled > last:
                    candidates.append(filled)

    def placed(self, engine: LarsEngine, aux: _Aux, fact: tuple, when: int, now: int) -> list[FactItem]:
        record(engine._occ[aux.base], fact, when, when)
        engine._disabled_until.pop(aux.rel, None)  # the past changed: decide again
        return []


class _At(Window):
    """``[n] @T p``: one fact ``(X, T)`` per time point T at which p(X) held, until T + n."""

    kind = Kind.AT
    with_time = True
    sees_placements = True

    def facts(self, engine: LarsEngine, aux: _Aux, t: int, disable: bool) -> list[FactItem]:
        stamp, rel, until = engine.dictionary.number(t), aux.rel, _add(t, aux.size)
        return [(rel, (*f, stamp), until) for f in engine.store.relation(aux.base).facts]

    def next_change(self, engine: LarsEngine, aux: _Aux, last: int, candidates: list[int]) -> None:
        # ``@T p`` binds T to every time point where p holds: a fact that held at ``last`` (and
        # may hold on) gives a new T at ``last + 1``
        if last + 1 not in candidates and any(
                expiry >= last for expiry in engine.store.relation(aux.base).facts.values()):
            candidates.append(last + 1)

    def placed(self, engine: LarsEngine, aux: _Aux, fact: tuple, when: int, now: int) -> list[FactItem]:
        until = _add(when, aux.size)
        return [(aux.rel, (*fact, engine.dictionary.number(when)), until)] if until >= now else []


class _Tuple(Window):
    """``[n #] op p``: the last n stream atoms (background facts hold throughout), kept from one
    time point to the next when only views read it (``temporal.tuples``), else drawn again."""

    tuple_based = True
    lasting = True

    def facts(self, engine: LarsEngine, aux: _Aux, t: int, disable: bool) -> list[FactItem]:
        kept = engine._tuple.get(aux.rel)
        if kept is not None:
            return engine._tuple_facts(kept, t)
        n, base = int(aux.size), aux.base
        recent = list(engine._recent)[-n:]
        first, background = engine._tuple_span(base, n, t)
        times: dict[tuple, set[int]] = defaultdict(set)  # fact -> the time points it held at
        for when, rel, f in recent:
            if rel == base:
                times[f].add(when)
        throughout = []  # (the background facts that held at every time point of the window)
        for f, start, end in background:
            if start <= first and end >= t:
                throughout.append(f)
            else:
                times[f].update(range(start, end + 1))
        return self._drawn(engine, aux, times, throughout, first, t)

    def _drawn(self, engine: LarsEngine, aux: _Aux, times: dict[tuple, set[int]], throughout: list[tuple],
               first: int, t: int) -> list[FactItem]:
        """The facts of the window from when each of its facts held (``times``; ``throughout``:
        at every time point from ``first`` to ``t``)."""
        rel = aux.rel
        return [(rel, f, t) for f in times] + [(rel, f, t) for f in throughout]


class _TupleDiamond(_Tuple):
    kind = Kind.TUPLE_DIAMOND


class _TupleBox(_Tuple):
    kind = Kind.TUPLE_BOX

    def _drawn(self, engine: LarsEngine, aux: _Aux, times: dict[tuple, set[int]], throughout: list[tuple],
               first: int, t: int) -> list[FactItem]:
        span, rel = set(range(first, t + 1)), aux.rel
        return [(rel, f, t) for f, ts in times.items() if ts >= span] + [(rel, f, t) for f in throughout]


class _TupleAt(_Tuple):
    kind = Kind.TUPLE_AT
    with_time = True
    lasting = False

    def _drawn(self, engine: LarsEngine, aux: _Aux, times: dict[tuple, set[int]], throughout: list[tuple],
               first: int, t: int) -> list[FactItem]:
        number, rel = engine.dictionary.number, aux.rel
        out = [(rel, (*f, number(u)), t) for f, ts in times.items() for u in ts]
        out += [(rel, (*f, number(u)), t) for f in throughout for u in range(first, t + 1)]
        return out

    def next_change(self, engine: LarsEngine, aux: _Aux, last: int, candidates: list[int]) -> None:
        # a tuple window's stream atoms keep their time points, its background facts hold at
        # every one: each gives a new T at ``last + 1``
        if last + 1 not in candidates and any(
                expiry >= INF for expiry in engine.store.relation(aux.base).facts.values()):
            candidates.append(last + 1)


#: each kind's behaviour
WINDOWS: dict[Kind, Window] = {w.kind: w for w in (_Diamond(), _Box(), _At(), _TupleDiamond(), _TupleBox(), _TupleAt())}


# ------------------------------------------------------------------ box windows' runs
def record(runs_of: dict[tuple, list[list[int]]], fact: tuple, start: int, end: int) -> None:
    """Note in ``runs_of`` (fact -> its runs ``[start, end]``, sorted) that ``fact`` held
    throughout [start, end].

    >>> runs = {}
    >>> record(runs, "p", 1, 2); record(runs, "p", 5, 5); record(runs, "p", 3, 4); runs
    {'p': [[1, 5]]}
    """
    runs = runs_of.setdefault(fact, [])
    if runs and runs[-1][0] <= start <= runs[-1][1] + 1:  # (the usual case: it held just before)
        if end > runs[-1][1]:
            runs[-1][1] = end
        return
    i = bisect.bisect_left(runs, [start, start])
    runs.insert(i, [start, end])
    merged: list[list[int]] = []
    for run in runs:
        if merged and run[0] <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], run[1])
        else:
            merged.append(run)
    runs[:] = merged


def covered(runs: list[list[int]], first: int, last: int) -> bool:
    """Whether one of ``runs`` covers [first, last]."""
    for start, end in runs:
        if start <= first and end >= last:
            return True
    return False
