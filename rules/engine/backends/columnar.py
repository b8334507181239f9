"""Set-at-a-time (columnar) semi-naive evaluation of positive Datalog rules with numpy, for large
batches of facts: background loading (nothing expires), and large stream batches with expiry tags.

The per-fact join plans (rules/engine/plan.py) cost about a microsecond per derivation; a background of
100,000 triples makes millions of derivations under RDFS. Here a relation is a sorted array of
packed int64 keys (fact ``(a, b)`` is ``a * N + b``, N above every term id), a rule seeded with a
delta joins whole columns (sort the smaller side, binary-search the larger, expand the matches),
and the new facts of a round are found by one sort and one binary search against the relation.
Deltas of small relations (the schema) are processed first, so that the schema is closed before
the large relations flow through the rules. The result equals the per-fact engine's (tests in
tests/ontology/test_columnar.py compare them on random programs and graphs).

With expiry tags (``closure_tagged``) a relation also has an array of expiries aligned with its
keys; a join row's expiry is the minimum of its premises'; a candidate fact keeps the largest
expiry it was derived with, and is in the next delta when it is new or its expiry rose (a rise is
re-propagated, as in the per-fact engine): the max-min fixpoint, each fact starting absent.

The joins follow the rules' :class:`~rules.engine.planning.JoinPlan` s. Supported: positive atoms
(constant or variable predicates: a variable predicate ranges over the triple relations, or over
the relation its binding names), ``=`` and ``!=`` between terms, ``X = term`` assignments.
Anything else (value comparisons, arithmetic, negation) raises
:class:`~rules.engine.planning.Unsupported` when the rules are prepared, and the caller keeps the
per-fact path.

>>> from dotr.rules import parse
>>> from dotr.rules.engine.terms import TermDictionary
>>> from dotr.rules.engine.backends.dict_store import DictStore
>>> from dotr.rules.lang.ir import Name
>>> d = TermDictionary()
>>> program = ColumnarRules(parse("path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).").rules, d)
>>> edge, path = (d.intern(Name("edge")), 2), (d.intern(Name("path")), 2)
>>> a, b, c = (d.intern(Name(n)) for n in "abc")
>>> new = program.closure(DictStore(), {edge: [(a, b), (b, c)]})
>>> sorted(new[path]) == [(a, b), (a, c), (b, c)] and edge not in new
True
>>> (facts, expiries), raised = program.closure_tagged(DictStore(), {edge: [(a, b), (b, c)]}, {edge: [5, 9]})[path]
>>> sorted(zip(facts, expiries.tolist())) == [((a, b), 5), ((a, c), 5), ((b, c), 9)]
True
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterable

import numpy as np

from dotr.rules import ir
from dotr.rules.engine.planning import (K_VAR, P_CONST, Assign, HeadCheck, JoinPlan, TermTest, Unsupported,
                                   plan_rule)
from dotr.rules.engine.store import INF, RelKey, Store
from dotr.rules.engine.terms import TermDictionary

_EMPTY = np.zeros(0, dtype=np.int64)
_KEY_LIMIT = 1 << 62  # packed keys stay below this


Term = str | int  # a variable name, or a constant's term id


@dataclass
class _Atom:
    pred: Term  # a variable name, or the predicate's term id
    args: tuple[Term, ...]

    def terms(self) -> tuple[Term, ...]:
        return (self.pred, *self.args)

    def rel(self) -> RelKey | None:
        return None if isinstance(self.pred, str) else (self.pred, len(self.args))


Tests = tuple[tuple[str, Term, Term], ...]  # ("=" | "!=", left, right); "=" with left unbound assigns it


@dataclass
class _Plan:
    """A :class:`~rules.engine.planning.JoinPlan` over columns: ``steps[0]`` is the seed."""
    steps: tuple[tuple[_Atom, Tests], ...]
    head: _Atom
    keep: tuple[set[str], ...]  # keep[k]: the variables used after step k is joined (its tests included)


def _term(code) -> Term:
    return f"v{code[1]}" if code[0] == K_VAR else code[1]


def _tests(filters) -> Tests:
    out = []
    for f in filters:
        if isinstance(f, TermTest):
            out.append((f.op, _term(f.left), _term(f.right)))
        elif isinstance(f, Assign):
            out.append(("=", f"v{f.var}", _term(f.source)))
        elif not isinstance(f, HeadCheck):  # (the head's relation is checked when it is stored)
            raise Unsupported(f"{type(f).__name__.lower()} in a rule body")
    return tuple(out)


def _prepare(plan: JoinPlan) -> _Plan:
    steps = []
    for step in plan.steps:
        if step.pkind != P_CONST and step.arity != 2:
            raise Unsupported("a variable predicate with other than 2 arguments")
        args = [None] * step.arity
        for pos, kind, val in step.key:
            args[pos] = _term((kind, val))
        for pos, var in (*step.bind, *step.check):
            args[pos] = f"v{var}"
        pred = step.pred if step.pkind == P_CONST else f"v{step.pred}"
        steps.append((_Atom(pred, tuple(args)), _tests(step.filters)))
    head = _Atom(plan.head_pred if plan.head_pkind == P_CONST else f"v{plan.head_pred}",
                 tuple(_term(c) for c in plan.head))
    keep, later = [], {t for t in head.terms() if isinstance(t, str)}
    for atom, tests in reversed(steps):
        later = later | {t for _, left, right in tests for t in (left, right) if isinstance(t, str)}
        keep.append(later)
        later = later | {t for t in atom.terms() if isinstance(t, str)}
    return _Plan(tuple(steps), head, tuple(reversed(keep)))


class _Codes:
    """Term ids as small non-negative codes: the ids themselves when they are small enough to pack
    ``arity`` of them into an int64, else their ranks among the ids in play."""

    def __init__(self, ids: np.ndarray, arity: int):
        top = int(ids.max()) + 1 if len(ids) else 1
        if top ** max(arity, 1) < _KEY_LIMIT:
            self.table, self.n = None, top
        else:
            self.table = np.unique(ids)
            self.n = len(self.table)
            if self.n ** max(arity, 1) >= _KEY_LIMIT:
                raise Unsupported("too many terms to pack a fact into 64 bits")

    def encode(self, a: np.ndarray) -> np.ndarray:
        return a if self.table is None else np.searchsorted(self.table, a)

    def decode(self, a: np.ndarray) -> np.ndarray:
        return a if self.table is None else self.table[a]

    def const(self, i: int) -> int:
        return i if self.table is None else int(np.searchsorted(self.table, i))


def _array(facts, arity: int) -> np.ndarray:
    """Fact tuples as an (n, arity) array."""
    flat = np.fromiter(chain.from_iterable(facts), dtype=np.int64, count=len(facts) * arity)
    return flat.reshape(len(facts), arity)


def _pack(cols, n: int, size: int) -> np.ndarray:
    if not cols:
        return np.zeros(size, dtype=np.int64)
    key = cols[0]
    for c in cols[1:]:
        key = key * n + c
    return key


def _unpack(keys: np.ndarray, n: int, arity: int) -> list[np.ndarray]:
    cols = []
    for _ in range(arity):
        keys, c = np.divmod(keys, n)
        cols.append(c)
    return cols[::-1]


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    a = np.sort(a)
    if len(a) > 1:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a


def _union(a: np.ndarray | None, b: np.ndarray) -> np.ndarray:
    return b if a is None else _sorted_unique(np.concatenate((a, b)))


def _match(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j) with ``left[i] == right[j]``: the smaller side is sorted, the larger
    one binary-searched into its distinct keys."""
    swap = len(left) < len(right)
    small, big = (left, right) if swap else (right, left)
    order = np.argsort(small, kind="stable")
    ordered = small[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    keys = ordered[starts]
    pos = np.searchsorted(keys, big)
    pos[pos == len(keys)] = 0
    hit = np.flatnonzero(keys[pos] == big)
    if len(hit) == 0:
        return _EMPTY, _EMPTY
    pos = pos[hit]
    if len(keys) == len(ordered):  # distinct keys: at most one match each
        small_idx, big_idx = order[pos], hit
    else:
        count = np.diff(np.append(starts, len(ordered)))[pos]
        big_idx = np.repeat(hit, count)
        ends = np.cumsum(count)
        small_idx = order[np.repeat(starts[pos] - ends + count, count) + np.arange(ends[-1])]
    return (small_idx, big_idx) if swap else (big_idx, small_idx)


def _groups(values: np.ndarray):
    """(value, row indexes) for each distinct value (None: all rows)."""
    if len(values) and (values == values[0]).all():
        yield int(values[0]), None
        return
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], len(ordered))
    for s, e in zip(starts.tolist(), ends.tolist()):
        yield int(ordered[s]), order[s:e]


