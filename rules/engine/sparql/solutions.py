"""SPARQL's operations on bags of solutions (dicts variable name -> term id; an unbound variable
is absent), by hashing on the variables both sides certainly bind.

Two solutions are *compatible* when they agree on every variable both bind. ``key`` names the
variables every solution of both sides binds (the planner knows them statically); the other
shared variables are compared pair by pair. With no key the pairs are tried one by one (a cross
product, which is what the query asks for then).

>>> left = [{"s": 1, "o": 2}, {"s": 3}]
>>> right = [{"s": 1, "v": 5}, {"s": 1, "v": 6}, {"s": 4, "v": 7}]
>>> join(left, right, ("s",))
[{'s': 1, 'o': 2, 'v': 5}, {'s': 1, 'o': 2, 'v': 6}]
>>> left_join(left, right, ("s",), None)
[{'s': 1, 'o': 2, 'v': 5}, {'s': 1, 'o': 2, 'v': 6}, {'s': 3}]
>>> minus(left, [{"s": 3, "x": 0}], ("s",))
[{'s': 1, 'o': 2}]
"""

from __future__ import annotations

from typing import Callable, Sequence

Solution = dict


def compatible(a: Solution, b: Solution) -> bool:
    """Whether ``a`` and ``b`` agree on the variables both bind."""
    if len(b) < len(a):
        a, b = b, a
    for k, v in a.items():
        w = b.get(k)
        if w is not None and w != v:
            return False
    return True


def _buckets(solutions: list[Solution], key: Sequence[str]) -> dict:
    out: dict = {}
    if len(key) == 1:
        (k,) = key
        for sol in solutions:
            out.setdefault(sol[k], []).append(sol)
    else:
        for sol in solutions:
            out.setdefault(tuple(sol[k] for k in key), []).append(sol)
    return out


def _key_of(key: Sequence[str]) -> Callable[[Solution], object]:
    if len(key) == 1:
        (k,) = key
        return lambda sol: sol[k]
    return lambda sol: tuple(sol[k] for k in key)


def join(left: list[Solution], right: list[Solution], key: Sequence[str]) -> list[Solution]:
    """The compatible merges of every pair (a bag: multiplicities multiply). The result lists
    ``left``'s solutions in their order, each with its partners in ``right``'s order."""
    if not left or not right:
        return []
    if not key:
        return [{**a, **b} for a in left for b in right if compatible(a, b)]
    buckets = _buckets(right, key)
    of = _key_of(key)
    out = []
    for a in left:
        for b in buckets.get(of(a), ()):
            if compatible(a, b):
                out.append({**a, **b})
    return out


def left_join(left: list[Solution], right: list[Solution], key: Sequence[str],
              test: Callable[[Solution], bool] | None) -> list[Solution]:
    """OPTIONAL: each left solution merged with its compatible right partners for which
    ``test`` (the optional group's FILTER) holds on the merge, or alone when there is none."""
    if not right:
        return list(left)
    buckets = _buckets(right, key) if key else None
    of = _key_of(key) if key else None
    out = []
    for a in left:
        matched = False
        for b in (buckets.get(of(a), ()) if key else right):
            if compatible(a, b):
                merged = {**a, **b}
                if test is None or test(merged):
                    out.append(merged)
                    matched = True
        if not matched:
            out.append(a)
    return out


def minus(left: list[Solution], right: list[Solution], key: Sequence[str]) -> list[Solution]:
    """MINUS: the left solutions with no compatible right solution that shares a variable."""
    if not right:
        return list(left)
    if key:
        buckets = _buckets(right, key)
        of = _key_of(key)
        return [a for a in left if not any(compatible(a, b) for b in buckets.get(of(a), ()))]
    return [a for a in left if not any(a.keys() & b.keys() and compatible(a, b) for b in right)]
