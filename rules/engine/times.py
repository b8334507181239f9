"""Time points as a program gives them, checked: an integer (Python's or numpy's), never a bool
or a float. Part of the checked boundary (``rules.engine.inputs``), apart so that the DataFrame
reader (``rules.engine.frames``) checks its ``t`` column the same way.

>>> check_time(3), check_until(3, None), check_until(3, 5)
(3, 3, 5)
>>> check_time(True)
Traceback (most recent call last):
  ...
dotr.rules.lang.errors.TimeError: time point True: not an integer
"""

from __future__ import annotations

import numbers

from dotr.rules.lang.errors import TimeError


def check_time(t: object, what: str = "time point") -> int:
    """``t`` as an int: an integer (Python's or numpy's; not a bool, not a float), else
    :class:`TimeError` naming ``what``."""
    if type(t) is int:
        return t
    if isinstance(t, numbers.Integral) and not isinstance(t, bool):
        return int(t)
    raise TimeError(f"{what} {t!r}: not an integer")


def check_until(t: int, until: object) -> int:
    """The time until which facts given at ``t`` hold (``until``, default ``t``), checked."""
    if until is None:
        return t
    until = check_time(until, "until")
    if until < t:
        raise TimeError(f"until {until} is before the time point {t}: the facts given at {t} would never hold")
    return until


__all__ = ["check_time", "check_until"]
