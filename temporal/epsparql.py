"""The EP-SPARQL engine: interval-annotated solutions combined incrementally, ETALIS style.

Each group ``{ ... }`` of a query is a SPARQL SELECT that the ontological stage evaluates on the
enriched knowledge of one time point t (``rules.engine.sparql.algebra.compile_select``); its solutions enter
here with the interval [t, t]. The operators combine solutions as in the EP-SPARQL paper (4.2):
``seq`` needs the left interval to end before the right one starts, ``equals`` the same interval,
``and`` (or juxtaposition) joins any two and takes the hull, ``union``, and the optional forms
``optional`` (the optional part ends no later than the mandatory one), ``optionalseq`` (optional
left part strictly before the mandatory right one) and ``equalsoptional`` (same interval).

Execution is event-driven like ETALIS's binarised goals: each binary operator keeps the partial
solutions that may still combine (left operands waiting for a continuation), and a time point
only combines its new solutions with them. Every solution whose duration exceeds the query's
horizon (its ``getDURATION() < d`` bound, ``within d``, or the default horizon) is dropped, at every
operator; that is also what makes the stored partial matches bounded. A solution is reported at
its end time. CONSTRUCT results come back as triples to feed into the stream at the same time
point (``step_again``), carrying their start time.

>>> from dotr.rules import parse
>>> prog = parse('''@prefix : <http://ex.org/> .
... query Up := select ?c ?p1 ?p2 where { ?c :price ?p1 } seq { ?c :price ?p2 }
...    filter(?p2 > ?p1 && getDURATION() <= 5) .''')
>>> engine = EpSparqlEngine.from_program(prog)
>>> at = lambda t, value: engine.step(t, [(":price", ":acme", value)])   # the knowledge of t
>>> at(1, 10).answers, at(3, 12).answers
({'Up': []}, {'Up': [{'c': '<http://ex.org/acme>', 'p1': '10', 'p2': '12'}]})
>>> out = at(8, 20); out.answers, out.intervals   # 1 is more than 5 before 8
({'Up': [{'c': '<http://ex.org/acme>', 'p1': '12', 'p2': '20'}]}, {'Up': [(3, 8)]})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence


from dotr.rules import TimeOrderError, UsageError, ir
from dotr.rules.engine.inputs import FactReader
from dotr.rules.engine.sparql.algebra import compile_select
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.lang.queries import ParsedQueries
from dotr.rules.lang.queries.epsparql import (DEFAULT_HORIZON, DURATION, END, START, Bind, Combine, EpQuery, Filter, Group,
                            is_epsparql, parse_epsparql)
from dotr.rules.lang.errors import RuleError
from dotr.rules.lang.queries.sparql import certain_variables, parse_select, rdf_term
from dotr.rules.engine.guard import GUARD
from dotr.rules.engine.sparql.expr import IriValue, Undefined, compile_expr, holds
from dotr.rules.engine.sparql.solutions import compatible
from dotr.rules.engine.terms import TermDictionary, format_term
from dotr.rules.engine.times import check_time
from dotr.temporal.keys import QueryKeys, consistent

Mapping = dict  # variable name -> term id
Sol = tuple  # (mapping, start, end); a mapping is never changed once built


@dataclass
class EpSparqlOutput:
    """What the queries report at ``t``.

    ``answers``: per SELECT query, its solutions that end at t (variable name without ``?`` ->
    canonical term text), with ``intervals`` beside them; ``graphs``: per CONSTRUCT solution ending
    at t, its triples as dotr terms (``rules.lang.ir`` Iri, Literal, Num, Name), the query in
    ``graph_queries``; ``feedback``: the constructed triples not yet fed back at t, as int facts
    ``((p, 2), (s, o))`` ready for ``OntologicalStage.process(t, feedback)``."""

    t: int
    answers: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    intervals: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    graphs: list[list[tuple]] = field(default_factory=list)
    graph_queries: list[str] = field(default_factory=list)
    feedback: list[tuple] = field(default_factory=list)


def _key(sol: Sol) -> tuple:
    return tuple(sorted(sol[0].items())), sol[1], sol[2]


def _merge(x: Sol, y: Sol) -> Sol:
    return {**x[0], **y[0]}, min(x[1], y[1]), max(x[2], y[2])


# ------------------------------------------------------------------------------- operators

class _Ctx:
    """One round of one time point: the new solutions of every group."""

    def __init__(self, t: int, groups: list[list[Sol]], d: TermDictionary):
        self.t, self.groups, self.d = t, groups, d

    def with_interval(self, sol: Sol) -> Mapping:
        d = self.d
        return {**sol[0], DURATION: d.number(sol[2] - sol[1]), START: d.number(sol[1]), END: d.number(sol[2])}


class _Node:
    """An operator: ``new(ctx)`` gives the solutions ending at ``ctx.t`` that are new in this
    round (each once), after combining with the partial solutions it keeps."""

    horizon: int
    certain: frozenset

    def __init__(self) -> None:
        self._emitted: set = set()
        self._t: int | None = None

    def new(self, ctx: _Ctx) -> list[Sol]:
        if ctx.t != self._t:
            self._t, self._emitted = ctx.t, set()
        out = []
        for sol in self._new(ctx):
            if ctx.t - sol[1] > self.horizon:
                continue
            key = _key(sol)
            if key not in self._emitted:
                self._emitted.add(key)
                out.append(sol)
        GUARD.charge(len(out))  # (the budget of the time point, a cancellation: between operators)
        return out

    def _new(self, ctx: _Ctx) -> Iterable[Sol]:
        raise NotImplementedError

    def nodes(self) -> list["_Node"]:
        return [self]

    def state(self) -> dict:
        return {"t": self._t, "emitted": list(self._emitted)}

    def load(self, state: dict) -> None:
        self._t, self._emitted = state["t"], set(state["emitted"])


class _GroupNode(_Node):
    def __init__(self, index: int, certain: frozenset, horizon: int):
        super().__init__()
        self.index, self.certain, self.horizon = index, certain, horizon

    def _new(self, ctx):
        return ctx.groups[self.index]


class _PartialMatches:
    """Stored solutions of one operand, indexed by the values of the join variables."""

    def __init__(self, keys: tuple[str, ...]):
        self.keys = keys
        self.items: dict[tuple, list[Sol]] = {}

    def add(self, sol: Sol) -> None:
        self.items.setdefault(tuple(sol[0][k] for k in self.keys), []).append(sol)

    def probe(self, mapping: Mapping) -> Sequence[Sol]:
        return self.items.get(tuple(mapping[k] for k in self.keys), ())

    def prune(self, keep) -> None:
        self.items = {k: kept for k, sols in self.items.items() if (kept := [s for s in sols if keep(s)])}

    def all(self) -> list[Sol]:
        return [s for sols in self.items.values() for s in sols]


#: which operand solutions an operator keeps: "all" (until out of the horizon), "now" (only
#: while their end time is the current time point: later rounds), None (never needed again)
_KEEP = {"and": ("all", "all"), "seq": ("all", None), "equals": ("now", "now"),
         "optional": ("now", "all"), "optionalseq": ("all", None), "equalsoptional": ("now", "now")}


class _Binary(_Node):
    def __init__(self, op: str, left: _Node, right: _Node, condition: list, horizon: int):
        super().__init__()
        self.op, self.left, self.right, self.condition, self.horizon = op, left, right, condition, horizon
        if op in ("optional", "equalsoptional"):
            self.certain = left.certain
        elif op == "optionalseq":
            self.certain = right.certain
        else:
            self.certain = left.certain | right.certain
        keys = tuple(sorted(left.certain & right.certain))
        self.keep = _KEEP[op]
        self.stores = (_PartialMatches(keys), _PartialMatches(keys))
        self._pruned = None  # when the stores were last cleared of solutions out of the horizon

    def nodes(self):
        return [self, *self.left.nodes(), *self.right.nodes()]

    def _ok(self, x: Sol, y: Sol, t: int, ctx: _Ctx) -> Sol | None:
        """The combination of compatible ``x`` and ``y`` if it is in the horizon and meets the
        condition, else None."""
        if not compatible(x[0], y[0]):
            return None
        merged = _merge(x, y)
        if t - merged[1] > self.horizon:
            return None
        if self.condition:
            mapping = ctx.with_interval(merged)
            if not all(holds(test, mapping) for test in self.condition):
                return None
        return merged

    def _new(self, ctx):
        t, op = ctx.t, self.op
        left_new, right_new = self.left.new(ctx), self.right.new(ctx)
        left_store, right_store = self.stores
        for store, keep in zip(self.stores, self.keep):
            if keep == "now":
                store.prune(lambda s: s[2] == t)
            elif keep == "all" and (self._pruned is None or t - self._pruned > self.horizon // 4):
                store.prune(lambda s: t - s[1] <= self.horizon)
                self._pruned = t
        out: list[Sol] = []
        if op in ("and", "equals"):
            same = op == "equals"
            for r in right_new:
                right_store.add(r)
            pairs = [(x, y) for x in left_new for y in right_store.probe(x[0])]
            pairs += [(x, y) for y in right_new for x in left_store.probe(y[0])]
            for x, y in pairs:
                if (not same or x[1:] == y[1:]) and (m := self._ok(x, y, t, ctx)) is not None:
                    out.append(m)
        elif op == "seq":
            for y in right_new:
                for x in left_store.probe(y[0]):
                    if x[2] < y[1] and (m := self._ok(x, y, t, ctx)) is not None:
                        out.append(m)
        elif op == "optionalseq":  # the left operand is optional, strictly before the right one
            for y in right_new:
                found = [m for x in left_store.probe(y[0]) if x[2] < y[1] and (m := self._ok(x, y, t, ctx)) is not None]
                out.extend(found or [y])
        else:  # optional, equalsoptional: the right operand is optional
            same = op == "equalsoptional"
            for r in right_new:
                right_store.add(r)
            for x in left_new:
                found = [m for y in right_store.probe(x[0])
                         if (x[1] == y[1] and x[2] == y[2] if same else y[2] <= x[2])
                         and (m := self._ok(x, y, t, ctx)) is not None]
                out.extend(found or [x])
            for y in right_new:  # a later round at t: optional parts for earlier mandatory ones
                for x in left_store.probe(y[0]):
                    if (x[1] == y[1] if same else True) and (m := self._ok(x, y, t, ctx)) is not None:
                        out.append(m)
        if self.keep[0] is not None:
            for x in left_new:
                left_store.add(x)
        return out

    def state(self):
        return {**super().state(), "pruned": self._pruned,
                "stores": [[(s[0], s[1], s[2]) for s in store.all()] for store in self.stores]}

    def load(self, state):
        super().load(state)
        self._pruned = state["pruned"]
        for store, sols in zip(self.stores, state["stores"]):
            for mapping, a, b in sols:
                store.add((dict(mapping), a, b))


class _EpUnion(_Node):
    def __init__(self, left: _Node, right: _Node, horizon: int):
        super().__init__()
        self.left, self.right, self.horizon = left, right, horizon
        self.certain = left.certain & right.certain

    def nodes(self):
        return [self, *self.left.nodes(), *self.right.nodes()]

    def _new(self, ctx):
        return self.left.new(ctx) + self.right.new(ctx)


class _FilterNode(_Node):
    def __init__(self, inner: _Node, tests: list, horizon: int):
        super().__init__()
        self.inner, self.tests, self.horizon, self.certain = inner, tests, horizon, inner.certain

    def nodes(self):
        return [self, *self.inner.nodes()]

    def _new(self, ctx):
        return [s for s in self.inner.new(ctx) if all(holds(f, ctx.with_interval(s)) for f in self.tests)]


class _BindNode(_Node):
    def __init__(self, inner: _Node, binds: list, horizon: int):
        super().__init__()
        self.inner, self.binds, self.horizon, self.certain = inner, binds, horizon, inner.certain

    def nodes(self):
        return [self, *self.inner.nodes()]

    def _new(self, ctx):
        out = []
        for sol in self.inner.new(ctx):
            mapping = dict(sol[0])
            for var, expr in self.binds:
                value = _value_id(expr, ctx.with_interval((mapping, sol[1], sol[2])), ctx.d)
                if value is not None:
                    mapping[var] = value
            out.append((mapping, sol[1], sol[2]))
        return out


def _value_id(expr, mapping: Mapping, d: TermDictionary) -> int | None:
    """The term id of an expression's value, None when it is undefined."""
    try:
        value = expr(mapping)
    except (Undefined, TypeError):
        return None
    if isinstance(value, IriValue):
        return value.id
    if isinstance(value, bool):
        return d.intern(ir.Literal("true" if value else "false", ir.XSD + "boolean"))
    if isinstance(value, (int, float)):
        return d.number(value)
    return d.intern(ir.Literal(str(value)))


