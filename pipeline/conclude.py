"""The second half of a time point, stage by stage: :meth:`pipeline.reasoner.Reasoner.conclude`
is a loop over these steps, in this order, each reading and adding to the time point's
:class:`Moment`:

1. ``Patterns``: the patterns match the events; the graphs they construct re-enter the ontological
   stage at the same time point while that can give new events (at most ``max_rounds`` rounds).
2. ``EpSparql``: the EP-SPARQL queries over the groups' solutions; CONSTRUCT triples re-enter the
   ontological stage the same way.
3. ``CSparql``: the C-SPARQL queries over their windows.
4. ``Ontology``: what the ontological stage concluded at t (again, if something was fed back),
   and when it changes next.
5. ``Lars``: the temporal rules over the stream facts and everything concluded above.

A step holds its engine and what it needs of the others; the reasoner builds the steps of the
engines its program has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol

from dotr.ontology import OntologicalStage
from dotr.rules.engine.sparql import answer_order
from dotr.rules.engine.ntriples import document
from dotr.rules.engine.terms import format_fact
from dotr.temporal.lars import LarsEngine
from dotr.temporal.patterns import PatternEngine

if TYPE_CHECKING:
    from dotr.ontology.csparql import CSparqlEngine
    from dotr.temporal.epsparql import EpSparqlEngine
    from dotr.pipeline.records import Enriched, Result


@dataclass
class Moment:
    """What the steps of one time point share."""

    point: "Enriched"
    result: "Result"
    graph_facts: list[tuple] = field(default_factory=list)  # interned facts of the graphs built at t
    graph_matches: list[tuple[str, object]] = field(default_factory=list)  # (N-Triples, match or query name)
    graphs: bool = False  # whether graphs were built (graph_facts holds their facts if something reads them)
    fed_back: bool = False  # whether anything re-entered the ontological stage at t
    conclusions: list[tuple] = field(default_factory=list)  # the ontological stage's, at t
    derived: set[tuple] = field(default_factory=set)  # of what is printed, the ontological stage's part
    #: of what is printed, the LARS engine's part (``Lars.held``): how it changed at t (None: not
    #: known, take it whole), and the atoms placed at t earlier (in ``Lars.held``, not printed)
    held_changes: tuple[list[tuple], list[tuple]] | None = None
    ahead: set[tuple] = field(default_factory=set)

    @property
    def t(self) -> int:
        return self.point.t


class Step(Protocol):
    """One stage's part of concluding a time point."""

    name: str  # (what ``Reasoner.on_stage`` is told)

    def conclude(self, now: Moment) -> None: ...


OntologyAt = Callable[[int, "Enriched"], OntologicalStage]  # the stage holding a point's input


class Patterns:
    """The pattern engine, its graphs fed back through the ontological stage."""

    name = "patterns"

    def __init__(self, engine: PatternEngine, ontology_at: OntologyAt, max_rounds: int,
                 intern_graphs: bool, feedback: bool):
        self.engine, self.ontology_at, self.max_rounds = engine, ontology_at, max_rounds
        self.intern_graphs = intern_graphs  # whether something (LARS, the event queries) reads the graphs
        self.feedback = feedback  # whether the graphs can change the ontological stage's events

    def conclude(self, now: Moment) -> None:
        t, engine, point = now.t, self.engine, now.point
        intern = engine.dictionary.intern
        events = point.events
        emitted = now.result.events
        seen: dict[str, set] = {}  # the events of t given to the patterns: each enters once
        for _ in range(self.max_rounds):
            out = engine.step_again(t, events, interned=True) if emitted or now.graph_facts \
                else engine.step(t, events, interned=True)
            built = []
            for match in out.matches:
                if match.ntriples:
                    now.graph_matches.append((match.ntriples, match))
                    built.append(match)
                if match.emitted is not None:
                    emitted.append(engine.emitted(match))
            if not out.matches and (emitted or now.graph_facts) or not built:
                break
            now.graphs = True
            if not self.intern_graphs:  # nothing reads the graphs' facts: no need to intern them
                break  # (their fresh IRIs would grow the dictionary at every match)
            triples = [((intern(p), 2), (intern(s), intern(o))) for match in built for s, p, o in match.graph]
            now.graph_facts.extend(triples)
            if not self.feedback:  # no event reads what the graphs hold: nothing new can follow
                break
            for name, rows in events.items():
                seen.setdefault(name, set()).update(rows)
            again = self.ontology_at(t, point).process(t, triples, interned=True)
            events = {k: [row for row in v if row not in seen.get(k, ())] for k, v in again.events.items()}
            if not any(events.values()):
                break
        now.fed_back |= bool(now.graph_facts) and self.feedback


