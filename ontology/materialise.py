"""Semi-naive materialisation with expiry tags (IMaRS), and DRed for background retraction.

Every fact carries an expiry: the last time point at which it holds. A derivation's expiry is the
minimum of its premises'; a fact derived several ways keeps the maximum; when a fact's expiry
rises, the rise is propagated (its consequences may rise too); facts past their expiry are dropped
without re-derivation. The result is, at every time point, the closure of the live facts under the
rules (tests/ontology check this against recomputation from scratch).

Rules downstream of a negation are not maintained across time points: they are re-evaluated at
each time point, stratum by stratum, over the live facts, and their conclusions hold at that time
point only.

Transitive steps. A rule ``A[C := D] :- A, S(C, D)`` (or ``S(D, C)``) over a relation S that the
program closes with ``S(X, Z) :- S(X, Y), S(Y, Z)`` moves one term of A one step along S
(``rules.lang.analysis.transitive_steps``): RDFS's rdfs9, ``rdf:type(X, D) :- rdfs:subClassOf(C, D),
rdf:type(X, C)``, and rdfs7, ``Q(X, Y) :- rdfs:subPropertyOf(P, Q), P(X, Y)``. Fed back a fact it
has just concluded, such a rule only derives again what it derived from that fact's premise:
rdf:type(x, C1), concluded from rdf:type(x, C0) and C0 below C1, gives rdf:type(x, C2) for each C2
above C1, which rdf:type(x, C0) gave already (C0 is below C2 too), with the same expiry. So the
rule's plan seeded at A is not fed the facts that reach their value in a round's delta through
its own conclusions of the previous round (new, or raised to exactly the expiry it gave them);
facts that another rule raised further are fed (``Materialiser(..., transitive_steps=False)``
feeds everything). On the LUBM-like window benchmark this removes 15,000 of 25,000 derivations
per time point at 1% change (docs/performance.md).

Why the store stays the same, expiries included. Write v_r(x) for the expiry of fact x in round
r's delta, s(c, d) for the final expiry of S(c, d), A[c] for the instance of A with C = c (the
rest of the substitution fixed). Every plan but the skipping one is fed all its deltas, so at the
end the other rules hold as usual, the transitivity rule among them: s(b, d) >= min(s(b, c),
s(c, d)). Claim: for every fact x = A[c] of round r's delta and every S(c, d), the final store
holds A[d] with an expiry of at least min(v_r(x), s(c, d)). By induction on r. If the plan was fed
x with v_r(x) in round r, it joined it with every S(c, d) stored then; a later S(c, d), or a rise
of one, is joined with x (stored with at least v_r(x)) by the rule's plan seeded at S. Otherwise
(never in round 0, the input) the plan concluded x with v_r(x) in round r - 1, from a fact
g = A[b] of that round's delta and S(b, c): v_r(x) = min(v_{r-1}(g), s'(b, c)) with s'(b, c) <=
s(b, c) its expiry then; by induction A[d] ends with at least min(v_{r-1}(g), s(b, d)) >=
min(v_{r-1}(g), s(b, c), s(c, d)) >= min(v_r(x), s(c, d)). (For ``S(D, C)`` the same with s(c, b)
and s(d, b) >= min(s(d, c), s(c, b)).) A fact A[c] in no delta was stored before: with the S facts
stored before the rule held already (the store was closed), and a new or risen S fact is joined
with it by the plan seeded at S. And nothing is derived that the full evaluation would not derive:
the result is its fixpoint. It does not matter whether S facts expire or change meanwhile; the
transitivity rule is what is needed (tests/ontology/test_steps.py: schema facts in the stream,
raises by other rules, retraction).

>>> from dotr.rules import parse
>>> from dotr.rules.engine.terms import TermDictionary
>>> from dotr.rules.lang.ir import Name
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

from functools import cached_property
from collections import defaultdict
from typing import TYPE_CHECKING, Callable, Iterable, Literal, overload

from networkx import descendants

from dotr.rules import ir
from dotr.rules.lang.analysis import dependency_graph, pred_key, stratify
from dotr.rules.lang.collector import paused
from dotr.rules.lang.analysis import transitive_steps as find_transitive_steps
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.engine.planning import Unsupported
from dotr.rules.engine.backends.native_store import NativeStore
from dotr.rules.engine.backends.native_plans import NativeRules
from dotr.rules.engine.plan import CompiledRule, compile_rule, evaluate_full
from dotr.rules.engine.fixpoint import SemiNaive
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF, FactItem, RelKey, Store

if TYPE_CHECKING:
    from dotr.rules.engine.backends.columnar import ColumnarRules

BULK_THRESHOLD = 2000
#: a batch of at least this share of the store's size is closed set-at-a-time when it never
#: expires and nothing in the store expires (background loading)
BULK_SHARE = 1 / 16
#: otherwise (expiry tags), when it is at least this share (the measured crossover with the
#: fact-by-fact path: docs/performance.md)
BULK_SHARE_TAGGED = 1 / 64


class Materialiser:
    """Maintains ``store`` = the closure of the explicit facts under ``rules`` (Datalog rules
    without windows). ``add`` inserts explicit facts with an expiry, ``advance(t)`` drops what
    expired before t, ``retract`` removes explicit facts (DRed), ``evaluate_local(t)`` evaluates
    the rules that sit downstream of a negation, for time point t only. ``native=True``: the facts
    in a ``rules.engine.backends.native_store.NativeStore`` and the maintained rules run by compiled plans
    (``rules.engine.backends.native_plans``), with the same result; C-SPARQL windows are maintained so."""

    def __init__(self, rules: Iterable[ir.Rule], dictionary: TermDictionary, store: Store | None = None,
                 bulk_threshold: int | None = BULK_THRESHOLD, transitive_steps: bool = True, native: bool = False):
        self.dictionary = dictionary
        self.transitive_steps = transitive_steps
        if store is None:
            is_iri = lambda pid: isinstance(dictionary.term(pid), ir.Iri)  # noqa: E731
            store = NativeStore(is_iri) if native else DictStore(is_iri)
        self.store = store
        rules = [r for r in rules if not r.is_fact]
        graph = dependency_graph(tuple(rules))
        negated = {pred_key(lit.atom) for r in rules for lit in r.body
                   if isinstance(lit, ir.AtomLiteral) and lit.negated}
        downstream = set()
        for key in negated:
            if key in graph:
                downstream |= descendants(graph, key)
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
        #: the plans of transitive steps seeded at the moved atom (module docstring); none with
        #: ``transitive_steps=False``
        self._steps = [self.incremental[i].seeded[at] for i, at in find_transitive_steps(incremental_rules).items()
                       ] if transitive_steps else []
        #: batches of at least this many facts are closed set-at-a-time (rules.engine.backends.columnar) when they
        #: are a large enough share of the store (which is read into arrays): BULK_SHARE,
        #: BULK_SHARE_TAGGED; None: always fact by fact
        self.bulk_threshold = bulk_threshold
        #: the compiled plans over a native store (rules.engine.backends.native_plans), which replace the
        #: set-at-a-time paths and the transitive steps
        self._incremental_rules = incremental_rules
        self._rederivers: list[tuple[RelKey | None, Callable]] | None = None  # see _rederive
        self._native = NativeRules(incremental_rules, self.incremental, dictionary,
                                   find_transitive_steps(incremental_rules) if transitive_steps else {}) \
            if isinstance(self.store, NativeStore) else None
        #: the rules closed set-at-a-time (``_bulk``, compiled at the first large batch: numpy is
        #: imported only by a run that has one)
        self._bulk_rules = [r for r in rules if pred_key(r.head) not in downstream] \
            if bulk_threshold is not None and self._native is None else None
        steps = set(self._steps)
        self._loop = SemiNaive()  # the plans by seed, run to the fixpoint (rules.engine.fixpoint)
        for rule, compiled in zip(incremental_rules, self.incremental):
            positives = [lit.atom for lit in rule.body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
            for atom, rel, plan in zip(positives, compiled.body_relations, compiled.seeded):
                position = next((pos for pos, t in enumerate(atom.args) if not isinstance(t, ir.Var)), None)
                constant = None if position is None else (position, dictionary.intern(atom.args[position]))
                self._loop.add(rel, plan, constant, step=plan in steps)
        #: the explicit facts: relation -> {fact: expiry} (a native store keeps them: a view)
        self.explicit: dict[RelKey, dict[tuple, int]] = {} if self._native is None else self.store.explicit
        self._explicit_due: dict[int, list[tuple[RelKey, tuple]]] = defaultdict(list)  # expiry -> facts
        self._local_facts: list[tuple[RelKey, tuple]] = []
        # rules without positive atoms derive their heads once, for ever
        self._propagate([item for c in self.incremental if not c.body_relations
                         for item in evaluate_full(c, self.store)])

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
        if self._native is not None:
            return self._native.propagate(self.store, items, True)
        if self._bulk_rules is not None and len(items) >= self.bulk_threshold and self._bulk is not None:
            size = len(self.store)
            if len(items) >= size * BULK_SHARE and not self.store.buckets and all(item[2] == INF for item in items):
                return self._bulk_add(items)
            if len(items) >= size * BULK_SHARE_TAGGED:
                return self._bulk_add_tagged(items)
        self._add_explicit(items)
        return self._propagate(items)

    def add_held(self, facts: Iterable[tuple[RelKey, tuple]], expiry: int) -> int:
        """``add`` for ``(relation, fact)`` pairs that all hold until ``expiry`` (a time point's
        stream facts): over a native store, no item made per fact.

        >>> from dotr.rules import parse
        >>> from dotr.rules.engine.terms import TermDictionary
        >>> for native in (True, False):
        ...     m = Materialiser(parse("q(X) :- p(X).").rules, TermDictionary(), native=native)
        ...     p, q = m.relation("p", 1), m.relation("q", 1)
        ...     print(m.add_held([(p, (7,)), (p, (8,))], 3), sorted(m.store.relation(q).facts.items()))
        4 [((7,), 3), ((8,), 3)]
        4 [((7,), 3), ((8,), 3)]
        """
        if self._native is not None:
            return self._native.propagate_pairs(self.store, facts, expiry, True)
        return self.add([(rel, fact, expiry) for rel, fact in facts])

    def add_triples(self, triples, ids, expiry: int = INF) -> int:
        """``add`` for RDF triples given as term numbers, subject, predicate and object of each in
        turn, with ``ids`` mapping a number to its term id (``ontology.rdf_files.TripleBatch``):
        over a native store, no Python object per triple."""
        if self._native is not None:
            return self._native.propagate_triples(self.store, triples, ids, expiry, True)
        return self.add([((ids[triples[k + 1]], 2), (ids[triples[k]], ids[triples[k + 2]]), expiry)
                         for k in range(0, len(triples), 3)])

    @cached_property
    def _bulk(self) -> ColumnarRules | None:
        """The set-at-a-time plans of the rules (rules.engine.backends.columnar); None if some rule has none."""
        if self._bulk_rules is None:
            return None
        from dotr.rules.engine.backends.columnar import ColumnarRules
        try:
            return ColumnarRules(self._bulk_rules, self.dictionary)
        except Unsupported:
            return None

    def _add_explicit(self, items: list[FactItem]) -> None:
        if self._native is not None:  # the store keeps them
            self.store.load(items, explicit=True)
            return
        explicit, due = self.explicit, self._explicit_due
        for rel, fact, expiry in items:
            held = explicit.get(rel)
            if held is None:
                held = explicit[rel] = {}
            if held.get(fact, -1) < expiry:
                held[fact] = expiry
                if expiry != INF:
                    due[expiry].append((rel, fact))

    def _bulk_add_tagged(self, items: list[FactItem]) -> int:
        """``add`` for a large batch with expiry tags: the max-min fixpoint set-at-a-time
        (rules.engine.backends.columnar), then the facts that are new or rose are stored."""
        with paused():
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
        computed set-at-a-time (rules.engine.backends.columnar) and stored."""
        with paused():
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

    def restore(self, facts: Iterable[FactItem], explicit: Iterable[FactItem],
                local: Iterable[tuple[RelKey, tuple]] = ()) -> None:
        """Continue from a saved state, replacing what the store holds: its facts ``(relation,
        fact, expiry)``, which of them are explicit (with their own expiries: an explicit fact
        stops being explicit at its expiry, as after :meth:`add`) and the facts of the
        per-time-point rules (:meth:`evaluate_local`).

        >>> from dotr.rules import parse
        >>> from dotr.rules.engine.terms import TermDictionary
        >>> d = TermDictionary()
        >>> rules = parse("q(X) :- p(X).").rules
        >>> m = Materialiser(rules, d)
        >>> p, q = m.relation("p", 1), m.relation("q", 1)
        >>> _ = m.add([(p, (7,), 3)])
        >>> again = Materialiser(rules, d)
        >>> again.restore(list(m.store), [(p, (7,), 3)])
        >>> sorted(again.store.relation(q).facts.items()), again.explicit[p]
        ([((7,), 3)], {(7,): 3})
        >>> _ = again.advance(4)
        >>> len(again.store), again.explicit[p]
        (0, {})
        """
        self.store.clear()
        if self._native is not None:
            self.store.load(facts)
        else:
            self.store.apply(facts if isinstance(facts, list) else list(facts))
            self.explicit, self._explicit_due = {}, defaultdict(list)
        self._add_explicit(explicit if isinstance(explicit, list) else list(explicit))
        self._local_facts = list(local)

    def build_indexes(self) -> None:
        """Build now the indexes the join plans probe (the store builds them on first use; the
        fact-by-fact path builds them while it materialises, the set-at-a-time path does not)."""
        for compiled in self.incremental:
            for rel, positions in compiled.indexes:
                self.store.index(rel, positions)

    def _propagate(self, items: list[FactItem]) -> int:
        """Semi-naive rounds from ``items`` until nothing changes; returns how many facts were
        added or raised. A transitive step is not fed back its own conclusions (module docstring)."""
        if self._native is not None:
            return self._native.propagate(self.store, items)
        return self._loop.run(self.store, items)

    @overload
    def advance(self, now: int, report: Literal[True] = ...) -> list[tuple[RelKey, tuple]]: ...

    @overload
    def advance(self, now: int, report: Literal[False]) -> None: ...

    def advance(self, now: int, report: bool = True) -> list[tuple[RelKey, tuple]] | None:
        """Drop every fact that expired before ``now``; returns them (``report=False``: nothing,
        which saves making a tuple per dropped fact)."""
        if self._native is not None:  # (the store forgets explicit expiries before now itself)
            dropped = self.store.expire(now, report)
            return [(rel, fact) for rel, fact, _ in dropped] if report else None
        dropped = [(rel, fact) for rel, fact, _ in self.store.expire(now)] if report else self.store.expire(now)
        # an explicit fact stops being explicit at its own expiry, also where a derivation keeps
        # the fact in the store longer
        explicit, due = self.explicit, self._explicit_due
        for when in [when for when in due if when < now]:
            for rel, fact in due.pop(when):
                held = explicit.get(rel)
                if held is not None and held.get(fact, INF) < now:
                    del held[fact]
        return dropped if report else None

    def entailed(self, facts: Iterable[tuple[RelKey, tuple]]) -> set[tuple[RelKey, tuple]]:
        """``facts`` (those the store holds) and every fact of the store that a rule derives from
        them, transitively: what a change of ``facts`` can change (DRed's overdeletion)."""
        store = self.store
        frontier = [(rel, fact, store.expiry(rel, fact)) for rel, fact in facts if store.expiry(rel, fact) is not None]
        seen = {(rel, fact) for rel, fact, _ in frontier}
        while frontier:
            by_rel: dict[RelKey, dict] = defaultdict(dict)
            for rel, fact, expiry in frontier:
                by_rel[rel][fact] = expiry
            pending: list[FactItem] = []
            self._loop.one_round(store, by_rel, pending.append)
            frontier = []
            for rel, fact, _ in pending:
                if (rel, fact) not in seen and store.expiry(rel, fact) is not None:
                    seen.add((rel, fact))
                    frontier.append((rel, fact, store.expiry(rel, fact)))
        return seen

    def retract(self, facts: Iterable[tuple[RelKey, tuple]]) -> set[tuple[RelKey, tuple]]:
        """Remove explicit facts before their expiry (background updates): DRed. Everything
        derived from them is deleted, then what still has another derivation is re-derived.
        Returns what was deleted (re-derived or not)."""
        removed = [(rel, fact) for rel, fact in facts if self.explicit.get(rel, {}).pop(fact, None) is not None]
        overdeleted = self.entailed(removed)
        self._delete(overdeleted)
        return overdeleted

    def _delete(self, overdeleted: set[tuple[RelKey, tuple]], added: Callable[[], list[FactItem]] = list) -> None:
        """DRed once the overdeletion is known: ``overdeleted`` leaves the store, then the explicit
        facts among them, those a rule derives from what is left (one step, with the rule's head
        bound to them) and ``added()`` (called once they are gone) are propagated."""
        store = self.store
        kept = [(rel, fact, self.explicit[rel][fact]) for rel, fact in overdeleted
                if fact in self.explicit.get(rel, ())]
        for rel, fact in overdeleted:
            store.remove(rel, fact)
        again = list(kept)
        self._rederive(overdeleted, again.append)
        again += added()
        self._propagate(again)
        if self._native is not None:  # the explicit ones are explicit again (a removed row forgets)
            self._add_explicit(kept)

    def changed_rules(self, rules: Iterable[ir.Rule]) -> "Materialiser":
        """A materialiser for ``rules`` (with this one's options) over this one's store and
        explicit facts, the store made their closure by DRed: what the rules no longer maintained
        derive is deleted with everything this one's rules derive from it, what is deleted and
        still derived in one step from what is left is derived again, the rules newly maintained
        are evaluated over the store, and all that is propagated. The work follows what the rules
        changed, not the store's size, where the changed rules read little. The store must hold
        no facts of :meth:`evaluate_local` (``clear_local`` after ``advance``); this one is spent.

        >>> from dotr.rules import parse
        >>> from dotr.rules.engine.terms import TermDictionary
        >>> d = TermDictionary()
        >>> m = Materialiser(parse("q(X) :- p(X). r(X) :- q(X).").rules, d)
        >>> p, q, r, s = (m.relation(n, 1) for n in "pqrs")
        >>> _ = m.add([(p, (7,), INF)])
        >>> m = m.changed_rules(parse("s(X) :- p(X). r(X) :- s(X).").rules)
        >>> [sorted(m.store.relation(rel).facts) for rel in (q, r, s)]
        [[], [(7,)], [(7,)]]
        """
        store = self.store
        new = Materialiser(rules, self.dictionary, store=store, bulk_threshold=self.bulk_threshold,
                           transitive_steps=self.transitive_steps)
        if new._native is None:  # (a native store keeps them)
            new.explicit, new._explicit_due = self.explicit, self._explicit_due
        before, now = set(self._incremental_rules), set(new._incremental_rules)
        overdeleted = self.entailed([(rel, fact) for rule, compiled in zip(self._incremental_rules, self.incremental)
                                     if rule not in now for rel, fact, _ in evaluate_full(compiled, store)])
        new._delete(overdeleted, lambda: [item for rule, compiled in zip(new._incremental_rules, new.incremental)
                                          if rule not in before for item in evaluate_full(compiled, store)])
        new._rederivers = None  # (compiled again when needed: their helper term may be cut from the dictionary)
        return new

    def _rederive(self, facts: set[tuple[RelKey, tuple]], emit: Callable[[FactItem], None]) -> None:
        """Emit each of ``facts`` that a rule derives in one step from the store, with its expiry.
        Each rule ``H :- B`` is run as ``H :- goal(H's terms), B`` seeded at the goal with the
        facts, so the work follows the facts, not the store's size."""
        if self._rederivers is None:
            goal = ir.Name("_rederive_goal")
            self._rederivers = []
            for rule, compiled in zip(self._incremental_rules, self.incremental):
                args = rule.head.args if compiled.head is not None else (rule.head.pred, *rule.head.args)
                body = (ir.AtomLiteral(ir.Atom(goal, args)), *rule.body)
                self._rederivers.append((compiled.head, compile_rule(rule.head, body, self.dictionary).seeded[0]))
        by_rel: dict[RelKey, list] = defaultdict(list)
        for rel, fact in facts:
            by_rel[rel].append((fact, INF))
        binary = [((rel[0], *fact), INF) for rel, fact in facts if rel[1] == 2]  # for variable predicates
        for head, plan in self._rederivers:
            goals = binary if head is None else by_rel.get(head)
            if goals:
                plan(goals, self.store, emit)

    def _full(self, compiled: CompiledRule) -> list[FactItem]:
        return evaluate_full(compiled, self.store)

    # ----------------------------------------------------------------- per-time-point rules
    def clear_local(self) -> None:
        """Forget which facts :meth:`evaluate_local` added (the store no longer holds them)."""
        self._local_facts = []

    def evaluate_local(self, now: int) -> list[tuple[RelKey, tuple]]:
        """Evaluate the rules downstream of a negation at ``now`` from scratch; their facts are
        added with expiry ``now`` (replacing those of an earlier call). Returns them."""
        store, explicit = self.store, self.explicit
        for rel, fact in self._local_facts:  # (a fact the stream gave meanwhile stays)
            if store.expiry(rel, fact) == now and fact not in explicit.get(rel, ()):
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