# ---------------------------------------------------------------------------------- queries

def _algebra(text: ir.SparqlText, prefixes: dict[str, str], parsed: dict | None = None):
    """The algebra of an embedded SELECT (taken from ``parsed``, the query's, when it is there)."""
    query = parsed.get(text.text) if parsed else None
    if query is None:
        query, diags = parse_select(text, prefixes)
        if query is None:
            raise RuleError(diags)
    return query.algebra


def _find(node, name: str) -> list:
    """The algebra nodes called ``name`` under ``node``."""
    from rdflib.plugins.sparql.parserutils import CompValue  # (loaded with the query's parser)

    found = []
    if isinstance(node, CompValue):
        if node.name == name:
            found.append(node)
        for value in node.values():
            found += _find(value, name)
    elif isinstance(node, list):
        for value in node:
            found += _find(value, name)
    return found


class _EpQuery:
    """One EP-SPARQL query compiled: its operator tree on the engine's groups and its output."""

    def __init__(self, q: EpQuery, group_ids: list[int], prefixes, d: TermDictionary, horizon: int):
        self.name, self.form, self.d, self.horizon = q.name, q.form, d, horizon
        self.prefixes = prefixes
        self.group_ids = group_ids
        self.selects = q.selects
        self.root = self._build(q.root)
        self.nodes = self.root.nodes()
        self.distinct = q.distinct
        self.template = q.template
        self.projection: list[tuple[str, object]] | None = None  # (variable, expression or None)
        if q.form == "select" and not q.star and q.projection is not None:
            algebra = _algebra(q.projection, prefixes, q.selects)
            exprs = {str(e.var): compile_expr(e.expr, d, q.span) for e in _find(algebra, "Extend")}
            self.projection = [(str(v), exprs.get(str(v))) for v in algebra["PV"]]
        self._count = 0

    def _build(self, node) -> _Node:
        h = self.horizon
        if isinstance(node, Group):
            algebra = _algebra(node.text, self.prefixes, self.selects)
            return _GroupNode(self.group_ids[node.index], frozenset(certain_variables(algebra["p"])), h)
        if isinstance(node, Combine):
            left, right = self._build(node.left), self._build(node.right)
            if node.op == "union":
                return _EpUnion(left, right, h)
            return _Binary(node.op, left, right, [self._test(c) for c in node.condition], h)
        if isinstance(node, Filter):
            return _FilterNode(self._build(node.inner), [self._test(c) for c in node.conditions], h)
        assert isinstance(node, Bind)
        binds = []
        for text in node.binds:
            extend = _find(_algebra(text, self.prefixes, self.selects), "Extend")[0]
            binds.append((str(extend.var), compile_expr(extend.expr, self.d, text.span)))
        return _BindNode(self._build(node.inner), binds, h)

    def _test(self, text: ir.SparqlText):
        return compile_expr(_find(_algebra(text, self.prefixes, self.selects), "Filter")[0].expr, self.d, text.span)

    def row(self, sol: Sol, ctx: _Ctx) -> dict[str, str]:
        term = self.d.term
        if self.projection is None:
            return {k: format_term(term(v)) for k, v in sorted(sol[0].items()) if not k.startswith("_:")}
        out = {}
        mapping = ctx.with_interval(sol) if any(e is not None for _, e in self.projection) else sol[0]
        for var, expr in self.projection:
            value = mapping.get(var) if expr is None else _value_id(expr, mapping, self.d)
            if value is not None:
                out[var] = format_term(term(value))
        return out

    def graph(self, sol: Sol, t: int) -> list[tuple[int, int, int]]:
        from rdflib.term import BNode, Variable  # (rdflib: imported by a program that needs it)

        triples = []
        fresh: dict[str, int] = {}
        self._count += 1
        for s, p, o in self.template:
            ids = []
            for node in (s, p, o):
                if isinstance(node, Variable):
                    ids.append(sol[0].get(str(node)))
                elif isinstance(node, BNode):  # a fresh IRI per solution
                    if str(node) not in fresh:
                        fresh[str(node)] = self.d.intern(
                            ir.Iri(f"urn:dotr:epsparql:{self.name}:{t}:{self._count}:{node}"))
                    ids.append(fresh[str(node)])
                else:
                    ids.append(self.d.intern(rdf_term(node)))
            if None not in ids and isinstance(self.d.term(ids[1]), ir.Iri):
                triples.append(tuple(ids))
        return triples


