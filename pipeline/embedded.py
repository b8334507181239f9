"""The embedded pipeline: source -> ontological stage -> patterns -> LARS -> sink, per time point.

At each time point the stream facts go through the ontological stage (materialisation and event
extraction); the patterns match the events; the graphs they construct re-enter the ontological
stage at the same time point (new events may fire more patterns, up to ``max_rounds``); then the
LARS engine evaluates the temporal rules over the stream facts and everything the other stages
concluded at that time point. In tick mode every tick between inputs is evaluated.

>>> from dotr.pipeline.embedded import Reasoner
>>> r = Reasoner.from_files("examples/trex/rules.dotr", ["examples/trex/ontology.ttl"])
>>> out = r.step(4000, ["smoke(area_1)"])
>>> out.graphs == []
True
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator


from dotr.ontology import OntologicalStage
from dotr.ontology.background import load_triples
from dotr.rules.engine.terms import format_fact
from dotr.rules import DotrError, InputError, TimeOrderError, check, ir
from dotr.rules.lang.analysis import body_atoms, pred_key
from dotr.rules.lang.loader import CheckResult
from dotr.rules.lang.parser import KEYWORDS, parse
from dotr.rules.engine.store import INF
from dotr.ontology.csparql import CSparqlEngine
from dotr.rules.engine.sparql import answer_order
from dotr.rules.engine.sparql.algebra import compile_select
from dotr.ontology.turtle import TokenTriple, intern_tokens
from dotr.rules.lang.queries.csparql import is_csparql
from dotr.rules.lang.queries.epsparql import is_epsparql
from dotr.temporal.epsparql import EpSparqlEngine, query_keys
from dotr.temporal.keys import FactKeys, JointKeys, JointPartition, QueryKeys, WindowKeys, fact_keys, partition_keys
from dotr.temporal.lars import LarsEngine
from dotr.temporal.patterns import PatternEngine

from dotr.pipeline import conclude
from dotr.pipeline.fact_texts import FactTexts
from dotr.pipeline.window_keys import csparql_keys



#: a gap between inputs longer than this many ticks, evaluated tick by tick because facts hold
#: in it, is reported once (``Reasoner.on_notice``)
LONG_GAP = 10_000


@dataclass
class Result:
    """What is output at ``t`` (docs/language.md, "How the stages compose"): derived facts, atoms
    placed at other times, graphs."""

    t: int
    facts: list[str] = field(default_factory=list)
    at: dict[int, list[str]] = field(default_factory=dict)
    graphs: list[str] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)  # composite events emitted by patterns (PatternEngine.emitted)
    removed: list[str] | None = None  # with --changes: facts that held at the previous time point
    answers: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # SELECT queries' solutions

    def is_empty(self) -> bool:
        return not (self.facts or self.at or self.graphs or self.answers or self.events)

    def keep_changes(self, previous: set[str]) -> set[str]:
        """``--changes``: keep in :attr:`facts` only those not in ``previous`` (the facts of the
        previous time point), list in :attr:`removed` those gone; returns the facts of this one.

        >>> result = Result(2, ["a", "b"])
        >>> sorted(result.keep_changes({"b", "c"})), result.facts, result.removed
        (['a', 'b'], ['a'], ['c'])
        """
        now = set(self.facts)
        self.removed = sorted(previous - now)
        self.facts = sorted(now - previous)
        return now

    def to_json(self) -> dict:
        record: dict = {"t": self.t, "facts": self.facts}
        if self.removed is not None:
            record["removed"] = self.removed
        if self.at:
            record["at"] = {str(k): v for k, v in sorted(self.at.items())}
        if self.graphs:
            record["graphs"] = self.graphs
        if self.answers:
            record["answers"] = dict(sorted(self.answers.items()))
        if self.events:
            record["events"] = self.events
        return record


def merge_records(records: list[dict]) -> dict:
    """One time point's output records (:meth:`Result.to_json`) from the groups of a split
    temporal stage as one record: facts and graphs united and sorted, and each query's answers
    joined, as one reasoner gives them.

    >>> merge_records([{"t": 3, "facts": ["b"], "graphs": ["g2"]}, {"t": 3, "facts": [], "graphs": ["g1"]}])
    {'t': 3, 'facts': ['b'], 'graphs': ['g1', 'g2']}
    >>> merge_records([{"t": 3, "facts": [], "answers": {"Q": [{"c": "b"}]}}, {"t": 3, "facts": [], "answers": {"Q": [{"c": "a"}]}}])
    {'t': 3, 'facts': [], 'answers': {'Q': [{'c': 'a'}, {'c': 'b'}]}}
    """
    merged: dict = {"t": records[0]["t"], "facts": sorted({f for r in records for f in r["facts"]})}
    if any("removed" in r for r in records):
        merged["removed"] = sorted({f for r in records for f in r.get("removed", ())})
    at: dict[str, set] = {}
    for r in records:
        for when, facts in r.get("at", {}).items():
            at.setdefault(when, set()).update(facts)
    if at:
        merged["at"] = {when: sorted(facts) for when, facts in sorted(at.items(), key=lambda item: int(item[0]))}
    graphs = sorted(g for r in records for g in r.get("graphs", ()))
    if graphs:
        merged["graphs"] = graphs
    events = sorted((e for r in records for e in r.get("events", ())), key=json.dumps)
    if events:
        merged["events"] = events
    answers: dict[str, list] = {}
    for r in records:
        for name, rows in r.get("answers", {}).items():
            answers.setdefault(name, []).extend(rows)
    if answers:  # (each query's rows in the order EpSparql.conclude gives them)
        merged["answers"] = {name: sorted(rows, key=answer_order) for name, rows in sorted(answers.items())}
    return merged


@dataclass
class Enriched:
    """The ontological stage's output at ``t`` (:meth:`Reasoner.enrich`): the stream facts, the
    conclusions and the events as term ids, and the times at which tagged facts expire."""

    t: int
    stream: list[tuple]
    conclusions: list[tuple]
    events: dict[str, list[tuple[int, ...]]]
    expiries: list[int]
    solutions: list[list[dict]] = field(default_factory=list)  # per EP-SPARQL group: var -> id
    streams: dict = field(default_factory=dict)  # for C-SPARQL: stream name (or None) -> its facts
    group: int | None = None  # the key group whose part this is (split_point), None: all of it


def split_point(point: Enriched, partition: JointPartition) -> list[Enriched]:
    """``point`` per group of a split temporal stage (:meth:`Reasoner.keep_group`), each
    engine's part by its partition: the stream facts and the ontological conclusions by the LARS
    rules' keys (those of unsplit predicates in every group), or, without LARS rules, in group 0
    only (printed once); the events by the patterns' keys; the solutions of the EP-SPARQL
    queries' groups by theirs; the stream facts of C-SPARQL windows by stream and key (every
    stream with facts named in every group)."""
    n, facts = partition.n, partition.facts
    if facts is not None:
        stream, conclusions = facts.split(point.stream), facts.split(point.conclusions)
    else:
        stream = [point.stream] + [[] for _ in range(n - 1)]
        conclusions = [point.conclusions] + [[] for _ in range(n - 1)]
    parts = zip(stream, conclusions,
                partition.events.split(point.events) if partition.events is not None else [point.events] * n,
                partition.solutions.split(point.solutions) if partition.solutions is not None else [point.solutions] * n,
                partition.windows.split_streams(point.streams) if partition.windows is not None else [point.streams] * n)
    return [replace(point, stream=own, conclusions=concluded, events=events, solutions=solutions, streams=streams,
                    group=group)
            for group, (own, concluded, events, solutions, streams) in enumerate(parts)]


def split_keys(checked: CheckResult) -> dict[str, int] | FactKeys | JointKeys | QueryKeys | WindowKeys | None:
    """How the temporal stage of these rules can be split by key, or None (:func:`split_reason`
    says why). Patterns whose graphs never re-enter the ontological stage (no profile, no event
    reading them): event type -> key attribute position (:func:`temporal.keys.partition_keys`).
    LARS rules: predicate -> key argument (:func:`temporal.keys.fact_keys`; in ms, see
    :func:`carried`). EP-SPARQL queries: each query by a variable
    (:func:`temporal.epsparql.query_keys`). C-SPARQL queries: the stream facts by key, each
    query's solutions by a variable (:func:`pipeline.window_keys.csparql_keys`). Engines of
    several kinds, each by its own keys (:class:`temporal.keys.JointKeys`), when the rules read
    and derive nothing the patterns' graphs construct."""
    return _split(checked)[0]


