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
forgotten when older than the longest look-back of any pattern.

>>> from rules import parse
>>> prog = parse('''event Smoke(?area) := smoke(?area) .
... event Temp(?area, ?value) := temp(?area, ?value) .
... pattern Fire from Smoke and last Temp(area = Smoke.area, value > 45) within 300 from Smoke
...   emit Fire(area = Smoke.area, temp = Temp.value) .''')
>>> engine = PatternEngine(prog)
>>> d = engine.dictionary
>>> a1, a2 = d.intern(ir.Name("area_1")), d.intern(ir.Name("area_2"))
>>> n = lambda v: d.intern(ir.Num(v))
>>> _ = engine.step(1, {"Temp": [(a1, n(25))]}); _ = engine.step(2, {"Temp": [(a1, n(52)), (a2, n(50))]})
>>> [engine.describe(m) for m in engine.step(4, {"Smoke": [(a1,)]}).matches]
['Fire(area=area_1, temp=52) @4']
"""

from __future__ import annotations

import bisect
import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx
from rdflib import BNode, Variable as RdfVariable

from rules import ir
from rules.builtins import arith, compare
from rules.ir import UNIT_MS
from rules.sparql import parse_template, rdf_term
from rules.terms import TermDictionary, format_term

INF = 1 << 62


@dataclass(frozen=True)
class Event:
    """An event: its type, time, arrival number and attribute values (term ids)."""

    type: str
    time: int
    seq: int
    values: tuple[int, ...]


@dataclass
class Match:
    """One firing of a pattern: the events bound to its labels, the ``with`` values, the emitted
    composite event and the output graph (triples of terms)."""

    pattern: str
    time: int
    bindings: dict[str, Event]
    values: dict[str, int] = field(default_factory=dict)
    emitted: Event | None = None
    graph: list[tuple] = field(default_factory=list)


@dataclass
class PatternOutput:
    t: int
    matches: list[Match] = field(default_factory=list)


class _Buffer:
    """The events of one type in time order, with an index per joined attribute."""

    def __init__(self, indexed: set[int]):
        self.events: list[Event] = []
        self.times: list[int] = []
        self.indexed = indexed
        self.index: dict[int, dict[int, tuple[list[int], list[Event]]]] = {p: {} for p in indexed}

    def add(self, event: Event) -> None:
        self.events.append(event)
        self.times.append(event.time)
        for p in self.indexed:
            times, events = self.index[p].setdefault(event.values[p], ([], []))
            times.append(event.time)
            events.append(event)

    def scope(self, lo: int, hi: int, pos: int | None = None, value: int | None = None) -> list[Event]:
        """Events with time in [lo, hi), all or those whose attribute ``pos`` is ``value``."""
        if pos is None:
            times, events = self.times, self.events
        else:
            times, events = self.index[pos].get(value, ((), ()))
        return events[bisect.bisect_left(times, lo):bisect.bisect_left(times, hi)]

    def forget_before(self, t: int) -> None:
        cut = bisect.bisect_left(self.times, t)
        if cut:
            self.events, self.times = self.events[cut:], self.times[cut:]
            for p in self.indexed:
                self.index[p] = {}
            for e in self.events:
                for p in self.indexed:
                    times, events = self.index[p].setdefault(e.values[p], ([], []))
                    times.append(e.time)
                    events.append(e)


def _duration(size, unit) -> int:
    return int(size) if unit is None else int(size * UNIT_MS[unit])


class _Compiled:
    """A pattern prepared for matching: label positions, constraint functions, index choices."""

    def __init__(self, p: ir.PatternDecl, attrs: dict[str, tuple[str, ...]], engine: "PatternEngine"):
        self.decl = p
        self.name = p.name
        self.refs = p.refs
        self.labels = [r.label for r in p.refs]
        self.types = {r.label: r.event for r in p.refs if r.selection != "not"}
        self.attrs = attrs
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
        if p.construct is not None:
            triples, diags = parse_template(p.construct, engine.prefixes)
            if triples is None:
                raise ValueError(diags[0].message)
            self.template = triples

    def _labels_of(self, ref: ir.EventRef) -> set[str]:
        used = set()
        for c in ref.constraints:
            used |= _refs(c.value)
        if isinstance(ref.scope, ir.Within):
            used.add(ref.scope.ref)
        elif isinstance(ref.scope, ir.Between):
            used |= {ref.scope.start, ref.scope.end}
        return used

    def index_choice(self, ref: ir.EventRef) -> tuple[int, ir.Constraint] | None:
        """An equality constraint against bound events or constants: look candidates up by it."""
        for c in ref.constraints:
            if c.op == "=" and not isinstance(c.value, (ir.BinOp, ir.Aggregate)):
                return self.attrs[ref.event].index(c.attr), c
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


def _aggregates(expr):
    if isinstance(expr, ir.Aggregate):
        yield expr
    elif isinstance(expr, (ir.BinOp, ir.Comparison)):
        yield from _aggregates(expr.left)
        yield from _aggregates(expr.right)


class PatternEngine:
    """Matches the patterns of a program on per-time-point events (see the module docstring)."""

    def __init__(self, program: ir.Program, dictionary: TermDictionary | None = None):
        self.dictionary = dictionary if dictionary is not None else TermDictionary()
        self.prefixes = program.prefixes
        attrs: dict[str, tuple[str, ...]] = {e.name: e.attributes for e in program.events}
        for p in program.patterns:
            if p.emit is not None:
                attrs.setdefault(p.emit.event, tuple(b.name for b in p.emit.bindings))
        self.attrs = attrs
        self.patterns = [_Compiled(p, attrs, self) for p in program.patterns]
        # dependency order: a pattern after those that emit the events it uses
        graph = nx.DiGraph()
        for i, c in enumerate(self.patterns):
            graph.add_node(i)
            for j, other in enumerate(self.patterns):
                if other.decl.emit is not None and other.decl.emit.event in {r.event for r in c.refs}:
                    graph.add_edge(j, i)
        try:
            self.order = list(nx.topological_sort(graph))
        except nx.NetworkXUnfeasible:
            raise ValueError("patterns emit events to each other in a cycle") from None
        indexed: dict[str, set[int]] = defaultdict(set)
        for c in self.patterns:
            for ref in c.refs[1:]:
                choice = c.index_choice(ref)
                if choice is not None:
                    indexed[ref.event].add(choice[0])
        self.buffers = {name: _Buffer(indexed.get(name, set())) for name in attrs}
        self.lookback = max((c.lookback for c in self.patterns), default=0)
        self._seq = 0
        self._t: int | None = None
        self._positions: dict[tuple[str, str], int] = {}
        self._constants: dict = {}

    # ------------------------------------------------------------------------ state
    def snapshot(self) -> dict:
        """The buffered events and consumption marks as plain data (picklable); see restore."""
        return {"events": [e for b in self.buffers.values() for e in b.events],
                "consumed": {c.name: set(c.consumed) for c in self.patterns}, "seq": self._seq, "t": self._t}

    def restore(self, state: dict) -> None:
        for event in sorted(state["events"], key=lambda e: (e.time, e.seq)):
            self.buffers[event.type].add(event)
        for c in self.patterns:
            c.consumed = set(state["consumed"].get(c.name, ()))
        self._seq, self._t = state["seq"], state["t"]

    # ------------------------------------------------------------------------ evaluation
    def step(self, t: int, events: dict[str, list[tuple[int, ...]]]) -> PatternOutput:
        """Add the events of time point ``t`` (per type, attribute values as term ids, in arrival
        order) and fire the patterns they terminate."""
        if self._t is not None and t <= self._t:
            raise ValueError(f"time point {t} is not after {self._t}")
        self._t = t
        return self._step(t, events)

    def step_again(self, t: int, events: dict[str, list[tuple[int, ...]]]) -> PatternOutput:
        """More events for the time point just evaluated (graphs fed back through the
        ontological stage): they join the buffers and fire the patterns they terminate."""
        if t != self._t:
            raise ValueError(f"time point {t} is not the current one ({self._t})")
        return self._step(t, events)

    def _step(self, t: int, events: dict[str, list[tuple[int, ...]]]) -> PatternOutput:
        arrived: dict[str, list[Event]] = defaultdict(list)
        for name, rows in events.items():
            if name not in self.buffers:
                continue
            for values in rows:
                self._seq += 1
                event = Event(name, t, self._seq, tuple(values))
                self.buffers[name].add(event)
                arrived[name].append(event)
        out = PatternOutput(t)
        for i in self.order:
            c = self.patterns[i]
            for terminator in list(arrived.get(c.refs[0].event, ())):
                for match in self._match(c, terminator, t):
                    out.matches.append(match)
                    if match.emitted is not None:
                        self.buffers[match.emitted.type].add(match.emitted)
                        arrived[match.emitted.type].append(match.emitted)
        if self.lookback < INF and t % 64 == 0:
            for buffer in self.buffers.values():
                buffer.forget_before(t - self.lookback)
        return out

    def _match(self, c: _Compiled, terminator: Event, t: int) -> list[Match]:
        refs = c.refs
        first = refs[0]
        bindings = {first.label: terminator}
        if not all(self._constraint(con, first.event, terminator, bindings) for con in first.constraints):
            return []
        if not self._negations(c, 0, bindings):
            return []
        found: list[dict[str, Event]] = []
        self._extend(c, 1, bindings, found)
        matches = []
        for b in found:
            if not all(self._truth(w, b) for w in c.decl.where):
                continue
            matches.append(self._output(c, b, t))
        for m in matches:
            for label in c.decl.consuming:
                if label in m.bindings and label != first.label:
                    e = m.bindings[label]
                    c.consumed.add((e.type, e.seq))
        return matches

    def _extend(self, c: _Compiled, i: int, bindings: dict[str, Event], found: list) -> None:
        refs = c.refs
        while i < len(refs) and refs[i].selection == "not":
            i += 1  # negations were checked right after the labels they use were bound
        if i == len(refs):
            found.append(dict(bindings))
            return
        ref = refs[i]
        lo, hi = self._scope(ref.scope, bindings)
        choice = c.index_choice(ref)
        buffer = self.buffers[ref.event]
        if choice is not None:
            pos, con = choice
            candidates = buffer.scope(lo, hi, pos, self._term(con.value, bindings))
        else:
            candidates = buffer.scope(lo, hi)
        if ref.selection == "last":
            candidates = reversed(candidates)
        for e in candidates:
            if (e.type, e.seq) in c.consumed:
                continue
            if not all(self._constraint(con, ref.event, e, bindings) for con in ref.constraints):
                continue
            bindings[ref.label] = e
            if self._negations(c, i, bindings):
                self._extend(c, i + 1, bindings, found)
                if ref.selection in ("last", "first"):
                    del bindings[ref.label]
                    return
            del bindings[ref.label]

    def _negations(self, c: _Compiled, step: int, bindings) -> bool:
        for j in c.check_after.get(step, ()):
            ref = c.refs[j]
            lo, hi = self._scope(ref.scope, bindings)
            for e in self.buffers[ref.event].scope(lo, hi):
                if all(self._constraint(con, ref.event, e, bindings) for con in ref.constraints):
                    return False
        return True

    def _scope(self, scope, bindings) -> tuple[int, int]:
        if isinstance(scope, ir.Within):
            ref_time = bindings[scope.ref].time
            return ref_time - _duration(scope.duration, scope.unit), ref_time
        return bindings[scope.start].time, bindings[scope.end].time

    # ----------------------------------------------------------------------- expressions
    def _pos(self, event_type: str, attr: str) -> int:
        key = (event_type, attr)
        pos = self._positions.get(key)
        if pos is None:
            pos = self._positions[key] = self.attrs[event_type].index(attr)
        return pos

    def _term(self, expr, bindings) -> int | None:
        """The term id of a plain expression (an attribute or a constant)."""
        if isinstance(expr, ir.AttrRef):
            e = bindings[expr.event]
            return e.values[self._pos(e.type, expr.attr)]
        if isinstance(expr, (ir.BinOp, ir.Aggregate)):
            value = self._value(expr, bindings)
            return None if value is None else self.dictionary.number(value)
        found = self._constants.get(expr)
        if found is None:
            found = self._constants[expr] = self.dictionary.intern(expr)
        return found

    def _value(self, expr, bindings):
        if isinstance(expr, ir.BinOp):
            return arith(expr.op, self._value(expr.left, bindings), self._value(expr.right, bindings))
        if isinstance(expr, ir.Aggregate):
            return self._aggregate(expr, bindings)
        term = self._term(expr, bindings)
        return None if term is None else self.dictionary.value(term)

    def _aggregate(self, agg: ir.Aggregate, bindings):
        lo, hi = self._scope(agg.scope, bindings)
        pos = None if agg.attr is None else self.attrs[agg.event].index(agg.attr)
        values = []
        for e in self.buffers[agg.event].scope(lo, hi):
            if all(self._constraint(con, agg.event, e, bindings) for con in agg.constraints):
                values.append(None if pos is None else self.dictionary.value(e.values[pos]))
        if agg.func == "count":
            return len(values)
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if agg.func == "sum":
            return sum(numbers)
        if not numbers:
            return None
        if agg.func == "avg":
            return sum(numbers) / len(numbers)
        return min(numbers) if agg.func == "min" else max(numbers)

    def _compare(self, op: str, left, right, bindings) -> bool:
        if op in ("=", "!=") and not any(isinstance(x, (ir.BinOp, ir.Aggregate)) for x in (left, right)):
            same = self._term(left, bindings) == self._term(right, bindings)
            return same == (op == "=")
        a, b = self._value(left, bindings), self._value(right, bindings)
        if a is None or b is None:
            return False
        return compare(op, a, b)

    def _constraint(self, con: ir.Constraint, event_type: str, event: Event, bindings) -> bool:
        """``event.attr op value``, the value evaluated on the events bound so far."""
        mine = event.values[self._pos(event_type, con.attr)]
        if con.op in ("=", "!=") and not isinstance(con.value, (ir.BinOp, ir.Aggregate)):
            return (mine == self._term(con.value, bindings)) == (con.op == "=")
        a, b = self.dictionary.value(mine), self._value(con.value, bindings)
        return a is not None and b is not None and compare(con.op, a, b)

    def _truth(self, comparison: ir.Comparison, bindings) -> bool:
        return self._compare(comparison.op, comparison.left, comparison.right, bindings)

    # ---------------------------------------------------------------------------- output
    def _output(self, c: _Compiled, bindings, t: int) -> Match:
        d = self.dictionary
        values = {}
        for b in c.decl.bindings:
            term = self._term(b.value, bindings)
            if term is not None:
                values[b.name[1:]] = term
        match = Match(c.name, t, bindings, values)
        emit = c.decl.emit
        if emit is not None:
            self._seq += 1
            match.emitted = Event(emit.event, t, self._seq, tuple(self._term(b.value, bindings) for b in emit.bindings))
        if c.template is not None:
            fresh = None
            for triple in c.template:
                terms = []
                for node in triple:
                    if isinstance(node, RdfVariable):
                        term_id = values.get(str(node))
                        terms.append(None if term_id is None else d.term(term_id))
                    elif isinstance(node, BNode):  # a fresh IRI per match
                        fresh = fresh or f"urn:dotr:match:{c.name}:{t}:{self._match_id(bindings)}:"
                        terms.append(ir.Iri(f"{fresh}{node}"))
                    else:
                        terms.append(rdf_term(node))
                if None not in terms:
                    match.graph.append(tuple(terms))
        return match

    def _match_id(self, bindings: dict[str, Event]) -> str:
        """A digest of the events a match binds (labels, types, times, values as terms): it names
        the match the same way wherever it is found (embedded, on any Spark partition, after a
        restart), and only a match with the same events gets the same name."""
        term = self.dictionary.term
        text = "|".join(f"{label}={e.type}@{e.time}(" + ",".join(format_term(term(v)) for v in e.values) + ")"
                        for label, e in sorted(bindings.items()))
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def describe(self, match: Match) -> str:
        """``Type(attr=value, ...) @t`` for an emitted event, else ``Pattern @t``."""
        d = self.dictionary
        if match.emitted is None:
            return f"{match.pattern} @{match.time}"
        names = self.attrs[match.emitted.type]
        args = ", ".join(f"{a}={_show(d.term(v))}" for a, v in zip(names, match.emitted.values))
        return f"{match.emitted.type}({args}) @{match.time}"


def _show(term) -> str:
    if isinstance(term, ir.Iri):
        return f"<{term.value}>"
    if isinstance(term, ir.Literal):
        return f'"{term.lexical}"'
    return str(term.value)