class EpSparqlEngine:
    """The EP-SPARQL queries of a program (``query Name := select|construct ...``; C-SPARQL
    ``register`` queries are skipped). ``groups`` lists the SELECT texts whose solutions
    :meth:`step` takes, in that order. See the module docstring."""

    def __init__(self, queries: Sequence[ir.QueryDecl], prefixes: dict[str, str],
                 dictionary: TermDictionary | None = None, timeunit: str = "ticks",
                 default_horizon: int | None = None, parsed: ParsedQueries | None = None):
        self.dictionary = d = dictionary if dictionary is not None else TermDictionary()
        self.prefixes = prefixes
        self.groups: list[ir.SparqlText] = []
        self.group_selects: list = []  # each group's parsed SELECT (None: parse it)
        self._group_triples: list[list[tuple]] = []
        index: dict[str, int] = {}
        self.queries: list[_EpQuery] = []
        ms = timeunit == "ms"
        default = default_horizon if default_horizon is not None else DEFAULT_HORIZON[timeunit]
        for decl in queries:
            if not is_epsparql(decl.query):
                continue
            query = (parsed if parsed is not None else ParsedQueries()).require(
                f"epsparql {decl.name}", decl.query, lambda: parse_epsparql(decl.name, decl.query, prefixes, ms))
            ids = []
            for g in query.groups:
                key = g.text.text
                if key not in index:
                    index[key] = len(self.groups)
                    self.groups.append(g.text)
                    self.group_selects.append(query.selects.get(key))
                    self._group_triples.append(self._patterns(g.text, query.selects))
                ids.append(index[key])
            horizon = query.horizon if query.horizon is not None else default
            self.queries.append(_EpQuery(query, ids, prefixes, d, horizon))
        self._t: int | None = None
        self._read = FactReader(d, prefixes)  # facts as given -> (relation, ids), checked
        self._compiled: list | None = None  # the groups compiled for facts given to step
        self._seen: list[set] = [set() for _ in self.groups]  # group solutions seen at _t
        self._starts: dict[tuple, int] = {}  # triples (subject, predicate, object ids) fed back at _t -> start

    @classmethod
    def from_program(cls, program: ir.Program, dictionary: TermDictionary | None = None,
                     **options) -> "EpSparqlEngine":
        """The engine of ``program``'s EP-SPARQL queries (options: ``default_horizon``, and
        ``parsed``: the checked program's parsed queries)."""
        return cls(program.queries, program.prefixes, dictionary, program.timeunit, **options)

    def _patterns(self, text: ir.SparqlText, parsed: dict) -> list[tuple]:
        """A group's triple patterns: per position a variable name or a term id."""
        from rdflib.term import BNode, Variable

        d = self.dictionary
        out = []
        for bgp in _find(_algebra(text, self.prefixes, parsed)["p"], "BGP"):
            for triple in bgp.triples:
                out.append(tuple(str(x) if isinstance(x, Variable) else None if isinstance(x, BNode)
                                 else d.intern(rdf_term(x)) for x in triple))
        return out

    # ---------------------------------------------------------------------------- stepping
    def step(self, t: int, facts: Iterable = (), solutions: Sequence[Iterable[Mapping]] | None = None
             ) -> EpSparqlOutput:
        """Evaluate time point ``t`` on ``facts``, the knowledge of t (any forms of
        ``rules.engine.inputs``, an rdflib ``Graph``, a DataFrame): the engine runs its groups on
        them. Or, composed with an ontological stage (the pipeline), ``solutions``:
        ``solutions[i]`` are the solutions of ``groups[i]`` on the knowledge of t (dicts variable
        -> term id, as ``CompiledSelect.run`` gives them), unchecked."""
        if solutions is None:
            t = check_time(t)
        if self._t is not None and t <= self._t:
            raise TimeOrderError(f"time point {t} is not after {self._t}")
        if solutions is None:
            solutions = self._solve(t, facts)
        self._t = t
        self._seen = [set() for _ in self.groups]
        self._starts = {}
        return self._step(t, solutions)

    def step_again(self, t: int, facts: Iterable = (), solutions: Sequence[Iterable[Mapping]] | None = None
                   ) -> EpSparqlOutput:
        """Another round at the time point just evaluated, after the CONSTRUCT triples were fed
        back: ``facts`` (the knowledge of t again, with the ``feedback`` triples) or
        ``solutions`` as for :meth:`step` (all of them; those seen at t are skipped)."""
        if t != self._t:
            raise TimeOrderError(f"time point {t} is not the current one ({self._t})")
        return self._step(t, self._solve(t, facts) if solutions is None else solutions)

    def _solve(self, t: int, facts: Iterable) -> list[list[Mapping]]:
        """The groups' solutions on ``facts`` (checked and interned)."""
        if isinstance(facts, (dict, str)):
            raise UsageError("EpSparqlEngine.step takes the facts of t (or solutions=...), not a "
                             f"{type(facts).__name__}")
        d = self.dictionary
        if self._compiled is None:
            self._compiled = [compile_select(g, self.prefixes, d, q) for g, q in zip(self.groups, self.group_selects)]
        store = DictStore(lambda pid: isinstance(d.term(pid), ir.Iri))
        for rel, ids in self._read.all(facts):
            store.add(rel, ids, t)
        return [g.run(store) for g in self._compiled]

    def _step(self, t: int, solutions) -> EpSparqlOutput:
        d = self.dictionary
        new: list[list[Sol]] = []
        for i, sols in enumerate(solutions):
            fresh = []
            seen = self._seen[i]
            for mapping in sols:
                if any(k.startswith("_:") for k in mapping):
                    mapping = {k: v for k, v in mapping.items() if not k.startswith("_:")}
                sol = (mapping, self._start(i, mapping, t), t)
                key = _key(sol)
                if key not in seen:
                    seen.add(key)
                    fresh.append(sol)
            new.append(fresh)
        ctx = _Ctx(t, new, d)
        out = EpSparqlOutput(t)
        for q in self.queries:
            sols = sorted(q.root.new(ctx), key=lambda s: (s[1], sorted(s[0].items())))
            if q.form == "select":
                rows = [(q.row(s, ctx), (s[1], s[2])) for s in sols]
                if q.distinct:
                    rows = list({tuple(sorted(r.items())): (r, iv) for r, iv in rows}.values())
                out.answers[q.name] = [r for r, _ in rows]
                out.intervals[q.name] = [iv for _, iv in rows]
                continue
            for sol in sols:
                triples = q.graph(sol, t)
                out.graphs.append([tuple(d.term(x) for x in tr) for tr in triples])
                out.graph_queries.append(q.name)
                for tr in triples:
                    known = self._starts.get(tr)
                    if known is None:
                        out.feedback.append(((tr[1], 2), (tr[0], tr[2])))
                    if known is None or sol[1] < known:
                        self._starts[tr] = sol[1]
        return out

    def _start(self, group: int, mapping: Mapping, t: int) -> int:
        """A group solution starts at t, or earlier when it matched a fed-back triple that started
        earlier (a CONSTRUCT result keeps its solution's start)."""
        if not self._starts:
            return t
        start = t
        for pattern in self._group_triples[group]:
            ids = tuple(mapping.get(x) if isinstance(x, str) else x for x in pattern)
            if None not in ids:
                start = min(start, self._starts.get(ids, t))
        return start

    # ------------------------------------------------------------------------------ state
    def next_change(self, last: int) -> None:
        """None: a solution ends at a time point whose groups matched, which needs its input."""
        return None

    def snapshot(self) -> dict:
        """The partial solutions and the current time point's bookkeeping as plain data."""
        return {"t": self._t, "seen": [list(s) for s in self._seen], "starts": list(self._starts.items()),
                "nodes": {q.name: [node.state() for node in q.nodes] for q in self.queries}}

    def restore(self, state: dict) -> None:
        """Continue from ``snapshot()``'s state (an engine built from the same queries)."""
        self._t = state["t"]
        self._seen = [set(s) for s in state["seen"]]
        self._starts = dict(state["starts"])
        for q in self.queries:
            for node, node_state in zip(q.nodes, state["nodes"][q.name]):
                node.load(node_state)