def split_reason(checked: CheckResult) -> str:
    """Why :func:`split_keys` found no key ("" when it found one)."""
    return _split(checked)[1]


def _split(checked: CheckResult) -> tuple[dict | None, str]:
    """Each temporal engine's keys by its own analysis; the program is split when every engine
    it has is (one engine's keys alone, several as :class:`JointKeys`)."""
    program, analysis = checked.program, checked.analysis
    keys: dict[str, object] = {}
    if program.patterns:
        if program.profiles or analysis.graphs_reach_events:
            return None, "pattern graphs re-enter the ontological stage (a profile, or an event reads them)"
        keys["events"] = partition_keys(program)
        if keys["events"] is None:
            return None, "no pattern keys" if not analysis.temporal else "LARS rules with patterns that have no keys"
    if analysis.temporal:
        keys["facts"], reason = fact_keys(analysis.temporal)
        if keys["facts"] is None:
            return None, reason
        if program.patterns and _lars_meets_graphs(analysis):
            return None, "the LARS rules read or derive what a pattern's graph constructs"
    if any(not is_csparql(q.query) for q in program.queries):
        keys["queries"], reason = query_keys(EpSparqlEngine.from_program(program, parsed=checked.queries))
        if keys["queries"] is None:
            return None, reason
    if any(is_csparql(q.query) for q in program.queries):
        keys["windows"], reason = csparql_keys(checked)
        if keys["windows"] is None:
            return None, reason
    if not keys:
        return None, "nothing temporal"
    return (next(iter(keys.values())) if len(keys) == 1 else JointKeys(**keys)), ""


