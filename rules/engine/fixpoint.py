"""The semi-naive fixpoint: store the new facts, run the join plans seeded at each relation that
changed on its changes, store what they derive, and repeat until nothing changes.

One loop for every engine that maintains a closure fact by fact: the materialiser (with its
transitive-step policy, below) and the LARS engine (whose ``apply`` also places ``@`` heads and
window auxiliaries). The native back end runs the same loop in C (``native_plans``), and the
columnar back end closes a whole batch set-at-a-time (``columnar``); both are checked against it
by the differential tests.

A fact is ``(relation, args)`` and an item ``(relation, args, expiry)``; ``apply`` stores items and
returns the delta, relation -> {args: new expiry} for what was added or whose expiry rose. A plan
is ``plan(delta items, store, emit, PRED=None)`` (``rules.engine.plan``).

Transitive steps. A plan marked ``step`` (a rule moving one term of an atom one step along a
transitively closed relation, ``rules.lang.analysis.transitive_steps``) is not fed back what it
concluded itself in the previous round: those conclusions would only derive again what their
premise derived already, with the same expiry (``ontology.materialise`` proves it).

>>> from dotr.rules.engine.backends.dict_store import DictStore
>>> edge, path = (1, 2), (2, 2)
>>> def base(delta, store, emit, PRED=None):  # path(X, Y) :- edge(X, Y)
...     for args, expiry in delta:
...         emit((path, args, expiry))
>>> def extend(delta, store, emit, PRED=None):  # path(X, Z) :- path(X, Y), edge(Y, Z)
...     by_source = store.index(edge, (0,))
...     for (x, y), expiry in delta:
...         for _, z in by_source.get(y, ()):
...             emit((path, (x, z), min(expiry, store.expiry(edge, (y, z)))))
>>> loop = SemiNaive()
>>> loop.add(edge, base)
>>> loop.add(path, extend)
>>> store = DictStore()
>>> loop.run(store, [(edge, (10, 11), 5), (edge, (11, 12), 7)])
5
>>> sorted((args, store.expiry(path, args)) for args in store.relation(path).facts)
[((10, 11), 5), ((10, 12), 5), ((11, 12), 7)]
"""

from __future__ import annotations

from collections import defaultdict
from itertools import compress
from operator import itemgetter
from typing import Callable

from dotr.rules.engine.guard import GUARD
from dotr.rules.engine.store import FactItem, RelKey, Store

Delta = dict[RelKey, dict[tuple, int]]
Apply = Callable[[list[FactItem]], Delta]


