"""Tuple windows ``[n #] <> p(X)``, ``[n #] [] p(X)``, ``[n #] @T p(X)`` in the LARS engine,
kept from one time point to the next.

A tuple window moves with every arriving atom, so nothing in it has a horizon in time: ``p(a)``
stays in ``[n #] <> p`` until n more atoms have arrived, whenever that is. Drawn again at every
time point, the window cost what it holds (every atom in it, and everything derived from them).
Kept instead, it costs what changes:

* :class:`TupleWindow` counts the window's atoms of ``p`` as they arrive and leave: per fact (a
  diamond), per fact and time point (``@T``: one fact ``(X, T)`` each), or per fact the time points
  it occurs at (a box holds the facts that occur at every time point of the window's span, from
  its oldest atom's to now). Background facts hold at the time points of the span since they were
  added (or until they were removed by a change).
* The engine stores the window's facts without a horizon (they hold until they leave) and a rule
  that reads one is maintained like a rule with ``not`` (``temporal.negation``): its body is a
  relation of its own whose facts keep the window's arguments, so a fact that leaves takes
  exactly the groundings built on it with it (:meth:`TupleWindow.groundings`), and the view
  counts each head's support.

The engine falls back to drawing the window at every time point when a rule reads it other than
through a view (in a recursion, or in naive mode).

>>> from dotr.rules import parse
>>> from dotr.temporal.lars import LarsEngine
>>> engine = LarsEngine(parse("seen(X) :- [2 #] <> ping(X) .").rules)
>>> ping = engine.relation("ping", 1)
>>> a, b = (engine.dictionary.intern(ir.Name(n)) for n in "ab")
>>> [engine.format(engine.step(t, [(ping, (x,))])) for t, x in enumerate((a, b, b, a))]
[['seen(a)'], ['seen(a)', 'seen(b)'], ['seen(b)'], ['seen(a)', 'seen(b)']]
"""

from __future__ import annotations

from collections import deque
from itertools import groupby
from typing import Callable, Iterable, Iterator

from dotr.rules import ir
from dotr.rules.engine.store import RelKey, Store, index_key
from dotr.temporal.windows import Kind, _Aux