def _lars_meets_graphs(analysis) -> bool:
    """Whether a temporal rule reads or derives a predicate (or class) that a pattern's graph can
    hold: only then do the LARS engine's facts and the graphs' meet."""
    return analysis.graphs_reach(pred_key(atom) for rule in analysis.temporal
                                 for atom in (rule.head, *(a for a, _, _ in body_atoms(rule.body))))


def carried(checked: CheckResult) -> bool:
    """Whether the key groups of :func:`split_keys` evaluate different time points, so that a
    group's printed facts must be carried to the time points it skips (:func:`carry_facts`):
    LARS rules in ``@timeunit ms``, where each group evaluates where its own facts change."""
    keys = split_keys(checked)
    return checked.program.timeunit != "ticks" and (
        isinstance(keys, FactKeys) or isinstance(keys, JointKeys) and keys.facts is not None)


def carry_facts(records: Iterable[tuple[int, dict]], held: dict[int, list[str]] | None = None
                ) -> tuple[list[dict], dict[int, list[str]]]:
    """The records of :func:`carried` key groups, ``(group, record)`` for every time point each
    group evaluated (empty records too), as one reasoner's, in time order: at each time point
    some group evaluated, the facts every group printed last (``held``: each group's facts at
    the last time point it evaluated before these) and the rest of that time point's records
    (:func:`merge_records`). Returns those that are not empty, and the facts each group holds
    after them.

    >>> carry_facts([(0, {"t": 5, "facts": ["a"]}), (1, {"t": 7, "facts": []}), (0, {"t": 9, "facts": []})],
    ...             {1: ["b"]})
    ([{'t': 5, 'facts': ['a', 'b']}, {'t': 7, 'facts': ['a']}], {1: [], 0: []})
    """
    by_t: dict[int, list[tuple[int, dict]]] = {}
    for group, record in records:
        by_t.setdefault(record["t"], []).append((group, record))
    held = dict(held or {})
    out = []
    for t in sorted(by_t):
        parts = by_t[t]
        for group, record in parts:
            held[group] = record["facts"]
        merged = merge_records([record for _, record in parts])
        merged["facts"] = sorted({fact for facts in held.values() for fact in facts})
        if merged["facts"] or any(key in merged for key in ("at", "graphs", "answers", "events")):
            out.append(merged)
    return out, held


def make_partition(keys: dict | FactKeys | QueryKeys | WindowKeys | JointKeys, n: int, dictionary) -> JointPartition:
    """The partition of :func:`split_keys`'s keys into ``n`` groups."""
    if not isinstance(keys, JointKeys):
        part = {FactKeys: "facts", QueryKeys: "queries", WindowKeys: "windows"}.get(type(keys), "events")
        keys = JointKeys(**{part: keys})
    return JointPartition(keys, n, dictionary)


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_IRI = r"<[^<>\"{}|^`\\\s]+>"
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+\-]?\d+)?"
_ARG = re.compile(rf"{_NAME}|{_IRI}|{_NUMBER}")
_SIMPLE_FACT = re.compile(rf"({_NAME}|{_IRI})(?:\(((?:{_NAME}|{_IRI}|{_NUMBER})(?:,(?:{_NAME}|{_IRI}|{_NUMBER}))*)\))?")


_PUNCT_SPACE = re.compile(r"\s*([(),])\s*")
_LIST_IRI = r"<[^<>\"{}|^`\\\s,()]+>"  # (one with commas or brackets: the slow path, which splits it as before)
_ONE = rf"(?:{_NAME}|{_LIST_IRI})(?:\((?:{_NAME}|{_LIST_IRI}|{_NUMBER})(?:,(?:{_NAME}|{_LIST_IRI}|{_NUMBER}))*\))?"
_SIMPLE_LIST = re.compile(rf"\s*(?:{_ONE}(?:\s*,\s*{_ONE})*)?\s*")
_ONE_FACT = re.compile(_ONE)
_TOKEN_BREAK = re.compile(r"[(),\s]+")