class SemiNaive:
    """The plans seeded at each relation, and the loop that runs them to the fixpoint."""

    def __init__(self) -> None:
        self._seeds: dict[RelKey, list] = defaultdict(list)
        #: plans seeded at an atom with a constant argument, by relation: (position, the
        #: constants there, the plans): fed only the facts with one of the constants there
        self._filtered: dict[RelKey, list[tuple[int, set, list]]] = defaultdict(list)
        self._triple_seeds: list = []  # plans seeded at a variable-predicate atom
        self.steps: set = set()  # the transitive steps' plans
        self._calls: dict[RelKey, tuple[list, list]] = {}  # relation -> (plans, steps), each with its PRED

    def add(self, rel: RelKey | None, plan, constant: tuple[int, int] | None = None, step: bool = False) -> None:
        """Seed ``plan`` at ``rel`` (None: at every binary relation, the plan taking the
        predicate as PRED). ``constant`` = (position, term id): the atom has that constant there,
        and the plan is fed only the facts with it. ``step``: a transitive step."""
        self._calls.clear()
        if step:
            self.steps.add(plan)
        if rel is None:
            self._triple_seeds.append(plan)
        elif constant is None or step:
            self._seeds[rel].append(plan)
        else:
            position, term = constant
            group = next((g for g in self._filtered[rel] if g[0] == position), None)
            if group is None:
                group = (position, set(), [])
                self._filtered[rel].append(group)
            group[1].add(term)
            group[2].append(plan)

    def seeded(self, rel: RelKey) -> bool:
        """Whether some plan reads ``rel``."""
        return bool(self._seeds.get(rel) or self._filtered.get(rel) or self._triple_seeds and rel[1] == 2)

    def run(self, store: Store, items: list[FactItem], apply: Apply | None = None) -> int:
        """Store ``items`` (through ``apply``, by default ``store.apply``) and run the rounds until
        nothing changes; returns how many facts were added or raised."""
        apply = apply or store.apply
        if not self.steps:  # (the plain loop: no part of a round is kept apart)
            delta, count = apply(items), 0
            while delta:
                pending: list[FactItem] = []
                count += self._plain_round(store, delta, pending.append)
                GUARD.charge(len(pending))  # (the budget of the time point, a cancellation: between rounds)
                delta = apply(pending)
            return count
        parts = [(None, apply(items))]  # (the step plan whose conclusions made it, or None; delta)
        count = 0
        while True:
            if len(parts) == 1:
                delta = {rel: changed for rel, changed in parts[0][1].items() if changed}
            else:
                delta = {rel: changed for rel in dict.fromkeys(r for _, d in parts for r in d)
                         if (changed := _merged(parts, rel))}
            if not delta:
                return count
            count += sum(len(v) for v in delta.values())
            pending: list[FactItem] = []
            own: dict = {}
            self._round(store, delta, pending.append, own, parts)
            GUARD.charge(len(pending) + sum(len(mine) for mine in own.values()))
            parts = [(plan, apply(mine)) for plan, mine in own.items() if mine]
            parts.append((None, apply(pending)))

    def _plain_round(self, store: Store, delta: Delta, emit) -> int:
        """:meth:`_round` without transitive steps; returns how many changes it was fed."""
        fed = 0
        calls_of, filtered = self._calls, self._filtered
        for rel, changed in delta.items():
            if not changed:
                continue
            fed += len(changed)
            calls = calls_of.get(rel)
            if calls is None:
                calls = calls_of[rel] = ([(plan, None) for plan in self._seeds.get(rel, ())] +
                                         [(plan, rel[0]) for plan in self._triple_seeds if store.is_triple(rel)], [])
            groups = filtered.get(rel)
            if not calls[0] and not groups:
                continue
            items = list(changed.items())
            for plan, pred in calls[0]:
                plan(items, store, emit, pred)
            if groups:
                for position, constants, plans in groups:
                    chosen = list(compress(items, map(constants.__contains__, map(itemgetter(position), changed))))
                    if chosen:
                        for plan in plans:
                            plan(chosen, store, emit)
        return fed

    def one_round(self, store: Store, delta: Delta, emit: Callable[[FactItem], None]) -> None:
        """Run every plan seeded at a relation of ``delta`` on its changes once, emitting what
        they derive (the transitive steps too: DRed's overdeletion follows every derivation)."""
        self._round(store, delta, emit, None, ())

    def _round(self, store: Store, delta: Delta, emit, own: dict | None, parts: list) -> None:
        """Run every plan seeded at a relation of ``delta`` on its changes. With ``own``, a
        transitive step is not fed what it concluded itself in the previous round (``parts``),
        and its conclusions go to ``own[plan]``."""
        for rel, changed in delta.items():
            items = list(changed.items())
            calls = self._calls.get(rel)
            if calls is None:
                calls = [(plan, None) for plan in self._seeds.get(rel, ())] + \
                    [(plan, rel[0]) for plan in self._triple_seeds if store.is_triple(rel)]
                calls = self._calls[rel] = ([c for c in calls if c[0] not in self.steps],
                                            [c for c in calls if c[0] in self.steps])
            plain, steps = calls
            for plan, pred in plain:
                plan(items, store, emit, pred)
            for plan, pred in steps:
                if own is None:
                    plan(items, store, emit, pred)
                elif fed := (_merged(parts, rel, plan) if len(parts) > 1 else changed):  # not its own conclusions
                    mine = own.get(plan)
                    if mine is None:
                        mine = own[plan] = []
                    plan(items if fed is changed else list(fed.items()), store, mine.append, pred)
            for position, constants, plans in self._filtered.get(rel, ()):
                chosen = list(compress(items, map(constants.__contains__, map(itemgetter(position), changed))))
                if chosen:
                    for plan in plans:
                        plan(chosen, store, emit)


def _merged(parts: list[tuple[object, dict]], rel: RelKey, skip: object = None) -> dict:
    """The delta of ``rel`` over the parts of a round (applied in this order, so a later value is
    larger), leaving out the part that ``skip`` made."""
    found = [d[rel] for owner, d in parts if (owner is None or owner is not skip) and d.get(rel)]
    if len(found) == 1:
        return found[0]
    merged = {}
    for changed in found:
        merged.update(changed)
    return merged
