"""The TESLA definitions read literally: for each terminator, every combination of buffered events
is enumerated from the whole history (no buffers, no indexes); used to test the pattern engine.

Definitions (T-Rex): ``within d from R`` means time in (t_R - d, t_R); ``between A and B`` means
[t_A, t_B); ``each``: every candidate; ``last``/``first``: the most recent / oldest candidate that
satisfies its constraints and every negation that can be decided once it is bound; ``not``: no
event in the scope satisfies the constraints; ``where`` holds for the whole match; ``consuming``:
events used by a match are not used by later matches of the same pattern.
"""

from __future__ import annotations

from dotr.rules import ir
from dotr.rules.engine.builtins import arith, compare
from dotr.rules.lang.ir import UNIT_MS


def _dur(scope) -> int:
    return int(scope.duration) if scope.unit is None else int(scope.duration * UNIT_MS[scope.unit])


class PatternReference:
    def __init__(self, program: ir.Program):
        self.program = program
        self.attrs = {e.name: e.attributes for e in program.events}
        for p in program.patterns:
            if p.emit is not None:
                self.attrs.setdefault(p.emit.event, tuple(b.name for b in p.emit.bindings))
        self.history: list[tuple[str, int, int, tuple]] = []  # (type, time, seq, values as terms)
        self.consumed = {p.name: set() for p in program.patterns}
        self.seq = 0
        # patterns after those emitting what they use (simple repeated passes)
        order, left = [], list(program.patterns)
        while left:
            for p in left:
                uses = {r.event for r in p.refs}
                if not any(q.emit is not None and q.emit.event in uses for q in left if q is not p):
                    order.append(p)
                    left.remove(p)
                    break
        self.order = order

    def _attr(self, ev, name):
        return ev[3][self.attrs[ev[0]].index(name)]

    def _val(self, expr, b):
        if isinstance(expr, ir.AttrRef):
            return _plain(self._attr(b[expr.event], expr.attr))
        if isinstance(expr, ir.BinOp):
            return arith(expr.op, self._val(expr.left, b), self._val(expr.right, b))
        if isinstance(expr, ir.Aggregate):
            lo, hi = self._scope(expr.scope, b)
            vals = [self._attr(e, expr.attr) if expr.attr else None for e in self.history
                    if e[0] == expr.event and lo <= e[1] < hi and self._cons(expr.constraints, e, b)]
            if expr.func == "count":
                return len(vals)
            nums = [_plain(v) for v in vals]
            if expr.func == "sum":
                return sum(nums)
            if not nums:
                return None
            return {"avg": sum(nums) / len(nums) if nums else None, "min": min(nums), "max": max(nums)}[expr.func]
        return _plain(expr)

    def _term(self, expr, b):
        if isinstance(expr, ir.AttrRef):
            return self._attr(b[expr.event], expr.attr)
        if isinstance(expr, (ir.BinOp, ir.Aggregate)):
            v = self._val(expr, b)
            return None if v is None else ir.Num(v)
        return expr

    def _cmp(self, op, left, right, b):
        if op in ("=", "!=") and not any(isinstance(x, (ir.BinOp, ir.Aggregate)) for x in (left, right)):
            return (self._term(left, b) == self._term(right, b)) == (op == "=")
        x, y = self._val(left, b), self._val(right, b)
        return x is not None and y is not None and compare(op, x, y)

    def _cons(self, constraints, ev, b):
        probe = {**b, "\0": ev}
        return all(self._cmp(c.op, ir.AttrRef("\0", c.attr), c.value, probe) for c in constraints)

    def _scope(self, scope, b):
        if isinstance(scope, ir.Within):
            return b[scope.ref][1] - _dur(scope) + 1, b[scope.ref][1]
        return b[scope.start][1], b[scope.end][1]

    def _negations_ok(self, p, b, just_bound):
        """Every negation whose labels are all bound, and that uses ``just_bound``, holds."""
        for ref in p.refs:
            if ref.selection != "not":
                continue
            used = set()
            for c in ref.constraints:
                used |= _labels(c.value)
            scope = ref.scope
            used |= {scope.ref} if isinstance(scope, ir.Within) else {scope.start, scope.end}
            if not used <= set(b):
                continue
            if just_bound is not None and just_bound not in used:
                continue
            if just_bound is None and not used <= {p.terminator.label}:
                continue
            lo, hi = self._scope(scope, b)
            if any(e[0] == ref.event and lo <= e[1] < hi and self._cons(ref.constraints, e, b) for e in self.history):
                return False
        return True

    def _combos(self, p, i, b):
        items = [r for r in p.items if r.selection != "not"]
        if i == len(items):
            yield dict(b)
            return
        ref = items[i]
        lo, hi = self._scope(ref.scope, b)
        cands = sorted((e for e in self.history if e[0] == ref.event and lo <= e[1] < hi
                        and (e[0], e[2]) not in self.consumed[p.name] and self._cons(ref.constraints, e, b)),
                       key=lambda e: (e[1], e[2]))
        if ref.selection == "last":
            cands.reverse()
        for e in cands:
            b2 = {**b, ref.label: e}
            if self._negations_ok(p, b2, ref.label):
                yield from self._combos(p, i + 1, b2)
                if ref.selection in ("last", "first"):
                    return

    def step(self, t, events: dict[str, list[tuple]]):
        """Events as term tuples; returns [(pattern, {label: (type, time, values)}, emitted values)]."""
        arrived = []
        for name, rows in events.items():
            if name not in self.attrs:
                continue
            for values in rows:
                self.seq += 1
                ev = (name, t, self.seq, tuple(values))
                self.history.append(ev)
                arrived.append(ev)
        out = []
        for p in self.order:
            for term_ev in [e for e in arrived if e[0] == p.terminator.event]:
                b = {p.terminator.label: term_ev}
                if not self._cons(p.terminator.constraints, term_ev, b) or not self._negations_ok(p, b, None):
                    continue
                matches = [m for m in self._combos(p, 0, b) if all(self._cmp(w.op, w.left, w.right, m) for w in p.where)]
                for m in matches:
                    emitted = None
                    if p.emit is not None:
                        self.seq += 1
                        emitted = tuple(self._term(x.value, m) for x in p.emit.bindings)
                        ev = (p.emit.event, t, self.seq, emitted)
                        self.history.append(ev)
                        arrived.append(ev)
                    out.append((p.name, {k: (v[0], v[1], v[3]) for k, v in m.items()}, emitted))
                for m in matches:
                    for label in p.consuming:
                        if label in m and label != p.terminator.label:
                            self.consumed[p.name].add((m[label][0], m[label][2]))
        return out


def _labels(expr):
    if isinstance(expr, ir.AttrRef):
        return {expr.event}
    if isinstance(expr, ir.BinOp):
        return _labels(expr.left) | _labels(expr.right)
    return set()


def _plain(term):
    if isinstance(term, (ir.Num, ir.Name)):
        return term.value
    if isinstance(term, ir.Literal):
        return term.lexical
    return None