def _tight(text: str) -> str:
    """A fact without the spaces around its brackets and commas (``p(0, 1)`` as ``p(0,1)``, as
    Laser++ writes facts), so that it takes the fast paths; text with quotes is left alone."""
    if " " in text and '"' not in text:
        return _PUNCT_SPACE.sub(r"\1", text).strip()
    return text


def _simple_term(text: str) -> ir.Term:
    if text[0] == "<":
        return ir.Iri(text[1:-1])
    if text[0] == "-" or text[0].isdigit():
        return ir.Num(float(text) if any(ch in text for ch in ".eE") else int(text))
    return ir.Name(text)


def parse_fact(text: str, prefixes: dict[str, str] | None = None) -> ir.Atom:
    """A ground atom in rule syntax, such as ``temp(r1,25)`` or ``<http://ex.org/s1>(<http://ex.org/locA>)``;
    identifiers are constants whatever their case; prefixed names use ``prefixes`` (the rule
    file's).

    >>> parse_fact("temp(r1,-2.5)")
    Atom(pred=Name(value='temp'), args=(Name(value='r1'), Num(value=-2.5)))
    >>> parse_fact(":Sensor(:s1)", {"": "http://ex.org/"})  # a class membership: an rdf:type triple
    Atom(pred=Iri(value='http://www.w3.org/1999/02/22-rdf-syntax-ns#type'), args=(Iri(value='http://ex.org/s1'), Iri(value='http://ex.org/Sensor')))
    """
    simple = _SIMPLE_FACT.fullmatch(_tight(text))
    if simple is not None:  # names, IRIs and numbers only: no need for the grammar
        pred, args = simple.groups()
        terms = [_simple_term(a) for a in _ARG.findall(args)] if args else []
        head = _simple_term(pred)
        if not any(isinstance(x, ir.Name) and x.value in KEYWORDS for x in [head, *terms]):
            if isinstance(head, ir.Iri) and len(terms) == 1:  # a class membership: an rdf:type triple
                return ir.Atom(ir.Iri(ir.RDF_TYPE), (terms[0], head))
            return ir.Atom(head, tuple(terms))
    return parse_fact_with_grammar(text, prefixes)


def checked_fact(text: str, prefixes: dict[str, str] | None = None) -> str | ir.Atom:
    """A fact string as the stream gives it, checked: the string itself (without spaces around
    its brackets and commas) when it is a simple fact (names, IRIs and numbers, no keyword:
    :func:`intern_input` reads it without building terms), else its parsed atom
    (:class:`InputError` when it is not a fact).

    >>> checked_fact("temp(r1, 25)")  # (spaces around brackets and commas dropped)
    'temp(r1,25)'
    >>> checked_fact('name(s1,"Kitchen")')
    Atom(pred=Name(value='name'), args=(Name(value='s1'), Literal(lexical='Kitchen', datatype=None, lang=None)))
    """
    text = _tight(text)
    if _SIMPLE_FACT.fullmatch(text) is not None:
        open_ = text.find("(")
        if open_ < 0 and text not in KEYWORDS or open_ > 0 and KEYWORDS.isdisjoint(
                (text[:open_], *text[open_ + 1:-1].split(","))):
            return text
    return parse_fact(text, prefixes)


def simple_facts(text: str) -> list[str] | None:
    """The facts of a comma-separated list when every one is simple and written tight (names,
    IRIs and numbers, no space inside, no keyword): as :func:`checked_fact` gives them; else
    None. Split at ``", "``, each fact is checked on its own (:func:`_is_simple`: one set probe
    for a fact seen before); with any other separator the list is read by one regex.

    >>> simple_facts("p(0,1), q(a) ,r")
    ['p(0,1)', 'q(a)', 'r']
    >>> simple_facts("p(0, 1)"), simple_facts("p(not)"), simple_facts('p("a")')
    (None, None, None)
    """
    facts = text.strip().split(", ")  # (the common separator: each piece checked on its own)
    if all(map(_is_simple, facts)):
        return facts
    if _SIMPLE_LIST.fullmatch(text) is None or not KEYWORDS.isdisjoint(_TOKEN_BREAK.split(text)):
        return None
    return _ONE_FACT.findall(text)


def simple_fact_list(facts: list) -> list[str] | None:
    """``facts`` (a record's fact strings) when every one is simple and written tight, as
    :func:`checked_fact` gives them; else None.

    >>> simple_fact_list(["p(0,1)", "q"]), simple_fact_list(["p(0, 1)"]), simple_fact_list(["p", 1])
    (['p(0,1)', 'q'], None, None)
    """
    return facts if all(map(_is_simple, facts)) else None


