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
    (:meth:`groundings`). One subclass per kind (:func:`tuple_window` picks it): what it counts
    per atom and what it holds."""

    def __init__(self, aux: _Aux, number: Callable[[int], int | None], readers: Iterable[Reader] = ()):
        self.rel, self.base, self.size = aux.rel, aux.base, int(aux.size)
        self._number = number  # (time point -> its term id: ``@T``'s facts end with it)
        self._window: deque[tuple[int, int, tuple]] = deque()  # (number, time, fact): the base's atoms in it
        self._before: set[tuple] = set()  # the background part (a box: the content) at the last take
        self.full = True  # compare the whole content with the store at the next :meth:`take`
        self._readers = list(readers)  # (:func:`reader`: the view body relations built on the window)

    def arrive(self, number: int, t: int, facts: Iterable[tuple[RelKey, tuple]], seen: int) -> None:
        """Stream atoms of time point ``t`` numbered from ``number`` arrived; ``seen`` atoms have
        arrived in all."""
        window, base, count = self._window, self.base, self._count
        for rel, fact in facts:
            if rel == base:
                window.append((number, t, fact))
                count(t, fact, 1)
            number += 1
        oldest = seen - self.size  # (atoms numbered up to this one have left)
        while window and window[0][0] <= oldest:
            _, when, fact = window.popleft()
            count(when, fact, -1)

    def _count(self, when: int, fact: tuple, step: int) -> None:
        """Count an atom of the base at ``when`` into the window (``step`` 1) or out of it (-1)."""
        raise NotImplementedError

    def _clear(self) -> None:
        """Forget every count."""
        raise NotImplementedError

    def rebuild(self, recent: Iterable[tuple[int, RelKey, tuple]], seen: int) -> None:
        """Start again from the engine's last stream atoms (``(time, rel, fact)``, the last one
        numbered ``seen``), after a restore."""
        recent = list(recent)
        self._clear()
        self._window.clear()
        number = seen - len(recent) + 1
        for t, group in groupby(recent, key=lambda atom: atom[0]):
            atoms = [(rel, fact) for _, rel, fact in group]
            self.arrive(number, t, atoms, number + len(atoms) - 1)
            number += len(atoms)
        self.arrive(number, 0, (), seen)
        self._rebuilt()
        self._before = set()
        self.full = True

    def _rebuilt(self) -> None:
        """After :meth:`rebuild`'s counting: nothing counted has changed since a take."""

    def take(self, background: list[tuple[tuple, int, int]], first: int, t: int,
             stored: dict) -> tuple[list[tuple], list[tuple]]:
        """The facts to add to the store and those to remove from it at ``t``, given the
        window's span (from ``first``), the background facts held in it (``(fact, from, to)``)
        and the window's facts in the store (``stored``)."""
        candidates, holds = self._candidates(background, first, t, stored)
        self.full = False
        add, remove = [], []
        for fact in candidates:
            if holds(fact):
                if fact not in stored:
                    add.append(fact)
            elif fact in stored:
                remove.append(fact)
        return add, remove

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

    def _candidates(self, background: list[tuple[tuple, int, int]], first: int, t: int,
                    stored: dict) -> tuple[set[tuple], Callable[[tuple], bool]]:
        """The facts that may have come or gone (all of them when :attr:`full`), and whether one
        holds now."""
        raise NotImplementedError


class _Counted(TupleWindow):
    """A diamond's or an ``@T``'s: per key (the fact; ``@T``: the fact and its time point's id),
    its atoms in the window."""

    _timed = False  # (whether the key ends with the time point's id)

    def __init__(self, aux: _Aux, number: Callable[[int], int | None], readers: Iterable[Reader] = ()):
        super().__init__(aux, number, readers)
        self._counts: dict[tuple, int] = {}
        self._changed: set[tuple] = set()  # keys whose count went to or from 0

    def _count(self, when: int, fact: tuple, step: int) -> None:
        key = (*fact, self._number(when)) if self._timed else fact
        counts = self._counts
        count = counts.get(key, 0) + step
        if count:
            counts[key] = count
        else:
            del counts[key]
        if count == (step > 0):  # (went from 0 to 1, or from 1 to 0)
            self._changed.add(key)

    def _clear(self) -> None:
        self._counts.clear()

    def _rebuilt(self) -> None:
        self._changed.clear()

    def _held(self, background: list[tuple[tuple, int, int]]) -> set[tuple]:
        """The keys of the background facts held in the window."""
        return {fact for fact, _, _ in background}

    def _candidates(self, background: list[tuple[tuple, int, int]], first: int, t: int,
                    stored: dict) -> tuple[set[tuple], Callable[[tuple], bool]]:
        held, counts = self._held(background), self._counts
        candidates = set(counts) | held | set(stored) if self.full else self._changed | (held ^ self._before)
        self._before, self._changed = held, set()

        def holds(fact: object) -> bool:
            return fact in counts or fact in held
        return candidates, holds


class TupleDiamond(_Counted):
    """``[n #] <> p``: the facts with an atom in the window."""


class TupleAt(_Counted):
    """``[n #] @T p``: a fact ``(X, T)`` per atom p(X) at T in the window."""

    _timed = True

    def _held(self, background: list[tuple[tuple, int, int]]) -> set[tuple]:
        number = self._number
        return {(*fact, number(u)) for fact, start, end in background for u in range(start, end + 1)}


class TupleBox(TupleWindow):
    """``[n #] [] p``: the facts that occur at every time point of the window's span, from its
    oldest atom's to now."""

    def __init__(self, aux: _Aux, number: Callable[[int], int | None], readers: Iterable[Reader] = ()):
        super().__init__(aux, number, readers)
        #: fact -> {time point: its atoms then}, and the facts by how many time points they occur at
        self._times: dict[tuple, dict[int, int]] = {}
        self._spread: dict[int, set[tuple]] = {}

    def _count(self, when: int, fact: tuple, step: int) -> None:
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

    def _clear(self) -> None:
        self._times.clear()
        self._spread.clear()

    def _candidates(self, background: list[tuple[tuple, int, int]], first: int, t: int,
                    stored: dict) -> tuple[set[tuple], Callable[[tuple], bool]]:
        content = self._box(background, first, t)
        candidates = content | set(stored) if self.full else content ^ self._before
        self._before = content
        return candidates, content.__contains__

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


def tuple_window(aux: _Aux, number: Callable[[int], int | None], readers: Iterable[Reader] = ()) -> TupleWindow:
    """The kept window of the tuple window atom ``aux`` (``number``: a time point's term id;
    ``readers``: :func:`reader` of each view body built on it)."""
    return {Kind.TUPLE_DIAMOND: TupleDiamond, Kind.TUPLE_BOX: TupleBox, Kind.TUPLE_AT: TupleAt}[aux.kind](
        aux, number, readers)


#: a view body relation that reads a tuple window (:func:`reader`): the relation, its positions
#: bound by the window atom, the window atom's argument at each, the window atom's (argument,
#: constant) pairs, its repeated variables' argument pairs
Reader = tuple[RelKey, tuple[int, ...], Callable[[tuple], object], list, list]


def reader(body_rel: RelKey, body_atom: ir.Atom, atom: ir.Atom, intern: Callable[[ir.Term], int]) -> Reader:
    """A view's body relation ``body_atom`` whose rule reads a tuple window as ``atom``."""
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
    return body_rel, tuple(positions), index_key(tuple(args)), consts, same
