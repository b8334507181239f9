"""Semi-naive materialisation with expiry tags (IMaRS), and DRed for background retraction.

Every fact carries an expiry: the last time point at which it holds. A derivation's expiry is the
minimum of its premises'; a fact derived several ways keeps the maximum; when a fact's expiry
rises, the rise is propagated (its consequences may rise too); facts past their expiry are dropped
without re-derivation. The result is, at every time point, the closure of the live facts under the
rules (tests/ontology check this against recomputation from scratch).

Rules downstream of a negation are not maintained across time points: they are re-evaluated at
each time point, stratum by stratum, over the live facts, and their conclusions hold at that time
point only.

>>> from rules import parse
>>> from rules.terms import TermDictionary
>>> from rules.ir import Name
>>> d = TermDictionary()
>>> m = Materialiser(parse("path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).").rules, d)
>>> edge, path = m.relation("edge", 2), m.relation("path", 2)
>>> a, b, c = (d.intern(Name(n)) for n in "abc")
>>> _ = m.add([(edge, (a, b), INF), (edge, (b, c), 10)])
>>> sorted(m.store.relation(path).facts.values())
[10, 10, 4611686018427387904]
>>> _ = m.advance(11)
>>> len(m.store.relation(path).facts)
1
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from collections import defaultdict
from typing import Iterable

import networkx as nx

from rules import ir
from rules.analysis import dependency_graph, pred_key, stratify
from rules.analysis import transitive_steps as find_transitive_steps
from rules.terms import TermDictionary

from rules.columnar import ColumnarRules, Unsupported
from rules.plan import CompiledRule, compile_rule, evaluate_full, relation_of
from rules.store import INF, RelKey, Store

FactItem = tuple  # (relation, fact tuple, expiry)
BULK_THRESHOLD = 2000
#: a batch of at least this share of the store's size is closed set-at-a-time when it never
#: expires and nothing in the store expires (background loading)
BULK_SHARE = 1 / 16
#: otherwise (expiry tags), when it is at least this share (measured: benchmarks/ontology.py)
BULK_SHARE_TAGGED = 1 / 100


@contextmanager
def _no_gc():
    """Millions of new tuples, none cyclic: no collection is due while they are made."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Materialiser:
    """Maintains ``store`` = the closure of the explicit facts under ``rules`` (Datalog rules
    without windows). ``add`` inserts explicit facts with an expiry, ``advance(t)`` drops what
    expired before t, ``retract`` removes explicit facts (DRed), ``evaluate_local(t)`` evaluates
    the rules that sit downstream of a negation, for time point t only."""

    def __init__(self, rules: Iterable[ir.Rule], dictionary: TermDictionary, store: Store | None = None,
                 bulk_threshold: int | None = BULK_THRESHOLD, transitive_steps: bool = True):
        self.dictionary = dictionary
        self.store = store if store is not None else Store(lambda pid: isinstance(dictionary.term(pid), ir.Iri))
        rules = [r for r in rules if not r.is_fact]
        graph = dependency_graph(tuple(rules))
        negated = {pred_key(lit.atom) for r in rules for lit in r.body
                   if isinstance(lit, ir.AtomLiteral) and lit.negated}
        downstream = set()
        for key in negated:
            if key in graph:
                downstream |= nx.descendants(graph, key)
        self.incremental: list[CompiledRule] = []
        self.local: list[tuple[int, CompiledRule]] = []  # (stratum, rule)
        strata, _ = stratify(graph)
        incremental_rules = []
        for rule in rules:
            compiled = compile_rule(rule.head, rule.body, dictionary)
            if pred_key(rule.head) in downstream:
                self.local.append((strata.get(pred_key(rule.head), 0), compiled))
            else:
                self.incremental.append(compiled)
                incremental_rules.append(rule)
        self.local.sort(key=lambda sr: sr[0])
        #: the plans of transitive steps seeded at the moved atom -> the step's relation S (see
        #: the module's docstring, "Transitive steps"); empty with ``transitive_steps=False``
        self._steps: dict = {}
        if transitive_steps:
            for i, (at, step) in find_transitive_steps(incremental_rules).items():
                self._steps[self.incremental[i].seeded[at]] = relation_of(step, dictionary)
        #: batches of at least this many facts are closed set-at-a-time (rules.columnar) when they
        #: are a large enough share of the store (which is read into arrays): BULK_SHARE,
        #: BULK_SHARE_TAGGED; None: always fact by fact
        self.bulk_threshold = bulk_threshold
        self._bulk: ColumnarRules | None = None
        if bulk_threshold is not None:
            try:
                self._bulk = ColumnarRules([r for r in rules if pred_key(r.head) not in downstream], dictionary)
            except Unsupported:
                pass
        self._seeds: dict[RelKey, list] = defaultdict(list)
        self._triple_seeds: list = []  # plans seeded at a variable-predicate atom
        for compiled in self.incremental:
            for rel, plan in zip(compiled.body_relations, compiled.seeded):
                if rel is None:
                    self._triple_seeds.append(plan)
                else:
                    self._seeds[rel].append(plan)
        #: the explicit facts: relation -> {fact: expiry}
        self.explicit: dict[RelKey, dict[tuple, int]] = {}
        self._local_facts: list[tuple[RelKey, tuple]] = []
        # rules without positive atoms derive their heads once, for ever (a given store need
        # not be closed under them yet: no shortcut)
        self._propagate([item for c in self.incremental if not c.body_relations
                         for item in evaluate_full(c, self.store)], steps=False)

    def relation(self, pred: str | ir.Name | ir.Iri, arity: int) -> RelKey:
        if isinstance(pred, str):
            pred = ir.Name(pred)
        return (self.dictionary.intern(pred), arity)

    # ------------------------------------------------------------------------ maintenance
    def add(self, facts: Iterable[FactItem]) -> int:
        """Add explicit facts (or raise their expiry) and propagate; returns how many facts of the
        store were added or raised. A large batch (``bulk_threshold``, ``BULK_SHARE``,
        ``BULK_SHARE_TAGGED``) is evaluated set-at-a-time, with the same result."""
        items = facts if isinstance(facts, list) else list(facts)
        if self._bulk is not None and len(items) >= self.bulk_threshold:
            size = len(self.store)
            if len(items) >= size * BULK_SHARE and not self.store.buckets and all(item[2] == INF for item in items):
                return self._bulk_add(items)
            if len(items) >= size * BULK_SHARE_TAGGED:
                return self._bulk_add_tagged(items)
        self._add_explicit(items)
        return self._propagate(items)

    def _add_explicit(self, items: list[FactItem]) -> None:
        explicit = self.explicit
        for rel, fact, expiry in items:
            held = explicit.get(rel)
            if held is None:
                held = explicit[rel] = {}
            if held.get(fact, -1) < expiry:
                held[fact] = expiry

    def _bulk_add_tagged(self, items: list[FactItem]) -> int:
        """``add`` for a large batch with expiry tags: the max-min fixpoint set-at-a-time
        (rules.columnar), then the facts that are new or rose are stored."""
        with _no_gc():
            self._add_explicit(items)
            batch: dict[RelKey, list[tuple]] = defaultdict(list)
            expiries: dict[RelKey, list[int]] = defaultdict(list)
            for rel, fact, expiry in items:
                batch[rel].append(fact)
                expiries[rel].append(expiry)
            count = 0
            for rel, parts in self._bulk.closure_tagged(self.store, batch, expiries).items():
                for (facts, exps), new in zip(parts, (True, False)):
                    self.store.add_batch(rel, facts, exps.tolist(), new)
                    count += len(exps)
            return count

    def _bulk_add(self, items: list[FactItem]) -> int:
        """``add`` for facts that never expire into a store where nothing expires: the closure is
        computed set-at-a-time (rules.columnar) and stored."""
        with _no_gc():
            batch: dict[RelKey, list[tuple]] = defaultdict(list)
            for rel, fact, _ in items:
                batch[rel].append(fact)
            derived = self._bulk.closure(self.store, batch)
            count = 0
            for rel, facts in batch.items():  # the input's tuples, not new ones from the arrays
                given = dict.fromkeys(facts, INF)
                held = self.store.relation(rel).facts
                count += self.store.add_new(rel, [f for f in given if f not in held] if held else given, INF)
                if rel in self.explicit:
                    self.explicit[rel].update(given)
                else:
                    self.explicit[rel] = given
            for rel, facts in derived.items():
                count += self.store.add_new(rel, facts, INF)
            return count

    def build_indexes(self) -> None:
        """Build now the indexes the join plans probe (the store builds them on first use; the
        fact-by-fact path builds them while it materialises, the set-at-a-time path does not)."""
        for compiled in self.incremental:
            for rel, positions in compiled.indexes:
                self.store.index(rel, positions)

    def _propagate(self, items: list[FactItem], steps: bool = True) -> int:
        """Semi-naive rounds from ``items`` until nothing changes; returns how many facts were
        added or raised. ``steps``: the store is closed under the rules (it is after every public
        operation), so the transitive steps may skip their own conclusions (module docstring)."""
        active = dict(self._steps) if steps else None
        if not active:
            delta = self._apply(items)
            count = 0
            while delta:
                count += sum(len(v) for v in delta.values())
                pending: list[FactItem] = []
                emit = pending.append
                for rel, changed in delta.items():
                    self._run_seeds(rel, list(changed.items()), emit)
                delta = self._apply(pending)
            return count
        store = self.store
        parts = [(None, store.apply(items))]  # (the step plan whose own conclusions, or None; delta)
        count = 0
        while True:
            delta = {rel: changed for rel in dict.fromkeys(r for _, d in parts for r in d)
                     if (changed := _merged(parts, rel))}
            if not delta:
                return count
            count += sum(len(v) for v in delta.values())
            for plan in [plan for plan, schema in active.items() if schema in delta]:
                del active[plan]  # S changes: from now on, the step is fed everything
            pending = []
            emit = pending.append
            own = {plan: [] for plan in active}
            for rel, changed in delta.items():
                items = list(changed.items())
                plans = self._seeds.get(rel, ())
                triples = self._triple_seeds if self._triple_seeds and store.is_triple(rel) else ()
                for plan, pred in (*((p, None) for p in plans), *((p, rel[0]) for p in triples)):
                    mine = own.get(plan)
                    if mine is None:
                        plan(items, store, emit, pred)
                    else:  # not fed what it concluded itself (unless another rule raised it)
                        fed = _merged(parts, rel, plan)
                        if fed:
                            plan(list(fed.items()) if fed is not changed else items, store, mine.append, pred)
            parts = [(plan, store.apply(mine)) for plan, mine in own.items() if mine]
            parts.append((None, store.apply(pending)))

    def _apply(self, items: list[FactItem]) -> dict[RelKey, dict[tuple, int]]:
        """Store the items; the delta is what is new or rose."""
        return {rel: changed for rel, changed in self.store.apply(items).items() if changed}

    def _run_seeds(self, rel: RelKey, items: list, emit) -> None:
        """Run every plan seeded at ``rel`` on ``items`` ((fact, expiry) pairs)."""
        store = self.store
        for plan in self._seeds.get(rel, ()):
            plan(items, store, emit)
        if self._triple_seeds and store.is_triple(rel):
            for plan in self._triple_seeds:
                plan(items, store, emit, rel[0])

    def advance(self, now: int) -> list[tuple[RelKey, tuple]]:
        """Drop every fact that expired before ``now``."""
        dropped = [(rel, fact) for rel, fact, _ in self.store.expire(now)]
        explicit = self.explicit
        for rel, fact in dropped:
            held = explicit.get(rel)
            if held is not None and held.get(fact, INF) < now:
                del held[fact]
        return dropped

    def retract(self, facts: Iterable[tuple[RelKey, tuple]]) -> None:
        """Remove explicit facts before their expiry (background updates): DRed. Everything
        derived from them is deleted, then what still has another derivation is re-derived."""
        store = self.store
        removed = [(rel, fact) for rel, fact in facts if self.explicit.get(rel, {}).pop(fact, None) is not None]
        overdeleted: set[tuple[RelKey, tuple]] = set()
        frontier = [(rel, fact, store.expiry(rel, fact)) for rel, fact in removed if store.expiry(rel, fact) is not None]
        overdeleted.update((rel, fact) for rel, fact, _ in frontier)
        while frontier:
            by_rel: dict[RelKey, list] = defaultdict(list)
            for rel, fact, expiry in frontier:
                by_rel[rel].append((fact, expiry))
            pending: list[FactItem] = []
            for rel, items in by_rel.items():
                self._run_seeds(rel, items, pending.append)
            frontier = []
            for rel, fact, _ in pending:
                if (rel, fact) not in overdeleted and store.expiry(rel, fact) is not None:
                    overdeleted.add((rel, fact))
                    frontier.append((rel, fact, store.expiry(rel, fact)))
        for rel, fact in overdeleted:
            store.remove(rel, fact)
        # rederive: explicit facts among the overdeleted, and one full evaluation of the rules
        # that derive overdeleted relations, keeping what is overdeleted
        again = [(rel, fact, self.explicit[rel][fact]) for rel, fact in overdeleted
                 if fact in self.explicit.get(rel, ())]
        heads = {rel for rel, _ in overdeleted}
        for compiled in self.incremental:
            if compiled.head in heads or compiled.head is None:
                again.extend(item for item in self._full(compiled) if (item[0], item[1]) in overdeleted)
        self._propagate(again, steps=False)  # the store is not closed yet

    def _full(self, compiled: CompiledRule) -> list[FactItem]:
        return evaluate_full(compiled, self.store)

    # ----------------------------------------------------------------- per-time-point rules
    def evaluate_local(self, now: int) -> list[tuple[RelKey, tuple]]:
        """Evaluate the rules downstream of a negation at ``now`` from scratch; their facts are
        added with expiry ``now`` (replacing those of an earlier call). Returns them."""
        store = self.store
        for rel, fact in self._local_facts:
            if store.expiry(rel, fact) == now:
                store.remove(rel, fact)
        self._local_facts = []
        if not self.local:
            return []
        i = 0
        while i < len(self.local):
            stratum = self.local[i][0]
            group = []
            while i < len(self.local) and self.local[i][0] == stratum:
                group.append(self.local[i][1])
                i += 1
            # naive iteration to the fixpoint of this stratum (its rules may be recursive)
            while True:
                added = []
                for compiled in group:
                    for rel, fact, expiry in self._full(compiled):
                        if store.expiry(rel, fact) is None:
                            store.add(rel, fact, min(expiry, now))
                            added.append((rel, fact))
                if not added:
                    break
                self._local_facts.extend(added)
        return list(self._local_facts)


def _merged(parts: list[tuple[object, dict]], rel: RelKey, skip: object = None) -> dict:
    """The delta of ``rel`` over the parts of a round (applied in this order, so a later value is
    larger), leaving out the part that ``skip`` made."""
    found = [d[rel] for owner, d in parts if (owner is not skip or owner is None) and d.get(rel)]
    if len(found) == 1:
        return found[0]
    merged = {}
    for changed in found:
        merged.update(changed)
    return merged