def _min(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """The element-wise minimum of two expiry columns (None: every row never expires)."""
    if a is None:
        return b
    return a if b is None else np.minimum(a, b)


def _concat_exp(parts: list[np.ndarray | None], sizes: list[int]) -> np.ndarray | None:
    if all(p is None for p in parts):
        return None
    return np.concatenate([np.full(n, INF, dtype=np.int64) if p is None else p for p, n in zip(parts, sizes)])


class _Bindings:
    """A table of variable bindings: equal-length columns, one per variable, and the expiry of
    each row (the minimum of its premises'; None: no premise expires)."""

    __slots__ = ("cols", "size", "exp")

    def __init__(self, cols: dict[str, np.ndarray], size: int, exp: np.ndarray | None = None):
        self.cols, self.size, self.exp = cols, size, exp

    def take(self, idx: np.ndarray | None) -> "_Bindings":
        if idx is None:
            return self
        return _Bindings({v: c[idx] for v, c in self.cols.items()}, len(idx),
                         None if self.exp is None else self.exp[idx])

    def value(self, term: Term) -> np.ndarray:
        if isinstance(term, str):
            return self.cols[term]
        return np.full(self.size, term, dtype=np.int64)


class _Database:
    """The relations during one closure: sorted packed keys, their columns on demand, and their
    expiries (aligned with the keys; absent: none of the relation's facts expires)."""

    def __init__(self, codes: _Codes, store: Store):
        self.codes, self.n, self.store = codes, codes.n, store
        self.keys: dict[RelKey, np.ndarray] = {}
        self.exp: dict[RelKey, np.ndarray] = {}
        self.stored: dict[RelKey, np.ndarray] = {}  # the store's keys, before the closure
        self._cols: dict[RelKey, list[np.ndarray]] = {}
        self._triple: dict[RelKey, bool] = {}

    def is_triple(self, rel: RelKey) -> bool:
        known = self._triple.get(rel)
        if known is None:
            known = self._triple[rel] = self.store.is_triple(rel)
        return known

    def cols(self, rel: RelKey) -> list[np.ndarray] | None:
        cols = self._cols.get(rel)
        if cols is None:
            keys = self.keys.get(rel)
            if keys is None or len(keys) == 0:
                return None
            cols = self._cols[rel] = _unpack(keys, self.n, rel[1])
        return cols

    def expiries(self, rel: RelKey, keys: np.ndarray) -> np.ndarray | None:
        """The current expiries of keys the relation holds (None: they never expire)."""
        exp = self.exp.get(rel)
        return None if exp is None else exp[np.searchsorted(self.keys[rel], keys)]

    def merge(self, rel: RelKey, candidates: np.ndarray, exp: np.ndarray | None = None) -> np.ndarray:
        """Add the candidate keys, derived with expiries ``exp`` (None: never expiring); returns
        the keys that were new or whose expiry rose (sorted, distinct)."""
        if exp is not None or rel in self.exp:
            return self._merge_tagged(rel, candidates, exp)
        # One sort of the old keys (tagged 0) and the candidates (tagged 1): a key is new where it
        # first occurs tagged 1.
        old = self.keys.get(rel)
        tagged = np.concatenate((candidates * 2 + 1,) if old is None else (old * 2, candidates * 2 + 1))
        if len(candidates) == 0:
            return candidates
        tagged.sort()
        keys = tagged >> 1
        first = np.concatenate(([True], keys[1:] != keys[:-1]))
        new = keys[first & (tagged & 1).astype(bool)]
        if len(new):
            self.keys[rel] = keys[first]
            self._cols.pop(rel, None)
        return new

    def _merge_tagged(self, rel: RelKey, candidates: np.ndarray, exp: np.ndarray | None) -> np.ndarray:
        """``merge`` with expiries: each candidate key keeps its largest expiry; a key is in the
        result when the relation lacks it or holds it with a smaller expiry (which is raised)."""
        if len(candidates) == 0:
            return candidates
        if exp is None:
            exp = np.full(len(candidates), INF, dtype=np.int64)
        order = np.lexsort((exp, candidates))
        cand, exp = candidates[order], exp[order]
        last = np.append(cand[1:] != cand[:-1], True)  # the largest expiry of each key
        cand, exp = cand[last], exp[last]
        keys = self.keys.get(rel)
        if keys is None or len(keys) == 0:
            self.keys[rel], self.exp[rel] = cand, exp
            self._cols.pop(rel, None)
            return cand
        old = self.exp.get(rel)
        if old is None:
            old = self.exp[rel] = np.full(len(keys), INF, dtype=np.int64)
        pos = np.searchsorted(keys, cand)
        at = np.minimum(pos, len(keys) - 1)
        found = keys[at] == cand
        raised = found & (exp > old[at])
        new = ~found
        old[at[raised]] = exp[raised]
        if new.any():
            self.keys[rel] = np.insert(keys, pos[new], cand[new])
            self.exp[rel] = np.insert(old, pos[new], exp[new])
            self._cols.pop(rel, None)
        return cand[new | raised]


class ColumnarRules:
    """Positive Datalog rules prepared for set-at-a-time evaluation (see the module docstring);
    raises :class:`Unsupported` for rules it cannot evaluate."""

    #: a relation whose size is at most this share of all facts counts as schema: its deltas are
    #: processed before those of larger relations
    SMALL_SHARE = 1 / 64

    def __init__(self, rules: Iterable[ir.Rule], dictionary: TermDictionary):
        self.plans = [_prepare(plan) for r in rules if not r.is_fact and any(
            isinstance(lit, ir.AtomLiteral) and not lit.negated for lit in r.body)
            for plan in plan_rule(r.head, r.body, dictionary)]
        self.by_rel: dict[RelKey, list[_Plan]] = {}
        self.by_triple: list[_Plan] = []  # seeds with a variable predicate
        for plan in self.plans:
            rel = plan.steps[0][0].rel()
            (self.by_triple if rel is None else self.by_rel.setdefault(rel, [])).append(plan)
        atoms = [a for p in self.plans for a in (p.head, *(atom for atom, _ in p.steps))]
        # a variable predicate (in a body, or in a head: the derived fact may already be stored
        # there) may name any binary relation
        self.reads_triples = any(isinstance(a.pred, str) for a in atoms)
        self.constants = [t for a in atoms for t in a.terms() if isinstance(t, int)] + [
            t for p in self.plans for _, tests in p.steps for _, left, right in tests
            for t in (left, right) if isinstance(t, int)]
        self.arity = max((len(a.args) for a in atoms), default=1)

    # -------------------------------------------------------------------------------- closure
    def closure(self, store: Store, batch: dict[RelKey, list[tuple]]) -> dict[RelKey, Iterable[tuple]]:
        """The facts of the closure of (the facts of ``store`` + ``batch``) under the rules that
        are neither in ``store`` nor in ``batch``, per relation (an iterator of distinct tuples).
        ``store`` is assumed closed already, and nothing in it or in ``batch`` expires."""
        db, added = self._fixpoint(store, batch, None)
        return {rel: self._decode(db, rel, keys) for rel, keys in added.items()}

    def closure_tagged(self, store: Store, batch: dict[RelKey, list[tuple]],
                       expiries: dict[RelKey, list[int]]) -> dict[RelKey, list[tuple[Iterable[tuple], np.ndarray]]]:
        """The same with expiries (``expiries[rel]`` aligned with ``batch[rel]``): the max-min
        fixpoint of the per-fact engine (a derivation's expiry is the minimum of its premises', a
        fact keeps the maximum over its derivations). Returns, per relation, ``[(new facts,
        their expiries), (facts of the store whose expiry rose, their new expiries)]`` (facts of
        the batch included; expiries as arrays). ``store`` is assumed closed (every stored expiry
        is that fixpoint's)."""
        db, added = self._fixpoint(store, batch, expiries)
        out = {}
        for rel, keys in added.items():
            exp = db.expiries(rel, keys)
            if exp is None:
                exp = np.full(len(keys), INF, dtype=np.int64)
            held = db.stored.get(rel)
            if held is None or len(held) == 0:
                new = np.ones(len(keys), dtype=bool)
            else:
                new = held[np.minimum(np.searchsorted(held, keys), len(held) - 1)] != keys
            out[rel] = [(self._decode(db, rel, keys[part]), exp[part]) for part in (new, ~new)]
        return out

    def _fixpoint(self, store: Store, batch: dict[RelKey, list[tuple]],
                  expiries: dict[RelKey, list[int]] | None) -> tuple[_Database, dict[RelKey, np.ndarray]]:
        """Semi-naive evaluation; returns the database and, per relation, the keys that are new
        or rose (with ``expiries``: including the batch's; without: only derived ones)."""
        tagged = expiries is not None
        relations = set(self.by_rel) | set(batch) | {p.head.rel() for p in self.plans if p.head.rel()}
        relations.discard(None)
        if self.reads_triples:  # a bound variable predicate may name any binary relation
            relations |= {rel for rel in store.relations if rel[1] == 2}
        stored = {rel: store.relations[rel].facts for rel in relations
                  if rel in store.relations and store.relations[rel].facts}
        old = {rel: _array(facts, rel[1]) for rel, facts in stored.items()}
        new_facts = {rel: _array(facts, rel[1]) for rel, facts in batch.items() if facts}
        ids = [a.ravel() for a in (*old.values(), *new_facts.values())]
        ids.append(np.array(self.constants + [rel[0] for rel in relations], dtype=np.int64))
        codes = _Codes(np.concatenate(ids), max([self.arity, *(rel[1] for rel in relations)]))
        self._constants = {c: codes.const(c) for c in set(self.constants)}
        db = _Database(codes, store)
        pack = lambda rel, a: _pack([codes.encode(a[:, i]) for i in range(rel[1])], codes.n, len(a))  # noqa: E731
        for rel, array in old.items():
            keys = pack(rel, array)  # distinct: the store's facts
            if not tagged:
                db.keys[rel] = np.sort(keys)
                continue
            order = np.argsort(keys)
            db.keys[rel] = db.stored[rel] = keys[order]
            exp = np.fromiter(stored[rel].values(), dtype=np.int64, count=len(keys))
            if (exp != INF).any():
                db.exp[rel] = exp[order]
        pending: dict[RelKey, np.ndarray] = {}
        added: dict[RelKey, list[np.ndarray]] = {}
        for rel, array in new_facts.items():
            exp = np.array(expiries[rel], dtype=np.int64) if tagged else None
            new = db.merge(rel, pack(rel, array), None if exp is None or (exp == INF).all() else exp)
            if len(new):
                pending[rel] = new
                if tagged:
                    added[rel] = [new]
        # schema first: the deltas of small relations go through the rules whose other atoms are
        # all small (closing the schema) before anything is joined with a large relation
        total = sum(len(k) for k in db.keys.values())
        large = {rel for rel, k in db.keys.items() if len(k) > total * self.SMALL_SHARE}
        deferred: dict[RelKey, np.ndarray] = {}  # deltas still due to the plans with a large atom
        while pending or deferred:
            small = [rel for rel in pending if rel not in large]
            candidates: dict[RelKey, list[tuple[np.ndarray, np.ndarray | None]]] = {}
            if small:
                for rel in small:
                    keys = pending.pop(rel)
                    self._run(rel, keys, db, candidates, lambda plan: not self._touches(plan, large))
                    deferred[rel] = _union(deferred.get(rel), keys)
            else:
                for rel, keys in pending.items():
                    self._run(rel, keys, db, candidates, lambda plan: True)
                for rel, keys in deferred.items():
                    self._run(rel, keys, db, candidates, lambda plan: self._touches(plan, large))
                pending, deferred = {}, {}
            for rel, parts in candidates.items():
                exp = _concat_exp([e for _, e in parts], [len(k) for k, _ in parts])
                new = db.merge(rel, np.concatenate([k for k, _ in parts]), exp)
                if len(new):
                    pending[rel] = _union(pending.get(rel), new)
                    added.setdefault(rel, []).append(new)
        # with expiries a key may rise in several rounds; without, each round's keys are new
        return db, {rel: np.concatenate(parts) if not tagged else _sorted_unique(np.concatenate(parts))
                    for rel, parts in added.items()}

    @staticmethod
    def _decode(db: _Database, rel: RelKey, keys: np.ndarray) -> Iterable[tuple]:
        cols = [db.codes.decode(c).tolist() for c in _unpack(keys, db.n, rel[1])]
        return zip(*cols) if cols else [()]

    def _run(self, rel: RelKey, keys: np.ndarray, db: _Database, out: dict, which) -> None:
        """Run the plans seeded at ``rel`` that ``which`` selects on the delta ``keys``."""
        delta = exp = None
        seeds = list(self.by_rel.get(rel, ()))
        if self.by_triple and db.is_triple(rel):
            seeds += self.by_triple
        for plan in seeds:
            if which(plan):
                if delta is None:
                    delta, exp = _unpack(keys, db.n, rel[1]), db.expiries(rel, keys)
                self._seeded(plan, rel, delta, exp, db, out)

    @staticmethod
    def _touches(plan: _Plan, large: set) -> bool:
        """Whether a plan joins its seed with a large relation (a variable predicate may be one)."""
        return any(a.rel() is None or a.rel() in large for a, _ in plan.steps[1:])

    # ------------------------------------------------------------------------------- one rule
    def _c(self, t: Term) -> Term:
        return t if isinstance(t, str) else self._constants[t]

    def _seeded(self, plan: _Plan, rel: RelKey, delta: list[np.ndarray], exp: np.ndarray | None,
                db: _Database, out: dict[RelKey, list[tuple[np.ndarray, np.ndarray | None]]]) -> None:
        """Derive the heads of ``plan`` (packed keys and expiries) with its seed matched against
        the delta of ``rel`` (its columns and expiries)."""
        atom, tests = plan.steps[0]
        b = _Bindings({}, 1)  # one empty binding, joined with the delta
        if isinstance(atom.pred, str):
            b.cols[atom.pred] = np.full(1, db.codes.const(rel[0]), dtype=np.int64)
        if delta:
            b = self._join(b, atom.args, delta, len(delta[0]), exp, db, plan.keep[0])
            if b is None:
                return
        else:  # a 0-ary relation
            b.exp = exp
        b = self._test(b, list(tests))
        for k in range(1, len(plan.steps)):
            if b is None:
                return
            atom, tests = plan.steps[k]
            b = self._atom(b, atom, db, plan.keep[k])
            if b is not None:
                b = self._test(b, list(tests))
        if b is None:
            return
        head = plan.head
        cols = [b.value(self._c(t)) for t in head.args]
        if not isinstance(head.pred, str):
            out.setdefault(head.rel(), []).append((_pack(cols, db.n, b.size), b.exp))
            return
        for p, idx in _groups(b.cols[head.pred]):
            hrel = (int(db.codes.decode(np.array([p]))[0]), len(head.args))
            if db.is_triple(hrel):
                sub = cols if idx is None else [c[idx] for c in cols]
                exp = b.exp if idx is None or b.exp is None else b.exp[idx]
                out.setdefault(hrel, []).append((_pack(sub, db.n, b.size if idx is None else len(idx)), exp))

    def _atom(self, b: _Bindings, atom: _Atom, db: _Database, keep: set[str]) -> _Bindings | None:
        """Join the bindings with a (non-seed) atom."""
        if not isinstance(atom.pred, str):
            return self._table(b, atom.args, atom.rel(), db, keep)
        parts = []
        if atom.pred in b.cols:  # bound: the relation each binding names
            for p, idx in _groups(b.cols[atom.pred]):
                rel = (int(db.codes.decode(np.array([p]))[0]), 2)
                joined = self._table(b.take(idx), atom.args, rel, db, keep)
                if joined is not None:
                    parts.append(joined)
        else:  # unbound: every triple relation
            for rel in list(db.keys):
                if db.is_triple(rel):
                    bound = _Bindings({**b.cols, atom.pred: np.full(b.size, db.codes.const(rel[0]))}, b.size, b.exp)
                    joined = self._table(bound, atom.args, rel, db, keep)
                    if joined is not None:
                        parts.append(joined)
        if not parts:
            return None
        sizes = [p.size for p in parts]
        return _Bindings({v: np.concatenate([p.cols[v] for p in parts]) for v in parts[0].cols},
                         sum(sizes), _concat_exp([p.exp for p in parts], sizes))

    def _table(self, b: _Bindings, args, rel: RelKey, db: _Database, keep: set[str]) -> _Bindings | None:
        cols = db.cols(rel)
        if cols is None and rel[1] > 0:
            return None
        exp = db.exp.get(rel)
        if cols is None:  # a 0-ary relation: holds or not
            if not len(db.keys.get(rel, _EMPTY)):
                return None
            return b if exp is None else _Bindings(b.cols, b.size, _min(b.exp, np.full(b.size, exp[0])))
        return self._join(b, args, cols, len(cols[0]), exp, db, keep)

    def _join(self, b: _Bindings, args, cols: list[np.ndarray], size: int, exp: np.ndarray | None,
              db: _Database, keep: set[str]) -> _Bindings | None:
        """Join the bindings with the rows ``cols`` (expiries ``exp``) of an atom with arguments
        ``args``; the result has the columns of the variables in ``keep``."""
        mask = None
        first: dict[str, int] = {}
        shared: list[tuple[int, str]] = []
        for pos, t in enumerate(args):
            if isinstance(t, str):
                if t in b.cols:
                    shared.append((pos, t))
                    continue
                if t not in first:
                    first[t] = pos
                    continue
                cond = cols[pos] == cols[first[t]]
            else:
                cond = cols[pos] == self._constants[t]
            mask = cond if mask is None else mask & cond
        if mask is not None:
            rows = np.flatnonzero(mask)
            if len(rows) == 0:
                return None
            cols, size = [c[rows] for c in cols], len(rows)
            exp = None if exp is None else exp[rows]
        if b.size == 0 or size == 0:
            return None
        if shared:
            left = _pack([b.cols[v] for _, v in shared], db.n, b.size)
            right = _pack([cols[pos] for pos, _ in shared], db.n, size)
            bi, ri = _match(left, right)
            if len(bi) == 0:
                return None
        elif b.size == 1:
            bi, ri = np.zeros(size, dtype=np.int64), None
        else:  # no shared variable: every pair
            bi, ri = np.repeat(np.arange(b.size), size), np.tile(np.arange(size), b.size)
        row_exp = exp if ri is None or exp is None else exp[ri]
        out = _Bindings({v: c[bi] for v, c in b.cols.items() if v in keep}, len(bi),
                        _min(None if b.exp is None else b.exp[bi], row_exp))
        for v, pos in first.items():
            if v in keep:
                out.cols[v] = cols[pos] if ri is None else cols[pos][ri]
        return out

    def _test(self, b: _Bindings, tests: list) -> _Bindings | None:
        """Apply the tests whose variables are bound; bind ``X = term`` when X is not."""
        progress = True
        while progress and tests:
            progress = False
            for test in list(tests):
                op, left, right = test
                lb = not isinstance(left, str) or left in b.cols
                rb = not isinstance(right, str) or right in b.cols
                if lb and rb:
                    same = b.value(self._c(left)) == b.value(self._c(right))
                    b = b.take(np.flatnonzero(same if op == "=" else ~same))
                elif op == "=" and (lb or rb):
                    target, source = (right, left) if lb else (left, right)
                    b.cols[target] = b.value(self._c(source))
                else:
                    continue
                tests.remove(test)
                progress = True
                if b.size == 0:
                    return None
        return b
