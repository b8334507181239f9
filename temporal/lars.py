"""The LARS engine: Plain LARS rules (docs/language.md) evaluated along a stream, incrementally.

Laser's idea, in the store's terms: every fact carries a *horizon* (its expiry: the last time
point at which it is guaranteed to hold). A window atom is rewritten into an auxiliary relation
whose facts carry the window's guarantee:

* ``[n] <> p(X)``: ``p(X)`` held at some u in [t-n, t], so the window atom holds until the last
  time p(X) holds plus n (``<> p`` without a window: for ever);
* ``[n] @T p(X)``: one fact ``(X, T)`` per time point T at which p(X) held, until T + n;
* ``[n] [] p(X)``: recomputed at every time point (a box cannot be guaranteed beyond now),
  horizon t;
* tuple windows ``[n #] ...``: no horizon (a tuple window moves with every arriving atom); kept
  from the atoms that enter and leave it, and removed with what was built on them when they leave
  (``temporal.tuples``); recomputed at every time point, horizon t, when a rule in a recursion
  reads one.

A derivation's horizon is the minimum of its premises' (the body holds that long); a fact keeps
the maximum over its derivations; a conclusion is not derived again while its horizon lasts, and
a rule only fires on a body grounding that is new (semi-naive: only deltas seed the join plans,
which is sSNE). Negation is stratified: a rule with ``not`` is evaluated at each time point after
the strata below, from what changed since the previous one (``temporal.negation``; in full when
its positive part depends on its head), and what it derives holds at that time point only. ``@T`` heads
place conclusions at T: now, in the history (which feeds the windows) or in the future. The
background can change between time points (``temporal.background``).

The rules are compiled once (:class:`~temporal.program.LarsProgram`: the rewriting, the join plans,
the strata); an engine holds the state of one run over them, and several engines can run over one
program. What each kind of window does is its behaviour object's (``temporal.windows``).

>>> from dotr.rules import parse
>>> engine = LarsEngine(parse("alarm(R) :- [2] <> smoke(R).").rules)
>>> smoke = engine.relation("smoke", 1)
>>> r1 = engine.dictionary.intern(ir.Name("r1"))
>>> [engine.format(out) for out in (engine.step(0, [(smoke, (r1,))]), engine.step(1), engine.step(3))]
[['alarm(r1)'], ['alarm(r1)'], []]
"""

from __future__ import annotations

from collections import defaultdict, deque
from functools import partial
from itertools import compress, repeat
from operator import itemgetter
from dataclasses import dataclass, field
from typing import Callable, Iterable


from dotr.rules import TimeOrderError, UsageError, ir
from dotr.rules.engine.plan import CompiledRule, evaluate_full
from dotr.rules.engine.inputs import FactReader, relation_check
from dotr.rules.engine.backends.dict_loops import held_changes, note_dropped, relations_of
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF, FactItem, RelKey
from dotr.rules.engine.terms import TermDictionary, fact_atom, format_fact
from dotr.rules.engine.times import check_time
from dotr.temporal.background import BackgroundChanges
from dotr.temporal.negation import NegationView
from dotr.temporal.program import LarsProgram
from dotr.temporal.tuples import TupleWindow, tuple_window
from dotr.temporal.windows import _add, _Aux



@dataclass
class Output:
    """The result of evaluating time point ``t``: the derived atoms that hold at t (not the input
    atoms; empty unless the engine's ``report_facts``), the atoms that ``@T`` heads placed at
    other time points, as ``(T, rel, fact)``, and how the derived atoms changed since the
    previous time point stepped (``added``, ``removed``: what a time point costs is these)."""

    t: int
    facts: list[tuple[RelKey, tuple]] = field(default_factory=list)
    at: list[tuple[int, RelKey, tuple]] = field(default_factory=list)
    added: list[tuple[RelKey, tuple]] = field(default_factory=list)
    removed: list[tuple[RelKey, tuple]] = field(default_factory=list)


