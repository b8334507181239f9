"""The pattern engine: TESLA-like sequences over events, with T-Rex's timing conventions.

A pattern fires when its terminator (the event after ``from``) arrives; the composite event has
the terminator's time. ``within d from R`` selects candidates with time in [t_R - d, t_R) and
``between A and B`` in [t_A, t_B) (same-time events are excluded). ``each`` gives one match per
candidate, ``last`` the most recent and ``first`` the oldest candidate that satisfies its
constraints and the negations that refer to it; ``not`` invalidates a match when an event is in
its scope; aggregates range over a scope; ``consuming`` removes the selected events from later
matches of the same pattern. Patterns run in dependency order within a time point, so an
emitted composite event can terminate another pattern at the same time.

Events are kept per type in time order, with indexes on the attributes patterns join on, and are
forgotten when older than the longest look-back of any pattern. Each pattern is compiled once into
closures over the bindings (label -> event). Patterns with the same items and ``where`` (that
consume nothing) are matched once per terminator; each builds its own output from the result.

>>> from dotr.rules import parse
>>> prog = parse('''event Smoke(?area) := smoke(?area) .
... event Temp(?area, ?value) := temp(?area, ?value) .
... pattern Fire from Smoke and last Temp(area = Smoke.area, value > 45) within 300 from Smoke
...   emit Fire(area = Smoke.area, temp = Temp.value) .''')
>>> engine = PatternEngine(prog)
>>> _ = engine.step(1, {"Temp": [("area_1", 25)]}); _ = engine.step(2, {"Temp": [("area_1", 52), ("area_2", 50)]})
>>> [engine.emitted(m) for m in engine.step(4, {"Smoke": [("area_1",)]}).matches]
[{'type': 'Fire', 'pattern': 'Fire', 'attributes': {'area': 'area_1', 'temp': '52'}}]
"""

from __future__ import annotations

import gc
import hashlib
import re
from bisect import bisect_left
from heapq import heappop, heappush
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, cast

from networkx import DiGraph, NetworkXUnfeasible, topological_sort

from dotr.rules import EventError, FactError, TimeOrderError, UsageError, ir
from dotr.rules.engine.frames import is_frame
from dotr.rules.engine.inputs import term_of
from dotr.rules.engine.builtins import arith, compare
from dotr.rules.lang.ir import UNIT_MS
from dotr.rules.lang.queries import ParsedQueries
from dotr.rules.lang.queries.template import Blank, template_triples
from dotr.rules.engine.ntriples import IdTexts, term_text
from dotr.rules.engine.store import INF
from dotr.rules.engine.terms import FIRST_INT_ID, INT_OFFSET, TermDictionary, format_term
from dotr.rules.engine.times import check_time

_NO_EVENTS: tuple = ((), ())
Bindings = dict  # label -> Event


class Event(NamedTuple):
    """An event: its type, time, arrival number and attribute values (term ids)."""

    type: str
    time: int
    seq: int
    values: tuple[int | None, ...]  # (None: a composite event's attribute its pattern left unbound)


@dataclass(slots=True)
class Match:
    """One firing of a pattern: the events bound to its labels, the ``with`` values, the emitted
    composite event and the output graph: ``ntriples``, its sorted N-Triples document ("" when
    the pattern constructs nothing, or nothing bound), and ``graph``, its triples of terms (built
    when first read). Patterns that share their matching share ``bindings`` dicts: treat them as
    read-only."""

    pattern: str
    time: int
    bindings: dict[str, Event]
    values: dict[str, int] = field(default_factory=dict)
    emitted: Event | None = None
    ntriples: str = ""
    #: what its graph is made of: (pattern, with-values, t, digest)
    _terms: tuple[_Compiled, dict[str, int], int, str | None] | None = field(default=None, repr=False, compare=False)
    _graph: list[tuple] | None = field(default=None, repr=False, compare=False)

    @property
    def graph(self) -> list[tuple]:
        """The constructed triples, as dotr terms (``ir.Iri``, ``ir.Num``, ...)."""
        if self._graph is None:
            self._graph = [] if self._terms is None else self._terms[0].graph_terms(*self._terms[1:])
        return self._graph


@dataclass
class PatternOutput:
    t: int
    matches: list[Match] = field(default_factory=list)


class _Buffer:
    """The events of one type in time order, with an index per joined attribute."""

    def __init__(self, indexed: set[int]):
        self.events: list[Event] = []
        self.times: list[int] = []
        self.index: dict[int, dict[int | None, tuple[list[int], list[Event]]]] = {p: {} for p in indexed}

    def add(self, event: Event) -> None:
        self.extend([event])

    def extend(self, events: list[Event]) -> None:
        """Add events (in time order, none before those buffered)."""
        self.events += events
        self.times += [e.time for e in events]
        for p, index in self.index.items():
            for e in events:
                entry = index.get(e.values[p])
                if entry is None:
                    entry = index[e.values[p]] = ([], [])
                entry[0].append(e.time)
                entry[1].append(e)

    def scope(self, lo: int, hi: int) -> list[Event]:
        """Events with time in [lo, hi)."""
        times = self.times
        return self.events[bisect_left(times, lo):bisect_left(times, hi)]

    def forget_before(self, t: int) -> None:
        cut = bisect_left(self.times, t)
        if cut:
            del self.events[:cut], self.times[:cut]
            for index in self.index.values():
                for value in list(index):
                    times, events = index[value]
                    cut = bisect_left(times, t)
                    if cut == len(times):
                        del index[value]
                    elif cut:
                        del times[:cut], events[:cut]


