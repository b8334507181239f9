"""Rules with ``not`` in the LARS engine, maintained from one time point to the next.

A rule ``h(...) :- B1, ..., Bk, not N1, ..., not Nm`` is split in two. Its positive part becomes a
rule of its own, ``_lars:body:i(X1, ..., Xj) :- B1, ..., Bk`` over the variables that the head and
the negated atoms use, which the engine evaluates semi-naively with horizons like any positive
rule: a grounding stays in the store while its premises hold. A :class:`NegationView` then keeps,
for every grounding of the body relation, whether a negated atom blocks it, and for every head
how many unblocked groundings support it. At a time point it looks only at what changed since
the previous one: groundings that came or expired, negated facts that came or expired. The
heads it reports hold at that time point only (what ``not`` denies may come with the next one).

Before, such a rule was evaluated in full at every time point: its cost grew with the content of
its windows. Now it grows with what changes.

>>> from dotr.rules import parse
>>> from dotr.temporal.lars import LarsEngine
>>> engine = LarsEngine(parse("quiet(R) :- [3] <> room(R), not [3] <> smoke(R) .").rules)
>>> room, smoke = engine.relation("room", 1), engine.relation("smoke", 1)
>>> r1, r2 = (engine.dictionary.intern(ir.Name(n)) for n in ("r1", "r2"))
>>> [engine.format(out) for out in (engine.step(0, [(room, (r1,)), (room, (r2,))]),
...                                 engine.step(1, [(smoke, (r1,))]), engine.step(5))]
[['quiet(r1)', 'quiet(r2)'], ['quiet(r2)'], []]
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable

from dotr.rules import ir
from dotr.rules.engine.store import RelKey, Store

Term = tuple[bool, int]  # (True, position in the body tuple) or (False, constant term id)


def projector(terms: list[Term]) -> Callable[[tuple], tuple]:
    """A function from a body tuple to the tuple of ``terms``.

    >>> projector([(True, 2), (True, 0)])((7, 8, 9))
    (9, 7)
    >>> projector([(True, 1), (False, 42)])((7, 8))
    (8, 42)
    >>> projector([])((7,)), projector([(True, 0)])((7,))
    ((), (7,))
    """
    if all(is_var for is_var, _ in terms):
        positions = [p for _, p in terms]
        if len(positions) > 1:
            return itemgetter(*positions)
        if positions:
            p = positions[0]
            return lambda g: (g[p],)
        return lambda g: ()
    return lambda g: tuple(g[v] if is_var else v for is_var, v in terms)


class NegationView:
    """The heads of ``head :- body(X...), not N1, ..., not Nm`` at the current time point, kept
    up to date from the changes of the body relation and of the negated relations (see the module
    docstring). The engine tells it of every change (:meth:`body_added`, :meth:`body_expired`,
    :meth:`negated_changed`) and asks it for the heads at each time point (:meth:`update`)."""

    def __init__(self, body: RelKey, head: RelKey, head_terms: list[Term], negated: list[tuple[RelKey, list[Term]]]):
        self.body = body
        self.head = head
        self._head_of = projector(head_terms)
        self.negated = [rel for rel, _ in negated]
        self._keys = [projector(terms) for _, terms in negated]
        self._blocked: dict[tuple, bool] = {}  # body tuple -> whether a negated atom holds
        self._support: dict[tuple, int] = {}  # head -> unblocked body tuples (only > 0)
        self._by_key: list[dict[tuple, set[tuple]]] = [{} for _ in negated]  # negated fact -> body tuples
        self._added: list[tuple] = []
        self._expired: list[tuple] = []
        self._touched: list[set[tuple]] = [set() for _ in negated]
        self._t: int | None = None  # the time point of the last update
        #: whether no rule reads the head relation: the view then holds its heads itself (the
        #: engine reads :attr:`heads` and :attr:`changed`) instead of storing them again at every
        #: time point, so that a time point costs what changed, not what holds
        self.sink = False
        self.changed: set[tuple] = set()  # sink: heads whose support went to or from 0 since the engine looked

    @property
    def heads(self) -> dict[tuple, int]:
        """The heads holding at the last update (head -> its unblocked body tuples)."""
        return self._support

    # ------------------------------------------------------------------ what changed
    def body_added(self, facts) -> None:
        self._added.extend(facts)

    def body_expired(self, fact: tuple) -> None:
        self._expired.append(fact)

    def negated_changed(self, j: int, facts) -> None:
        self._touched[j].update(facts)

    def negated_expired(self, j: int, fact: tuple) -> None:
        self._touched[j].add(fact)

    # ------------------------------------------------------------------ evaluation
    def update(self, t: int, store: Store) -> list[tuple[RelKey, tuple, int]]:
        """The heads holding at ``t`` as ``(relation, head, t)``: all of them at the first call for
        ``t``, then those that hold since the previous call (the body may grow within a stratum)."""
        body = store.relation(self.body).facts
        negated = [store.relation(rel).facts for rel in self.negated]
        blocked, keys, head_of, support = self._blocked, self._keys, self._head_of, self._support
        new: list[tuple] = []
        if self._expired:
            for g in self._expired:
                if g in blocked and g not in body:
                    was = blocked.pop(g)
                    for j, key in enumerate(keys):
                        index = self._by_key[j]
                        k = key(g)
                        group = index[k]
                        group.discard(g)
                        if not group:
                            del index[k]
                    if not was:
                        self._lose(head_of(g))
            self._expired = []
        if self._added:
            for g in self._added:
                if g not in blocked and g in body:
                    is_blocked = False
                    for j, key in enumerate(keys):
                        k = key(g)
                        self._by_key[j].setdefault(k, set()).add(g)
                        if k in negated[j]:
                            is_blocked = True
                    blocked[g] = is_blocked
                    if not is_blocked:
                        self._gain(head_of(g), new)
            self._added = []
        for j, touched in enumerate(self._touched):
            if not touched:
                continue
            index = self._by_key[j]
            for k in touched:
                for g in index.get(k, ()):
                    is_blocked = any(key(g) in facts for key, facts in zip(keys, negated))
                    if is_blocked != blocked[g]:
                        blocked[g] = is_blocked
                        if is_blocked:
                            self._lose(head_of(g))
                        else:
                            self._gain(head_of(g), new)
            touched.clear()
        self._t, previous = t, self._t
        if self.sink:  # (the engine reads the heads from the view)
            self.changed.update(new)
            return []
        heads = new if previous == t else list(support)
        rel = self.head
        return [(rel, head, t) for head in heads]

    def _gain(self, head: tuple, new: list[tuple]) -> None:
        count = self._support.get(head, 0)
        self._support[head] = count + 1
        if not count:
            new.append(head)

    def _lose(self, head: tuple) -> None:
        count = self._support[head] - 1
        if count:
            self._support[head] = count
        else:
            del self._support[head]
            if self.sink:
                self.changed.add(head)

    def rebuild(self, store: Store) -> None:
        """Start again from the store's body and negated relations (after a restore)."""
        self._blocked.clear()
        self._support.clear()
        for index in self._by_key:
            index.clear()
        for touched in self._touched:
            touched.clear()
        self.changed.clear()
        self._expired = []
        self._added = list(store.relation(self.body).facts)
        self._t = None


