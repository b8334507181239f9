"""The embedded pipeline: source -> ontological stage -> patterns -> LARS -> sink, per time point.

At each time point the stream facts go through the ontological stage (materialisation and event
extraction); the patterns match the events; the graphs they construct re-enter the ontological
stage at the same time point (new events may fire more patterns, up to ``max_rounds``); then the
LARS engine evaluates the temporal rules over the stream facts and everything the other stages
concluded at that time point. In tick mode every tick between inputs is evaluated.

>>> from dotr import examples
>>> from dotr.pipeline.reasoner import Reasoner
>>> trex = examples.path("trex")   # (an example the package carries)
>>> r = Reasoner.from_files(trex / "rules.dotr", [trex / "ontology.ttl"])
>>> out = r.step(4000, ["smoke(area_1)"])
>>> out.graphs == []
True
"""

from __future__ import annotations

import gc
import json
import time
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator

from dotr.ontology import OntologicalStage
from dotr.ontology.background import load_background
from dotr.rules import InputError, TimeOrderError, UsageError, check, ir
from dotr.rules.engine.backends.dict_loops import relations_of
from dotr.rules.engine.frames import facts_of, is_frame, stream_of
from dotr.rules.engine.guard import GUARD
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import format_fact, format_term
from dotr.rules.engine.times import check_time
from dotr.rules.lang.analysis import body_atoms
from dotr.rules.lang.loader import CheckResult
from dotr.rules.lang.queries.csparql import is_csparql
from dotr.rules.lang.queries.epsparql import is_epsparql
from dotr.temporal import Engine
from dotr.temporal.keys import JointPartition
from dotr.temporal.lars import LarsEngine
from dotr.temporal.program import LarsProgram
from dotr.temporal.patterns import PatternEngine

from . import conclude
from .conclude import Moment
from .fact_texts import FactTexts
from .history import DEFAULT_LIMIT, History, reach
from .input_facts import intern_all, intern_input
from .keys import _lars_meets_graphs, split_keys, split_point
from .records import Enriched, Result


#: a gap between inputs longer than this many ticks, evaluated tick by tick because facts hold
#: in it, is reported once (``Reasoner.on_notice``)
LONG_GAP = 10_000


