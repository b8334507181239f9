"""Background changes in the LARS engine (:meth:`BackgroundChanges.change_background`).

A background fact holds at the time points between its addition (or the start) and its removal,
and each time point is evaluated with the background as it is then; windows see every earlier
time point as it was. A removal at t cuts, at t - 1, what held beyond it on the removed fact's
account: the facts of every relation derived from the removed fact's (a diamond's auxiliary until
its base's last time point plus the window's length); at t the rules derive again what still
holds. What the background alone entails (``background``: not printed) is kept by a second
engine over the rules without ``not`` and ``@``, every window read as a plain atom.

This is a part of :class:`temporal.lars.LarsEngine`, in its own module: the engine's state it
uses is set up by the engine.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Iterable, cast

from networkx import descendants

from dotr.rules import ir
from dotr.rules.engine.store import INF, RelKey
from dotr.temporal.program import LarsProgram
from dotr.temporal.windows import _add

if TYPE_CHECKING:
    from dotr.rules.engine.inputs import FactReader
    from dotr.rules.engine.backends.dict_store import DictStore
    from dotr.rules.engine.terms import TermDictionary
    from dotr.temporal.lars import LarsEngine


def plain_rules(rules: Iterable[ir.Rule]) -> list[ir.Rule]:
    """The rules without ``not`` and ``@``, every window atom read as a plain atom: what they
    derive from the background is what the background alone entails (it holds throughout).

    >>> from dotr.rules import parse
    >>> [str(r.body[0].atom.pred.value) for r in plain_rules(parse("a(X) :- [3] [] p(X) .  b(X) :- p(X), not q(X) .").rules)]
    ['p']
    """
    out = []
    for rule in rules:
        if rule.at is not None or any(getattr(lit, "negated", False) or isinstance(lit, ir.TemporalLiteral) and
                                      isinstance(lit.op, ir.At) for lit in rule.body):
            continue
        out.append(ir.Rule(rule.head, tuple(ir.AtomLiteral(lit.atom) if isinstance(lit, ir.TemporalLiteral) else lit
                                            for lit in rule.body)))
    return out


class BackgroundChanges:
    """:meth:`change_background` and what it takes, for :class:`temporal.lars.LarsEngine`."""

    # the engine's state that this part reads and changes (set up by LarsEngine.__init__)
    program: LarsProgram
    dictionary: TermDictionary
    store: DictStore
    start: int
    intensional: set[RelKey]
    background: set[tuple[RelKey, tuple]]
    _read: FactReader
    _held: dict[RelKey, dict[tuple, list[list[int]]]]
    _given: set[tuple[RelKey, tuple]]
    _given_by: dict[RelKey, set[tuple]]
    _since: dict[tuple[RelKey, tuple], int]
    _gone: dict[tuple[RelKey, tuple], list[tuple[int, int]]]
    _was: dict[tuple[RelKey, tuple], bool]
    _plain: LarsEngine | None
    _plain_needed: set[RelKey]
    _rederive: set[RelKey]

    def change_background(self, add: Iterable = (), remove: Iterable = (), interned: bool = False) -> None:
        """From the next time point stepped on, the background lacks ``remove`` and has ``add``
        (removals first; facts in any forms of ``rules.engine.inputs``, checked as ``step``
        checks them; ``interned``: ``(relation, ids)`` pairs, unchecked). A background fact holds at the time points between its addition and
        its removal, and the windows see it where it held: ``[3] <> p`` over a ``p`` removed at t
        holds until t + 2, and ``[3] [] p`` over one added at t from t + 3 on. What was derived
        stays what it was; what holds from t on is derived again with the new background.

        >>> from dotr.rules import parse
        >>> from dotr.temporal.lars import LarsEngine
        >>> engine = LarsEngine(parse("watched(S) :- [2] <> ping(S), sensor(S) .  seen(S) :- [1] <> sensor(S) .").rules)
        >>> sensor, ping = engine.relation("sensor", 1), engine.relation("ping", 1)
        >>> s1 = engine.dictionary.intern(ir.Name("s1"))
        >>> engine.add_background([(sensor, (s1,))])
        >>> engine.format(engine.step(0, [(ping, (s1,))]))
        ['seen(s1)', 'watched(s1)']
        >>> engine.change_background(remove=[(sensor, (s1,))])
        >>> [engine.format(engine.step(t)) for t in (1, 2, 3)]
        [['seen(s1)'], [], []]
        """
        if not interned:
            add, remove = self._read.all(add), self._read.all(remove)
        given, was, by = self._given, self._was, self._given_by
        remove = [key for key in dict.fromkeys(remove) if key in given]
        for key in remove:
            was.setdefault(key, True)
            given.discard(key)
            by[key[0]].discard(key[1])
        add = [key for key in dict.fromkeys(add) if key not in given]
        for key in add:
            was.setdefault(key, False)
            given.add(key)
            by[key[0]].add(key[1])
        if not add and not remove:
            return
        # what the background alone entails: kept by an engine over the rules without ``not``
        # and ``@``, every window read as a plain atom, given the facts of the relations that a
        # rule able to fire reads (built again after a removal, or when more relations are needed)
        program, reads = self._plain_program
        needed = self._entailing(reads, {rel for rel, facts in by.items() if facts})
        plain = self._plain
        if plain is None or remove or not needed <= self._plain_needed:
            engine = cast("type[LarsEngine]", type(self))  # (this is a part of the engine)
            plain = self._plain = engine(program)
            plain.add_background([(rel, fact) for rel in needed for fact in by.get(rel, ())], interned=True)
            self._plain_needed = needed
        else:
            plain.add_background([f for f in add if f[0] in needed], interned=True)
        relations = plain.store.relations
        self.background = {(rel, fact) for rel in self.intensional if rel in relations
                           for fact, expiry in relations[rel].facts.items() if expiry >= INF}

    @property
    def given(self) -> set[tuple[RelKey, tuple]]:
        """The background facts as they are from the next time point stepped on (the engine's
        own set: read it, do not change it)."""
        return self._given

    @cached_property
    def _plain_program(self) -> tuple[LarsProgram, list[tuple[RelKey, set[RelKey]]] | None]:
        """:func:`plain_rules` of the engine's rules compiled (once: the engine over them is built
        again after every removal), and what each derives and reads (None: a rule with a
        variable predicate reads every relation)."""
        d, rules, reads = self.dictionary, plain_rules(self.program.rules), []
        program = LarsProgram(rules, d)
        for rule in rules:
            body = [lit.atom for lit in rule.body if isinstance(lit, ir.AtomLiteral)]
            if any(isinstance(atom.pred, ir.Var) for atom in body):
                return program, None
            reads.append(((d.intern(rule.head.pred), len(rule.head.args)),
                          {(d.intern(atom.pred), len(atom.args)) for atom in body}))
        return program, reads

    def _entailing(self, reads: list[tuple[RelKey, set[RelKey]]] | None, have: set[RelKey]) -> set[RelKey]:
        """The relations whose background facts matter to what the plain rules (``reads``: what
        each derives and reads) derive from the background: those the rules that can fire read
        (a rule reading a stream relation never fires on the background alone), and the derived
        ones."""
        needed = set(self.intensional)
        if reads is None:
            return needed | {rel for rel in self.store.relations} | have  # (reads every triple)
        have, fired = set(have), set()
        while True:
            new = [i for i, (head, body) in enumerate(reads) if i not in fired and body <= have]
            if not new:
                break
            for i in new:
                fired.add(i)
                have.add(reads[i][0])
                needed |= reads[i][1]
        return needed

    def _change(self, t: int) -> list[tuple[RelKey, tuple]]:
        """Make the changes waiting for ``t``, before the store is advanced to it: facts that
        held through t - 1 on a removed fact's account are cut there (derived again at t where
        they still hold); returns the facts added."""
        given = self._given
        removed = [key for key, was in self._was.items() if was and key not in given]
        added = [key for key, was in self._was.items() if not was and key in given]
        self._was = {}
        for key in removed:  # (held in the timeline, which starts at the first time point stepped)
            since = self._since.pop(key, self.start)
            if since <= t - 1:
                self._gone[key].append((since, t - 1))
        for key in added:
            self._since[key] = t
        if removed:
            self._rederive = self._cut(t - 1, removed)
        return sorted(added)

    def _cut(self, last: int, removed: list[tuple[RelKey, tuple]]) -> set[RelKey]:
        """What held beyond ``last`` on the account of the background facts ``removed`` holds
        until ``last`` only (it is derived again at the next time point, where it still holds):
        the removed facts, and the facts of every relation derived from theirs, except the
        ``@`` windows' (they record the past) and the background's; a diamond's auxiliary holds
        until its base's last time point plus its length. Returns the relations cut."""
        store, keep = self.store, self._given
        affected = {rel for rel, _ in removed}
        program = self.program
        if program.reads is None:  # (a variable predicate: any relation may depend on any other)
            affected |= set(store.relations)
        for rel in list(affected):
            if rel in program.graph:
                affected |= descendants(program.graph, rel)
        diamonds = {aux.rel: aux for aux in program.aux.values() if not aux.window.per_time and aux.rel in affected}
        past = {aux.rel for aux in program.aux.values() if aux.window.with_time}

        def cut(rel: RelKey, fact: tuple, cap: int) -> None:
            store.relations[rel].facts[fact] = cap
            store.buckets[cap].append((rel, fact))

        for rel, fact in removed:
            expiry = store.expiry(rel, fact)
            if expiry is not None and expiry > last:
                cut(rel, fact, last)
        for rel in affected & program.derived:
            if rel in past or rel in diamonds or rel not in store.relations:
                continue
            for fact, expiry in list(store.relations[rel].facts.items()):
                if expiry > last and (rel, fact) not in keep:
                    cut(rel, fact, last)
        for rel, aux in diamonds.items():  # until the base's last time point (now cut) + the length
            held = _add(last, aux.size) if last >= self.start else last
            base = store.relations[aux.base].facts if aux.base in store.relations else {}
            for fact, expiry in list(store.relations[rel].facts.items()) if rel in store.relations else ():
                cap = held if base.get(fact, last) <= last else _add(base[fact], aux.size)
                if expiry > cap:
                    cut(rel, fact, cap)
        for rel in affected & set(self._held):
            runs = self._held[rel]
            for fact in list(runs):
                runs[fact] = [[start, min(end, last)] for start, end in runs[fact] if start <= last]
                if not runs[fact]:
                    del runs[fact]
        return affected
