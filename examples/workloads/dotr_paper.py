"""DOTR's synthetic evaluation workload (Margara et al., "Efficient Temporal Reasoning on
Streams of Events with DOTR", ESWC 2018, section 5, with its defaults): 500 sensors on objects
placed in 5 rooms, a Datalog rule deriving each sensor's room, pattern rules ``from A and last
B(room = A.room) within 30 s from A`` over SPARQL events with a FILTER, extra Datalog rules and
background triples. Readings are ``:sensorK :read_valA v`` (the terminators) or
``:sensorK :read_valB v``, ``EX`` the namespace.

>>> from dotr.rules import check_text
>>> checked = check_text(program(rules=2))
>>> checked.ok, [p.name for p in checked.program.patterns], len(background(10))
(True, ['P0', 'P1'], 520)
"""

from __future__ import annotations

import random

from rdflib import Literal, URIRef

EX = "http://dotr.example.org/bench#"
Triple = tuple[URIRef, URIRef, URIRef | Literal]


def program(rules: int = 50, length: int = 2, selection: str = "last", extra: int = 10,
            own_events: bool = False, distinct_filters: bool = False) -> str:
    """The rule file; ``own_events``: every pattern with its own event declarations (as the
    paper's rules, each written alone), else the patterns share one declaration per event;
    ``distinct_filters`` (with ``own_events``): each pattern's events filter with a threshold of
    their own (``?v >= r``, r the pattern's number), as the paper's rules have their own."""
    lines = [f"@prefix : <{EX}> .", "@timeunit ms .",
             ":is_in_room(?s, ?r) :- :equips(?s, ?o), :placed_in(?o, ?r) ."]
    lines += [f":extra{i}(?s, ?n) :- :equips(?s, ?o), :attr{i % 5}(?o, ?n) ." for i in range(extra)]
    names = ["A", "B", "C", "D", "E", "F"][:length]
    for suffix in [str(r) for r in range(rules)] if own_events else [""]:
        for n in names:
            pred = "read_valA" if n == "A" else f"read_val{n}"
            threshold = suffix if distinct_filters and suffix else "0"
            lines.append(f"event {n}{suffix}(?s, ?room, ?v) := select ?s ?room ?v where {{ ?s :{pred} ?v . "
                         f"?s :is_in_room ?room filter(?v >= {threshold}) }} .")
    for r in range(rules):
        a = f"A{r}" if own_events else "A"
        items = "".join(f"\n   and {selection} {n}{a[1:]}(room = {a}.room) within 30 s from {prev}{a[1:]}"
                        for prev, n in zip(names, names[1:]))
        lines.append(f"pattern P{r}\n  from {a}{items}\n  construct {{ _:x a :Alert{r % 5} ; :room ?room }}"
                     f"\n  with ?room = {a}.room .")
    return "\n".join(lines)


def background(extra_triples: int, sensors: int = 500, rooms: int = 5) -> list[Triple]:
    """The background as rdflib triples: each sensor on an object, each object in a room, and
    ``extra_triples`` attributes of the objects (which the extra rules read)."""
    u = lambda n: URIRef(EX + n)  # noqa: E731
    out: list[Triple] = []
    for s in range(sensors):
        out.append((u(f"sensor{s}"), u("equips"), u(f"object{s % (rooms * 2)}")))
    for o in range(rooms * 2):
        out.append((u(f"object{o}"), u("placed_in"), u(f"room{o % rooms}")))
    rnd = random.Random(3)
    for i in range(extra_triples):
        out.append((u(f"object{rnd.randrange(rooms * 2)}"), u(f"attr{i % 5}"), Literal(i)))
    return out
