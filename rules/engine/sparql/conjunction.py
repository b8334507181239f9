"""A conjunction of atoms (a SPARQL basic graph pattern, or a rule body) evaluated by one join
plan per evaluation, its order chosen then from the store's statistics.

At each evaluation the atoms are ordered greedily: first the atom with the fewest candidate facts
(its constants looked up in the store's indexes), then, again and again, the atom that adds the
fewest facts per solution so far: an atom whose terms are all known is a test and comes at once;
one with known positions adds, on average, the relation's size over the number of distinct keys
of the index on those positions. An atom that shares no variable with those before it (a cross
product) is joined only when it adds fewer than every connected one, so a query that asks for no
cross product gets none, however its groups are written. The comparisons and negations pushed
into the conjunction run where their variables are bound (``rules.engine.planning``).

The order chosen is kept for the evaluations whose atoms have candidate counts of the same
powers of two (an order changes what an evaluation costs, never its solutions), and the plan of
an order is generated once (``rules.engine.plan``) and kept. An evaluation may be
*seeded* with bindings for some of the variables (a bind join: the solutions of another part of
the query, ``seed_vars`` and their distinct value tuples): the plan then starts from them.
A conjunction of one atom of distinct variables, with nothing else, whose solutions are over all
of them (an event over a stream relation, ``a(?k, ?id)``) needs no plan: its solutions are the
relation's facts, read as they are or with their values put in the head's order.

>>> from dotr.rules import ir
>>> from dotr.rules.engine.backends.dict_store import DictStore
>>> from dotr.rules.engine.terms import TermDictionary
>>> d, store = TermDictionary(), DictStore()
>>> iri = lambda n: ir.Iri("http://ex.org/" + n)
>>> x, y, c = ir.Var("x"), ir.Var("y"), ir.Var("c")
>>> conj = Conjunction([ir.Atom(iri("type"), (x, iri("Big"))), ir.Atom(iri("link"), (x, y))], (), ("x", "y"), d)
>>> for n in range(100):
...     _ = store.add((d.intern(iri("link")), 2), (d.intern(iri(f"a{n}")), d.intern(iri(f"b{n}"))), 5)
>>> _ = store.add((d.intern(iri("type")), 2), (d.intern(iri("a7")), d.intern(iri("Big"))), 5)
>>> [tuple(d.term(i).value[-2:] for i in row) for row in conj.rows(store)]
[('a7', 'b7')]
>>> conj.order(store, ())  # the type atom first: one candidate, against 100
(0, 1)
>>> [tuple(d.term(i).value[-2:] for i in row) for row in conj.rows(store, ("y",), [(d.intern(iri("b7")),)])]
[('a7', 'b7')]
"""

from __future__ import annotations

from typing import Sequence

from dotr.rules.lang import ir
from dotr.rules.engine.guard import GUARD
from dotr.rules.engine.plan import compile_rule
from dotr.rules.engine.sparql.thresholds import Sorted, Threshold
from dotr.rules.engine.store import INF, Store
from dotr.rules.engine.terms import TermDictionary

#: the predicate of the atom a plan is seeded at: it binds the seed variables (a name no rule
#: file can write)
_SEED = ir.Name("$seed")
#: the plans a conjunction keeps (one per join order and seed variables it was evaluated with)
_PLANS_KEPT = 64
#: inside :func:`shared`: the solutions over their atoms' variables of the conjunctions evaluated,
#: by their atoms (and by (atoms, position): those solutions sorted by the value at a position)
_SHARED: dict[int | tuple[int, int], list[tuple] | Sorted] | None = None
#: atoms (as ``Conjunction._shape``) -> a number: a key of ``_SHARED`` is the number of its
#: atoms (a nested tuple would be hashed again at every evaluation)
_ATOMS_KEYS: dict[tuple, int] = {}


class shared:
    """Evaluations inside (``with shared():``) share the matches of equal atoms: conjunctions
    that differ only in their comparisons and negations (event queries with their own FILTER
    thresholds) match their atoms once, each then filtering the matches. The store must not
    change inside. (A class, not a generator: it is entered at every time point.)"""

    __slots__ = ("_outer",)

    def __enter__(self) -> None:
        global _SHARED
        self._outer, _SHARED = _SHARED, {} if _SHARED is None else _SHARED

    def __exit__(self, *_) -> None:
        global _SHARED
        _SHARED = self._outer


