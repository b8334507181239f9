"""What a time point outputs, and how the records of several key groups become one: the
:class:`Result` of a time point, the ontological stage's :class:`Enriched` time point that the
temporal stage takes, and the merges of the groups' records (:func:`merge_records`,
:func:`carry_facts`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable

from dotr.rules.engine.sparql import answer_order


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
    answers: dict[str, list[dict[str, str]] | bool] = field(default_factory=dict)  # SELECT solutions, ASK answers
    #: how :attr:`facts` changed since the previous time point: (added, removed, how many facts
    #: it had), when the reasoner knows (``FactTexts.changes``)
    changes: tuple[list[str], list[str], int] | None = None

    def is_empty(self) -> bool:
        return not (self.facts or self.at or self.graphs or self.answers or self.events)

    def atoms(self) -> list:
        """:attr:`facts` as atoms of dotr terms (``pipeline.objects.atoms``)."""
        from .objects import atoms

        return atoms(self)

    def graph(self):
        """The triples of this time point as an rdflib ``Graph`` (``pipeline.objects.graph``)."""
        from .objects import graph

        return graph(self)

    def keep_changes(self, previous: set[str]) -> set[str]:
        """``--changes``: keep in :attr:`facts` only those not in ``previous`` (the facts of the
        previous time point), list in :attr:`removed` those gone; returns the facts of this one
        (``previous`` itself, changed, when :attr:`changes` says how: the cost is the changes').

        >>> result = Result(2, ["a", "b"])
        >>> sorted(result.keep_changes({"b", "c"})), result.facts, result.removed
        (['a', 'b'], ['a'], ['c'])
        >>> result = Result(3, ["a", "d"], changes=(["d"], ["b"], 2))
        >>> sorted(result.keep_changes({"a", "b"})), result.facts, result.removed
        (['a', 'd'], ['d'], ['b'])
        """
        if self.changes is not None and len(previous) == self.changes[2]:
            added, removed, _ = self.changes
            previous.difference_update(removed)
            previous.update(added)
            self.facts, self.removed = list(added), sorted(removed)
            return previous
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
    >>> merge_records([{"t": 3, "facts": [], "answers": {"A": False}}, {"t": 3, "facts": [], "answers": {"A": True}}])
    {'t': 3, 'facts': [], 'answers': {'A': True}}
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
    answers: dict[str, list | bool] = {}
    for r in records:
        for name, rows in r.get("answers", {}).items():
            if isinstance(rows, bool):  # an ASK query: true when a group's solutions are
                answers[name] = answers.get(name, False) or rows
            else:
                listed = answers.setdefault(name, [])
                assert isinstance(listed, list)  # (a query is a SELECT in every record, or an ASK)
                listed.extend(rows)
    if answers:  # (each query's rows in the order EpSparql.conclude gives them)
        merged["answers"] = {name: rows if isinstance(rows, bool) else sorted(rows, key=answer_order)
                             for name, rows in sorted(answers.items())}
    return merged


@dataclass
class Enriched:
    """The ontological stage's output at ``t`` (:meth:`Reasoner.enrich`): the stream facts, the
    conclusions (in no set order) and the events as term ids, and the times at which tagged facts
    expire."""

    t: int
    stream: list[tuple]
    conclusions: list[tuple]
    events: dict[str, list[tuple[int, ...]]]
    expiries: list[int]
    solutions: list[list[dict]] = field(default_factory=list)  # per EP-SPARQL group: var -> id
    streams: dict = field(default_factory=dict)  # for C-SPARQL: stream name (or None) -> its facts
    group: int | None = None  # the key group whose part this is (split_point), None: all of it


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
