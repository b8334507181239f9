"""The budget of one time point, and cancellation: checked by the long loops of the engines.

A rule joining atoms that share no variable, or a query of nested OPTIONALs, derives a number
of facts that grows as a power of the input: a time point can grow without bound. The engines
charge what they derive to :data:`GUARD` between their rounds (the semi-naive rounds, in Python
and in the native loop; the SPARQL joins); inside a time point (between :meth:`Guard.begin`
and :meth:`Guard.end`) more than ``limit`` facts and answers raise :class:`BudgetExceeded`.
Loading the background is no time point: it is not bounded.

The same checks make a long evaluation cancellable: :meth:`Guard.cancel` gives an exception
(such as the command's signal handler's) that the next check raises. This module is not compiled
(``dotr.compiled``): Python runs a signal's handler only between the bytecodes it interprets,
and a check is where a long compiled loop gives it that moment.

>>> guard = Guard(limit=10)
>>> guard.begin(7)
>>> guard.charge(6)
>>> guard.charge(6)
Traceback (most recent call last):
...
dotr.rules.engine.guard.BudgetExceeded: time point 7 derived more than 10 facts and answers (the budget per time point; --max-derived raises it)
>>> guard.end()
>>> guard.charge(1_000)  # (outside a time point: no bound)
"""

from __future__ import annotations

import time

from dotr.rules.lang.errors import DotrError

#: the facts and answers a time point may make by default (some 500 MB of facts of five terms)
DEFAULT_MAX_DERIVED = 10_000_000


class BudgetExceeded(DotrError):
    """A time point derived more facts and answers than its budget (``t``: the time point)."""

    def __init__(self, t: int | None, limit: int):
        self.t, self.limit = t, limit
        where = f"time point {t}" if t is not None else "a time point"
        super().__init__(f"{where} derived more than {limit} facts and answers (the budget per time point; "
                         "--max-derived raises it)")


class Guard:
    """What a time point has derived so far, its bound, and a pending cancellation."""

    def __init__(self, limit: int | None = DEFAULT_MAX_DERIVED):
        self.limit = limit  # None or 0: no bound
        self.t: int | None = None
        self.used = 0
        self.active = False
        self._cancel: BaseException | None = None
        self._cancel_at = 0.0  # (time.monotonic(): not before)

    def begin(self, t: int | None) -> None:
        """A time point's evaluation starts: nothing used yet."""
        self.t, self.used, self.active = t, 0, True

    def end(self) -> None:
        self.active = False

    def cancel(self, error: BaseException | None, at: float = 0.0) -> None:
        """The next :meth:`charge` from ``at`` on (``time.monotonic()``) raises ``error``
        (None: no longer)."""
        self._cancel, self._cancel_at = error, at

    def charge(self, derived: int) -> None:
        """``derived`` more facts or answers: raise the pending cancellation, or
        :class:`BudgetExceeded` past the budget of a time point."""
        if self.active:
            self.used += derived
        self.check()

    def check(self, pending: int = 0) -> None:
        """Raise the pending cancellation, or :class:`BudgetExceeded` if what was charged and
        ``pending`` (made, not charged yet: a round under way) are past the budget."""
        if self._cancel is not None and time.monotonic() >= self._cancel_at:
            error, self._cancel = self._cancel, None
            raise error
        if self.active and self.limit and self.used + pending > self.limit:
            self.active = False
            raise BudgetExceeded(self.t, self.limit)


#: the process's guard (the command sets its limit from --max-derived)
GUARD = Guard()