def _duration(size, unit) -> int:
    return int(size) if unit is None else int(size * UNIT_MS[unit])


def _index_choice(ref: ir.EventRef, attrs: dict[str, tuple[str, ...]]) -> tuple[int, int] | None:
    """An equality constraint of ``ref`` against bound events or constants, to look candidates
    up by: (attribute position, constraint number)."""
    for n, c in enumerate(ref.constraints):
        if c.op == "=" and not isinstance(c.value, (ir.BinOp, ir.Aggregate)):
            return attrs[ref.event].index(c.attr), n
    return None


def _refs(expr) -> set[str]:
    if isinstance(expr, ir.AttrRef):
        return {expr.event}
    if isinstance(expr, ir.BinOp):
        return _refs(expr.left) | _refs(expr.right)
    if isinstance(expr, ir.Aggregate):
        out = set()
        for c in expr.constraints:
            out |= _refs(c.value)
        scope = expr.scope
        out |= {scope.ref} if isinstance(scope, ir.Within) else {scope.start, scope.end}
        return out
    return set()


_TYPE_FIELD = re.compile(r"((?:EventRef\(|Aggregate\(func='\w+', )event=)'([^']*)'")  # in a pattern's repr
_LABEL_FIELD = re.compile(r"((?:AttrRef\(event|alias|ref|start|end)=)'([^']*)'")


def _aggregates(expr):
    if isinstance(expr, ir.Aggregate):
        yield expr
    elif isinstance(expr, (ir.BinOp, ir.Comparison)):
        yield from _aggregates(expr.left)
        yield from _aggregates(expr.right)


class _Exprs:
    """Compiles the expressions of one pattern into closures over its bindings."""

    def __init__(self, engine: "PatternEngine", pattern: str, types: dict[str, str]):
        self.d, self.attrs, self.buffers = engine.dictionary, engine.attrs, engine.buffers
        self.thresholds = engine.thresholds
        self.pattern, self.types = pattern, types

    def own(self, event_type: str) -> list[Callable[[Event, Bindings], bool]]:
        """The check of the threshold of ``event_type`` when its buffer holds its family's rows
        (``PatternEngine`` with ``query_rows``), as its query compares."""
        threshold = self.thresholds.get(event_type)
        if threshold is None:
            return []
        pos, op, bound = threshold
        dvalue = self.d.value
        return [lambda e, b: (i := e.values[pos]) is not None and compare(op, dvalue(i), bound)]

    def position(self, event_type: str, attr: str) -> int:
        names = self.attrs.get(event_type, ())
        if attr not in names:
            raise UsageError(f"pattern {self.pattern}: event {event_type} has no attribute {attr}")
        return names.index(attr)

    def term(self, expr) -> Callable[[Bindings], int | None]:
        """The term id of an expression (an attribute, a constant, or a number computed)."""
        if isinstance(expr, ir.AttrRef):
            label, attr = expr.event, expr.attr
            if label not in self.types:
                raise UsageError(f"pattern {self.pattern}: no event {label} to read {attr} from")
            pos = self.position(self.types[label], attr)
            return lambda b: b[label].values[pos]
        if isinstance(expr, (ir.BinOp, ir.Aggregate)):
            value, number = self.value(expr), self.d.number
            return lambda b: number(value(b))
        const = self.d.intern(expr)
        return lambda b: const

    def value(self, expr) -> Callable[[Bindings], object]:
        """The Python value of an expression (None: undefined)."""
        if isinstance(expr, ir.BinOp):
            op, left, right = expr.op, self.value(expr.left), self.value(expr.right)
            return lambda b: arith(op, left(b), right(b))
        if isinstance(expr, ir.Aggregate):
            return self.aggregate(expr)
        if isinstance(expr, ir.AttrRef):
            term, value = self.term(expr), self.d.value
            return lambda b: None if (i := term(b)) is None else value(i)
        const = self.d.value(self.d.intern(expr))
        return lambda b: const

    def constraint(self, con: ir.Constraint, event_type: str) -> Callable[[Event, Bindings], bool]:
        """``event.attr op value``, the value evaluated on the events bound so far."""
        pos, op = self.position(event_type, con.attr), con.op
        if op in ("=", "!=") and not isinstance(con.value, (ir.BinOp, ir.Aggregate)):
            if not isinstance(con.value, ir.AttrRef):
                const = self.d.intern(con.value)
                return (lambda e, b: e.values[pos] == const) if op == "=" else (lambda e, b: e.values[pos] != const)
            term = self.term(con.value)
            return (lambda e, b: e.values[pos] == term(b)) if op == "=" else (lambda e, b: e.values[pos] != term(b))
        value, dvalue = self.value(con.value), self.d.value

        def check(e: Event, b: Bindings) -> bool:
            i = e.values[pos]
            a, v = None if i is None else dvalue(i), value(b)
            return a is not None and v is not None and compare(op, a, v)
        return check

    def comparison(self, comparison: ir.Comparison) -> Callable[[Bindings], bool]:
        op, left, right = comparison.op, comparison.left, comparison.right
        if op in ("=", "!=") and not any(isinstance(x, (ir.BinOp, ir.Aggregate)) for x in (left, right)):
            lt, rt, same = self.term(left), self.term(right), op == "="
            return lambda b: (lt(b) == rt(b)) == same
        lv, rv = self.value(left), self.value(right)

        def truth(b: Bindings) -> bool:
            x, y = lv(b), rv(b)
            return x is not None and y is not None and compare(op, x, y)
        return truth

    def scope(self, scope) -> Callable[[Bindings], tuple[int, int]]:
        if isinstance(scope, ir.Within):
            ref, size = scope.ref, _duration(scope.duration, scope.unit)
            return lambda b: ((t := b[ref].time) - size + 1, t)  # (t - size, t), as T-Rex
        start, end = scope.start, scope.end
        return lambda b: (b[start].time, b[end].time)

    def candidates(self, ref: ir.EventRef):
        """``(candidates, checks)``: ``candidates(b)`` gives the events of ``ref``'s type in its
        scope as ``(events, lo, hi)`` (``events[lo:hi]``, through the index when an equality
        constraint allows), ``checks`` the constraints left to test on each."""
        scope, buffer = self.scope(ref.scope), self.buffers[ref.event]
        choice = _index_choice(ref, self.attrs)
        checks = self.own(ref.event) + [self.constraint(con, ref.event) for n, con in enumerate(ref.constraints)
                                        if choice is None or n != choice[1]]
        if choice is None:
            def candidates(b: Bindings) -> tuple[list[Event], int, int]:
                lo, hi = scope(b)
                times = buffer.times
                return buffer.events, bisect_left(times, lo), bisect_left(times, hi)
        else:
            pos, key = choice[0], self.term(ref.constraints[choice[1]].value)
            index = buffer.index

            def candidates(b: Bindings) -> tuple[list[Event], int, int]:
                lo, hi = scope(b)
                times, events = index[pos].get(key(b), _NO_EVENTS)
                return events, bisect_left(times, lo), bisect_left(times, hi)
        return candidates, checks

    def negation(self, ref: ir.EventRef) -> Callable[[Bindings], bool]:
        """True when no event in ``ref``'s scope satisfies its constraints."""
        candidates, checks = self.candidates(ref)

        def holds(b: Bindings) -> bool:
            events, lo, hi = candidates(b)
            for n in range(lo, hi):
                e = events[n]
                if all(f(e, b) for f in checks):
                    return False
            return True
        return holds

    def aggregate(self, agg: ir.Aggregate) -> Callable[[Bindings], object]:
        scope, buffer, dvalue, func = self.scope(agg.scope), self.buffers[agg.event], self.d.value, agg.func
        pos = None if agg.attr is None else self.position(agg.event, agg.attr)
        checks = self.own(agg.event) + [self.constraint(con, agg.event) for con in agg.constraints]

        def run(b: Bindings):
            values = [None if pos is None or (i := e.values[pos]) is None else dvalue(i)
                      for e in buffer.scope(*scope(b)) if all(f(e, b) for f in checks)]
            if func == "count":
                return len(values)
            numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if func == "sum":
                return sum(numbers)
            if not numbers:
                return None
            if func == "avg":
                return sum(numbers) / len(numbers)
            return min(numbers) if func == "min" else max(numbers)
        return run