def _is_simple(fact) -> bool:
    """Whether ``fact`` is a simple fact string written tight (a fact of names, IRIs and numbers,
    no keyword). The strings found simple are remembered (the last ``FACT_CACHE`` of them): a
    stream repeats its facts, and a remembered one costs one set probe."""
    if type(fact) is not str:
        return False
    if fact in _SIMPLE:
        return True
    if _ONE_FACT.fullmatch(fact) is None or not KEYWORDS.isdisjoint(_TOKEN_BREAK.split(fact)):
        return False
    if len(_SIMPLE) >= FACT_CACHE:
        _SIMPLE.clear()
    _SIMPLE.add(fact)
    return True


_SIMPLE: set[str] = set()


def intern_all(stage: OntologicalStage, facts: Iterable) -> list[tuple]:
    """:func:`intern_input` of each fact; a tight fact string seen before in one dict probe (the
    last ``FACT_CACHE`` distinct ones are kept), one whose predicate and arguments were all seen
    before in one probe each.

    >>> stage = Reasoner.from_files("examples/cooling/rules.dotr").ontology
    >>> intern_all(stage, ["temp(25)", "temp(25)"]) == [intern_input(stage, "temp(25)")] * 2
    True
    """
    known, get, out = stage.fact_ids, stage.token_ids.get, []
    append = out.append
    if len(known) > FACT_CACHE:
        known.clear()
    rdf_type = None
    for fact in facts:
        if type(fact) is str:
            hit = known.get(fact)
            if hit is not None:
                append(hit)
                continue
            if fact[-1:] == ")":
                # (split at the first bracket and the commas: when every piece is a token seen
                # before, the split was right; a token never starts as an IRI cut short does)
                open_ = fact.find("(")
                pieces = fact[open_ + 1:-1].split(",")
                ids = [get(piece) for piece in pieces]
                pred = get(fact[:open_])
                if pred is None or None in ids:
                    if not _is_simple(fact):  # (else each piece is a name, an IRI or a number)
                        ids = None
                    else:  # (ids in the order the grammar's path gives them)
                        if pred is None:
                            pred = _intern_token(stage, fact[:open_])
                        ids = [_intern_token(stage, p) if i is None else i for i, p in zip(ids, pieces)]
                if ids is not None:
                    if fact[0] == "<" and len(ids) == 1:  # a class membership: an rdf:type triple
                        if rdf_type is None:
                            rdf_type = stage.dictionary.intern(ir.Iri(ir.RDF_TYPE))
                        append(known.setdefault(fact, ((rdf_type, 2), (ids[0], pred))))
                    else:
                        append(known.setdefault(fact, ((pred, len(ids)), tuple(ids))))
                    continue
            if " " not in fact:  # (tight: a term not seen before)
                append(_intern_text(stage, fact))
                continue
        append(intern_input(stage, fact))
    return out


#: how many distinct fact strings :func:`intern_all` keeps the ids of (then it starts afresh)
FACT_CACHE = 1 << 16


def intern_input(stage: OntologicalStage, fact) -> tuple:
    """``(relation, ids)`` of an input fact for ``stage``: a fact string (``temp(25)``; the ids
    of the names, IRIs and numbers seen before come from ``stage.token_ids``), a
    :class:`~pipeline.turtle.TokenTriple`, a ground atom, an rdflib triple, or an already
    interned fact.

    >>> stage = Reasoner.from_files("examples/cooling/rules.dotr").ontology
    >>> intern_input(stage, "temp(25)") == stage.intern(parse_fact("temp(25)"))
    True
    """
    if type(fact) is TokenTriple:  # the fast Turtle reader's: term texts
        return intern_tokens(fact, stage.dictionary, stage.token_ids)
    if not isinstance(fact, str):
        return stage.intern(fact)
    text, cache = _tight(fact), stage.token_ids
    # first without a regex: split at the parentheses and commas; when every piece is a token
    # seen before (whole names, IRIs and numbers only), the split was right
    open_ = text.find("(")
    pieces = [text] if open_ < 0 else [text[:open_], *text[open_ + 1:-1].split(",")] if text[-1] == ")" else []
    ids = [cache.get(piece) for piece in pieces]
    if not ids or None in ids:
        return _intern_text(stage, text)
    if pieces[0][0] == "<" and len(ids) == 2:  # a class membership: an rdf:type triple
        return (stage.dictionary.intern(ir.Iri(ir.RDF_TYPE)), 2), (ids[1], ids[0])
    return (ids[0], len(ids) - 1), tuple(ids[1:])


