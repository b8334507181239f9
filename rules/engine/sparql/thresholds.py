"""Queries that differ only in a threshold: ``FILTER(?v >= 3)``, ``FILTER(?v >= 7)``, ... over the
same atoms. Inside ``conjunction.shared`` such conjunctions share their atoms' matches; the
matches are then sorted once by the compared variable's value, and each conjunction takes the
slice its threshold passes (a binary search) instead of testing every match.

A comparison by an order (``<``, ``<=``, ``>``, ``>=``) of an atom variable with a number keeps
the matches ``rules.engine.builtins.compare`` keeps: numbers (and booleans) are searched in the
sorted values, other values (strings, dates, NaN, decimals) are compared one by one, and the
matches chosen keep the order they were found in.

>>> from dotr.rules import ir
>>> t = Threshold.of((ir.Comparison("<", ir.Num(2), ir.Var("v")),), ("s", "v"), ("s", "v"))
>>> t.op, t.position, t.bound
('>', 1, 2)
>>> matches = [("a", 1), ("b", 3), ("c", "x"), ("d", 2), ("e", 5)]
>>> t.select(Sorted(matches, 1, lambda v: v))
[('b', 3), ('e', 5)]
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from operator import itemgetter
from typing import Callable, Sequence

from dotr.rules.lang import ir
from dotr.rules.engine.builtins import compare

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class Sorted:
    """Matches sorted by the value at ``position`` (``value``: a term id's value): the numbers'
    keys and the matches' numbers in that order, and the matches of other values apart."""

    __slots__ = ("keys", "order", "others", "matches", "_heads")

    def __init__(self, matches: Sequence[tuple], position: int, value: Callable[[int], object]):
        self._heads: dict[tuple[int, ...], list[tuple]] = {}
        numbers, self.others = [], []
        for n, match in enumerate(matches):
            v = value(match[position])
            if type(v) in (int, float, bool) and v == v:  # (NaN is no number here: it sorts nowhere)
                numbers.append((v, n))
            else:
                self.others.append((v, n))
        numbers.sort()
        self.keys = [v for v, _ in numbers]
        self.order = [n for _, n in numbers]
        self.matches = matches

    def heads(self, positions: tuple[int, ...] | None) -> Sequence[tuple]:
        """The matches as tuples of their values at ``positions`` (None: as they are), made once
        for the thresholds of every conjunction with that head."""
        if positions is None:
            return self.matches
        rows = self._heads.get(positions)
        if rows is None:
            rows = self._heads[positions] = list(map(_projection(positions), self.matches))
        return rows


def _projection(positions: tuple[int, ...]) -> Callable[[tuple], tuple]:
    """A match's values at ``positions``, as a tuple."""
    if len(positions) == 1:
        (i,) = positions
        return lambda match: (match[i],)
    return itemgetter(*positions)


class Threshold:
    """A conjunction's only extra literal when it is ``?x op number`` (or ``number op ?x``) with
    ``op`` an order and ``?x`` bound by the atoms, and its head variables are atom variables:
    ``position`` is ``?x``'s in a match (over ``atom_vars``), ``head`` the head's positions."""

    __slots__ = ("position", "op", "bound", "head", "_row")

    def __init__(self, position: int, op: str, bound: int | float, head: tuple[int, ...] | None):
        self.position, self.op, self.bound, self.head = position, op, bound, head
        self._row = None if head is None else _projection(head)

    @classmethod
    def of(cls, extra: tuple, atom_vars: tuple[str, ...], head: tuple[str, ...]) -> Threshold | None:
        if len(extra) != 1 or not isinstance(extra[0], ir.Comparison) or not set(head) <= set(atom_vars):
            return None
        c = extra[0]
        var, number, op = c.left, c.right, c.op
        if isinstance(var, ir.Num):
            var, number, op = number, var, _FLIPPED.get(op)
        if op not in _FLIPPED or not isinstance(var, ir.Var) or not isinstance(number, ir.Num) \
                or var.name not in atom_vars or type(number.value) not in (int, float) or math.isnan(number.value):
            return None
        positions = tuple(atom_vars.index(v) for v in head)
        return cls(atom_vars.index(var.name), op, number.value,
                   None if positions == tuple(range(len(atom_vars))) else positions)

    def select(self, matches: Sorted) -> list[tuple]:
        """The matches that pass, in the order they were found, as head tuples."""
        op, bound, keys = self.op, self.bound, matches.keys
        if op in (">", ">="):
            chosen = matches.order[(bisect_left if op == ">=" else bisect_right)(keys, bound):]
        else:
            chosen = matches.order[:(bisect_right if op == "<=" else bisect_left)(keys, bound)]
        if matches.others:
            chosen = chosen + [n for v, n in matches.others if compare(op, v, bound)]
        if not chosen:
            return []
        rows = matches.heads(self.head)
        if len(chosen) == 1:
            return [rows[chosen[0]]]
        return [rows[n] for n in sorted(chosen)]

    def select_one(self, match: tuple, value: Callable[[int], object]) -> list[tuple]:
        """:meth:`select` of one match, with no sorting: one comparison (a stream's one reading at a
        time point).

        >>> t = Threshold(1, ">=", 3, (0,))
        >>> t.select_one(("b", 3), lambda v: v), t.select_one(("c", "x"), lambda v: v)
        ([('b',)], [])
        """
        if not compare(self.op, value(match[self.position]), self.bound):
            return []
        return [match if self._row is None else self._row(match)]