class _Step:
    """An item after the terminator (``each``, ``last`` or ``first``), compiled."""

    __slots__ = ("label", "candidates", "checks", "negations", "last", "single")

    def __init__(self, ref: ir.EventRef, exprs: _Exprs, negations: list):
        self.label = ref.label
        self.candidates, self.checks = exprs.candidates(ref)
        self.negations = negations  # those decidable once this item is bound
        self.last = ref.selection == "last"
        self.single = ref.selection in ("last", "first")


def _lines_format(lines: list[tuple[int, int, int]], const_texts: list[str], const_object_texts: list[str],
                  variables: int, blanks: list[str]) -> str:
    """The document of the triples ``lines`` (their slots: the constants, then ``variables``
    variables, then the ``blanks``) as a ``str.format`` string: field ``k`` is the (subject,
    object) texts of the ``k``-th variable, the field after them the fresh IRIs' prefix.

    >>> doc = _lines_format([(2, 0, 1), (3, 1, 2)], ["<p>", '"{x}"'], ["<p>", '"{x}"'], 1, ["b"])
    >>> print(doc.format(("<s>", '"o"'), "urn:m:"), end="")
    <s> <p> "{x}" .
    <urn:m:b> "{x}" "o" .
    """
    consts = len(const_texts)

    def text(slot: int, role: int) -> str:
        if slot < consts:
            return _as_format((const_object_texts if role else const_texts)[slot])
        if slot < consts + variables:
            return f"{{{slot - consts}[{role}]}}"
        return f"<{{{variables}}}{_as_format(blanks[slot - consts - variables])}>"

    return "".join(f"{text(s, 0)} {text(p, 0)} {text(o, 1)} .\n" for s, p, o in lines)


def _as_format(text: str) -> str:
    """``text`` in a ``str.format`` string, as it is."""
    return text.replace("{", "{{").replace("}", "}}")