def _intern_token(stage: OntologicalStage, token: str) -> int:
    """The id of a token of a simple fact not seen before (a name, IRI or number, as the
    simple-fact patterns read it; not a keyword); remembered in ``stage.token_ids``."""
    d = stage.dictionary
    if token[0].isalpha() or token[0] == "_":
        term_id = d.intern_name(token)
    elif token.isdecimal():  # (an integer has its id without the dictionary)
        term_id = d.number(int(token))
    else:
        term_id = d.intern(_simple_term(token))
    stage.token_ids[token] = term_id
    return term_id


def _intern_text(stage: OntologicalStage, text: str) -> tuple:
    """:func:`intern_input` of a tight fact string with a term not seen before (read by regex,
    its new tokens remembered), or of any other form (the grammar)."""
    cache = stage.token_ids
    simple = _SIMPLE_FACT.fullmatch(text)
    if simple is None:
        return stage.intern(parse_fact(text, stage.program.prefixes))
    pred, args = simple.groups()
    pieces = [pred, *_ARG.findall(args)] if args else [pred]
    ids = []
    for token in pieces:
        i = cache.get(token)
        if i is None:
            if token in KEYWORDS:
                return stage.intern(parse_fact(text, stage.program.prefixes))
            i = _intern_token(stage, token)
        ids.append(i)
    if pieces[0][0] == "<" and len(ids) == 2:  # a class membership: an rdf:type triple
        return (stage.dictionary.intern(ir.Iri(ir.RDF_TYPE)), 2), (ids[1], ids[0])
    return (ids[0], len(ids) - 1), tuple(ids[1:])


def parse_fact_with_grammar(text: str, prefixes: dict[str, str] | None = None) -> ir.Atom:
    """:func:`parse_fact` through the rule grammar (every form; the fast path's reference)."""
    declared = "".join(f"@prefix {p}: <{iri}> .\n" for p, iri in (prefixes or {}).items())
    try:
        rule = parse(f"{declared}_fact :- {text} .", "<record>").rules[0]
    except DotrError as err:
        raise InputError(f"not a fact: {text!r}") from err
    if len(rule.body) != 1 or not isinstance(rule.body[0], ir.AtomLiteral) or rule.body[0].negated:
        raise InputError(f"not a fact: {text!r}")
    atom = rule.body[0].atom
    if isinstance(atom.pred, ir.Var):
        atom = ir.Atom(ir.Name(atom.pred.name), atom.args)
    return ir.Atom(atom.pred, tuple(ir.Name(a.name) if isinstance(a, ir.Var) else a for a in atom.args))