class Conjunction:
    """``atoms`` (positive) with ``extra`` body literals (comparisons, negated atoms) whose
    solutions are tuples over ``head`` (variable names)."""

    def __init__(self, atoms: Sequence[ir.Atom], extra: tuple, head: tuple[str, ...], d: TermDictionary):
        self.atoms, self.extra, self.vars, self.d = list(atoms), tuple(extra), tuple(head), d
        self._plans: dict[tuple, object] = {}
        #: the order chosen for candidate counts of the same powers of two (and seed variables)
        self._orders: dict[tuple, tuple[int, ...]] = {}
        d.intern(_SEED)  # (now: the plans, made at run time, intern nothing a restored reasoner lacks)
        # per atom: its relation (None: a variable predicate), the positions and ids of its constants,
        # the variable at each position (None: a constant), and its predicate variable
        self._shape = []
        for atom in self.atoms:
            rel = None if isinstance(atom.pred, ir.Var) else (d.intern(atom.pred), len(atom.args))
            consts = tuple((pos, d.intern(t)) for pos, t in enumerate(atom.args) if not isinstance(t, ir.Var))
            names = tuple(t.name if isinstance(t, ir.Var) else None for t in atom.args)
            pred_var = atom.pred.name if isinstance(atom.pred, ir.Var) else None
            self._shape.append((rel, consts, names, pred_var))
        #: the variables of the atoms, in order (what a match binds), and what equal atoms share
        self._atom_vars = tuple(dict.fromkeys(
            [n for _, _, names, pred_var in self._shape for n in (pred_var, *names) if n is not None]))
        self._atoms_key = _ATOMS_KEYS.setdefault(tuple(self._shape), len(_ATOMS_KEYS))
        self._filter_plan = None  # the comparisons and negations over a match of the atoms (``_filtered``)
        self._threshold = Threshold.of(self.extra, self._atom_vars, self.vars)  # (or a threshold on sorted matches)
        #: one atom of distinct variables, nothing else, the solutions over all of them (an event
        #: over a stream relation, ``a(?k, ?id)``): its relation and, unless they are the facts
        #: as they are, the position of each solution's value; read without a plan
        self._scan: tuple[tuple[int, int], tuple[int, ...] | None] | None = None
        if len(self._shape) == 1 and not self.extra:
            rel, consts, names, _ = self._shape[0]
            if rel is not None and not consts and len(set(names)) == len(names) == len(self.vars) \
                    and set(names) == set(self.vars):
                positions = tuple(names.index(v) for v in self.vars)
                self._scan = (rel, None if positions == tuple(range(len(names))) else positions)

    @property
    def atom_vars(self) -> tuple[str, ...]:
        """The variables of the atoms, in the order of a match's values."""
        return self._atom_vars

    @property
    def atoms_key(self) -> int:
        """The same number for conjunctions of equal atoms (over one dictionary)."""
        return self._atoms_key

    @property
    def threshold(self) -> Threshold | None:
        """The conjunction's only filter when it compares an atom variable with a number by an
        order (``rules.engine.sparql.thresholds``)."""
        return self._threshold

    # ------------------------------------------------------------------------- statistics
    def _candidates(self, store: Store) -> list[int] | None:
        """The number of facts matching each atom's constants; None when one has none (the
        conjunction has no solution)."""
        counts = []
        for rel, consts, names, _ in self._shape:
            if rel is None:
                n = _variable_predicate_candidates(store, consts, len(names))
                if not n:
                    return None
                counts.append(n)
                continue
            relation = store.relations.get(rel)
            if relation is None:
                return None
            facts = relation.facts
            if not consts:
                n = len(facts)
            elif len(consts) == rel[1]:
                n = 1 if tuple(v for _, v in consts) in facts else 0
            else:
                positions = tuple(p for p, _ in consts)
                key = consts[0][1] if len(consts) == 1 else tuple(v for _, v in consts)
                n = len(relation.index(positions).get(key, ()))
            if not n:
                return None
            counts.append(n)
        return counts

    def estimate(self, store: Store) -> int | None:
        """The fewest candidate facts of an atom (the least a full evaluation reads); None when an
        atom has none. A conjunction without atoms: 1."""
        counts = self._candidates(store)
        if counts is None:
            return None
        return min(counts, default=1)

    def order(self, store: Store, bound: Sequence[str], counts: list[int] | None = None) -> tuple[int, ...] | None:
        """The order of the atoms for this evaluation with ``bound`` variables known at the start
        (None: an atom has no candidate, so no solution)."""
        if counts is None:
            counts = self._candidates(store)
            if counts is None:
                return None
        known = set(bound)
        remaining = list(range(len(self.atoms)))
        out = []
        while remaining:
            if len(remaining) == 1:
                best = remaining[0]
            elif not known:  # (nothing bound: an atom adds its candidates)
                best = min(remaining, key=lambda i: (counts[i], i))
            else:
                best = min(remaining, key=lambda i: (self._fanout(i, store, known, counts[i]), i))
            remaining.remove(best)
            out.append(best)
            _, _, names, pred_var = self._shape[best]
            known.update(n for n in names if n is not None)
            if pred_var is not None:
                known.add(pred_var)
        return tuple(out)

    def _fanout(self, i: int, store: Store, known: set, candidates: int) -> float:
        """How many facts atom ``i`` adds per solution of the atoms before it (an estimate)."""
        rel, consts, names, pred_var = self._shape[i]
        bound = tuple(pos for pos, n in enumerate(names) if n is not None and n in known)
        if not bound:
            return candidates
        if len(bound) + len(consts) == len(names) and (pred_var is None or pred_var in known):
            return 0  # every term known: a test
        if rel is None:
            return candidates / 10
        facts = store.relations[rel].facts
        positions = tuple(sorted(bound + tuple(p for p, _ in consts)))
        keys = len(store.relations[rel].index(positions))
        return min(candidates, len(facts) / max(keys, 1))

    # ------------------------------------------------------------------------- evaluation
    def rows(self, store: Store, seed_vars: tuple[str, ...] = (), seeds: Sequence[tuple] | None = None) -> list[tuple]:
        """The solutions, as tuples over ``vars``; with ``seed_vars``, those that agree with one
        of ``seeds`` (distinct tuples of term ids, one per seed variable)."""
        if seeds is not None and not seeds:
            return []
        if self._scan is not None and not seed_vars:
            rel, positions = self._scan
            relation = store.relations.get(rel)
            if relation is None:
                return []
            rows = list(relation.facts) if positions is None else \
                [tuple([fact[i] for i in positions]) for fact in relation.facts]
            GUARD.charge(len(rows))
            return rows
        if _SHARED is not None and not seed_vars and self.extra:
            return self._filtered(store, _SHARED)
        order = self._kept_order(store, seed_vars)
        if order is None:
            return []
        plan = self._plan(order, seed_vars)
        out: list = []
        plan([(seed, INF) for seed in seeds] if seed_vars else [((), INF)], store, out.append)
        GUARD.charge(len(out))  # (the budget of the time point, a cancellation: between joins)
        return [row for _, row, _ in out]

    def _filtered(self, store: Store, shared: dict) -> list[tuple]:
        """:meth:`rows` from the matches of the atoms alone, shared with the conjunctions of equal
        atoms evaluated in the same :func:`shared` block: the comparisons and negations then run
        on them (a threshold alone: on the matches sorted once, ``rules.engine.sparql.thresholds``)."""
        if self._threshold is not None:
            rows = self.threshold_rows(store, (self._threshold,))
            return rows[0] if rows is not None else []
        matches = shared.get(self._atoms_key)
        if matches is None:
            matches = shared[self._atoms_key] = self._matches(store)
        if not matches:
            return []
        plan = self._filter_plan
        if plan is None:
            seed = ir.AtomLiteral(ir.Atom(_SEED, tuple(ir.Var(v) for v in self._atom_vars)))
            plan = self._filter_plan = compile_rule(
                tuple(ir.Var(n) for n in self.vars), (seed, *self.extra), self.d,
                head_relation=(-2, len(self.vars))).seeded[0]
        out: list = []
        plan([(match, INF) for match in matches], store, out.append)
        GUARD.charge(len(out))
        return [row for _, row, _ in out]

    def threshold_rows(self, store: Store, thresholds: Sequence[Threshold]) -> list[list[tuple]] | None:
        """The rows of conjunctions of these atoms, each with one of ``thresholds`` as its only
        comparison (as :attr:`threshold`), in that order: their atoms matched once (inside
        :func:`shared`, once for all conjunctions of equal atoms), the matches sorted once per
        position compared, and each threshold's rows a slice of them (the event queries of
        patterns that each declare their own FILTER threshold). None: the atoms match nothing."""
        shared = _SHARED if _SHARED is not None else {}
        atoms = self._atoms_key
        matches = shared.get(atoms)
        if matches is None:
            matches = shared[atoms] = self._matches(store)
        if not matches:
            return None
        if len(matches) == 1:  # (a stream's one reading at a time point: nothing to sort)
            match, value = matches[0], self.d.value
            out = [threshold.select_one(match, value) for threshold in thresholds]
        else:
            out = []
            for threshold in thresholds:
                key = (atoms, threshold.position)
                ordered = shared.get(key)
                if ordered is None:
                    ordered = shared[key] = Sorted(matches, threshold.position, self.d.value)
                out.append(threshold.select(ordered))
        GUARD.charge(sum(map(len, out)))
        return out

    def _matches(self, store: Store) -> list[tuple]:
        """The matches of the atoms, as tuples over their variables."""
        order = self._kept_order(store, ())
        if order is None:
            return []
        plan = self._plan(order, (), self._atom_vars, ())
        out: list = []
        plan([((), INF)], store, out.append)
        GUARD.charge(len(out))
        return [row for _, row, _ in out]

    def _kept_order(self, store: Store, seed_vars: tuple[str, ...]) -> tuple[int, ...] | None:
        """:meth:`order`, kept for the evaluations whose atoms have candidate counts of the same
        powers of two (None: an atom has no candidate)."""
        counts = self._candidates(store)
        if counts is None:
            return None
        shape = (tuple(n.bit_length() for n in counts), seed_vars)
        order = self._orders.get(shape)
        if order is None:
            if len(self._orders) >= _PLANS_KEPT:
                self._orders.clear()
            order = self._orders[shape] = self.order(store, seed_vars, counts)
        return order

    def _plan(self, order: tuple[int, ...], seed_vars: tuple[str, ...], head: tuple[str, ...] | None = None,
              extra: tuple | None = None):
        """The plan of ``order`` from ``seed_vars``, to ``head`` with ``extra`` (by default the
        conjunction's own)."""
        head = self.vars if head is None else head
        extra = self.extra if extra is None else extra
        key = (order, seed_vars, head, len(extra))
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= _PLANS_KEPT:  # (orders seen long ago: made again if they come back)
                self._plans.clear()
            seed = ir.AtomLiteral(ir.Atom(_SEED, tuple(ir.Var(v) for v in seed_vars)))
            body = (seed, *(ir.AtomLiteral(a) for a in self.atoms), *extra)
            compiled = compile_rule(tuple(ir.Var(n) for n in head), body, self.d,
                                    head_relation=(-2, len(head)), order=(0, *(i + 1 for i in order)))
            plan = self._plans[key] = compiled.seeded[0]
        return plan


def _variable_predicate_candidates(store: Store, consts: tuple, arity: int) -> int:
    """The facts of every triple relation matching the constants of an atom with a variable
    predicate (which matches triples only)."""
    if arity != 2:
        return 0
    n = 0
    for pid in store.triple_predicates:
        relation = store.relations.get((pid, 2))
        if relation is None:
            continue
        if not consts:
            n += len(relation.facts)
        elif len(consts) == 2:
            n += tuple(v for _, v in consts) in relation.facts
        else:
            n += len(relation.index((consts[0][0],)).get(consts[0][1], ()))
    return n