class _Compiled:
    """A pattern prepared for matching: ``find`` gives the bindings a terminator completes,
    ``output`` the match of one of them."""

    def __init__(self, p: ir.PatternDecl, engine: "PatternEngine"):
        self.decl = p
        self.name = p.name
        self.refs = p.refs
        self.labels = [r.label for r in p.refs]
        self.engine = engine
        # negation item i is checked right after the last label it refers to is bound
        self.check_after: dict[int, list[int]] = defaultdict(list)
        for i, ref in enumerate(p.refs):
            if ref.selection == "not":
                used = self._labels_of(ref)
                self.check_after[max((self.labels.index(lab) for lab in used), default=0)].append(i)
        self.lookback = sum(_duration(r.scope.duration, r.scope.unit) for r in p.refs
                            if isinstance(r.scope, ir.Within))
        self.lookback += sum(_duration(a.scope.duration, a.scope.unit) for c in p.where
                             for a in _aggregates(c) if isinstance(a.scope, ir.Within))
        self.consumed: set[tuple[str, int]] = set()
        self.template = None
        construct = p.construct
        if construct is not None:
            parsed = engine.parsed if engine.parsed is not None else ParsedQueries()
            self.template = parsed.require("template", construct, lambda: template_triples(construct, engine.prefixes))
        #: each item's label -> its event type as declared (the first declared the same way): in digests
        self.declared = {r.label: engine.same_as.get(r.event, r.event) for r in p.refs if r.selection != "not"}
        self.group: int | None = None  # patterns in one group share their matching (PatternEngine)
        self.relabel: list[tuple[str, str]] | None = None  # (the group's label, this pattern's), when they differ

    def _labels_of(self, ref: ir.EventRef) -> set[str]:
        used = set()
        for c in ref.constraints:
            used |= _refs(c.value)
        if isinstance(ref.scope, ir.Within):
            used.add(ref.scope.ref)
        elif isinstance(ref.scope, ir.Between):
            used |= {ref.scope.start, ref.scope.end}
        return used

    def index_positions(self) -> list[tuple[str, int]]:
        """(event type, attribute position) of the indexes the items are looked up by."""
        return [(ref.event, choice[0]) for ref in self.refs[1:]
                if (choice := _index_choice(ref, self.engine.attrs)) is not None]

    def aggregated_types(self) -> set[str]:
        """The event types the aggregates of the items and of ``where`` range over."""
        types, todo = set(), [c.value for r in self.refs for c in r.constraints] + list(self.decl.where)
        while todo:
            for a in _aggregates(todo.pop()):
                types.add(a.event)
                todo += [c.value for c in a.constraints]
        return types

    def compile(self) -> None:
        """Compile constraints, scopes, negations and outputs into closures (once the engine's
        buffers exist)."""
        p, engine = self.decl, self.engine
        exprs = _Exprs(engine, p.name, {r.label: r.event for r in p.refs if r.selection != "not"})
        negations = {i: [exprs.negation(p.refs[j]) for j in js] for i, js in self.check_after.items()}
        first = p.refs[0]
        self.first_label = first.label
        self.first_checks = exprs.own(first.event) + [exprs.constraint(con, first.event) for con in first.constraints]
        self.first_negations = negations.get(0, [])
        self.steps = [_Step(ref, exprs, negations.get(i, [])) for i, ref in enumerate(p.refs)
                      if i > 0 and ref.selection != "not"]
        self.where = [exprs.comparison(w) for w in p.where]
        self.values = [(b.name[1:], exprs.term(b.value)) for b in p.bindings]
        self.emit = None if p.emit is None else (p.emit.event, [exprs.term(b.value) for b in p.emit.bindings])
        # the template as slots: its constants, then its variables, then its blank nodes (a fresh
        # IRI per match); each triple as three slot numbers
        self.triples: list[tuple[int, int, int]] | None = None
        #: when the lines of a match differ and sort in a known order: its document, as a format of the
        #: variables' (subject, object) texts in order, then the fresh IRIs' prefix
        self.lines: str | None = None
        self.consts: list[ir.Const] = []
        self.variables: list[str] = []
        self.blanks: list[str] = []
        if self.template is not None:
            # (a constant's slot by its term and repr: Num(1) and Num(1.0) are equal, not the same text)
            slots: dict = {}
            consts: list[ir.Const] = []
            nodes = [n for triple in self.template for n in triple]

            def key(n) -> tuple:
                return (n, repr(n)) if not isinstance(n, (ir.Var, Blank)) else (type(n), n)

            for n in nodes:
                if not isinstance(n, (ir.Var, Blank)) and key(n) not in slots:
                    slots[key(n)] = len(consts)
                    consts.append(n)
            self.variables = list(dict.fromkeys(n.name for n in nodes if isinstance(n, ir.Var)))
            self.blanks = list(dict.fromkeys(str(n) for n in nodes if isinstance(n, Blank)))
            for n in nodes:
                if isinstance(n, ir.Var):
                    slots[key(n)] = len(consts) + self.variables.index(n.name)
                elif isinstance(n, Blank):
                    slots[key(n)] = len(consts) + len(self.variables) + self.blanks.index(str(n))
            self.consts = consts
            self.const_texts = [term_text(c) for c in consts]
            self.const_object_texts = [term_text(c, True) for c in consts]
            self.triples = [(slots[key(s)], slots[key(p)], slots[key(o)]) for s, p, o in self.template]
            # one subject and distinct constant predicates: the lines of a match differ, and
            # sort as their predicates do (an IRI's text ends at its only ">")
            subjects, predicates = {s for s, _, _ in self.triples}, [p for _, p, _ in self.triples]
            if (len(subjects) == 1 and len(set(predicates)) == len(predicates)
                    and all(p < len(consts) and isinstance(consts[p], ir.Iri) for p in predicates)):
                self.lines = _lines_format(sorted(self.triples, key=lambda triple: self.const_texts[triple[1]]),
                                           self.const_texts, self.const_object_texts, len(self.variables),
                                           self.blanks)
        self.fresh = bool(self.blanks)

    def find(self, terminator: Event) -> list[Bindings]:
        """The bindings the events buffered now complete with ``terminator`` (``where`` holds)."""
        b = {self.first_label: terminator}
        for check in self.first_checks:
            if not check(terminator, b):
                return []
        for holds in self.first_negations:
            if not holds(b):
                return []
        found: list[Bindings] = []
        self._extend(0, b, found)
        if self.where:
            found = [x for x in found if all(w(x) for w in self.where)]
        return found

    def _extend(self, k: int, b: Bindings, found: list) -> None:
        steps = self.steps
        if k == len(steps):
            found.append(dict(b))
            return
        step = steps[k]
        events, lo, hi = step.candidates(b)
        consumed, checks, label = self.consumed, step.checks, step.label
        for n in range(hi - 1, lo - 1, -1) if step.last else range(lo, hi):
            e = events[n]
            if consumed and (e.type, e.seq) in consumed:
                continue
            if checks and not all(f(e, b) for f in checks):
                continue
            b[label] = e
            if all(holds(b) for holds in step.negations):
                self._extend(k + 1, b, found)
                if step.single:
                    del b[label]
                    return
            del b[label]

    def consume(self, found: list[Bindings]) -> None:
        for b in found:
            for label in self.decl.consuming:
                if label in b and label != self.first_label:
                    e = b[label]
                    self.consumed.add((e.type, e.seq))

    def output(self, b: Bindings, t: int, ident: str | None = None) -> Match:
        """The match of bindings ``b`` at ``t`` (``ident``: the digest of ``b``, if known)."""
        engine = self.engine
        values = {}
        for name, term in self.values:
            i = term(b)
            if i is not None:
                values[name] = i
        match = Match(self.name, t, b, values)
        if self.emit is not None:
            engine._seq += 1
            event_type, terms = self.emit
            match.emitted = Event(event_type, t, engine._seq, tuple(term(b) for term in terms))
        if self.triples is not None:
            # the document from the terms' texts (cached by id): no term objects on this path
            both = engine.id_texts.both
            texts = [None if (i := values.get(name)) is None else both(i) for name in self.variables]
            prefix = None
            if self.blanks:  # a fresh IRI per match
                ident = ident or engine._match_id(b, self.declared)
                prefix = f"urn:dotr:match:{self.name}:{t}:{ident}:"
            if self.lines is not None and None not in texts:
                match.ntriples = self.lines.format(*texts, prefix)
            else:
                match.ntriples = self._document(texts, prefix)
            match._terms = (self, values, t, ident)
        return match

    def _document(self, texts: list[tuple[str, str] | None], prefix: str | None) -> str:
        """The sorted N-Triples document of a match with its variables' (subject, object) ``texts``
        (None: unbound) and the fresh IRIs' ``prefix``: its triples with an unbound term left out."""
        subjects: list[str | None] = [*self.const_texts]
        objects: list[str | None] = [*self.const_object_texts]
        for pair in texts:
            s_text, o_text = (None, None) if pair is None else pair
            subjects.append(s_text)
            objects.append(o_text)
        fresh = [f"<{prefix}{label}>" for label in self.blanks]
        subjects += fresh
        objects += fresh
        return "".join(sorted({f"{subjects[s]} {subjects[p]} {objects[o]} .\n" for s, p, o in self.triples or ()
                               if subjects[s] is not None and subjects[p] is not None and objects[o] is not None}))

    def graph_terms(self, values: dict[str, int], t: int, ident: str | None) -> list[tuple]:
        """The constructed triples of a match of this pattern at ``t`` (its ``with`` values
        and digest), as dotr terms."""
        term = self.engine.dictionary.term
        terms: list[ir.Const | None] = [*self.consts]
        for name in self.variables:
            i = values.get(name)
            terms.append(None if i is None else term(i))
        if self.blanks:
            prefix = f"urn:dotr:match:{self.name}:{t}:{ident}:"
            terms += [ir.Iri(prefix + label) for label in self.blanks]
        return [triple for s, p, o in self.triples or () if None not in (triple := (terms[s], terms[p], terms[o]))]