class Reasoner:
    """The stages composed; ``step(t, facts)`` evaluates one time point."""

    def __init__(self, checked: CheckResult, background: Iterable = (), include_background: bool = False,
                 max_rounds: int = 10, ontology: OntologicalStage | None = None, freeze_gc: bool = False,
                 history: int | None = None, lars_program: LarsProgram | None = None):
        """``freeze_gc``: move every object of the process to the garbage collector's permanent
        generation once the background is loaded (``gc.freeze()``: the caller's objects too, so
        it is for a process that runs dotr alone, as ``dotr run`` does; docs/api.md).
        ``history``: how many time units of the stream it keeps at most for a program change
        (None: :data:`~pipeline.history.DEFAULT_LIMIT`'s; it keeps as much as its program
        reaches back, :func:`~pipeline.history.reach`). ``lars_program``: the temporal rules as an
        earlier reasoner over the same ``ontology`` compiled them (``lars.program``; reset to the
        terms it had then): they are not compiled again."""
        checked.raise_for_errors()
        self.checked = checked
        self.program = checked.program
        self.ontology = ontology if ontology is not None else OntologicalStage(checked, background)
        self.dictionary = d = self.ontology.dictionary
        self._ontology_terms = len(d)  # the terms of the rules' and background's materialisation
        temporal = list(checked.analysis.temporal)
        self.lars = LarsEngine(lars_program or temporal, dictionary=d) if temporal else None
        if self.lars is not None:  # background facts hold at every time point for every rule
            self.lars.add_background(self.ontology.lasting_facts(self.lars.uses), interned=True)
        self.patterns = PatternEngine(self.program, d, parsed=checked.queries, query_rows=True) \
            if self.program.patterns else None
        # (the query engines, the SPARQL compiler and rdflib: imported by a program with queries)
        self.queries, self._groups, self.csparql = None, [], None
        if any(is_epsparql(q.query) for q in self.program.queries):
            from dotr.rules.engine.sparql.algebra import compile_select
            from dotr.temporal.epsparql import EpSparqlEngine

            self.queries = EpSparqlEngine.from_program(self.program, d, parsed=checked.queries)
            self._groups = [compile_select(g, self.program.prefixes, d, q)
                            for g, q in zip(self.queries.groups, self.queries.group_selects)]
        if any(is_csparql(q.query) for q in self.program.queries):
            from dotr.ontology.csparql import CSparqlEngine

            self.csparql = CSparqlEngine(checked, self.ontology.background_facts(), d)
        # graphs of patterns re-enter the ontological stage when that can change its events (the
        # profiles' rules read every triple; the program's own rules never read pattern outputs)
        feedback = bool(self.program.profiles) or checked.analysis.graphs_reach_events
        self.include_background = include_background
        self.max_rounds = max_rounds
        self.ticks = self.program.timeunit == "ticks"
        outputs = self.program.outputs
        self._outputs = {d.intern(p) for p in outputs} if outputs else None
        self._type = d.intern(ir.Iri(ir.RDF_TYPE))
        self._last_t: int | None = None
        self._ontology_t: int | None = None  # the time point the ontological stage last processed
        self._events_now: dict = {}  # the events of the time point last enriched
        self._base_terms = len(d)  # the terms every reasoner built from the same files shares
        #: whether the terms have the ids a reasoner built from the files gives them, so that its
        #: temporal state restores on one (:meth:`state`): not after a program change that changed
        #: the ontological stage's rules in place (pipeline.swap), nor once restored from a whole state
        self.built_from_files = True
        self._group: tuple[JointPartition, int] | None = None
        self._background_derived: set[tuple] | None = None
        self._changes: list[tuple[list, list]] = []  # the background changes made, interned (temporal_snapshot)
        #: the stream's recent time points and the background changes, for a program change (pipeline.swap)
        self.history_limit = history if history is not None else DEFAULT_LIMIT[self.program.timeunit]
        reaches = reach(checked)
        self.history = History(self.history_limit if reaches is None else min(reaches, self.history_limit))
        self._unplaced: list[tuple[list, list]] = []  # background changes made, the time point they precede not yet known
        # the steps of conclude, one per stage the program has (pipeline.conclude)
        self._ontology_step = conclude.Ontology(self.ontology)
        self._lars_step = conclude.Lars(self.lars, self._printed) if self.lars is not None else None
        self._steps: list[conclude.Step] = []
        if self.patterns is not None:
            self._steps.append(conclude.Patterns(self.patterns, self._ontology_at, max_rounds,
                                                 feedback or _lars_meets_graphs(checked.analysis), feedback))
        if self.queries is not None:
            self._steps.append(conclude.EpSparql(self.queries, self._groups, self._ontology_at, max_rounds))
        if self.csparql is not None:
            self._steps.append(conclude.CSparql(self.csparql))
        self._steps.append(self._ontology_step)
        if self._lars_step is not None:
            self._steps.append(self._lars_step)
        self._reads_stream = self.lars is not None or feedback or self.queries is not None or self.csparql is not None
        self.last_matches: list = []
        self.last_inputs: list = []  # the stream facts of the last time point, interned
        self.on_notice: Callable[[str], None] | None = None  # told once when a long gap is evaluated tick by tick
        #: told the seconds each stage of a time point took (``"enrich"``, then each step of
        #: :meth:`conclude` by its name: ``"patterns"``, ``"queries"``, ``"lars"``, ...)
        self.on_stage: Callable[[str, float], None] | None = None
        self._noticed = False
        self._stream_rels: set[tuple] = set()  # the stream relations seen (for the arity notice)
        self._arities: dict[int, set[int]] | None = None  # plain predicate id -> the arities the program uses
        self._texts = FactTexts(self._text)  # the printed facts of the last time point
        self._reclaimed = (len(d), 0)  # (the dictionary's size, the stream terms held) at the last reclaim_terms
        self._printed_anew = True  # take the printed facts whole at the next time point, not by their changes
        #: of the last time point: the ontological stage's conclusions, the atoms placed there
        #: earlier, the stream facts (what is printed changes by these and by what LARS changed)
        self._parts: tuple[set, set, set] = (set(), set(), set())
        #: whether a time point evaluated only because the stream facts of an earlier one expired
        #: can print anything (None: to be decided at the next time point, the background changed)
        self._expiries_matter: bool | None = self._after_expiry_observable()
        if freeze_gc:  # (after everything built from the background: it is as long-lived)
            gc.freeze()

    @property
    def last_t(self) -> int | None:
        """The last time point evaluated (None before the first)."""
        return self._last_t

    @property
    def base_terms(self) -> int:
        """How many terms every reasoner built from the same files shares (the rules', the
        background's and what the engines interned at construction): later ids are the stream's."""
        return self._base_terms

    @property
    def ontology_terms(self) -> int:
        """How many terms the rules' and the background's materialisation holds."""
        return self._ontology_terms

    @classmethod
    def from_files(cls, rules: str | Path, ontologies: Iterable[str | Path] = (), *, follow_imports: str | None = None,
                   notice: Callable[[str], None] | None = None, **options) -> "Reasoner":
        """A reasoner for a rule file and ontology files; ``follow_imports`` (``"local"``,
        ``"remote"``): their ``owl:imports`` too, and ``notice`` hears of those not followed
        (``ontology.background.load_background``)."""
        return cls(check(rules), load_background(ontologies, follow_imports=follow_imports, notice=notice), **options)

    @property
    def options(self) -> dict:
        """The options it was built with (``include_background``, ``max_rounds``, ``history``)."""
        return {"include_background": self.include_background, "max_rounds": self.max_rounds,
                "history": self.history_limit}

    # ---------------------------------------------------------------------------- state
    def snapshot(self) -> dict:
        """Everything needed to continue the run later, as plain data (a state file's)."""
        return {"ontology": self.ontology.snapshot(), **self._engines_state(),
                "history": self.history.snapshot(self.dictionary), "background_changes": list(self._changes),
                "unplaced": list(self._unplaced), "terms": [self._ontology_terms, self._base_terms]}

    @classmethod
    def restore(cls, checked: CheckResult, state: dict, **options) -> "Reasoner":
        """A reasoner for the same rules that continues from ``snapshot()``'s state (the
        background is in the state)."""
        reasoner = cls(checked, ontology=OntologicalStage.restore(checked, state["ontology"]), **options)
        reasoner.built_from_files = False
        reasoner._restore_engines(state)
        if "history" in state:  # (a snapshot written before program changes has none)
            reasoner.history = History.restore(state["history"], reasoner.dictionary)
        if "terms" in state:  # (... nor these)
            reasoner._changes = [tuple(c) for c in state["background_changes"]]
            reasoner._unplaced = [tuple(c) for c in state["unplaced"]]
            reasoner._ontology_terms, reasoner._base_terms = state["terms"]
        return reasoner

    @classmethod
    def resumed(cls, state: dict, checked: CheckResult, build: Callable[[], "Reasoner"], **options) -> "Reasoner":
        """A reasoner for ``checked`` (with ``options``) continuing from ``state``
        (:meth:`state`'s): restored from it whole, or ``build()``'s (a reasoner for ``checked``
        built from the files) with its temporal state restored."""
        if "ontology" in state:
            return cls.restore(checked, state, **options)
        reasoner = build()
        reasoner.restore_temporal(state)
        return reasoner

    def state(self) -> dict:
        """What continues the run (a checkpoint's, an undo's; :func:`resumed` continues from
        it): the temporal state (:meth:`temporal_snapshot`), or the whole state
        (:meth:`snapshot`) unless :attr:`built_from_files`."""
        return self.temporal_snapshot() if self.built_from_files else self.snapshot()

    #: the stateful engines after the ontological stage, by attribute name
    _ENGINES = ("lars", "patterns", "queries", "csparql")

    def _engines(self) -> Iterator[tuple[str, Engine]]:
        """The stateful engines this program has, with their attribute names."""
        for name in self._ENGINES:
            if (engine := getattr(self, name)) is not None:
                yield name, engine

    def _engines_state(self) -> dict:
        state = dict.fromkeys(self._ENGINES)
        state.update((name, engine.snapshot()) for name, engine in self._engines())
        return {**state, "last_t": self._last_t, "ontology_expiries": self._ontology_step.expiries,
                "expiries_matter": self._expiries_matter,
                "ahead": self._lars_step.ahead if self._lars_step is not None else {}}

    def _restore_engines(self, state: dict) -> None:
        for name, engine in self._engines():
            engine.restore(state[name])
        self._last_t, self._ontology_step.expiries = state["last_t"], state.get("ontology_expiries", [])
        self._expiries_matter = state.get("expiries_matter", True)
        self._reprint()
        if self._lars_step is not None:
            self._lars_step.ahead = {when: set(atoms) for when, atoms in state.get("ahead", {}).items()}

    def _reprint(self) -> None:
        """Take what is printed whole at the next time point (the engines or the background were
        replaced or changed)."""
        self._printed_anew = True
        if self._lars_step is not None:
            self._lars_step.anew = True

    def forget_printed(self) -> None:
        """Take what is printed whole at the next time point, and report no changes for it
        (``Result.changes`` None): what was printed before is another reasoner's (a program
        change, pipeline.swap)."""
        self._texts = FactTexts(self._text)
        self._reprint()

    @property
    def conclude_needs_stream(self) -> bool:
        """Whether :meth:`conclude` reads the stream facts of an ``Enriched`` (for LARS, and to
        feed graphs back), or only its conclusions, events and solutions."""
        return self._reads_stream

    def keep_group(self, partition: JointPartition, group: int) -> None:
        """From now on conclude only ``group``'s part of each time point (:func:`split_point`):
        the reasoners of all groups, each given every time point, together output what one
        reasoner outputs: their records of a time point merged (:func:`merge_records`), or, when
        the groups evaluate different time points (:func:`carried`), all their records, empty
        ones too, merged by :func:`carry_facts`. The partition's keys must be
        :func:`split_keys`'s."""
        if split_keys(self.checked) is None:
            raise UsageError("this program's temporal stage cannot be split by key (dotr check says why)")
        if partition.events is not None and self.patterns is not None:  # (each type's rows split by its own key)
            self.patterns.read_each_type()
        if partition.facts is not None and self.lars is not None:  # (it keeps and reports its keys' facts only)
            self.lars.keep = partial(partition.facts.owned, group)
        if partition.windows is not None and self.csparql is not None:
            self.csparql.keep_group(partition.windows.keys.queries, partial(partition.windows.owns, group))
        self._group = (partition, group)

    def temporal_snapshot(self) -> dict:
        """The temporal state only (LARS, patterns, the terms added since construction, the
        background changes made): what the Spark stateful stage keeps per key; the background
        is rebuilt from the broadcast."""
        return {"terms": self.dictionary.snapshot(self._base_terms), "background_changes": list(self._changes),
                "history": self.history.snapshot(self.dictionary), "unplaced": list(self._unplaced),
                **self._engines_state()}

    def restore_temporal(self, state: dict) -> None:
        """Continue from :meth:`temporal_snapshot` (on a reasoner freshly built from the same
        files, so that the terms get the ids they had); the background changes are made again
        in the ontological stage (the temporal engines' states hold theirs)."""
        d = self.dictionary
        if len(d) != self._base_terms:
            raise UsageError("restore_temporal needs a freshly built reasoner")
        d.load(state["terms"])
        self._restore_engines(state)
        if "history" in state:  # (a state written before program changes has none: the history starts anew)
            self.history = History.restore(state["history"], d)
            self._unplaced = [tuple(c) for c in state["unplaced"]]
        m = self.ontology.materialiser
        for removed, add in state.get("background_changes", ()):
            m.retract(removed)
            m.add(add)
            self._changes.append((removed, add))
            self._background_derived = None

    def reclaim_terms(self) -> int:
        """Forget the terms the stream brought that nothing refers to any more (no fact that
        holds, no window, buffered event or partial solution, no background change): a stream
        of ever new names keeps the memory of those its windows still hold, not of every one it
        ever gave. Returns how many were forgotten. :meth:`conclude` calls it whenever the
        stream has brought more new terms than ``reclaim_every`` and than were held at the last
        reclaim (so that its cost, a pass over the state, is paid once per as many new terms).

        What refers to a term is found in the temporal state (:meth:`temporal_snapshot`), the
        facts the ontological stage holds for the last time point, the printed facts and the
        stream relations seen; the caches from texts to ids are emptied. An integer there that
        is not an id keeps the term of that id (a harmless overestimate)."""
        d, base = self.dictionary, self._base_terms
        size = len(d)
        live: set[int] = set()

        def walk(value) -> None:
            kind = type(value)
            if kind is int:
                if base <= value < size:
                    live.add(value)
            elif kind in (tuple, list, set, frozenset):
                for item in value:
                    walk(item)
            elif kind is dict:
                for key, item in value.items():
                    walk(key)
                    walk(item)

        state = self._engines_state()
        walk(state)
        walk(self._changes)
        walk(list(self.history.points))
        walk(self.history.changes)
        walk(self._unplaced)
        walk([(rel, fact) for rel, fact, expiry in self.ontology.store if expiry < INF])
        walk(list(self._texts))
        walk(self._parts)
        walk(self._stream_rels)
        walk(list(self.ontology.store.relations))  # (a relation's predicate, while it has a table)
        if self.lars is not None:
            walk(list(self.lars.store.relations))
        ontology = self.ontology
        ontology.token_ids.clear()
        ontology.fact_ids.clear()
        ontology.forget_nodes(base)
        forgotten = d.forget(base, live)
        self._reclaimed = (size, len(live))
        return forgotten

    #: how many terms the stream may add (beyond those held at the last reclaim) before
    #: :meth:`reclaim_terms` runs
    reclaim_every = 100_000

    # ------------------------------------------------------------------------- stepping
    def run(self, elements: Iterable[tuple]) -> Iterator[Result]:
        """Evaluate a stream of ``(t, facts)`` or ``(t, facts, stream name)`` (t non-decreasing;
        equal t are merged), or a pandas DataFrame with a ``t`` column (``rules.engine.frames``);
        in tick mode the ticks between inputs are evaluated too."""
        if is_frame(elements):
            elements = stream_of(elements)
        pending_t: int | None = None
        pending: dict[str | None, list] = {}
        for element in elements:
            if type(element) not in (tuple, list) or len(element) not in (2, 3):
                raise InputError(f"{element!r}: an element of a stream is (t, facts) or (t, facts, stream)")
            t, facts, stream = element if len(element) == 3 else (*element, None)
            t = check_time(t)
            if pending_t is not None and t < pending_t:
                raise TimeOrderError(f"time {t} is before {pending_t}")
            if pending_t is not None and t != pending_t:
                yield from self._advance_to(pending_t, pending)
                pending = {}
            pending_t = t
            pending.setdefault(stream, []).extend(facts)
        if pending_t is not None:
            yield from self._advance_to(pending_t, pending)

    def _advance_to(self, t: int, facts) -> Iterator[Result]:
        yield from self.between(t)
        yield self.step(t, facts)

    def between(self, t: int) -> Iterator[Result]:
        """The time points before ``t`` that are evaluated without input: in tick mode (with
        temporal rules) every tick while something holds or an event comes of the background alone
        (a pattern reads it at every tick), else the points where the output can change. A gap
        where nothing holds and nothing changes costs nothing, however long."""
        if self._last_t is not None and self.ticks and (self.lars is not None or self.csparql is not None):
            tick = self._last_t + 1
            while tick < t:
                result = self.step(tick, [])
                yield result
                tick += 1
                # nothing holds, and no event came of the background alone (the patterns would read
                # one at every tick): on to the next change
                if result.is_empty() and not any(self._events_now.values()):
                    change = self.next_change()
                    if change is None or change >= t:
                        break
                    tick = max(tick, change)
                elif t - tick > LONG_GAP and self.on_notice is not None and not self._noticed:
                    self._noticed = True
                    self.on_notice(f"facts hold at every tick from {tick - 1} on ({', '.join(result.facts[:3])}"
                                   f"{', ...' if len(result.facts) > 3 else ''}): each of the {t - tick + 1} ticks "
                                   f"before {t} is evaluated and printed (tick mode)")
        elif self._last_t is not None and not self.ticks:
            while True:
                change = self.next_change()
                if change is None or change >= t:
                    break
                yield self.step(change, [])
                if t - change > LONG_GAP and self.on_notice is not None and not self._noticed \
                        and self.next_change() == change + 1:
                    self._noticed = True
                    self.on_notice(f"the output changes at every millisecond from {change} on (as when an @T window "
                                   f"reads an atom that holds on): each of the {t - change - 1} time points before "
                                   f"{t} is evaluated and printed")

    def _after_expiry_observable(self) -> bool:
        """Whether the ontological stage, with only the background holding (as now, or after a
        time point whose stream facts expired), can give anything to print: a temporal engine or
        query reads it, the background is printed, a rule depends on a negation (what it denies
        may have expired), or an event has a solution over the background alone."""
        if self.lars is not None or self.queries is not None or self.csparql is not None or self.include_background:
            return True
        return bool(self.ontology.materialiser.local) or any(self.ontology.run_events().values())

    def next_change(self) -> int | None:
        """The first time point after the last evaluated one at which something stops holding
        (or an ``@T`` head placed something), or None. The time point after one whose stream
        facts expire is left out when nothing printed can change there (see
        ``_after_expiry_observable``): the output is the same, for half the time points."""
        last = self._last_t
        if last is None:  # (nothing evaluated yet)
            return None
        first = None
        if self._expiries_matter is not False:
            for when in self._ontology_step.expiries:
                if when >= last and (first is None or when + 1 < first):
                    first = when + 1
        for name in self._ENGINES:  # (a loop, not generators: this runs at every time point)
            engine = getattr(self, name)
            if engine is not None:
                change = engine.next_change(last)
                if change is not None and (first is None or change < first):
                    first = change
        return first

    def change_background(self, add: Iterable = (), remove: Iterable = (), *, temporal: bool = True) -> None:
        """Change the background from the next time point evaluated on: remove facts (what only
        they supported goes too, DRed), then add facts (fact strings, atoms or rdflib triples, as
        for :meth:`step`). Events, patterns, C-SPARQL windows, LARS rules and the conclusions
        see the new background at once (LARS windows see each earlier time point's).
        ``temporal=False`` changes the ontological stage only (Spark's enrich step, which
        concludes nothing). A fact that is not one raises :class:`InputError`, nothing changed."""
        ontology = self.ontology
        m = ontology.materialiser
        remove = [intern_input(ontology, f) for f in facts_of(remove)]
        add = [(*intern_input(ontology, f), INF) for f in facts_of(add)]
        removed = [f for f in remove if m.explicit.get(f[0], {}).get(f[1]) == INF]  # (only the background's)
        touched = m.retract(removed)
        m.add(add)
        self._changes.append((removed, add))
        self._unplaced.append((remove, add))  # (as asked: another program's background may hold what this one's lacks)
        self._background_derived = None
        self._reprint()
        self._expiries_matter = None  # (decided over the background alone)
        if not temporal:  # (at the next time point enriched)
            return
        if self._last_t is not None:  # the stream facts of the last time point have expired
            m.advance(self._last_t + 1, report=False)
        self._expiries_matter = self._after_expiry_observable()
        if self.lars is not None:  # its background: the background facts it reads (with their entailments)
            touched |= m.entailed(f[:2] for f in add)
            uses, store, given = self.lars.uses, ontology.store, self.lars.given
            read = [f for f in touched if uses(f[0])]
            held = {f for f in read if (store.expiry(*f) or 0) >= INF}
            self.lars.change_background([f for f in read if f in held and f not in given],
                                        [f for f in read if f in given and f not in held], interned=True)
        if self.csparql is not None:
            self.csparql.change_background([f[:2] for f in add], removed)

    def holding(self) -> tuple[set, set]:
        """What holds at the last time point evaluated, as ``(relation, int tuple)`` items: those
        that hold for ever (the background and its consequences), and the rest (the stream's facts
        still live, what the rules derived from them, the facts printed at that time point)."""
        lasting: set[tuple] = set()
        now: set[tuple] = set()
        t = self._last_t
        for rel, fact, expiry in self.ontology.live_facts(t):
            (lasting if expiry >= INF else now).add((rel, fact))
        now.update(item for item in self._texts if item not in lasting)
        return lasting, now

    @property
    def changed_background(self) -> bool:
        """Whether :meth:`change_background` changed this reasoner's background."""
        return bool(self._changes)

    def step(self, t: int, facts: Iterable | dict = ()) -> Result:
        """Evaluate time point ``t`` (after the last one evaluated) with its stream facts: fact
        strings such as ``temp(r1,25)``, ground atoms, tuples of terms, RDF triples (rdflib
        terms; an rdflib ``Graph``), a pandas DataFrame (``rules.engine.frames``); or a dict
        stream name -> facts (for C-SPARQL windows; None names the default stream). More than
        ``GUARD.limit`` facts and answers made at ``t`` raise
        :class:`~dotr.rules.engine.guard.BudgetExceeded`."""
        t = check_time(t)
        if self._last_t is not None and t <= self._last_t:
            raise TimeOrderError(f"time point {t} is not after {self._last_t}, evaluated already")
        GUARD.begin(t)
        try:
            return self.conclude(self.enrich(t, facts))
        finally:
            GUARD.end()

    def enrich(self, t: int, facts: Iterable | dict) -> Enriched:
        """The ontological stage at ``t``: everything the temporal stage needs (the first half of
        :meth:`step`; on Spark it runs on the executors, :meth:`conclude` in the stateful stage)."""
        if self.on_stage is not None:
            start = time.perf_counter()
            point = self._enrich(t, facts)
            self.on_stage("enrich", time.perf_counter() - start)
            return point
        return self._enrich(t, facts)

    def _enrich(self, t: int, facts: Iterable | dict) -> Enriched:
        t = check_time(t)
        ontology = self.ontology
        by_stream = facts if isinstance(facts, dict) else {None: facts}
        if len(by_stream) == 1:  # (one stream: the usual time point)
            [(name, items)] = by_stream.items()
            facts = intern_all(ontology, facts_of(items))
            streams = {name: facts}
        else:
            streams = {name: intern_all(ontology, facts_of(items)) for name, items in by_stream.items()}
            facts = [f for items in streams.values() for f in items]
        if self.on_notice is not None:
            self._notice_arities(facts, self.on_notice)
        history = self.history
        if history.first is None:
            history.first = t
        if self._unplaced:
            for removed, add in self._unplaced:
                history.add_change(t, removed, add)
            self._unplaced = []
        history.add_point(t, streams)
        if self._expiries_matter is None:  # (after a background change: decided over it alone)
            ontology.materialiser.advance(t, report=False)
            self._expiries_matter = self._after_expiry_observable()
        point = ontology.process(t, facts, interned=True)
        self._events_now = point.events
        self._ontology_t = t
        return Enriched(t, facts, ontology.conclusions(t, ordered=False), point.events, ontology.store.expiry_times(t),
                        [g.run(ontology.store) for g in self._groups] if self._groups else [],
                        streams if self.csparql is not None else {})

    def _notice_arities(self, facts: list[tuple], on_notice: Callable[[str], None]) -> None:
        """Tell ``on_notice`` once per relation when the stream gives a predicate with a number of
        arguments the program never uses it with (nothing reads such facts)."""
        new = relations_of(facts)
        if self._stream_rels.issuperset(new):  # (the usual time point)
            return
        new -= self._stream_rels
        self._stream_rels |= new
        if self._arities is None:
            self._arities = {}
            lookup = self.dictionary.lookup
            for stmt in self.program.statements:
                atoms = [stmt.head] if isinstance(stmt, ir.Rule) else []
                atoms += [atom for atom, _, _ in body_atoms(getattr(stmt, "body", None) or ())]
                for atom in atoms:
                    if isinstance(atom.pred, ir.Name) and (pred := lookup(atom.pred)) is not None:
                        self._arities.setdefault(pred, set()).add(len(atom.args))
        for pred, arity in sorted(new):
            used = self._arities.get(pred)
            if used and arity not in used:
                name = format_term(self.dictionary.term(pred))
                on_notice(f"the stream gives {name} with {arity} argument{'s' * (arity != 1)}, the rules use "
                               f"{name} with {' or '.join(map(str, sorted(used)))}: nothing reads those facts")

    def _ontology_at(self, t: int, point: Enriched) -> OntologicalStage:
        """This reasoner's ontological stage holding ``point``'s input (on Spark the enrich step
        ran elsewhere: process it here too)."""
        if self._ontology_t != t:
            self._events_now = self.ontology.process(t, point.stream, interned=True).events
            self._ontology_t = t
        return self.ontology

    def conclude(self, point: Enriched) -> Result:
        """Patterns (their graphs fed back through the ontological stage), queries and LARS at
        ``point.t`` (the second half of :meth:`step`): one step per stage, in order
        (``pipeline.conclude``)."""
        t = point.t
        self._last_t = t
        if self._group is not None and point.group != self._group[1]:
            partition, group = self._group
            point = split_point(point, partition)[group]
        now = conclude.Moment(point, Result(t))
        if self.on_stage is None:
            for step in self._steps:
                step.conclude(now)
        else:
            for step in self._steps:
                start = time.perf_counter()
                step.conclude(now)
                self.on_stage(step.name, time.perf_counter() - start)
        result = now.result
        result.facts = self._print(now, point.stream)
        result.changes = self._texts.changes
        matches = now.graph_matches
        if matches:
            matches.sort(key=lambda gm: gm[0])
            result.graphs = [doc for doc, _ in matches]
        self.last_matches = [m for _, m in matches] if matches else []  # the traces of result.graphs (a query's name)
        self.last_inputs = point.stream  # (what explain calls the input at last_t)
        if len(result.events) > 1:
            result.events.sort(key=json.dumps)  # (as merge_records orders the groups' events)
        size, held = self._reclaimed
        if len(self.dictionary) - size > max(self.reclaim_every, held):  # (its cost: the state, paid after as many new terms)
            self.reclaim_terms()
        return result

    def _print(self, now: Moment, given: list[tuple]) -> list[str]:
        """The sorted texts printed at ``now``: what the ontological stage concluded, the
        background's conclusions (``include_background``) and what LARS derived less the atoms
        placed at t earlier, less the stream facts (``given``); kept from the changes of each part."""
        background = self._background_conclusions() if self.include_background else frozenset()
        lars, derived, ahead, texts = self._lars_step, now.derived, now.ahead, self._texts
        held = lars.held if lars is not None else frozenset()
        last_derived, last_ahead, last_stream = self._parts
        if lars is None:
            self._parts = (derived, ahead, last_stream)  # (the stream's part is read with LARS only)
            if not (derived or last_derived or background or self._printed_anew):
                return texts.same()  # (nothing printed then or now: the usual event-only time point)
            self._printed_anew = False
            # (what is printed is what the stage concluded at t, which leaves the explicit facts
            # out, the stream's among them: no stream fact to take away unless the background's)
            return texts.update((derived | background) - set(given) if background else derived)
        stream = set(given)
        self._parts = (derived, ahead, stream)
        if not (derived or last_derived or held or background or self._printed_anew or now.held_changes):
            return texts.same()  # (nothing printed then or now: the usual event-only time point)
        changes = now.held_changes
        if self._printed_anew or changes is None:
            self._printed_anew = False
            return texts.update((derived | background | (held - ahead if ahead else held)) - stream)
        candidates = derived | last_derived | ahead | last_ahead | stream | last_stream
        candidates.update(changes[0])
        candidates.update(changes[1])
        # (set operations in C over the candidates: what of them is printed now, against before)
        printed = candidates.intersection(held)
        if ahead:
            printed -= ahead
        printed |= candidates.intersection(derived)
        if background:
            printed |= candidates.intersection(background)
        printed -= stream
        return texts.change(texts.absent(printed), texts.present(candidates - printed))

    def _background_conclusions(self) -> set[tuple]:
        """What the rules and profiles derive from the background alone (printed at every time
        point with ``include_background``): not the background facts given."""
        if self._background_derived is None:
            given = set(self.ontology.background_facts())
            derived = {(rel, fact) for rel, fact, expiry in self.ontology.live_facts() if expiry >= INF}
            if self.lars is not None:
                derived |= self.lars.background
            self._background_derived = derived - given
        return self._background_derived

    def _text(self, rel, fact) -> str:
        """The printed form of a fact, "" for one not printed."""
        return format_fact(self.dictionary, rel, fact) if self._printed(rel, fact) else ""

    def _printed(self, rel, fact) -> bool:
        """Not a helper (``_name``), and named by ``@output`` if the rules have one: its
        predicate, or for a class membership its class."""
        term = self.dictionary.term(rel[0])
        if isinstance(term, ir.Name) and term.value.startswith("_"):
            return False
        outputs = self._outputs
        return outputs is None or rel[0] in outputs or rel[0] == self._type and fact[1] in outputs