def split_rule(index: int, head: ir.Atom, body: tuple, keep: tuple[ir.Atom, ...] = ()) -> tuple[ir.Atom, tuple, list]:
    """The body atom ``_lars:body:index(vars)`` of the rule ``head :- body``, its positive
    literals, and its negated atoms: the three parts :class:`NegationView` is built from. The
    body atom has the variables of the head, of the negated atoms and of the atoms ``keep``.

    >>> from dotr.rules import parse
    >>> rule = parse("h(X, 1) :- p(X, Y), q(Y, Z), Z > 2, not r(Y) .").rules[0]
    >>> atom, positive, negated = split_rule(0, rule.head, rule.body)
    >>> atom.pred.value, [v.name for v in atom.args], len(positive), [a.pred.value for a in negated]
    ('_lars:body:0', ['X', 'Y'], 3, ['r'])
    """
    names: list[str] = []
    negated = [lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and lit.negated]
    for atom in (head, *negated, *keep):
        for arg in atom.args:
            if isinstance(arg, ir.Var) and arg.name not in names:
                names.append(arg.name)
    positive = tuple(lit for lit in body if not (isinstance(lit, ir.AtomLiteral) and lit.negated))
    return ir.Atom(ir.Name(f"_lars:body:{index}"), tuple(ir.Var(n) for n in names)), positive, negated


def terms_of(atom: ir.Atom, body_atom: ir.Atom, intern: Callable) -> list[Term]:
    """``atom``'s arguments as positions in the body tuple (variables) or constant ids."""
    positions = {arg.name: i for i, arg in enumerate(body_atom.args) if isinstance(arg, ir.Var)}  # (all are)
    return [(True, positions[arg.name]) if isinstance(arg, ir.Var) else (False, intern(arg)) for arg in atom.args]