class PatternEngine:
    """Matches the patterns of a program on per-time-point events (see the module docstring);
    ``share=False`` matches every pattern on its own (the same output, for tests and benchmarks);
    ``own_rows``: each event type reads its own rows (:meth:`read_each_type`)."""

    def __init__(self, program: ir.Program, dictionary: TermDictionary | None = None, share: bool = True,
                 parsed: ParsedQueries | None = None, query_rows: bool = False, own_rows: bool = False):
        self.dictionary = dictionary if dictionary is not None else TermDictionary()
        self._made = (program, share, query_rows)  # (read_each_type makes the engine again)
        self.id_texts = IdTexts(self.dictionary)  # the terms of the graphs built, as N-Triples
        self.prefixes = program.prefixes
        self.parsed = parsed  # the checked program's parsed construct templates
        attrs: dict[str, tuple[str, ...]] = {e.name: e.attributes for e in program.events}
        for p in program.patterns:
            if p.emit is not None:
                attrs.setdefault(p.emit.event, tuple(b.name for b in p.emit.bindings))
        self.attrs = attrs
        # events declared the same way (query and parameters) have the same rows at every time
        # point: they share one buffer, and only the first name's rows are read (``step``); not
        # with ``own_rows``, where each type is given its own rows (split by its own key)
        first: dict[tuple, str] = {}
        self.same_as: dict[str, str] = {}  # an event type -> the first declared the same way (in digests)
        for e in program.events:
            self.same_as[e.name] = first.setdefault(e.definition, e.name)
        #: an event type -> the first type given the same rows: the first declared the same way,
        #: or with ``own_rows`` itself
        self.same_rows: dict[str, str] = {name: name for name in self.same_as} if own_rows else self.same_as
        #: an event type -> the type whose buffer holds its events: the first given the same rows,
        #: or with ``query_rows`` the loosest of those declared alike but for a threshold
        self.reads: dict[str, str] = dict(self.same_rows)
        self.thresholds: dict[str, tuple[int, str, int | float]] = {}  # (attribute position, op, bound) of such a type
        self.query_rows = query_rows
        if query_rows and not own_rows:
            self._families(program)
        self.patterns = [_Compiled(p, self) for p in program.patterns]
        # dependency order: a pattern after those that emit the events it uses
        graph: DiGraph[int] = DiGraph()
        for i, c in enumerate(self.patterns):
            graph.add_node(i)
            for j, other in enumerate(self.patterns):
                if other.decl.emit is not None and other.decl.emit.event in {r.event for r in c.refs}:
                    graph.add_edge(j, i)
        try:
            self.order = cast("list[int]", list(topological_sort(graph)))  # (the nodes: pattern numbers)
        except NetworkXUnfeasible:
            raise UsageError("patterns emit events to each other in a cycle") from None
        indexed: dict[str, set[int]] = defaultdict(set)
        for c in self.patterns:
            for event_type, pos in c.index_positions():
                indexed[self.reads.get(event_type, event_type)].add(pos)
        self.buffers = {name: _Buffer(indexed.get(name, set())) for name in attrs if self.reads.get(name, name) == name}
        # the buffers filled from the events given (emitted events join theirs as they are made)
        self._read = {name: b for name, b in self.buffers.items() if self.reads.get(name, name) == name}
        self.buffers.update({name: self.buffers[same] for name, same in self.reads.items() if same != name})
        for c in self.patterns:
            c.compile()
        self._needs_digests: list[bool] = []  # per group: whether a member builds fresh IRIs
        if share:
            self._group(program)
        self.lookback = max((c.lookback for c in self.patterns), default=0)
        self._terminated: dict[str, list[int]] = defaultdict(list)  # event type -> positions in
        for pos, i in enumerate(self.order):  # ``order`` of the patterns it terminates
            event = self.patterns[i].refs[0].event
            self._terminated[self.reads.get(event, event)].append(pos)
        self._seq = 0
        self._texts: dict[int, str] = {}  # event seq -> its text in match digests
        self._shown: dict[int | None, str] = {}  # term id -> its text in match digests
        self._t: int | None = None

    def _families(self, program: ir.Program) -> None:
        """Event types declared alike but for a threshold
        (``rules.engine.sparql.event_compiler.event_threshold``) read the rows of the loosest:
        each takes those that pass its own threshold."""
        if all(e.query is None for e in program.events):  # (a threshold is a SELECT's)
            return
        from dotr.rules.engine.sparql.event_compiler import event_threshold

        families: dict[tuple, list] = defaultdict(list)
        for e in program.events:
            if self.same_as[e.name] == e.name and (found := event_threshold(e, self.prefixes, self.parsed)):
                families[found.family].append((found.looseness, e.name, found))
        for members in families.values():
            if len(members) < 2:
                continue
            loosest = min(members, key=lambda m: m[:2])[1]
            own = {name: (self.attrs[name].index(found.attribute), found.op, found.bound)
                   for _, name, found in members if name != loosest}
            for name, same in self.same_as.items():
                if same in own:
                    self.reads[name], self.thresholds[name] = loosest, own[same]
                elif same == loosest:
                    self.reads[name] = loosest

    def read_each_type(self) -> None:
        """Read every event type's own rows (none shares the buffer of the loosest type or of one
        declared the same way): for an engine given the events of its key group only, where each
        type's rows are split by its own key. Before the first step."""
        if self._t is not None:
            raise UsageError("read_each_type: the engine has evaluated a time point")
        if any(name != same for name, same in self.reads.items()):
            program, share, query_rows = self._made
            self.__init__(program, self.dictionary, share, self.parsed, query_rows, own_rows=True)  # type: ignore[misc]

    def _group(self, program: ir.Program) -> None:
        """Patterns with the same items and ``where`` find the same bindings for a terminator: they
        are matched once per time point. Not when they consume (each has its own marks) or
        aggregate over emitted events (which the dependency order does not place before them)."""
        emitted = {p.emit.event for p in program.patterns if p.emit is not None}
        groups: dict[str, list[_Compiled]] = defaultdict(list)
        for c in self.patterns:
            if not c.decl.consuming and not c.aggregated_types() & emitted:
                groups[self._shape(c)].append(c)
        for number, members in enumerate(m for m in groups.values() if len(m) > 1):
            labels = [r.label for r in members[0].refs]
            for c in members:
                c.group = number
                # the group's bindings are found with its first member's labels
                c.relabel = None if [r.label for r in c.refs] == labels else list(zip(labels, (r.label for r in c.refs)))
            self._needs_digests.append(any(c.fresh for c in members))

    def _shape(self, c: _Compiled) -> str:
        """What a pattern's matching depends on: its items and ``where``, with its labels numbered
        and its event types replaced by the first given the same rows (patterns of one shape
        find the same bindings, up to their labels)."""
        labels = {r.label: f"#{i}" for i, r in enumerate(c.refs)}
        text = repr((c.refs, c.decl.where))
        text = _TYPE_FIELD.sub(lambda m: f"{m[1]}{self.same_rows.get(m[2], m[2])!r}", text)
        return _LABEL_FIELD.sub(lambda m: f"{m[1]}{labels.get(m[2], m[2])!r}", text)

    def _unique_buffers(self) -> list[_Buffer]:
        return list({id(b): b for b in self.buffers.values()}.values())

    # ------------------------------------------------------------------------ state
    def next_change(self, last: int) -> None:
        """None: a pattern fires only when its terminator arrives."""
        return None

    def snapshot(self) -> dict:
        """The buffered events and consumption marks as plain data (a state file's); see restore."""
        return {"events": [tuple(e) for b in self._unique_buffers() for e in b.events],
                "consumed": {c.name: set(c.consumed) for c in self.patterns}, "seq": self._seq, "t": self._t}

    def restore(self, state: dict) -> None:
        """Continue from :meth:`snapshot`'s state (an engine built from the same program)."""
        for event in sorted(map(Event._make, state["events"]), key=lambda e: (e.time, e.seq)):
            self.buffers[event.type].add(event)
        for c in self.patterns:
            c.consumed = set(state["consumed"].get(c.name, ()))
        self._seq, self._t = state["seq"], state["t"]

    # ------------------------------------------------------------------------ evaluation
    def step(self, t: int, events: dict, interned: bool = False) -> PatternOutput:
        """Add the events of time point ``t`` and fire the patterns they terminate: per declared
        event type, its rows in arrival order, each a tuple of the attribute values in the
        event's parameter order (terms as ``rules.engine.inputs.term_of`` reads them), or a
        DataFrame with the attributes as columns. :class:`EventError` for an event type the
        program does not declare or a row of another length. ``interned``: the values are term
        ids of this engine's dictionary, and only the first of the types declared the same way
        is read (each, after :meth:`read_each_type`); nothing is checked (the pipeline's own
        path). An engine made with ``query_rows`` (the pipeline's: the rows are those the events'
        queries give) reads, of the types declared alike but for a threshold, the rows of the
        loosest, and is given its events interned."""
        if not interned:
            t = check_time(t)
        if self._t is not None and t <= self._t:
            raise TimeOrderError(f"time point {t} is not after {self._t}")
        if not interned:
            events = self._checked(events)
        self._t = t
        return self._step(t, events)

    def step_again(self, t: int, events: dict, interned: bool = False) -> PatternOutput:
        """More events for the time point just evaluated (graphs fed back through the
        ontological stage): they join the buffers and fire the patterns they terminate."""
        if t != self._t:
            raise TimeOrderError(f"time point {t} is not the current one ({self._t})")
        return self._step(t, events if interned else self._checked(events))

    def _checked(self, events: dict) -> dict[str, list[tuple[int, ...]]]:
        """Events as a program gives them (:meth:`step`) as the engine's rows of term ids, by the
        first name of each type given the same rows."""
        if self.query_rows:
            raise UsageError("this pattern engine reads the rows of its events' queries: give them interned")
        if not isinstance(events, dict):
            raise EventError(f"events are a dict from an event type to its rows, not {type(events).__name__}")
        intern = self.dictionary.intern
        out: dict[str, list[tuple[int, ...]]] = {}
        for name, rows in events.items():
            first = self.same_rows.get(name)
            if first is None or first not in self._read:
                emitter = "emitted by a pattern: it is not given" if name in self.attrs else "not declared"
                raise EventError(f"event type {name!r}: {emitter} (the declared events: "
                                 f"{', '.join(sorted(self.same_as))})")
            attrs = self.attrs[name]
            if is_frame(rows):
                columns = [str(c) for c in rows.columns]
                if sorted(columns) != sorted(attrs):
                    raise EventError(f"event type {name}: a DataFrame with the columns {columns}, not its "
                                     f"attributes {list(attrs)}")
                rows = list(rows[list(attrs)].itertuples(index=False, name=None))
            got = []
            for row in rows:
                if type(row) not in (tuple, list) or len(row) != len(attrs):
                    raise EventError(f"event {name}{tuple(attrs)}: the row {row!r} is not a tuple of "
                                     f"{len(attrs)} value{'s' * (len(attrs) != 1)}")
                try:
                    got.append(tuple(intern(term_of(v, self.prefixes)) for v in row))
                except FactError as err:
                    raise EventError(f"event {name}, row {row!r}: {err}") from None
            if first in out and out[first] != got:
                raise EventError(f"event types {first} and {name} are declared the same way: they have the same "
                                 f"rows (give them once)")
            out[first] = got
        return out

    def _step(self, t: int, events: dict[str, list[tuple[int, ...]]]) -> PatternOutput:
        arrived: dict[str, list[Event]] = defaultdict(list)
        for name, buffer in self._read.items():
            rows = events.get(name)
            if not rows:
                continue
            seq = self._seq
            new = [Event(name, t, seq + n, tuple(values)) for n, values in enumerate(rows, 1)]
            self._seq += len(new)
            buffer.extend(new)
            arrived[name] += new
        # the patterns whose terminators arrived (none, for most events: they are only buffered)
        terminated = self._terminated
        queue = [pos for name in arrived for pos in terminated.get(name, ())]
        if not queue:
            out = PatternOutput(t)
        elif not gc.isenabled():
            out = self._match_all(t, arrived, queue)
        else:
            # the objects a step makes (events, matches, graphs) live at least until the time point's
            # output is built: cyclic collections during the step would only traverse them again and
            # again (measured: a sixth of the conclude step at 10,000 matches per time point)
            gc.disable()
            try:
                out = self._match_all(t, arrived, queue)
            finally:
                gc.enable()
        if self.lookback < INF and t % 64 == 0:
            for buffer in self._unique_buffers():
                buffer.forget_before(t - self.lookback)
        return out

    def _match_all(self, t: int, arrived: dict[str, list[Event]], queue: list[int]) -> PatternOutput:
        """Fire the patterns at ``queue`` (positions in ``order``), terminated by the events
        ``arrived`` at ``t``; composite events a pattern emits queue the (later) patterns they
        terminate."""
        reads = self.reads
        out = PatternOutput(t)
        shared: dict[int, list] = {}  # group -> per terminator: (bindings, their digests)
        terminated = self._terminated
        queue.sort()  # (a heap: in dependency order)
        queued = set(queue)
        while queue:
            c = self.patterns[self.order[heappop(queue)]]
            self._fire(c, t, arrived[reads.get(c.refs[0].event, c.refs[0].event)], arrived, out, shared)
            if c.emit is not None and arrived.get(c.emit[0]):
                for pos in terminated.get(c.emit[0], ()):
                    if pos not in queued:
                        queued.add(pos)
                        heappush(queue, pos)
        return out

    def _fire(self, c: _Compiled, t: int, terminators: list[Event], arrived: dict[str, list[Event]],
              out: PatternOutput, shared: dict[int, list]) -> None:
        """The matches of pattern ``c`` for the terminators that arrived at ``t``."""
        if c.group is None:
            for terminator in list(terminators):
                found = c.find(terminator)
                if found:
                    self._add(c, out, arrived, [c.output(b, t) for b in found])
                    c.consume(found)
            return
        per_terminator = shared.get(c.group)
        if per_terminator is None:
            per_terminator = shared[c.group] = [
                (found, [self._match_id(b, c.declared) for b in found] if self._needs_digests[c.group]
                 else [None] * len(found))
                for terminator in list(terminators) if (found := c.find(terminator))]
        relabel = c.relabel
        for found, idents in per_terminator:
            if relabel is not None:
                found = [{mine: b[theirs] for theirs, mine in relabel if theirs in b} for b in found]
            self._add(c, out, arrived, [c.output(b, t, ident) for b, ident in zip(found, idents)])

    def _add(self, c: _Compiled, out: PatternOutput, arrived: dict[str, list[Event]], matches: list[Match]) -> None:
        """Output the matches of one terminator of ``c``; their composite events join the buffers."""
        out.matches += matches
        if c.emit is not None:
            buffer, new = self.buffers[c.emit[0]], arrived[c.emit[0]]
            for match in matches:
                if match.emitted is not None:  # (always: the pattern emits)
                    buffer.add(match.emitted)
                    new.append(match.emitted)

    def _match_id(self, bindings: Bindings, declared: dict[str, str]) -> str:
        """A digest of the events a match binds (labels, types, times, values as terms): it names
        the match the same way wherever it is found (embedded, on any Spark partition, after a
        restart), and only a match with the same events gets the same name. ``declared``: the
        type of each label as its pattern declares it (the first declared the same way), which
        an event in the buffer of the loosest type alike but for a threshold does not carry."""
        texts, shown = self._texts, self._shown
        parts = []
        for label, e in sorted(bindings.items()):
            text = texts.get(e.seq)
            if text is None:  # (its time and values: the type is the label's)
                if len(texts) > 100_000:
                    texts.clear()
                values = []
                for v in e.values:
                    value = shown.get(v)
                    if value is None:
                        if len(shown) > 100_000:
                            shown.clear()
                        value = shown[v] = "" if v is None else str(v - INT_OFFSET) if v >= FIRST_INT_ID \
                            else format_term(self.dictionary.term(v))  # ("": unbound; an integer's id holds it)
                    values.append(value)
                text = texts[e.seq] = f"@{e.time}(" + ",".join(values) + ")"
            parts.append(f"{label}={declared.get(label, e.type)}{text}")
        return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()

    def emitted(self, match: Match, terms: bool = False) -> dict | None:
        """The composite event ``match`` emitted, as plain data: ``{"type": ..., "pattern": ...,
        "attributes": {name: term}}`` (terms in canonical form, ``rules.engine.terms.format_term``;
        ``terms``: as dotr terms), or None."""
        if match.emitted is None:
            return None
        term = self.dictionary.term
        names = self.attrs[match.emitted.type]
        values = [None if v is None else term(v) for v in match.emitted.values]
        return {"type": match.emitted.type, "pattern": match.pattern, "attributes": dict(zip(
            names, values if terms else [None if value is None else format_term(value) for value in values]))}