class EpSparql:
    """The EP-SPARQL queries; their CONSTRUCT triples re-enter the ontological stage, round after
    round (at most ``max_rounds``), and join the graphs' facts."""

    name = "epsparql"

    def __init__(self, engine: EpSparqlEngine, groups: list, ontology_at: OntologyAt, max_rounds: int):
        self.engine, self.groups, self.ontology_at = engine, groups, ontology_at
        self.max_rounds = max_rounds

    def conclude(self, now: Moment) -> None:
        t, result = now.t, now.result
        out = self.engine.step(t, solutions=now.point.solutions)
        for round_ in range(self.max_rounds + 1):
            for name, rows in out.answers.items():
                if rows:
                    result.answers.setdefault(name, []).extend(rows)
            now.graph_matches.extend((document(g), name) for g, name in zip(out.graphs, out.graph_queries))
            if not out.feedback or round_ == self.max_rounds:
                break
            now.graph_facts.extend(out.feedback)
            ontology = self.ontology_at(t, now.point)
            ontology.process(t, out.feedback, interned=True)
            now.fed_back = True
            out = self.engine.step_again(t, solutions=[g.run(ontology.store) for g in self.groups])
        for rows in result.answers.values():
            rows.sort(key=answer_order)


class CSparql:
    """The C-SPARQL queries over their windows of the named streams."""

    name = "csparql"

    def __init__(self, engine: CSparqlEngine):
        self.engine = engine

    def conclude(self, now: Moment) -> None:
        out = self.engine.step(now.t, now.point.streams, interned=True)
        now.result.answers.update(out.answers)  # an evaluation over a non-empty window with no solution: []
        now.graph_matches.extend((document(g), name) for name, g in out.constructed.items() if g)


class Ontology:
    """What the ontological stage concluded at t, and when its conclusions change next
    (``expiries``, read by the reasoner's ``next_change``)."""

    name = "ontology"

    def __init__(self, stage: OntologicalStage):
        self.stage = stage
        self.expiries: list[int] = []  # when the conclusions of the last time point expire

    def conclude(self, now: Moment) -> None:
        point = now.point
        now.conclusions, self.expiries = point.conclusions, point.expiries
        if now.fed_back:
            now.conclusions = self.stage.conclusions(now.t, ordered=False)
            self.expiries = self.stage.store.expiry_times(now.t)
        elif now.graphs:  # the graphs hold at t only
            self.expiries = sorted({*point.expiries, now.t})
        now.derived = set(now.conclusions)


class Lars:
    """The temporal rules over the stream facts and everything concluded at t; atoms an ``@T``
    head places at another time are reported in ``at`` (once: not again when T comes).
    ``held`` is what the engine derived that holds at t, less what the background alone entails,
    kept from the engine's changes (``anew``: taken whole at the next time point)."""

    name = "lars"

    def __init__(self, engine: LarsEngine, printed: Callable[[tuple, tuple], bool]):
        self.engine, self.printed = engine, printed
        engine.report_facts = False  # (its changes say what holds)
        self.ahead: dict[int, set] = {}  # time -> atoms placed there by @T heads, reported in ``at``
        self.held: set[tuple] = set()
        self.anew = True

    def conclude(self, now: Moment) -> None:
        t, engine, result = now.t, self.engine, now.result
        out = engine.step(t, now.point.stream, derived=list(now.conclusions) + now.graph_facts, interned=True)
        background, held = engine.background, self.held
        if self.anew:
            self.anew = False
            self.held = {item for item in engine.held if item not in background}
        else:
            added = [item for item in out.added if item not in background]
            removed = [item for item in out.removed if item not in background]
            held.difference_update(removed)
            held.update(added)
            now.held_changes = (added, removed)
        now.ahead = self.ahead.pop(t, set())
        d = engine.dictionary
        for when, rel, fact in out.at:
            if when > t:
                self.ahead.setdefault(when, set()).add((rel, fact))
            if self.printed(rel, fact):
                result.at.setdefault(when, []).append(format_fact(d, rel, fact))
        for v in result.at.values():
            v.sort()