class LarsEngine(BackgroundChanges):
    """Evaluates LARS rules time point by time point; see the module docstring."""

    def __init__(self, rules: Iterable[ir.Rule] | LarsProgram, dictionary: TermDictionary | None = None,
                 background: Iterable[tuple[RelKey, tuple]] = (), start: int | None = None,
                 semi_naive: bool | None = None, rule_disabling: bool = True, disable_from: int = 10,
                 prefixes: dict[str, str] | None = None):
        """``rules``: the rules, or a :class:`~temporal.program.LarsProgram` compiled from them (over
        ``dictionary``, or None: the program's); ``semi_naive``: None is True, or the program's.
        ``prefixes``: those of the facts given as text (``":s1"``)."""
        if isinstance(rules, LarsProgram):
            if semi_naive is not None and semi_naive != rules.semi_naive:
                raise UsageError(f"semi_naive={semi_naive} for a LarsProgram compiled with semi_naive={rules.semi_naive}")
            program = rules
            d = program.bind(dictionary)
        else:
            program = LarsProgram(rules, dictionary, semi_naive is not False)
            d = program.dictionary
        #: the compiled rules (shared by every engine built over them: never changed)
        self.program = p = program
        self.dictionary = d
        #: the relations the rules derive (the program's)
        self.intensional = p.intensional
        #: each rule with its body over stored relations (window atoms as auxiliary atoms; the program's)
        self.rewritten = p.rewritten
        self.stratum_count = p.stratum_count
        self.tuple_size = p.tuple_size
        self.store = DictStore(lambda pid: isinstance(d.term(pid), ir.Iri))
        #: the first time point of the timeline (windows reach no further back); None: the first
        #: time point stepped
        self.start = 0 if start is None else start
        self._start_fixed = start is not None
        self.t: int | None = None
        #: stratum -> the views of the rules with ``not`` or a tuple window (temporal.negation)
        self._views: dict[int, list[NegationView]] = defaultdict(list)
        #: relation -> what to tell of its new facts (a delta) and of its expired facts (one each)
        self._on_added: dict[RelKey, list] = defaultdict(list)
        self._on_expired: dict[RelKey, list] = defaultdict(list)
        #: relation -> the views that hold its heads themselves (no rule reads them)
        self._sinks: dict[RelKey, list[NegationView]] = defaultdict(list)
        for stratum, specs in p.views.items():
            for spec in specs:
                view = NegationView(spec.body, spec.head, spec.head_terms, spec.negated)
                self._views[stratum].append(view)
                self._on_added[spec.body].append(view.body_added)
                self._on_expired[spec.body].append(view.body_expired)
                for j, (rel, _) in enumerate(spec.negated):
                    self._on_added[rel].append(partial(view.negated_changed, j))
                    self._on_expired[rel].append(partial(view.negated_expired, j))
                if spec.sink:
                    view.sink = True
                    self._sinks[view.head].append(view)
        #: tuple windows kept from one time point to the next (temporal.tuples)
        self._tuple: dict[RelKey, TupleWindow] = {
            rel: tuple_window(aux, d.number, readers) for rel, (aux, readers) in p.kept_tuples.items()}
        self._recent: deque = deque(maxlen=self.tuple_size or 1)  # (time, rel, fact) stream atoms
        self._seen_atoms = 0
        self._future: dict[int, list[tuple[RelKey, tuple]]] = defaultdict(list)
        self._occ: dict[RelKey, dict[tuple, list[list[int]]]] = defaultdict(dict)  # box: intervals
        self._placed: set[tuple[int, RelKey, tuple]] = set()
        # when the atoms of @ heads held other than by a placement (derived by a plain rule, or
        # input): a placement into the past reports and feeds to the windows only what is new there
        self._held: dict[RelKey, dict[tuple, list[list[int]]]] = defaultdict(dict)
        self._inputs: list[tuple[RelKey, tuple]] = []  # the stream atoms of the current time point
        self._derived_inputs: list[tuple[RelKey, tuple]] = []  # those of relations the rules derive
        self._prev_t: int | None = None
        self._given_at: int | None = None  # the last time point something was given or placed at
        self._mark: tuple[int | None, int] = (None, 0)  # (t, facts listed under t before t was stepped)
        self._held_known: tuple[int, bool] | None = None  # (t, _held_until(t)) from a snapshot
        self._carried: list[FactItem] = []  # diamond facts of what held through skipped time points
        self._valid_from: int | None = None  # (_renew) what is stored must hold from then on
        # Laser2: a box window [n] [] p cannot hold for n time points after one where p has no fact;
        # its coverage checks are skipped until then (windows under ``disable_from``: not worth it)
        self._disable = rule_disabling
        self._disable_from = disable_from
        self._disabled_until: dict[RelKey, int] = {}
        self.disabled_checks = 0  # box coverage checks skipped (for the benchmark)
        self._placed_now: list = []
        #: the intensional facts that follow from the background alone (they hold at every time point)
        self.background: set[tuple[RelKey, tuple]] = set()
        #: the background facts as they are now; since when those added by a change hold, and
        #: when those a change removed held (tuple windows look back at them)
        self._given: set[tuple[RelKey, tuple]] = set()
        self._given_by: dict[RelKey, set[tuple]] = defaultdict(set)  # the same by relation
        self._since: dict[tuple[RelKey, tuple], int] = {}
        self._gone: dict[tuple[RelKey, tuple], list[tuple[int, int]]] = defaultdict(list)
        self._was: dict[tuple[RelKey, tuple], bool] = {}  # changed since the last step: was it given then?
        self._plain: LarsEngine | None = None  # see change_background
        self._plain_needed: set[RelKey] = set()
        self._rederive: set[RelKey] = set()  # after a removal: the relations to derive again from
        #: in a key group (``pipeline.reasoner.Reasoner.keep_group``): of a list of items
        #: ``(rel, fact, ...)``, those the engine keeps (their key is the group's); the others are
        #: dropped as they are derived, so that the engine holds, and ``next_change`` follows, its
        #: own keys' facts only
        self.keep: Callable[[list], list] | None = None
        #: whether :class:`Output` lists every derived atom that holds (else only what changed)
        self.report_facts = True
        self._out: set[tuple[RelKey, tuple]] = set()  # the derived atoms of the last time point output
        self._dirty: set[tuple[RelKey, tuple]] = set()  # derived atoms that may have changed since
        self._out_anew = True  # compute the output in full at the next step (after a restore, a change)
        #: facts as given (any form of ``rules.engine.inputs``) -> (relation, ids), checked: a
        #: relation the rules neither read nor derive is refused
        self._read = FactReader(d, prefixes, relation_check(d, (p.reads or set()) | p.intensional,
                                                            any_triple=p.reads is None))
        self.add_background([*p.facts, *self._read.all(background)], interned=True)

    def add_background(self, facts: Iterable, interned: bool = False) -> None:
        """Add facts that hold at every time point, before the first step: the rules' facts, and
        the background knowledge with what the ontological stage derives from it (any forms of
        ``rules.engine.inputs``; ``interned``: ``(relation, ids)`` pairs, unchecked).

        Their consequences through atoms, diamonds, boxes and tuple windows hold at every time
        point too (:attr:`background`); those through ``@`` (a time point each) or ``not`` (the
        stream may change what is negated) are derived at each time point. After the first
        step, use :meth:`change_background`."""
        if not interned:
            facts = self._read.all(facts)
        facts = [f for f in facts if f not in self._given]
        self._out_anew = True
        self._given.update(facts)
        for rel, fact in facts:
            self._given_by[rel].add(fact)
        self._propagate([(rel, fact, INF) for rel, fact in facts])
        positive = [c for rules in self.program.full.values() for c in rules if not c.negated_relations]
        lasting = [aux for aux in self.program.pertime if aux.window.lasting]
        while True:  # a box or a tuple window over what holds at every time point holds too
            items = [(aux.rel, fact, INF) for aux in lasting
                     for fact, expiry in self.store.relation(aux.base).facts.items() if expiry >= INF]
            items += [item for c in positive for item in evaluate_full(c, self.store) if item[2] >= INF]
            if not self._propagate(items):
                break
        self.background = {(rel, fact) for rel in self.intensional if rel in self.store.relations
                           for fact, expiry in self.store.relations[rel].facts.items() if expiry >= INF}

    def next_change(self, last: int) -> int | None:
        """The first time point after ``last`` at which the output can change, or None: after
        ``last`` itself when something was given or placed there (it holds then only) or placed
        in the past into windows that reach no further than ``last``, or when
        an ``@T`` window's atom held at ``last``; where a fact's horizon passes; where an ``@T``
        head placed an atom; where a box window over a fact that holds on fills. Conclusions
        through ``not``, boxes and tuple windows hold at the time point they were drawn for only,
        but they change only with one of these: they are drawn again where they still hold, not
        evaluated again at every time point in between."""
        candidates = [when + 1 for when in self.store.expiry_times(last) if when > last]
        if self._given_at == last or self._held_until(last):
            candidates.append(last + 1)
        candidates += [when for when in self._future if when > last]
        for aux in self.program.pertime:
            aux.window.next_change(self, aux, last, candidates)
        return min(candidates, default=None)

    def _held_until(self, last: int) -> bool:
        """Whether a fact concluded before ``last`` holds until ``last`` (its horizon passes):
        one listed under ``last`` before ``last`` was stepped (``_mark``)."""
        if self._held_known is not None and self._held_known[0] == last:  # (restored)
            return self._held_known[1]
        if any(expiry == last for _, _, expiry in self._carried):  # (held through skipped time points)
            return True
        t, mark = self._mark
        relations = self.store.relations
        listed = self.store.buckets.get(last, ())
        return any(relations[rel].facts.get(fact) == last for rel, fact in
                   (listed[:mark] if t == last else listed) if rel in relations)

    def uses(self, rel: RelKey) -> bool:
        """Whether a rule reads ``rel`` (plainly or through a window) or derives it: the
        background facts the engine needs (those of a derived relation hold, and are no new
        conclusion, at every time point)."""
        return self.program.uses(rel)

    # ------------------------------------------------------------------------ state
    def snapshot(self) -> dict:
        """The evaluation state as plain data (a state file's). Restore it into an engine built from
        the same rules over a dictionary restored to the same terms: :meth:`restore`."""
        return {"facts": list(self.store), "future": dict(self._future), "occ": dict(self._occ),
                "disabled": dict(self._disabled_until), "given": set(self._given), "since": dict(self._since),
                "gone": dict(self._gone), "was": dict(self._was), "background": set(self.background),
                "placed": set(self._placed), "held": dict(self._held), "recent": list(self._recent), "seen": self._seen_atoms,
                "t": self.t, "prev": self._prev_t, "start": self.start, "given_at": self._given_at,
                "held_until": None if self.t is None else (self.t, self._held_until(self.t))}

    def restore(self, state: dict) -> None:
        self.store.clear()  # (the state has the background as it was then, changes made)
        for rel, fact, expiry in state["facts"]:
            self.store.add(rel, fact, expiry)
        # (a state read from a file has tuples where these had lists: the runs are extended in place)
        self._future = defaultdict(list, {when: list(items) for when, items in state["future"].items()})
        self._occ = defaultdict(dict, _runs(state["occ"]))
        self._placed = set(state["placed"])
        self._held = defaultdict(dict, _runs(state.get("held", {})))
        self._disabled_until = dict(state["disabled"])
        self._recent.extend(state["recent"])
        self._seen_atoms, self.t, self._prev_t = state["seen"], state["t"], state["prev"]
        self.start = state.get("start", self.start)
        self._given_at = state.get("given_at", self.t)
        self._held_known = state.get("held_until")
        if "given" in state:
            self._given, self._since = set(state["given"]), dict(state["since"])
            self._gone = defaultdict(list, {key: list(runs) for key, runs in state["gone"].items()})
            self._was, self.background = dict(state["was"]), set(state["background"])
            self._given_by = defaultdict(set)
            for rel, fact in self._given:
                self._given_by[rel].add(fact)
        for views in self._views.values():
            for view in views:
                view.rebuild(self.store)
        self._out, self._dirty, self._out_anew = set(), set(), True
        for window in self._tuple.values():
            window.rebuild(self._recent, self._seen_atoms)

    def relation(self, pred: str | ir.Name | ir.Iri, arity: int) -> RelKey:
        """The relation of ``pred`` with ``arity`` arguments (:meth:`LarsProgram.relation`)."""
        return self.program.relation(pred, arity)

    def window_of(self, rel: RelKey) -> _Aux | None:
        """The window atom that the auxiliary relation ``rel`` of a rewritten rule stands for
        (its kind, size and base relation), or None for a relation of the program's own."""
        return self.program.window_of(rel)

    def _fact(self, atom: ir.Atom) -> tuple[RelKey, tuple]:
        d = self.dictionary
        return (d.intern(atom.pred), len(atom.args)), tuple(d.intern(a) for a in atom.args)

    # ------------------------------------------------------------------ evaluation
    def step(self, t: int, facts: Iterable = (), derived: Iterable = (), interned: bool = False) -> Output:
        """Evaluate time point ``t`` (after every earlier one) with its stream atoms, and atoms
        other stages concluded for t (``derived``: they hold at t but are no stream atoms).
        Facts in any forms of ``rules.engine.inputs`` (an rdflib ``Graph``, a DataFrame:
        ``rules.engine.frames``), of relations the rules read or derive (:class:`FactError`
        otherwise); ``interned``: ``(relation, ids)`` pairs of this engine's dictionary, nothing
        checked (the pipeline's own path)."""
        if not interned:
            t = check_time(t)
            facts, derived = self._read.all(facts), self._read.all(derived)
        if self.t is not None and t <= self.t:
            raise TimeOrderError(f"time point {t} is not after {self.t}")
        if self.t is None and not self._start_fixed:
            self.start = t
        self.t = t
        if self._was:
            self._out_anew = True
        added = self._change(t) if self._was else ()
        listed = len(self.store.buckets.get(t, ()))  # (before _renew lists what it stores)
        facts, derived = list(facts), list(derived)
        p = self.program
        placed_now: list[tuple[int, RelKey, tuple]] = []
        self._placed_now = placed_now
        done: set[RelKey] = set()  # the window auxiliaries drawn for t
        given = [(rel, fact, t) for rel, fact in facts + derived]
        early = given and self._prev_t == t - 1 and not (added or self._rederive)  # (not after a background change)
        if early:
            self._renew(t, given, done)
        self._advance(t)
        self._mark, self._held_known = (t, listed), None
        self._dirty.update(self._derived_inputs)  # (input atoms are not output: those of t - 1 may be now)
        self._inputs = facts
        self._derived_inputs = self._derived_among(facts)
        self._dirty.update(self._derived_inputs)
        if facts or derived or t in self._future or added or self._rederive:
            self._given_at = t
        self._seen_atoms += len(facts)
        if self.tuple_size:
            self._recent.extend((t, rel, fact) for rel, fact in facts)
            for window in self._tuple.values():
                window.arrive(self._seen_atoms - len(facts) + 1, t, facts, self._seen_atoms)
        targets = p.at_targets
        if targets:  # an input atom of an @ head's predicate holds at t (see _place)
            for rel, fact in facts + derived:
                if rel in targets:
                    self._note_held(rel, fact, t, t)
        items = [] if early else given
        items += [(rel, fact, t) for rel, fact in self._future.pop(t, ())]
        items += [(rel, fact, INF) for rel, fact in added]
        items += self._carried
        for stratum in range(max(self.stratum_count, 1)):
            recursive = p.recursive.get(stratum, ())
            done.update(aux.rel for aux in recursive)
            for aux in p.pertime:
                if aux.rel not in done and p.aux_stratum[aux.rel] < stratum:
                    done.add(aux.rel)
                    items += aux.window.facts(self, aux, t, True)
            self._propagate(items)
            items = []
            if self._rederive:  # after a removal: what still holds, derived again
                again = self._rederive
                self._propagate([item for c in p.positive.get(stratum, ())
                                 if c.head is None or p.at_heads.get(c.head, c.head) in again
                                 for item in evaluate_full(c, self.store)])
            while True:  # rules in full and windows in a recursion, to the stratum's fixpoint
                fresh = []
                for c in p.full.get(stratum, ()):
                    fresh += self._run_full(c, t)
                for view in self._views.get(stratum, ()):
                    fresh += view.update(t, self.store)
                for aux in recursive:
                    fresh += aux.window.facts(self, aux, t, False)
                if not self._propagate(fresh):
                    break
        for aux in p.pertime:  # auxiliaries whose base is in the top stratum feed no rule
            if aux.rel not in done and aux.rel not in self._tuple:
                aux.window.facts(self, aux, t, True)
        self._prev_t = t
        self._rederive = set()
        if t % 256 == 0:
            self._prune(t)
        added, removed = self._changes()
        return Output(t, list(self._out) if self.report_facts else [], sorted(placed_now), added, removed)

    @property
    def held(self) -> set[tuple[RelKey, tuple]]:
        """The derived atoms that held at the last time point stepped, less its input atoms (what
        :class:`Output` lists; the engine's own set: do not change it)."""
        return self._out

    def holds(self, rel: RelKey, fact: tuple) -> bool:
        """Whether ``rel(fact)`` holds at the last time point stepped: in the store, or the head
        of a view that keeps its heads itself (``held_changes`` asks the same of many pairs)."""
        r = self.store.relations.get(rel)
        return r is not None and fact in r.facts or any(fact in v.heads for v in self._sinks.get(rel, ()))

    def _derived_among(self, facts: list[tuple[RelKey, tuple]]) -> list[tuple[RelKey, tuple]]:
        """The atoms of ``facts`` of relations the rules derive (usually none: that is told in C)."""
        intensional = self.intensional
        if not facts or intensional.isdisjoint(relations_of(facts)):
            return []
        return [f for f in facts if f[0] in intensional]

    def _changes(self) -> tuple[list, list]:
        """The derived atoms that came and went since the last output (:attr:`_out`, updated)."""
        out, dirty = self._out, self._dirty
        for views in self._sinks.values():
            for view in views:
                if view.changed:
                    rel = view.head
                    dirty.update(zip(repeat(rel), view.changed))
                    view.changed = set()
        if self._out_anew:
            self._out_anew = False
            self._dirty = set()
            now = set(self._output())
            added, removed = list(now - out), list(out - now)
            self._out = now
            return added, removed
        if not dirty:
            return [], []
        self._dirty = set()
        # (what is dirty is of derived relations: of the inputs, only theirs can be in it; compiled)
        held, removed = held_changes(dirty, self.store.relations, self._sinks, set(self._derived_inputs), out)
        if held and self.keep is not None:  # (the store holds only what is kept; the views all)
            held = self.keep(held)
        out.difference_update(removed)
        out.update(held)
        return held, removed

    def _prune(self, t: int) -> None:
        """Forget what no window can see any more, so that memory stays flat on long streams:
        box intervals older than the largest window, and placements (kept to report each once)
        older than the furthest an ``@`` head can place again (:func:`_reach`), and removed
        background facts that no tuple window reaches back to."""
        if self._gone and (not self.tuple_size or self._seen_atoms >= self.tuple_size):
            oldest = self._recent[0][0] if self.tuple_size and self._recent else t
            for key in list(self._gone):
                self._gone[key] = [run for run in self._gone[key] if run[1] >= oldest]
                if not self._gone[key]:
                    del self._gone[key]
        horizon, reach, whole = self.program.box_horizon, self.program.placement_horizon, self.program.whole_boxes
        if reach < INF:
            self._placed = {key for key in self._placed if key[0] >= t - reach}
            for runs in self._held.values():
                for fact in list(runs):
                    runs[fact] = [run for run in runs[fact] if run[1] >= t - reach]
                    if not runs[fact]:
                        del runs[fact]
        for rel, runs in self._occ.items():
            for fact in list(runs):
                kept = [run for run in runs[fact] if run[1] >= t - horizon or
                        (rel in whole and run[0] <= self.start)]
                if kept:
                    runs[fact] = kept
                else:
                    del runs[fact]

    def _advance(self, t: int) -> None:
        """Drop what expired; a fact that stays held through the time points not evaluated since
        the previous one (box windows need to know). Time points are skipped where nothing can
        change (:meth:`next_change`): what was concluded for the previous one alone (through
        ``not``, a box, ...) held through them too."""
        on_expired = self._on_expired
        prev = self._prev_t
        self._carried = []
        intensional, dirty = self.intensional, self._dirty
        if prev == t - 1:  # nothing skipped: every dropped fact held until prev, as recorded then
            note_dropped(self.store.expire(t), on_expired, intensional, dirty)  # (compiled)
            return
        carried = prev is not None and self._given_at != prev and not self._held_until(prev)
        occ, held_of, since, dia_of = self._occ, self._held, prev or 0, self.program.dia_of
        last = tells = runs = None
        for rel, fact, expiry in self.store.expire(t):
            if rel is not last:  # (the dropped facts come in runs of one relation)
                last, tells, runs, derived = rel, on_expired.get(rel), occ.get(rel), rel in intensional
            if derived:
                dirty.add((rel, fact))
            if tells:
                for tell in tells:
                    tell(fact)
            until = t - 1 if carried and expiry == prev else expiry
            if runs is not None:
                fact_runs = runs.get(fact)
                if fact_runs is not None and since <= fact_runs[-1][1] < until:
                    fact_runs[-1][1] = until
            if until > expiry:  # held through the skipped time points: its diamonds see it there too
                held = held_of.get(rel)
                if held is not None and fact in held and held[fact][-1][1] == expiry:
                    held[fact][-1][1] = until
                self._carried.extend((aux.rel, fact, _add(until, aux.size)) for aux in dia_of.get(rel, ())
                                     if _add(until, aux.size) >= t)
        if prev is not None and prev < t - 1:
            for rel, runs in self._occ.items():
                facts = self.store.relation(rel).facts
                for fact, fact_runs in runs.items():
                    if fact_runs[-1][1] == prev and fact in facts:
                        fact_runs[-1][1] = t - 1

    def _run_full(self, c: CompiledRule, t: int) -> list[FactItem]:
        return [(rel, fact, e if e < t else t) for rel, fact, e in evaluate_full(c, self.store)]  # holds now only

    def _propagate(self, items: list[FactItem], apply: Callable[[list[FactItem]], dict] | None = None) -> int:
        return self.program.loop.run(self.store, items, apply or self._apply)

    def _renew(self, t: int, given: list[FactItem], done: set[RelKey]) -> None:
        """Evaluate what ``given`` (the atoms of ``t``, which follows the last time point, as items
        holding until t) starts, before what held until ``t - 1`` expires: a fact that held then
        and holds again keeps its place in the store, its expiry raised, instead of being
        dropped and stored again (and the views are not told of it: they read their state from
        the store, the same).

        The atoms are stored, then the box windows over relations that only the stream gives
        when every fact there came again (their runs are those of t: the windows' facts are
        those drawn after the expiry; ``done``), then the rules run to their fixpoint. What they
        derive from a fact that has expired by t would hold before t only: it is not stored.
        What holds at t only after the expiry (a view's heads, the other windows, rules in full)
        seeds the rules after it, as before."""
        self._valid_from = t
        try:
            delta = self._apply(given)
            boxes: list[FactItem] = []
            relations = self.store.relations
            for aux in self.program.early_boxes:  # (every fact of the base came again: none expires)
                base = relations.get(aux.base)
                if base is not None and base.facts and len(base.facts) == len(delta.get(aux.base, ())):
                    done.add(aux.rel)
                    boxes += aux.window.facts(self, aux, t, True)
            first = [delta]

            def apply(items: list[FactItem]) -> dict:  # (the rules' first delta: the atoms' too)
                changed = self._apply(items)
                if not first:
                    return changed
                joined = first.pop()
                for rel, facts in changed.items():
                    joined.setdefault(rel, {}).update(facts)
                return joined
            self._propagate(boxes, apply)
        finally:
            self._valid_from = None

    def _apply(self, items: list[FactItem]) -> dict[RelKey, dict[tuple, int]]:
        """Store items (placing ``@`` heads, deriving diamond auxiliaries); returns the delta."""
        p = self.program
        at_heads, dia_of, tracked, on_added = p.at_heads, p.dia_of, p.tracked, self._on_added
        intensional, dirty = self.intensional, self._dirty
        t = self.t if self.t is not None else self.start
        delta: dict[RelKey, dict[tuple, int]] = {}
        keep, valid_from = self.keep, self._valid_from
        while items:
            if keep is not None:
                items = keep(items)
            if valid_from is not None and items and min(map(itemgetter(2), items)) < valid_from:  # (_renew: derived
                items = [item for item in items if item[2] >= valid_from]  # from what has expired by then)
            if at_heads:
                plain = []
                for item in items:
                    rel = item[0]
                    if rel in at_heads:  # @T head: the last argument is the time
                        fact = item[1]
                        when = self.dictionary.value(fact[-1])
                        if isinstance(when, int):
                            plain.extend(self._place(at_heads[rel], fact[:-1], when, t))
                    else:
                        plain.append(item)
            else:
                plain = items
            items = []  # the diamond auxiliaries of what changed in this pass
            new: list[tuple[RelKey, tuple]] = []
            for rel, changed in self.store.apply(plain, new=new).items():
                if changed:
                    delta.setdefault(rel, {}).update(changed)
                    if rel in on_added:
                        for tell in on_added[rel]:
                            tell(changed)
                    for aux in dia_of.get(rel, ()):
                        items.extend(_diamonds(aux.rel, changed, aux.size))
                    if rel in tracked:
                        for fact, expiry in changed.items():
                            self._note_held(rel, fact, t, expiry)
            # (what may come into the output: a new fact; one whose expiry rose held before and
            # holds on. What is dropped, _advance marks)
            dirty.update(compress(new, map(intensional.__contains__, map(itemgetter(0), new))))
        return delta

    def _place(self, rel: RelKey, fact: tuple, when: int, now: int) -> list[FactItem]:
        """``@when fact``: now, in the past (its windows learn of it) or in the future."""
        if self.keep is not None and not self.keep([(rel, fact)]):
            return []
        key = (when, rel, fact)
        if when == now:
            self._placed.add(key)
            self._given_at = now
            return [(rel, fact, now)]
        if key in self._placed or when < now and self._held_at(rel, fact, when) or when < self.start:
            return []  # (before the timeline's first time point: outside it, nothing sees it)
        self._placed.add(key)
        self._placed_now.append(key)
        if when > now:
            self._future[when].append((rel, fact))
            return []
        p = self.program
        out = [(aux.rel, fact, _add(when, aux.size)) for aux in p.dia_of.get(rel, ())
               if _add(when, aux.size) >= now]
        for aux, window in p.placed_into.get(rel, ()):
            out += window.placed(self, aux, fact, when, now)
        if any(expiry == now for _, _, expiry in out):  # (its window facts stop holding after now)
            self._given_at = now
        return out

    def _note_held(self, rel: RelKey, fact: tuple, start: int, end: int) -> None:
        """Note that ``fact`` holds throughout [start, end] (start: the current time point)."""
        runs = self._held[rel].setdefault(fact, [])
        if runs and runs[-1][1] >= start - 1:
            runs[-1][1] = max(runs[-1][1], end)
        else:
            runs.append([start, end])

    def _held_at(self, rel: RelKey, fact: tuple, when: int) -> bool:
        return any(start <= when <= end for start, end in self._held.get(rel, {}).get(fact, ()))

    # ------------------------------------------------------------ tuple windows
    def _tuple_facts(self, window: TupleWindow, t: int) -> list[FactItem]:
        """The facts that entered the tuple ``window`` at t, without a horizon; those that left
        it are removed now, with the rules' groundings built on them."""
        first, background = self._tuple_span(window.base, window.size, t)
        if window.rel in self._rederive:  # (a background removal cut the window's facts)
            window.full = True
        add, remove = window.take(background, first, t, self.store.relation(window.rel).facts)
        if remove:
            store, on_expired = self.store, self._on_expired
            for rel, fact in [(window.rel, f) for f in remove] + list(window.groundings(store, remove)):
                if store.remove(rel, fact):
                    if rel in self.intensional:
                        self._dirty.add((rel, fact))
                    for tell in on_expired.get(rel, ()):
                        tell(fact)
        return [(window.rel, f, INF) for f in add]

    def _tuple_span(self, base: RelKey, n: int, t: int) -> tuple[int, list[tuple[tuple, int, int]]]:
        """The first time point of the tuple window over the last ``n`` atoms at t, and the
        background facts of ``base`` held in it, with the first and last time point each held
        there (one removed by a change: while it held)."""
        first = self.start if self._seen_atoms < n else self._recent[-n][0]
        since = self._since
        background = [(f, max(first, since.get((base, f), first)), t)
                      for f, e in self.store.relation(base).facts.items() if e >= INF]
        if self._gone:  # removed by a change, but held in the window's time span
            background += [(f, max(first, start), end) for (rel, f), runs in self._gone.items() if rel == base
                           for start, end in runs if end >= first]
        return first, background

    # ------------------------------------------------------------------------- output
    def _output(self) -> list[tuple[RelKey, tuple]]:
        """The intensional facts in the store (all hold at t: the store was just expired) and
        those the views of sink relations hold, less the input facts of t (each once)."""
        store, inputs = self.store, self._inputs
        out: list[tuple[RelKey, tuple]] = []
        for rel in self.intensional:
            r = store.relations.get(rel)
            if r is not None and r.facts:
                out.extend(zip(repeat(rel), r.facts))
        sunk = [(rel, head) for rel, views in self._sinks.items() for view in views for head in view.heads]
        if sunk:
            if self.keep is not None:
                sunk = self.keep(sunk)
            out = list(set(out).union(sunk))
        if inputs and not self.intensional.isdisjoint(relations_of(inputs)):
            given = set(inputs)
            out = [item for item in out if item not in given]
        return out

    def format(self, output: Output) -> list[str]:
        """The output facts as canonical text, sorted."""
        return sorted(format_fact(self.dictionary, rel, f) for rel, f in output.facts)

    def atoms(self, output: Output) -> list[ir.Atom]:
        """The output facts as atoms of dotr terms, sorted as :meth:`format` sorts them."""
        d = self.dictionary
        return [fact_atom(d, rel, f) for _, rel, f in sorted((format_fact(d, rel, f), rel, f) for rel, f in output.facts)]


def _runs(by_relation: dict) -> dict:
    """Per relation and fact, its runs ``[start, end]`` as lists (which grow in place)."""
    return {rel: {fact: [list(run) for run in runs] for fact, runs in facts.items()}
            for rel, facts in by_relation.items()}


def _diamonds(rel: RelKey, changed: dict[tuple, int], size: int) -> Iterable[FactItem]:
    """The facts of the diamond auxiliary ``rel`` (window length ``size``) that the base facts
    ``changed`` (fact -> expiry) give: each holds ``size`` time points longer. The base facts of a
    time point mostly share their expiry: one addition then.

    >>> list(_diamonds("d", {(1,): 5, (2,): 5}, 3)), list(_diamonds("d", {(1,): 5, (2,): INF}, 3)) == [
    ...     ("d", (1,), 8), ("d", (2,), INF)]
    ([('d', (1,), 8), ('d', (2,), 8)], True)
    """
    expiries = set(changed.values())
    if len(expiries) == 1:
        return zip(repeat(rel), changed, repeat(_add(expiries.pop(), size)))
    return [(rel, fact, _add(expiry, size)) for fact, expiry in changed.items()]
