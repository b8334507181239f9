"""The ontological stage as a user embeds it: rules + ontology in, ``(t, facts)`` in, enriched
knowledge and events out.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "rules.dotr").write_text('''@prefix : <http://ex.org/> .
... :inRoom(?s, ?r) :- :at(?s, ?l), :inRoom(?l, ?r) .
... event Smoke(?s, ?r) := select ?s ?r where { ?s a :Smoke ; :inRoom ?r } .''')
>>> _ = (d / "bg.ttl").write_text("@prefix : <http://ex.org/> . :locA :inRoom :roomA .")
>>> stage = OntologicalStage.from_files(d / "rules.dotr", [d / "bg.ttl"])
>>> from rdflib import URIRef, RDF
>>> ex = lambda n: URIRef("http://ex.org/" + n)
>>> out = stage.process(10, [(ex("s1"), RDF.type, ex("Smoke")), (ex("s1"), ex("at"), ex("locA"))])
>>> stage.decode(out.events["Smoke"])
[(Iri(value='http://ex.org/s1'), Iri(value='http://ex.org/roomA'))]
>>> [stage.format_fact(rel, f) for rel, f in stage.conclusions(10)]
['<http://ex.org/inRoom>(<http://ex.org/s1>,<http://ex.org/roomA>)']
>>> stage.process(11).events["Smoke"]
[]
"""

from __future__ import annotations

import gc
import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, cast


from dotr.rules import TimeOrderError, UsageError, check, ir
from dotr.rules.lang.collector import paused
from dotr.rules.lang.loader import CheckResult
from dotr.rules.engine.backends.dict_loops import relations_of
from dotr.rules.engine.frames import facts_of
from dotr.rules.engine.inputs import FactReader
from dotr.rules.engine.terms import FIRST_INT_ID, TermDictionary, format_fact

from .background import load_background
from .rdf_files import TripleBatch
from dotr.rules.engine.sparql.event_compiler import compile_event
from dotr.rules.engine.sparql.events import CompiledEvent, EventRuns
from .materialise import Materialiser
from .turtle import TokenTriple, intern_tokens
from dotr.rules.engine.store import INF, RelKey
from dotr.rules.engine.times import check_time, check_until

PROFILE_DIR = Path(__file__).with_name("profiles")

Fact = ir.Atom | str | tuple  # a fact in a form of rules.engine.inputs, or an RDF triple of term tokens


@dataclass
class TimePoint:
    """What the stage produced at ``t``: per event type, the solutions as tuples of term ids."""

    t: int
    events: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)


def profile_rules(name: str) -> tuple[ir.Rule, ...]:
    """The rules of a built-in profile (``rdfs``, ``rdfs_full``, ``owl2rl``)."""
    result = check(PROFILE_DIR / f"{name}.dotr")
    result.raise_for_errors()
    return tuple(s for s in result.program.statements if isinstance(s, ir.Rule))


def stage_rules(checked: CheckResult) -> tuple[list[ir.Rule], list[ir.Atom]]:
    """The ontological stage's rules (the program's, then its profiles') and the profiles' facts."""
    rules = list(checked.analysis.ontological)
    profile_facts: list[ir.Atom] = []
    for profile in dict.fromkeys(checked.program.profiles):
        for rule in profile_rules(profile):
            (profile_facts.append(rule.head) if rule.is_fact else rules.append(rule))
    return rules, profile_facts