def query_keys(engine: EpSparqlEngine) -> tuple[QueryKeys | None, str]:
    """How the queries of ``engine`` can be split by key, or why they cannot (``(None, reason)``).

    A query is split by a variable X that every one of its groups binds in every solution. Its
    operators (``seq``, ``and``, ``equals``, the optional forms) combine only solutions that
    agree on their shared variables, and a union passes its operands' on: every solution of an
    answer has the answer's value of X. The engine given only the group solutions of some X
    values finds exactly the answers with those values, so the groups' answers together are
    the answers (a bag: rows are not merged). A ``select distinct`` query must also select X,
    so that rows from different groups differ. A group shared by several queries gets one
    variable for all of them. A CONSTRUCT query is not split: its triples re-enter the
    ontological stage, where any group's queries could read them.

    >>> from dotr.rules import parse
    >>> engine = EpSparqlEngine.from_program(parse('''@prefix : <http://ex.org/> .
    ... query Up := select ?c ?p2 where { ?c :price ?p1 } seq { ?c :price ?p2 } filter(?p2 > ?p1) .'''))
    >>> query_keys(engine)
    (QueryKeys(queries={'Up': 'c'}, groups=('c', 'c')), '')
    >>> query_keys(EpSparqlEngine.from_program(parse('''@prefix : <http://ex.org/> .
    ... query Pair := select ?p1 ?p2 where { ?a :price ?p1 } seq { ?b :price ?p2 } .''')))[1]
    'query Pair: no variable is bound by every group'
    """
    if not engine.queries:
        return None, "no EP-SPARQL queries"
    options = []
    for q in engine.queries:
        if q.form != "select":
            return None, f"query {q.name} constructs triples (they re-enter the ontological stage)"
        groups = [node for node in q.nodes if isinstance(node, _GroupNode)]
        bound = frozenset.intersection(*(node.certain for node in groups))
        if q.distinct and q.projection is not None:
            bound &= {var for var, expr in q.projection if expr is None}
        if not bound:
            return None, f"query {q.name}: no variable is bound by every group{' and selected' * q.distinct}"
        options.append([{node.index: var for node in groups} for var in sorted(bound)])
    found = consistent({}, options)
    if found is None:
        return None, "the queries' keys disagree (a group they share would need two keys)"
    names = {q.name: found[next(n.index for n in q.nodes if isinstance(n, _GroupNode))] for q in engine.queries}
    return QueryKeys(names, tuple(found[i] for i in range(len(engine.groups)))), ""
