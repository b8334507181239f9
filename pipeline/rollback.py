"""Undoing a time point that cannot finish, for ``dotr run --on-error skip``.

A time point that makes more than ``--max-derived`` facts and answers stops half way through:
the engines hold part of it. To reject its records instead and go on as if they had never come,
a run keeps a recent state of its reasoner (``Reasoner.state``: its temporal snapshot, or its
whole state once a program change changed the ontological stage's rules in place; encoded as a
state file's body) and the time points evaluated since (their records' facts and background
changes, in memory); :meth:`Rollback.rewind` builds the reasoner afresh (or from the whole
state), restores that state and evaluates those time points again.

A snapshot costs time in proportion to the state (a wide window over many distinct constants
makes it large), so one is taken only once the time points evaluated since the last one have
cost ``RATIO`` times the CPU time it took (about ``1 / RATIO`` more CPU on a run that rejects
nothing, more while the state grows), or hold ``MAX_KEPT`` facts (the memory the time points kept
take). Rewinding costs a reasoner's construction, reading the snapshot, and evaluating the time
points kept again: about ``RATIO`` times the last snapshot's cost.

>>> from dotr import examples
>>> from dotr.pipeline.reasoner import Reasoner
>>> trex = examples.path("trex")
>>> def build():
...     return Reasoner.from_files(trex / "rules.dotr", [trex / "ontology.ttl"])
>>> reasoner, rollback = build(), Rollback()
>>> rollback.mark(reasoner)
>>> reasoner.step(1000, ["smoke(area_1)"]).t
1000
>>> rollback.evaluated(reasoner, Point(1000, {None: ["smoke(area_1)"]}), 0.0)
>>> reasoner.step(2000, ["temp(area_1, 50)"]).t   # (as if this one had failed half way)
2000
>>> reasoner = rollback.rewind(build)
>>> reasoner.last_t
1000
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from dotr.rules import InputError

from . import state_file
from .io import BackgroundChange
from .reasoner import Reasoner

#: a snapshot once the time points since the last one cost this many times its CPU time
RATIO = 50
#: ... or hold this many facts
MAX_KEPT = 1_000_000
_KIND = "rollback"


@dataclass
class Point:
    """A time point's input: its facts by stream (None: the default stream), its background change."""

    t: int
    facts: dict
    change: BackgroundChange | None = None

    def size(self) -> int:
        return sum(len(facts) for facts in self.facts.values()) + (
            len(self.change.add) + len(self.change.remove) if self.change else 0)


class Rollback:
    """A reasoner's state at a recent time point and the time points evaluated after it."""

    def __init__(self) -> None:
        self.ratio, self.max_kept = RATIO, MAX_KEPT
        self._state = b""
        self._program: tuple = ()  # the checked program and options of the reasoner whose state it is
        self._cost = 0.0  # CPU seconds the last snapshot took
        self._kept: list[Point] = []
        self._kept_size = 0  # their facts
        self._spent = 0.0  # CPU seconds they took

    def mark(self, reasoner: Reasoner) -> None:
        """Take ``reasoner``'s state now: rewinding comes back to it."""
        start = time.process_time()
        self._state = state_file.encode(_KIND, reasoner.state())
        self._program = (reasoner.checked, reasoner.options)
        self._cost = time.process_time() - start
        self._kept, self._kept_size, self._spent = [], 0, 0.0

    def evaluated(self, reasoner: Reasoner, point: Point, seconds: float) -> None:
        """``reasoner`` has evaluated ``point`` (in ``seconds`` of CPU time): keep it, or take a
        snapshot when one is due."""
        self._kept.append(point)
        self._kept_size += point.size()
        self._spent += seconds
        if self._spent >= self.ratio * self._cost or self._kept_size >= self.max_kept:
            self.mark(reasoner)

    def rewind(self, build: Callable[[], Reasoner], notice: Callable[[str], None] | None = None) -> Reasoner:
        """A reasoner built by ``build`` (from the run's files) at the state after the last time
        point :meth:`evaluated`; ``notice`` is its ``on_notice`` (what it has to say on the way
        back is said already)."""
        checked, options = self._program
        reasoner = Reasoner.resumed(state_file.decode(self._state, _KIND)[1], checked, build, **options)
        reasoner.on_notice = lambda text: None  # (it notes what it notices: not said twice after)
        for point in self._kept:
            for _ in reasoner.between(point.t):
                pass
            if point.change:
                try:
                    reasoner.change_background(point.change.add, point.change.remove)
                except InputError:  # (rejected when it came; the reasoner made no change)
                    pass
            reasoner.step(point.t, point.facts)
        reasoner.on_notice = notice
        return reasoner


__all__ = ["MAX_KEPT", "RATIO", "Point", "Rollback"]