class OntologicalStage:
    """Materialisation with expiry tags plus event extraction, per time point."""

    def __init__(self, checked: CheckResult, background: Iterable[Fact | TripleBatch] = (),
                 dictionary: TermDictionary | None = None, load: bool = True, freeze_gc: bool = False,
                 native: bool = True):
        """``native``: the facts in the compiled store (``rules.engine.backends.native_store``), maintained by
        compiled plans; False keeps them in Python dicts (the same results, slower)."""
        checked.raise_for_errors()
        self.program = checked.program
        self.dictionary = dictionary if dictionary is not None else TermDictionary()
        rules, profile_facts = stage_rules(checked)
        self.materialiser = Materialiser(rules, self.dictionary, native=native)
        self.rules = [(r, r.body) for r in rules]  # the stage's rules, profiles included
        self._read = FactReader(self.dictionary, self.program.prefixes)  # facts as given -> (relation, ids)
        self._last_t: int | None = None  # the last time point processed
        self.token_ids: dict[str, int] = {}  # a term as written in a fact -> id (pipeline.input_facts.intern_input)
        self.fact_ids: dict[str, tuple] = {}  # a fact string -> (relation, ids) (pipeline.input_facts.intern_all)
        self.store = self.materialiser.store
        #: (@profile rdfs_full) the relations _datatype(literal, datatype) and _membership(rdf:_n)
        #: that the stage states for the terms it meets, or None when no rule reads them
        self._typing = _typing_relations(rules, self.dictionary)
        self._compile_events(checked)
        if load:
            self.add_background([*self.program.facts, *profile_facts])
            self.add_background(background)
            self.materialiser.build_indexes()  # before the freeze: they are as long-lived
        if freeze_gc:  # (opt-in: it freezes the whole process's objects, the caller's too)
            # the background's terms are as many objects that Python's cyclic garbage collector
            # would otherwise rescan at every full collection (125 ms for a million: docs/api.md)
            gc.freeze()

    def _compile_events(self, checked: CheckResult) -> None:
        # events declared with the same query and parameters are one query, run once per time point
        # (as when every pattern of a rule file declares its own events)
        shared: dict[tuple, int] = {}  # definition -> its compiled event's number
        self.events: list[CompiledEvent] = []
        self._event_names: list[list[str]] = []  # per compiled event, the events it answers
        for e in self.program.events:
            if e.definition in shared:
                self._event_names[shared[e.definition]].append(e.name)
                continue
            shared[e.definition] = len(self.events)
            self.events.append(compile_event(e, self.program.prefixes, self.dictionary, checked.queries))
            self._event_names.append([e.name])
        self._runs = EventRuns(self.events)

    @classmethod
    def from_files(cls, rules: str | Path, ontologies: Iterable[str | Path] = (), classify: bool = False,
                   follow_imports: str | None = None) -> "OntologicalStage":
        """Build the stage from a rule file and ontology files (any RDF format, or OWL);
        ``follow_imports`` (``"local"``, ``"remote"``): their ``owl:imports`` too
        (``ontology.background.load_background``)."""
        return cls(check(rules), load_background(ontologies, classify, follow_imports))

    # ------------------------------------------------------------------------------ input
    def intern(self, fact: Fact) -> tuple:
        """``(relation, ids)`` of a fact (any form of ``rules.engine.inputs``: an atom, its text, a
        tuple of terms, an rdflib triple, an interned pair) or a
        :class:`~ontology.turtle.TokenTriple` in this stage's dictionary; :class:`FactError` when
        it is not a fact."""
        if type(fact) is TokenTriple:
            return intern_tokens(fact, self.dictionary, self.token_ids)
        return self._read(fact)

    def add_background(self, facts: Iterable[Fact | TripleBatch]) -> None:
        """Add facts that hold at every time point (also while streaming); a
        :class:`~ontology.rdf_files.TripleBatch` (``load_background``'s) is interned in bulk; an
        rdflib ``Graph`` gives its triples, a pandas DataFrame its rows (``rules.engine.frames``)."""
        with paused():  # (its terms and the facts' tuples live on: collections would find nothing)
            self._add_background(facts)

    def _add_background(self, facts: Iterable[Fact | TripleBatch]) -> None:
        listed = facts if isinstance(facts, list) else list(facts_of(facts))
        batches = [f for f in listed if type(f) is TripleBatch]
        typing = self._typing
        if batches:
            d = self.dictionary
            for batch in batches:
                ids = array("q", [d.intern_iri(t) if type(t) is str else d.intern(t) for t in batch.terms])
                self.materialiser.add_triples(batch.triples, ids)
                if typing is not None:
                    self.materialiser.add(_term_facts(typing, self.dictionary, [(ids, INF)]))
        items = [(*self.intern(f), INF) for f in listed if type(f) is not TripleBatch]
        self.materialiser.add(items + _terms_of(typing, self.dictionary, items) if typing is not None else items)

    def remove_background(self, facts: Iterable[Fact]) -> None:
        """Remove background facts; what only they supported goes too (DRed)."""
        self.materialiser.retract([self.intern(f) for f in facts_of(facts)])

    def process(self, t: int, facts: Iterable[Fact] = (), until: int | None = None, interned: bool = False
                ) -> TimePoint:
        """Evaluate time point ``t`` with the stream facts given for it; they hold until ``until``
        (default ``t``: DOTR semantics; ``t + r`` for a window of range r). Time points do not go
        back (the same one again adds facts to it). ``facts``: any forms of
        ``rules.engine.inputs``, an rdflib ``Graph``, a pandas DataFrame (``rules.engine.frames``).
        ``interned``: the facts are ``(relation, ids)`` of this stage's dictionary already, and
        nothing is checked (the pipeline's own path: its time points may go back once their
        facts have expired).

        When ``t`` follows the last time point, its facts are added before what held until
        ``t - 1`` expires: a fact that comes again, and what it derives, keeps its place in the
        store with its expiry raised instead of being dropped and derived again. What is derived
        then from a fact that held until ``t - 1`` only has that expiry too (the least of its
        premises'), and expires with it."""
        m = self.materialiser
        if interned:
            expiry = t if until is None else until
            pairs = cast("Iterable[tuple[RelKey, tuple]]", facts)  # (as the caller says)
        else:
            t = check_time(t)
            expiry = check_until(t, until)
            if self._last_t is not None and t < self._last_t:
                raise TimeOrderError(f"time point {t} is before {self._last_t}, processed already")
            pairs = [self.intern(f) for f in facts_of(facts)]
        renew, self._last_t = self._last_t == t - 1, t
        if not renew:
            m.advance(t, report=False)
        typing = self._typing
        if typing is None:
            m.add_held(pairs, expiry)
        else:
            items = [(*f, expiry) for f in pairs]
            m.add(items + _terms_of(typing, self.dictionary, items))
        if renew:  # (added before what held until t - 1 expires: see the docstring)
            m.advance(t, report=False)
        m.evaluate_local(t)
        return TimePoint(t, self.run_events())

    def run_events(self) -> dict[str, list[tuple]]:
        """Every event's solutions now (events with the same query share one run; queries that
        differ in their filters only, their matches: ``rules.engine.sparql.events.EventRuns``)."""
        out = {}
        for rows, names in zip(self._runs.run(self.store), self._event_names):
            for name in names:
                out[name] = rows
        return out

    def background_facts(self) -> list[tuple]:
        """The explicit background facts (the rule files' facts and the ontologies), interned."""
        return [(rel, fact) for rel, held in self.materialiser.explicit.items()
                for fact, expiry in held.items() if expiry == INF]

    def forget_nodes(self, terms: int) -> None:
        """Forget the ids of the rdflib terms met after the dictionary's first ``terms`` (before
        the dictionary forgets terms: ``TermDictionary.forget``)."""
        self._read.node_ids = {node: i for node, i in self._read.node_ids.items() if i < terms or i >= FIRST_INT_ID}

    def reset(self, terms: int) -> None:
        """Back to the background alone and to the dictionary's first ``terms`` terms (everything
        a stream added is forgotten): the state of a stage restored from a snapshot taken with
        ``terms`` terms, without re-adding the background. No background may change meanwhile."""
        self.materialiser.advance(INF, report=False)
        self.materialiser.clear_local()
        self.dictionary.truncate(terms)
        self.forget_nodes(terms)
        self.token_ids, self.fact_ids = {}, {}
        self._last_t = None
        self.store.drop([rel for rel in self.store.relations if terms <= rel[0] < FIRST_INT_ID])

    def change_rules(self, checked: CheckResult) -> None:
        """Be ``checked``'s stage from now on, its background kept: the stage's rules changed
        in place by DRed (:meth:`Materialiser.changed_rules
        <ontology.materialise.Materialiser.changed_rules>`), its events and prefixes
        replaced. ``checked`` has this stage's facts and profiles (else :class:`UsageError`:
        build its own stage); the stage holds the background alone (:meth:`reset`)."""
        if checked.program.facts != self.program.facts or checked.program.profiles != self.program.profiles:
            raise UsageError("a program with other facts or profiles needs a stage of its own")
        self.program = checked.program
        rules, _ = stage_rules(checked)
        self.materialiser = self.materialiser.changed_rules(rules)
        self.rules = [(r, r.body) for r in rules]
        self._read = FactReader(self.dictionary, self.program.prefixes)
        self._typing = _typing_relations(rules, self.dictionary)
        self._compile_events(checked)

    # ----------------------------------------------------------------------------- output
    def conclusions(self, t: int, ordered: bool = True) -> list[tuple]:
        """Facts derived at ``t`` that are neither input facts nor consequences of the background
        alone (those hold at every time point), as ``(relation, int tuple)``, sorted (unless not
        ``ordered``: the pipeline reads them as a set)."""
        if not self.rules:  # (no rule: every fact is given, none derived)
            return []
        term = self.dictionary.term
        out = self.store.tagged(t, exclude=self.materialiser.explicit)
        hidden = {rel for rel in relations_of(out) if _internal(term(rel[0]))}  # (helpers')
        if hidden:
            out = [item for item in out if item[0] not in hidden]
        if ordered:
            out.sort()
        return out

    def live_facts(self, t: int | None = None) -> Iterable[tuple]:
        """Every fact that holds (at ``t``): ``(relation, int tuple, expiry)``."""
        for rel, fact, expiry in self.store:
            if t is None or expiry >= t:
                yield rel, fact, expiry

    def lasting_facts(self, wanted: Callable[[tuple], bool]) -> Iterator[tuple]:
        """``(relation, int tuple)`` of the facts that hold for ever (the background and its
        consequences) in the relations ``wanted`` accepts: those relations only are read."""
        relations = self.store.relations
        for rel in [rel for rel in relations if wanted(rel)]:
            for fact, expiry in relations[rel].facts.items():
                if expiry >= INF:
                    yield rel, fact

    def decode(self, rows: Iterable[tuple[int, ...]]) -> list[tuple]:
        term = self.dictionary.term
        return [tuple(term(i) for i in row) for row in rows]

    def format_fact(self, rel: tuple, fact: tuple) -> str:
        """The canonical text of a fact: ``pred(arg,...)``, IRIs as ``<...>``, no spaces."""
        return format_fact(self.dictionary, rel, fact)

    # ----------------------------------------------------------------------------- state
    def snapshot(self) -> dict:
        """The stage's state as plain data (a state file's); see :meth:`restore`."""
        return {
            "terms": self.dictionary.snapshot(),
            "facts": list(self.store),
            "explicit": [((rel, fact), expiry) for rel, held in self.materialiser.explicit.items()
                         for fact, expiry in held.items()],
            "local": list(self.materialiser._local_facts),
        }

    @classmethod
    def restore(cls, checked: CheckResult, state: dict) -> "OntologicalStage":
        """A stage for the same rules, in the state ``snapshot()`` returned."""
        stage = cls(checked, dictionary=TermDictionary.restore(state["terms"]), load=False)
        stage.materialiser.restore(state["facts"], [(rel, fact, expiry) for (rel, fact), expiry in state["explicit"]],
                                   state["local"])
        return stage


