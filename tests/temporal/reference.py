"""The LARS definitions read literally: the reference the LARS engine is tested against.

At each time point t, in order: the history H (time -> set of atoms: stream atoms and everything
concluded earlier, at the time point it was concluded for) is extended with the least model at
t, stratum by stratum, by brute force over substitutions. The background holds at every time
point; when it changes, each time point has the background of its own time. Atoms are (predicate key, args) with
plain Python values; no indexes, no annotations.
"""

from __future__ import annotations

from collections import defaultdict

from dotr.rules import ir
from dotr.rules.lang.analysis import dependency_graph, pred_key, stratify
from dotr.rules.engine.builtins import arith, compare
from tests.ontology.reference import _vars

INF = float("inf")


def _key(atom: ir.Atom):
    return (atom.pred, len(atom.args))


def _const(term):
    return term  # IR constants compare by value


class Reference:
    def __init__(self, rules: list[ir.Rule], background: list[tuple] = (), start: int = 0):
        self.rules = [r for r in rules if not r.is_fact]
        self.background = set(background) | {(_key(r.head), r.head.args) for r in rules if r.is_fact}
        self._backgrounds: list[tuple[int, set]] = []  # (from t on, the background then)
        self.start = start
        self.history: dict[int, set] = defaultdict(set)
        self.stream: list[tuple[int, tuple]] = []  # (time, atom) in arrival order
        self.inputs: dict[int, set] = defaultdict(set)
        graph = dependency_graph(tuple(self.rules))
        self.strata, _ = stratify(graph)
        self.intensional = {_key(r.head) for r in self.rules}

    def change_background(self, t: int, background: set) -> None:
        """From ``t`` on the background is ``background``; before ``t`` it stays what it was
        (windows see each time point's)."""
        self._backgrounds.append((t, set(background)))

    def _bg(self, u: int) -> set:
        current = self.background
        for since, background in self._backgrounds:
            if since <= u:
                current = background
        return current

    # ------------------------------------------------------------------ window contents
    def _window(self, window: ir.Window | None, t: int):
        """(time points, atoms at each time point) of the window at t."""
        if window is None or not window.tuple:
            first = self.start if window is None else max(self.start, t - window.length())
            points = range(first, t + 1)
            return points, {u: self.history[u] | self._bg(u) for u in points}
        atoms = [(u, a) for u, a in self.stream if u <= t]
        n = int(window.size)
        if len(atoms) < n:
            points = range(self.start, t + 1)
            kept = atoms
        else:
            kept = atoms[-n:]
            points = range(kept[0][0], t + 1)
        at: dict[int, set] = {u: set(self._bg(u)) for u in points}
        for u, a in kept:
            at[u].add(a)
        return points, at

    # ------------------------------------------------------------------ substitutions
    def _match(self, atom: ir.Atom, fact, theta):
        key, args = fact
        if key != _key(atom):
            return None
        theta = dict(theta)
        for term, value in zip(atom.args, args):
            if isinstance(term, ir.Var):
                if theta.setdefault(term.name, value) != value:
                    return None
            elif term != value:
                return None
        return theta

    def _value(self, expr, theta):
        if isinstance(expr, ir.Var):
            v = theta[expr.name]
            return v.value if isinstance(v, (ir.Num, ir.Name)) else v.lexical if isinstance(v, ir.Literal) else None
        if isinstance(expr, ir.BinOp):
            return arith(expr.op, self._value(expr.left, theta), self._value(expr.right, theta))
        return self._value(ir.Var("_"), {"_": expr})

    def _term(self, expr, theta):
        if isinstance(expr, ir.Var):
            return theta.get(expr.name)
        if isinstance(expr, ir.BinOp):
            v = self._value(expr, theta)
            return None if v is None else ir.Num(v)
        return expr

    def _solutions(self, body, t, theta):
        if not body:
            yield theta
            return
        ready = [l for l in body if self._ready(l, theta)]
        lit = ready[0] if ready else body[0]
        rest = [l for l in body if l is not lit]
        for theta2 in self._literal(lit, t, theta):
            yield from self._solutions(rest, t, theta2)

    def _ready(self, lit, theta) -> bool:
        if isinstance(lit, ir.Comparison):
            names = {v.name for v in _vars(lit.left)} | {v.name for v in _vars(lit.right)}
            unbound = names - set(theta)
            return not unbound or (lit.op == "=" and len(unbound) == 1 and (
                isinstance(lit.left, ir.Var) and lit.left.name in unbound or
                isinstance(lit.right, ir.Var) and lit.right.name in unbound))
        if lit.negated:
            names = {t.name for t in lit.atom.args if isinstance(t, ir.Var)}
            if isinstance(lit, ir.TemporalLiteral) and isinstance(lit.op, ir.At) and isinstance(lit.op.time, ir.Var):
                names.add(lit.op.time.name)
            return names <= set(theta)
        return True

    def _literal(self, lit, t, theta):
        if isinstance(lit, ir.Comparison):
            left_ok = all(v.name in theta for v in _vars(lit.left))
            right_ok = all(v.name in theta for v in _vars(lit.right))
            if left_ok and right_ok:
                if lit.op in ("=", "!=") and not isinstance(lit.left, ir.BinOp) and not isinstance(lit.right, ir.BinOp):
                    same = self._term(lit.left, theta) == self._term(lit.right, theta)
                    if same == (lit.op == "="):
                        yield theta
                elif compare(lit.op, self._value(lit.left, theta), self._value(lit.right, theta)):
                    yield theta
            else:
                target, source = (lit.right, lit.left) if left_ok else (lit.left, lit.right)
                value = self._term(source, theta)
                if value is not None:
                    yield {**theta, target.name: value}
            return
        found = list(self._positive(lit, t, theta))
        if lit.negated:
            if not found:
                yield theta
        else:
            yield from found

    def _positive(self, lit, t, theta):
        if isinstance(lit, ir.AtomLiteral):
            for fact in self.history[t] | self._bg(t):
                th = self._match(lit.atom, fact, theta)
                if th is not None:
                    yield th
            return
        points, at = self._window(lit.window, t)
        op = lit.op
        if isinstance(op, ir.Diamond):
            seen = []
            for u in points:
                for fact in at[u]:
                    th = self._match(lit.atom, fact, theta)
                    if th is not None and th not in seen:
                        seen.append(th)
            yield from seen
        elif isinstance(op, ir.Box):
            candidates = []
            for fact in at[t] if t in at else ():
                th = self._match(lit.atom, fact, theta)
                if th is not None and th not in candidates:
                    candidates.append(th)
            for th in candidates:
                ground = (_key(lit.atom), tuple(th[a.name] if isinstance(a, ir.Var) else a for a in lit.atom.args))
                if all(ground in at[u] for u in points):
                    yield th
        else:  # @T
            time = op.time
            for u in points:
                if isinstance(time, ir.Var) and time.name in theta:
                    if theta[time.name] != ir.Num(u):
                        continue
                    base = theta
                elif isinstance(time, ir.Var):
                    base = {**theta, time.name: ir.Num(u)}
                elif time.value != u:
                    continue
                else:
                    base = theta
                for fact in at[u]:
                    th = self._match(lit.atom, fact, base)
                    if th is not None:
                        yield th

    # ------------------------------------------------------------------ evaluation
    def step(self, t: int, facts: list[tuple], derived: list[tuple] = ()) -> tuple[set, set]:
        """Evaluate t with its stream atoms and the atoms other stages concluded for t
        (``derived``: they hold at t, but are no stream atoms); returns (derived intensional
        atoms holding at t, (time, atom) placed at other time points by @ heads during this
        evaluation)."""
        for fact in facts:
            self.stream.append((t, fact))
            self.history[t].add(fact)
            self.inputs[t].add(fact)
        self.history[t].update(derived)
        placed = set()
        levels = sorted({self.strata[pred_key(r.head)] for r in self.rules})
        for level in levels:
            group = [r for r in self.rules if self.strata[pred_key(r.head)] == level]
            changed = True
            while changed:
                changed = False
                for rule in group:
                    for theta in list(self._solutions(list(rule.body), t, {})):
                        head = (_key(rule.head), tuple(theta[a.name] if isinstance(a, ir.Var) else a
                                                       for a in rule.head.args))
                        when = t
                        if rule.at is not None:
                            when = theta[rule.at.name].value if isinstance(rule.at, ir.Var) else rule.at.value
                        if head not in self.history[when] and when >= self.start:  # (before it: no timeline)
                            self.history[when].add(head)
                            changed = True
                            if when != t:
                                placed.add((when, head))
        derived = {a for a in self.history[t] if a[0] in self.intensional and a not in self.inputs[t]}
        return derived, placed
