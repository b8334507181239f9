"""Comparison and arithmetic on term values, shared by the stages so that they agree.

Division of two integers truncates toward zero (as Laser++ does: 3 / 2 = 1, -3 / 2 = -1);
any other division is a float division. ``mod`` takes the sign of the dividend (C++'s ``%``).
Comparing values of different kinds (a number with a string) is false, except ``!=``.

>>> arith("/", 7, 2), arith("/", -7, 2), arith("/", 7.0, 2), arith("mod", -7, 2)
(3, -3, 3.5, -1)
>>> compare("<", 1, 2.5), compare("<", 1, "a"), compare("!=", 1, "a")
(True, False, True)
"""

from __future__ import annotations

import math
import operator

from dotr.rules.lang.errors import RuleError

_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def compare(op: str, left: object, right: object) -> bool:
    try:
        return bool(_COMPARE[op](left, right))
    except TypeError:
        return op == "!="


def arith(op: str, left: object, right: object):
    """The value of ``left op right``; None when undefined (division by zero, non-numbers)."""
    if isinstance(left, bool) or isinstance(right, bool) or not isinstance(left, (int, float)) \
            or not isinstance(right, (int, float)):
        return None
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        return None
    if op == "/":
        if isinstance(left, int) and isinstance(right, int):
            q = abs(left) // abs(right)
            return q if (left >= 0) == (right >= 0) else -q
        return left / right
    if op == "mod":
        return int(math.fmod(left, right)) if isinstance(left, int) and isinstance(right, int) \
            else math.fmod(left, right)
    raise RuleError(f"unknown operator {op}")  # (the parsers make only the operators above)