_XSD_INTEGER, _XSD_DOUBLE, _XSD_STRING = ir.XSD + "integer", ir.XSD + "double", ir.XSD + "string"
_LANG_STRING = ir.RDF + "langString"
_MEMBERSHIP = re.compile(re.escape(ir.RDF) + "_[1-9][0-9]*")
#: datatypes whose literals are numbers once canonical: a literal left with one has no value
_ILL_TYPED = frozenset(ir.XSD + t for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "negativeInteger",
    "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte", "decimal", "double",
    "float"))


def _terms_of(typing: tuple[RelKey, RelKey], d: TermDictionary, items: list[tuple]) -> list[tuple]:
    """``_term_facts`` of the terms of the facts ``items`` ``(relation, ids, expiry)``."""
    return _term_facts(typing, d, (((rel[0], *ids), expiry) for rel, ids, expiry in items))


def _term_facts(typing: tuple[RelKey, RelKey], d: TermDictionary, terms: Iterable[tuple]) -> list[tuple]:
    """The facts of the relations ``typing``, _datatype and _membership (``@profile
    rdfs_full``), of the term ids of each ``(ids, expiry)`` of ``terms``, holding until that
    expiry."""
    (datatype, membership), term, iri = typing, d.term, d.intern_iri
    out: list[tuple] = []
    for ids, expiry in terms:
        for i in ids:
            if i >= FIRST_INT_ID:
                out.append((datatype, (i, iri(_XSD_INTEGER)), expiry))
                continue
            t = term(i)
            if type(t) is ir.Num:
                if type(t.value) is not bool:
                    out.append((datatype, (i, iri(_XSD_INTEGER if type(t.value) is int else _XSD_DOUBLE)), expiry))
            elif type(t) is ir.Literal:
                if t.lang:
                    out.append((datatype, (i, iri(_LANG_STRING)), expiry))
                elif t.datatype is None or t.datatype not in _ILL_TYPED:  # ("x"^^xsd:integer: no value)
                    out.append((datatype, (i, iri(t.datatype or _XSD_STRING)), expiry))
            elif type(t) is ir.Iri and _MEMBERSHIP.fullmatch(t.value):
                out.append((membership, (i,), expiry))
    return out


def _typing_relations(rules: list[ir.Rule], d: TermDictionary) -> tuple[RelKey, RelKey] | None:
    """The relations ``_datatype/2`` and ``_membership/1`` when some rule reads them, else None."""
    read = {lit.atom.pred for rule in rules for lit in rule.body if isinstance(lit, ir.AtomLiteral)}
    if ir.Name("_datatype") not in read and ir.Name("_membership") not in read:
        return None
    return (d.intern(ir.Name("_datatype")), 2), (d.intern(ir.Name("_membership")), 1)


def _internal(pred) -> bool:
    """Predicates named ``_...`` are helpers (the profiles' list rules): never output."""
    return isinstance(pred, ir.Name) and pred.value.startswith("_")