class TupleWindow:
    """The facts of one tuple window from the stream atoms as they arrive and leave
    (:meth:`arrive`), its changes (:meth:`take`), and the body relations of the rules reading it
    (:meth:`read_by`, :meth:`groundings`)."""

    def __init__(self, aux: _Aux, number: Callable[[int], int | None]):
        self.rel, self.base, self.kind, self.size = aux.rel, aux.base, aux.kind, int(aux.size)
        self._number = number  # (time point -> its term id: ``@T``'s facts end with it)
        #: diamond: fact -> its atoms in the window; ``@T``: (*fact, time id) -> the same
        self._counts: dict[tuple, int] = {}
        #: box: fact -> {time point: its atoms then}, and the facts by how many time points they occur at
        self._times: dict[tuple, dict[int, int]] = {}
        self._spread: dict[int, set[tuple]] = {}
        self._window: deque[tuple[int, int, tuple]] = deque()  # (number, time, fact): the base's atoms in it
        self._changed: set[tuple] = set()  # diamond, ``@T``: facts whose count went to or from 0
        self._before: set[tuple] = set()  # the background part (a box: the content) at the last take
        self.full = True  # compare the whole content with the store at the next :meth:`take`
        #: (body relation, its positions bound by the window atom, the window atom's argument at
        #: each, the window atom's (argument, constant) pairs, its repeated variables' argument pairs)
        self._readers: list[tuple[RelKey, tuple[int, ...], Callable[[tuple], object], list, list]] = []

    def read_by(self, body_rel: RelKey, body_atom: ir.Atom, atom: ir.Atom, intern) -> None:
        """A view's body relation ``body_atom`` whose rule reads the window as ``atom``."""
        where = {arg.name: i for i, arg in enumerate(body_atom.args) if isinstance(arg, ir.Var)}  # (all are)
        positions, args, consts, same = [], [], [], []
        first: dict[str, int] = {}
        for k, arg in enumerate(atom.args):
            if isinstance(arg, ir.Var):
                if arg.name in first:
                    same.append((first[arg.name], k))
                else:
                    first[arg.name] = k
                    positions.append(where[arg.name])
                    args.append(k)
            else:
                consts.append((k, intern(arg)))
        self._readers.append((body_rel, tuple(positions), index_key(tuple(args)), consts, same))

    def arrive(self, number: int, t: int, facts: Iterable[tuple[RelKey, tuple]], seen: int) -> None:
        """Stream atoms of time point ``t`` numbered from ``number`` arrived; ``seen`` atoms have
        arrived in all."""
        window, base = self._window, self.base
        for rel, fact in facts:
            if rel == base:
                window.append((number, t, fact))
                self._count(t, fact, 1)
            number += 1
        oldest = seen - self.size  # (atoms numbered up to this one have left)
        while window and window[0][0] <= oldest:
            _, when, fact = window.popleft()
            self._count(when, fact, -1)

    def _count(self, when: int, fact: tuple, step: int) -> None:
        if self.kind == Kind.TUPLE_BOX:
            times = self._times.setdefault(fact, {})
            before = len(times)
            count = times.get(when, 0) + step
            if count:
                times[when] = count
            else:
                del times[when]
            after = len(times)
            if after != before:
                if before:
                    self._spread[before].discard(fact)
                if after:
                    self._spread.setdefault(after, set()).add(fact)
                else:
                    del self._times[fact]
            return
        key = fact if self.kind == Kind.TUPLE_DIAMOND else (*fact, self._number(when))
        counts = self._counts
        count = counts.get(key, 0) + step
        if count:
            counts[key] = count
        else:
            del counts[key]
        if count == (step > 0):  # (went from 0 to 1, or from 1 to 0)
            self._changed.add(key)

    def rebuild(self, recent: Iterable[tuple[int, RelKey, tuple]], seen: int) -> None:
        """Start again from the engine's last stream atoms (``(time, rel, fact)``, the last one
        numbered ``seen``), after a restore."""
        recent = list(recent)
        self._counts.clear()
        self._times.clear()
        self._spread.clear()
        self._window.clear()
        number = seen - len(recent) + 1
        for t, group in groupby(recent, key=lambda atom: atom[0]):
            atoms = [(rel, fact) for _, rel, fact in group]
            self.arrive(number, t, atoms, number + len(atoms) - 1)
            number += len(atoms)
        self.arrive(number, 0, (), seen)
        self._changed.clear()
        self._before = set()
        self.full = True

    def take(self, background: list[tuple[tuple, int, int]], first: int, t: int,
             stored: dict) -> tuple[list[tuple], list[tuple]]:
        """The facts to add to the store and those to remove from it at ``t``, given the
        window's span (from ``first``), the background facts held in it (``(fact, from, to)``)
        and the window's facts in the store (``stored``)."""
        if self.kind == Kind.TUPLE_BOX:
            content = self._box(background, first, t)
            candidates = content | set(stored) if self.full else content ^ self._before
            self._before, holds = content, content.__contains__
        else:
            if self.kind == Kind.TUPLE_DIAMOND:
                held = {fact for fact, _, _ in background}
            else:
                number = self._number
                held = {(*fact, number(u)) for fact, start, end in background for u in range(start, end + 1)}
            counts = self._counts
            candidates = set(counts) | held | set(stored) if self.full else self._changed | (held ^ self._before)
            self._before, self._changed = held, set()

            def holds(fact: object) -> bool:
                return fact in counts or fact in held
        self.full = False
        add, remove = [], []
        for fact in candidates:
            if holds(fact):
                if fact not in stored:
                    add.append(fact)
            elif fact in stored:
                remove.append(fact)
        return add, remove

    def _box(self, background: list[tuple[tuple, int, int]], first: int, t: int) -> set[tuple]:
        """The facts that held at every time point from ``first`` to ``t``."""
        span = t - first + 1
        ranges: dict[tuple, list[tuple[int, int]]] = {}
        for fact, start, end in background:
            ranges.setdefault(fact, []).append((start, end))
        content = self._spread.get(span, set()) - ranges.keys()
        for fact, runs in ranges.items():
            held = set(self._times.get(fact, ()))
            for start, end in runs:
                if start <= first and end >= t:
                    content.add(fact)
                    break
                held.update(range(start, end + 1))
            else:
                if all(u in held for u in range(first, t + 1)):
                    content.add(fact)
        return content

    def groundings(self, store: Store, facts: list[tuple]) -> Iterator[tuple[RelKey, tuple]]:
        """The readers' body facts built on ``facts`` (each keeps the window atom's arguments, so
        every derivation of one used that window fact)."""
        for body_rel, positions, key, consts, same in self._readers:
            index = store.index(body_rel, positions)
            for fact in facts:
                if any(fact[k] != c for k, c in consts) or any(fact[i] != fact[j] for i, j in same):
                    continue
                for g in list(index.get(key(fact), ())):
                    yield body_rel, g