class Reasoner:
    """The stages composed; ``step(t, facts)`` evaluates one time point."""

    def __init__(self, checked: CheckResult, background: Iterable = (), include_background: bool = False,
                 max_rounds: int = 10, ontology: OntologicalStage | None = None):
        checked.raise_for_errors()
        self.checked = checked
        self.program = checked.program
        self.ontology = ontology if ontology is not None else OntologicalStage(checked, background)
        self.dictionary = d = self.ontology.dictionary
        self._ontology_terms = len(d)  # the terms of the rules' and background's materialisation
        temporal = list(checked.analysis.temporal)
        self.lars = LarsEngine(temporal, dictionary=d) if temporal else None
        if self.lars is not None:  # background facts hold at every time point for every rule
            self.lars.add_background(self.ontology.lasting_facts(self.lars.uses))
        self.patterns = PatternEngine(self.program, d, parsed=checked.queries) if self.program.patterns else None
        self.queries = EpSparqlEngine.from_program(self.program, d, parsed=checked.queries) \
            if any(is_epsparql(q.query) for q in self.program.queries) else None
        self._groups = [compile_select(g, self.program.prefixes, d, q)
                        for g, q in zip(self.queries.groups, self.queries.group_selects)] \
            if self.queries is not None else []
        registered = [q for q in self.program.queries if is_csparql(q.query)]
        self.csparql = CSparqlEngine(checked, self.ontology.background_facts(), d) if registered else None
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
        self._base_terms = len(d)  # the terms every reasoner built from the same files shares
        self._group: tuple[JointPartition, int] | None = None
        self._background_derived: set[tuple] | None = None
        self._changes: list[tuple[list, list]] = []  # the background changes made, interned (temporal_snapshot)
        # the steps of conclude, one per stage the program has (pipeline.conclude)
        self._ontology_step = conclude.Ontology(self.ontology, self._background_conclusions if include_background
                                                else None)
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
        self.on_notice: Callable[[str], None] | None = None  # told once when a long gap is evaluated tick by tick
        self._noticed = False
        self._stream_rels: set[tuple] = set()  # the stream relations seen (for the arity notice)
        self._arities: dict[int, set[int]] | None = None  # plain predicate id -> the arities the program uses
        self._texts = FactTexts(self._text)  # the printed facts of the last time point
        #: whether a time point evaluated only because the stream facts of an earlier one expired
        #: can print anything (None: to be decided at the next time point, the background changed)
        self._expiries_matter: bool | None = self._after_expiry_observable()

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
    def from_files(cls, rules: str | Path, ontologies: Iterable[str | Path] = (), **options) -> "Reasoner":
        background = [t for path in ontologies for t in load_triples(path)]
        return cls(check(rules), background, **options)

    # ---------------------------------------------------------------------------- state
    def snapshot(self) -> dict:
        """Everything needed to continue the run later, as plain (picklable) data."""
        return {"ontology": self.ontology.snapshot(), **self._engines_state()}

    @classmethod
    def restore(cls, checked: CheckResult, state: dict, **options) -> "Reasoner":
        """A reasoner for the same rules that continues from ``snapshot()``'s state (the
        background is in the state)."""
        reasoner = cls(checked, ontology=OntologicalStage.restore(checked, state["ontology"]), **options)
        reasoner._restore_engines(state)
        return reasoner

    #: the stateful engines after the ontological stage (each a ``temporal.Engine``)
    _ENGINES = ("lars", "patterns", "queries", "csparql")

    def _engines_state(self) -> dict:
        state = {name: engine.snapshot() if (engine := getattr(self, name)) is not None else None
                 for name in self._ENGINES}
        return {**state, "last_t": self._last_t, "ontology_expiries": self._ontology_step.expiries,
                "expiries_matter": self._expiries_matter,
                "ahead": self._lars_step.ahead if self._lars_step is not None else {}}

    def _restore_engines(self, state: dict) -> None:
        for name in self._ENGINES:
            if (engine := getattr(self, name)) is not None:
                engine.restore(state[name])
        self._last_t, self._ontology_step.expiries = state["last_t"], state.get("ontology_expiries", [])
        self._expiries_matter = state.get("expiries_matter", True)
        if self._lars_step is not None:
            self._lars_step.ahead = {when: set(atoms) for when, atoms in state.get("ahead", {}).items()}

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
            raise ValueError("this program's temporal stage cannot be split by key")
        if partition.facts is not None and self.lars is not None:  # (it keeps and reports its keys' facts only)
            self.lars.keep = partial(partition.facts.owned, group)
        if partition.windows is not None and self.csparql is not None:
            self.csparql.keep_group(partition.windows.keys.queries, partial(partition.windows.owns, group))
        self._group = (partition, group)

    def temporal_snapshot(self) -> dict:
        """The temporal state only (LARS, patterns, the terms added since construction, the
        background changes made): what the Spark stateful stage keeps per key; the background
        is rebuilt from the broadcast."""
        return {"terms": self.dictionary.snapshot()[self._base_terms:], "background_changes": list(self._changes),
                **self._engines_state()}

    def restore_temporal(self, state: dict) -> None:
        """Continue from :meth:`temporal_snapshot` (on a reasoner freshly built from the same
        files, so that the terms get the ids they had); the background changes are made again
        in the ontological stage (the temporal engines' states hold theirs)."""
        d = self.dictionary
        if len(d) != self._base_terms:
            raise ValueError("restore_temporal needs a freshly built reasoner")
        for term in state["terms"]:
            d.intern(term)
        self._restore_engines(state)
        m = self.ontology.materialiser
        for removed, add in state.get("background_changes", ()):
            m.retract(removed)
            m.add(add)
            self._changes.append((removed, add))
            self._background_derived = None

    # ------------------------------------------------------------------------- stepping
    def run(self, elements: Iterable[tuple]) -> Iterator[Result]:
        """Evaluate a stream of ``(t, facts)`` or ``(t, facts, stream name)`` (t non-decreasing;
        equal t are merged); in tick mode the ticks between inputs are evaluated too."""
        pending_t, pending = None, {}
        for element in elements:
            t, facts, stream = element if len(element) == 3 else (*element, None)
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
        temporal rules) every tick while something holds, else the points where the output can
        change. A gap where nothing holds and nothing changes costs nothing, however long."""
        if self._last_t is not None and self.ticks and (self.lars is not None or self.csparql is not None):
            tick = self._last_t + 1
            while tick < t:
                result = self.step(tick, [])
                yield result
                tick += 1
                if result.is_empty():  # nothing holds: on to the next change
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
        candidates = [when + 1 for when in self._ontology_step.expiries if when >= last] \
            if self._expiries_matter is not False else []
        for name in self._ENGINES:
            if (engine := getattr(self, name)) is not None:
                candidates.append(engine.next_change(last))
        return min((c for c in candidates if c is not None), default=None)

    def change_background(self, add: Iterable = (), remove: Iterable = (), *, temporal: bool = True) -> None:
        """Change the background from the next time point evaluated on: remove facts (what only
        they supported goes too, DRed), then add facts (fact strings, atoms or rdflib triples, as
        for :meth:`step`). Events, patterns, C-SPARQL windows, LARS rules and the conclusions
        see the new background at once (LARS windows see each earlier time point's).
        ``temporal=False`` changes the ontological stage only (Spark's enrich step, which
        concludes nothing). A fact that is not one raises :class:`InputError`, nothing changed."""
        ontology = self.ontology
        m = ontology.materialiser
        remove = [intern_input(ontology, f) for f in remove]
        add = [(*intern_input(ontology, f), INF) for f in add]
        removed = [f for f in remove if m.explicit.get(f[0], {}).get(f[1]) == INF]  # (only the background's)
        touched = m.retract(removed)
        m.add(add)
        self._changes.append((removed, add))
        self._background_derived = None
        self._expiries_matter = None  # (decided over the background alone)
        if not temporal:  # (at the next time point enriched)
            return
        if self._last_t is not None:  # the stream facts of the last time point have expired
            m.advance(self._last_t + 1, report=False)
        self._expiries_matter = self._after_expiry_observable()
        if self.lars is not None:  # its background: the background facts it reads (with their entailments)
            touched |= m.entailed(f[:2] for f in add)
            uses, store, given = self.lars.uses, ontology.store, self.lars.given
            touched = [f for f in touched if uses(f[0])]
            held = {f for f in touched if (store.expiry(*f) or 0) >= INF}
            self.lars.change_background([f for f in touched if f in held and f not in given],
                                        [f for f in touched if f in given and f not in held])
        if self.csparql is not None:
            self.csparql.change_background([f[:2] for f in add], removed)

    @property
    def changed_background(self) -> bool:
        """Whether :meth:`change_background` changed this reasoner's background."""
        return bool(self._changes)

    def step(self, t: int, facts: Iterable | dict) -> Result:
        """Evaluate time point ``t`` with its stream facts: ground atoms, fact strings such as
        ``temp(r1,25)``, or RDF triples (rdflib terms); or a dict stream name -> facts (for
        C-SPARQL windows; None names the default stream)."""
        return self.conclude(self.enrich(t, facts))

    def enrich(self, t: int, facts: Iterable | dict) -> Enriched:
        """The ontological stage at ``t``: everything the temporal stage needs (the first half of
        :meth:`step`; on Spark it runs on the executors, :meth:`conclude` in the stateful stage)."""
        ontology = self.ontology
        by_stream = facts if isinstance(facts, dict) else {None: facts}
        streams = {name: intern_all(ontology, items) for name, items in by_stream.items()}
        facts = [f for items in streams.values() for f in items]
        if self.on_notice is not None:
            self._notice_arities(facts)
        if self._expiries_matter is None:  # (after a background change: decided over it alone)
            ontology.materialiser.advance(t, report=False)
            self._expiries_matter = self._after_expiry_observable()
        point = ontology.process(t, facts, interned=True)
        self._ontology_t = t
        return Enriched(t, facts, ontology.conclusions(t), point.events, ontology.store.expiry_times(t),
                        [g.run(ontology.store) for g in self._groups],
                        streams if self.csparql is not None else {})

    def _notice_arities(self, facts: list[tuple]) -> None:
        """Tell ``on_notice`` once per relation when the stream gives a predicate with a number of
        arguments the program never uses it with (nothing reads such facts)."""
        new = {f[0] for f in facts} - self._stream_rels
        if not new:
            return
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
                name = self.dictionary.term(pred).value
                self.on_notice(f"the stream gives {name} with {arity} argument{'s' * (arity != 1)}, the rules use "
                               f"{name} with {' or '.join(map(str, sorted(used)))}: nothing reads those facts")

    def _ontology_at(self, t: int, point: Enriched) -> OntologicalStage:
        """This reasoner's ontological stage holding ``point``'s input (on Spark the enrich step
        ran elsewhere: process it here too)."""
        if self._ontology_t != t:
            self.ontology.process(t, point.stream, interned=True)
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
        for step in self._steps:
            step.conclude(now)
        result = now.result
        result.facts = self._texts.update(now.derived - set(point.stream))
        now.graph_matches.sort(key=lambda gm: gm[0])
        result.graphs = [doc for doc, _ in now.graph_matches]
        self.last_matches = [m for _, m in now.graph_matches]  # the traces of result.graphs (a query's name)
        result.events.sort(key=json.dumps)  # (as merge_records orders the groups' events)
        return result

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
