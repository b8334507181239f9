"""C-SPARQL queries: stream windows, IMaRS maintenance of their entailments, reports per STEP.

A query ``register compute every E as select ... from stream <s> [range R step S] ... where
{...}`` is evaluated at the multiples of E. At an evaluation time τ the window of a stream holds
the stream's triples with time in (σ - R, σ], where σ is the latest multiple of S not after τ
(with S = E, the usual case, σ = τ); ``[triples N]`` holds the last N triples with time ≤ τ.
Stream elements name their stream; unnamed elements belong to the default stream, which every
window reads besides its named stream.

The window contents, the background knowledge and the ontological stage's rules (the rule file's
Datalog rules and its ``@profile``) are materialised incrementally as in IMaRS: a triple enters
the materialisation with its expiry (the last evaluation period its window holds it: arriving at
t with S = 1 it holds until t + R - 1, so IMaRS's tag "expires at t + R" is the first time it no
longer holds), entailments take the minimum expiry of their premises and the maximum over their
derivations, and expired facts are dropped without re-derivation (``ontology.materialise``). A
triple leaving a count window has no expiry known in advance: it is retracted with DRed. Queries
with the same windows and period share one materialisation.

At τ a query reports if its window content is non-empty: RStream (the default) all solutions,
``select istream`` those not in the solutions at τ - E, ``select dstream`` those that were there
and are gone (including at the first τ whose window is empty); an ASK query ``true`` or
``false``.

RSP-QL queries compile to the same groups: each window ``from named window <w> on <s> [...]`` is
a group of its own (its content materialised with the background), whose named graph ``<w>``
(read by ``window <w> { ... }``) holds what the window adds to the closure of the background
(the facts with a finite expiry that the background's closure lacks); the default graph is the
background's closure, a group without windows. A query's ``from <file>``
clauses replace the reasoner's background by those files (loaded once, closed under the same
rules), and each ``from named <file>`` is a named graph.

>>> from dotr.rules import check_text
>>> checked = check_text('''@prefix : <http://ex.org/> .
... :isIn(?x, ?z) :- :isIn(?x, ?y), :isIn(?y, ?z) .
... query Where := register compute every 1 as select ?x ?z
...     from stream :positions [range 10 step 1] where { ?x :isIn ?z } .''')
>>> engine = CSparqlEngine(checked)
>>> from dotr.rules.lang.ir import Atom, Iri
>>> ex = lambda n: Iri("http://ex.org/" + n)
>>> isin = lambda a, b: Atom(ex("isIn"), (ex(a), ex(b)))
>>> out = engine.step(1, {"http://ex.org/positions": [isin("A", "B")]})
>>> out = engine.step(2, {None: [isin("B", "C")]})
>>> [f"{a['x'][-2]} {a['z'][-2]}" for a in out.answers["Where"]]
['A B', 'A C', 'B C']
>>> engine.next_change(2)
3
>>> engine.step(11, {}).answers["Where"]
[{'x': '<http://ex.org/B>', 'z': '<http://ex.org/C>'}]
>>> engine.next_change(11) is None
True
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, cast


from dotr.ontology.background import load_triples
from dotr.ontology.convert import from_rdflib
from dotr.ontology.turtle import TokenTriple, intern_tokens
from dotr.rules.engine.frames import facts_of, is_frame
from dotr.rules.engine.inputs import FactReader
from dotr.rules.engine.sparql import answer_order
from dotr.rules.engine.sparql.algebra import Dataset, compile_pattern
from dotr.ontology.materialise import Materialiser
from dotr.ontology.stage import stage_rules
from dotr.rules import TimeOrderError, ir
from dotr.rules.lang.queries.csparql import CSparqlQuery, StreamWindow, is_csparql, parse_csparql, translate
from dotr.rules.lang.loader import CheckResult
from dotr.rules.engine.backends.dict_store import DictStore
from dotr.rules.engine.store import INF, Store
from dotr.rules.engine.terms import TermDictionary, format_term
from dotr.rules.engine.times import check_time

#: the expiry of a triple in a count window: it holds until it is retracted (DRed)
HELD = INF - 1

Key = tuple  # (relation, int tuple)


@dataclass
class CSparqlOutput:
    """What the queries report at ``t``: per SELECT query its solutions (variable name without
    ``?`` -> canonical term text), per ASK query True or False, and one graph (triples of terms,
    sorted) per CONSTRUCT query, in declaration order. A query is present only at its evaluation
    times with a non-empty window."""

    t: int
    answers: dict[str, list[dict[str, str]] | bool] = field(default_factory=dict)
    graphs: list[list[tuple]] = field(default_factory=list)
    constructed: dict[str, list[tuple]] = field(default_factory=dict)  # CONSTRUCT query -> its graph


class _CSparqlQuery:
    """One compiled query and its last result (for IStream / DStream). ``default``: the group
    whose store is its default graph; ``named``: graph IRI id -> the group of a named graph;
    ``windows``: the groups of its windows (it reports when one of them holds something)."""

    def __init__(self, query: CSparqlQuery, prefixes: dict[str, str], d: TermDictionary, default: "_Group",
                 named: dict[int, "_Group"], windows: list["_Group"]):
        self.query = query
        self.default, self.named, self.windows = default, named, windows
        algebra = translate(query, prefixes).algebra
        self.root = compile_pattern(algebra["p"], d, query.sparql.span)
        self.vars = [str(v) for v in algebra.get("PV") or ()]
        self.template = list(algebra.get("template") or ()) if query.form == "construct" else None
        from rdflib.term import BNode  # (rdflib: imported by a program that needs it)

        self.blanks = any(isinstance(node, BNode) for triple in self.template or () for node in triple)
        self.prev: Counter = Counter()
        self.last_eval: int | None = None
        self.owned: tuple[str, Callable[[int], bool]] | None = None  # in a key group: (key variable, owns)

    def dataset(self, t: int) -> Dataset:
        return Dataset(self.default.store_at(), {iri: group.graph(t) for iri, group in self.named.items()})

    def result(self, t: int, d: TermDictionary) -> Counter:
        solutions = self.root.run(self.dataset(t))
        if self.owned is not None:
            var, owns = self.owned
            solutions = [sol for sol in solutions if owns(sol[var])]
        if self.query.form == "ask":
            return Counter({(): 1} if solutions else {})
        if self.template is None:
            return Counter(tuple(sol.get(v) for v in self.vars) for sol in solutions)
        from rdflib.term import BNode, Variable

        triples: Counter = Counter()
        if self.blanks:  # numbered in a canonical order: the store's order of facts is not one
            solutions = sorted(solutions, key=lambda sol: sorted((v, format_term(d.term(i)))
                                                                 for v, i in sol.items() if i is not None))
        for n, sol in enumerate(solutions):
            fresh: dict[str, int] = {}
            for triple in self.template:
                ids = []
                for node in triple:
                    if isinstance(node, Variable):
                        ids.append(sol.get(str(node)))
                    elif isinstance(node, BNode):
                        if str(node) not in fresh:
                            fresh[str(node)] = d.intern(ir.Iri(f"urn:dotr:query:{self.query.name}:{t}:{n}:{node}"))
                        ids.append(fresh[str(node)])
                    else:
                        ids.append(d.intern(from_rdflib(node)))
                if None not in ids and isinstance(d.term(ids[1]), ir.Iri):
                    triples[tuple(ids)] = 1  # a graph: each triple once
        return triples


def _expiry(range_: int, step: int, t: int) -> int:
    """The last time point at which a triple arriving at t is in a time window (σ only moves at
    multiples of the step)."""
    return ((t + range_ - 1) // step) * step + step - 1


def _visible(step: int, t: int) -> int:
    """The first time point whose time window holds a triple arriving at t."""
    return -(-t // step) * step


class _Group:
    """Queries with the same windows, period and background: one materialisation of their window
    contents with it. A group without windows is a background alone (its materialisation is the
    background's ``base``, shared)."""

    def __init__(self, every: int, windows: tuple[StreamWindow, ...], rules, base: Materialiser,
                 d: TermDictionary, changes: bool = True, background_group: "_Group | None" = None):
        self.every, self.windows = every, windows  # (every: 0 for a background alone, never evaluated)
        #: the time windows as (number, range, step), the count windows as (number, triples)
        self.time_windows = [(w, window.range, window.step) for w, window in enumerate(windows)
                             if window.range is not None and window.step is not None]
        self.count_windows = [(w, window.triples) for w, window in enumerate(windows) if window.triples is not None]
        self.changes = changes  # whether the reasoner's background changes reach it (not a query's files)
        self.background_group = background_group  # (an RSP-QL window's: the group of its background alone)
        self._graph: tuple[int, Store] | None = None  # (time, what the window adds to the background)
        self._closed = False  # (a background alone: whether its rules downstream of negations ran)
        background_explicit = base.explicit
        if windows:
            # the compiled store and plans: a window's maintenance is their use case (docs/performance.md)
            self.m = Materialiser(rules, d, native=True)
            self.m.restore(list(base.store), [(rel, fact, expiry) for rel, facts in background_explicit.items()
                                              for fact, expiry in facts.items()])
        else:
            self.m = base
        #: arrived, not yet in (the key (): the stream has triples at t, all another key group's)
        self.pending: list[list[tuple[int, Key]]] = [[] for _ in windows]
        self.counted: list[deque] = [deque() for _ in windows]  # count windows' contents
        self.held: Counter = Counter()  # key -> copies in count windows
        self.timed: dict[Key, int] = {}  # key -> expiry from time windows (for count-window keys)
        self.max_expiry = -1  # of the time-window triples added so far
        self.counts = any(w.triples is not None for w in windows)
        #: the background's own facts, and the time-window expiry of those a window holds too (a
        #: background removal keeps the window's copy)
        self.background: set[Key] = {(rel, fact) for rel, facts in background_explicit.items()
                                     for fact, expiry in facts.items() if expiry >= INF}
        self.window_copy: dict[Key, int] = {}

    def store_at(self) -> Store:
        """The group's materialisation as a query's default graph: for a background alone, with
        the rules downstream of a negation evaluated on it (once, until the background changes)."""
        if not self.windows and not self._closed:
            self.m.evaluate_local(INF)
            self._closed = True
        return self.m.store

    def graph(self, t: int) -> Store:
        """The group's named graph at evaluation time ``t``: a background file's closure, or (an
        RSP-QL window) what the window adds to the closure of its background (the window's triples
        and what the rules derive with them that the background alone does not give)."""
        if not self.windows:
            return self.store_at()
        if self._graph is None or self._graph[0] != t:
            assert self.background_group is not None, "only an RSP-QL window's group is a named graph"
            facts, background = self.m.store, self.background_group.store_at()
            store = DictStore(lambda pid: facts.is_triple((pid, 2)))
            for rel, fact in facts.tagged(t):
                held = background.relations.get(rel)
                if held is None or fact not in held.facts:
                    store.add(rel, fact, facts.relations[rel].facts[fact])
            self._graph = (t, store)
        return self._graph[1]

    def receive(self, t: int, stream: str | None, keys: list[Key], present: bool = False) -> None:
        """The stream's triples at t; ``present``: the stream has triples at t (elsewhere, in a
        key group: ``CSparqlEngine.keep_group``), so the time windows over it hold something."""
        for w, window in enumerate(self.windows):
            if stream is None or stream == window.stream:
                self.pending[w].extend((t, key) for key in keys)
                if present and window.triples is None:
                    self.pending[w].append((t, ()))

    # ------------------------------------------------------------------------- windows
    def advance(self, now: int) -> bool:
        """Move every window to evaluation time ``now``; True when the windows hold something."""
        m = self.m
        if self.timed:  # (count windows) the time-window expiries of what is gone are forgotten
            for rel, fact in m.advance(now):
                if self.timed.get((rel, fact), INF) < now:
                    del self.timed[(rel, fact)]
        else:
            m.advance(now, report=False)
        timed: list = []
        entered: list[Key] = []
        left: list[Key] = []
        for w, size in self.count_windows:
            pending = self.pending[w]
            arrived = [key for t, key in pending if t <= now]
            self.pending[w] = pending[len(arrived):]
            counted = self.counted[w]
            counted.extend(arrived)
            entered.extend(arrived)
            while len(counted) > size:
                left.append(counted.popleft())
        for w, range_, step in self.time_windows:
            pending = self.pending[w]
            k = 0
            background, copies = self.background, self.window_copy
            while k < len(pending) and _visible(step, pending[k][0]) <= now:
                t, key = pending[k]
                expiry = _expiry(range_, step, t)
                if expiry >= now:
                    self.max_expiry = max(self.max_expiry, expiry)
                    if key:  # (the key (), or None in an older state: the triples at t are another group's)
                        timed.append((*key, expiry))
                        if key in background and copies.get(key, -1) < expiry:
                            copies[key] = expiry
                k += 1
            del pending[:k]
        if self.counts:
            for rel, fact, expiry in timed:
                if self.timed.get((rel, fact), -1) < expiry:
                    self.timed[(rel, fact)] = expiry
        m.add(timed)
        if entered or left:
            self._count(entered, left, now)
        m.evaluate_local(now)
        return self.max_expiry >= now or any(self.counted)

    def _count(self, entered: list[Key], left: list[Key], now: int) -> None:
        """Triples entering count windows hold until they leave them; then DRed retracts them."""
        held = self.held
        touched = {key: held[key] for key in (*entered, *left)}
        for key in entered:
            held[key] += 1
        for key in left:
            held[key] -= 1
        added = [(rel, fact, HELD) for (rel, fact), before in touched.items() if not before and held[(rel, fact)]]
        gone = [key for key, before in touched.items() if before and not held[key]]
        for key in gone:
            del held[key]
        m = self.m
        m.add(added)
        gone = [(rel, fact) for rel, fact in gone if m.explicit.get(rel, {}).get(fact) != INF]  # background stays
        if gone:
            m.retract(gone)
            m.add([(rel, fact, self.timed[(rel, fact)]) for rel, fact in gone
                   if self.timed.get((rel, fact), -1) >= now])

    def change_background(self, add: list[Key], remove: list[Key], after: int) -> None:
        """From the evaluation after ``after`` on, the background lacks ``remove`` (DRed: what only
        they entailed goes) and has ``add``; a fact a window holds too stays while it does."""
        m = self.m
        gone = [key for key in dict.fromkeys(remove) if key in self.background]
        if gone:
            self.background.difference_update(gone)
            m.retract(gone)
            copies = self.window_copy
            m.add([(*key, HELD) if self.held.get(key) else (*key, copies[key]) for key in gone
                   if self.held.get(key) or copies.get(key, -1) > after])
            for key in gone:
                copies.pop(key, None)
        self._closed = False
        new = [key for key in dict.fromkeys(add) if key not in self.background]
        for rel, fact in new:
            expiry = m.explicit.get(rel, {}).get(fact)
            if expiry is not None and expiry < HELD:  # (in a time window now)
                self.window_copy[(rel, fact)] = expiry
        self.background.update(new)
        m.add([(rel, fact, INF) for rel, fact in new])

    def next_time(self, last: int) -> int | None:
        """The first evaluation time after ``last`` whose windows hold something (given no more
        input)."""
        every = self.every
        first = (last // every + 1) * every
        if self.max_expiry >= first or any(self.counted):
            return first
        times = [max(first, -(-t // every) * every) for w, _ in self.count_windows for t, _ in self.pending[w]]
        for w, range_, step in self.time_windows:
            for t, _ in self.pending[w]:
                when = -(-max(first, _visible(step, t)) // every) * every
                if when <= _expiry(range_, step, t):
                    times.append(when)
        return min(times, default=None)

    # --------------------------------------------------------------------------- state
    def snapshot(self) -> dict:
        return {"facts": list(self.m.store), "explicit": [(rel, dict(facts)) for rel, facts in self.m.explicit.items()],
                "local": list(self.m._local_facts), "pending": [list(p) for p in self.pending],
                "counted": [list(c) for c in self.counted], "held": dict(self.held),
                "timed": dict(self.timed), "max_expiry": self.max_expiry,
                "background": set(self.background), "window_copy": dict(self.window_copy)}

    def restore(self, state: dict) -> None:
        self.m.restore(state["facts"], [(rel, fact, expiry) for rel, facts in state["explicit"]
                                        for fact, expiry in facts.items()], state["local"])
        self.pending = [list(p) for p in state["pending"]]
        self.counted = [deque(c) for c in state["counted"]]
        self.held = Counter(state["held"])
        self.timed = dict(state["timed"])
        self.max_expiry = state["max_expiry"]
        self.background = set(state.get("background", self.background))
        self.window_copy = dict(state.get("window_copy", {}))


class CSparqlEngine:
    """The C-SPARQL queries of a checked rule file (those whose text starts with ``register``)
    over background facts (RDF triples of rdflib terms, ground atoms, or interned pairs).

    ``step(t, elements)`` takes the stream elements at ``t`` (stream IRI or None -> facts) and
    returns what the queries report at ``t``; call it at every ``next_change(t)`` between inputs
    too, so that evaluation times without input are not skipped."""

    def __init__(self, checked: CheckResult, background: Iterable = (), dictionary: TermDictionary | None = None):
        checked.raise_for_errors()
        program = checked.program
        self.dictionary = d = dictionary if dictionary is not None else TermDictionary()
        prefixes, ms = program.prefixes, program.timeunit == "ms"
        queries = []
        for decl in program.queries:
            if is_csparql(decl.query):
                queries.append(checked.queries.require(f"csparql {decl.name}", decl.query,
                                                       lambda: parse_csparql(decl, prefixes, ms), checked.sources))
        self._rules, facts = stage_rules(checked)
        self._read = FactReader(d, prefixes)  # facts as given -> (relation, ids), checked
        self._token_ids: dict = {}
        self._program_facts = [*program.facts, *facts]
        self._background = facts_of(background)
        self._bases: dict[tuple[str, ...] | None, Materialiser] = {}
        self._by_key: dict[tuple, _Group] = {}
        self.groups: list[_Group] = []
        self._queries: list[tuple[_CSparqlQuery, _Group]] = []
        for query in queries:
            source = query.background if query.dataset else None  # None: the reasoner's background
            if all(w.name is None for w in query.windows):  # C-SPARQL: the windows in the default graph
                default = self._group(query.every, query.windows, source)
                windows = [default]
            else:  # RSP-QL: each window a named graph, the background the default one
                default = self._group(0, (), source)
                windows = [self._group(query.every, (w,), source, default) for w in query.windows]
            named = {d.intern(ir.Iri(w.name)): group for w, group in zip(query.windows, windows) if w.name}
            for iri, path in query.named:
                named[d.intern(ir.Iri(iri))] = self._group(0, (), (path,))
            compiled = _CSparqlQuery(query, prefixes, d, default, named, windows)
            self._queries.append((compiled, windows[0]))
        self.last_t: int | None = None
        self._present = False  # in a key group (keep_group)

    def _base(self, source: tuple[str, ...] | None) -> Materialiser:
        """The background of a query (``source``: None for the reasoner's, else the files of its
        ``from`` clauses) with the program's facts, closed under its rules; built once."""
        base = self._bases.get(source)
        if base is None:
            d = self.dictionary
            loaded = self._background if source is None else (t for path in source for t in load_triples(path))
            base = self._bases[source] = Materialiser(self._rules, d)
            base.add([(*self._intern(f), INF) for f in (*self._program_facts, *loaded)])
        return base

    def _intern(self, fact) -> Key:
        if type(fact) is TokenTriple:
            return intern_tokens(fact, self.dictionary, self._token_ids)
        return self._read(fact)

    def _group(self, every: int, windows: tuple[StreamWindow, ...], source,
               background: _Group | None = None) -> _Group:
        """The group of queries with these windows, period and background (made once; a group
        without windows, a background alone, has no period: 0; ``background``: an RSP-QL window's)."""
        key = (every, windows, source)
        group = self._by_key.get(key)
        if group is None:
            group = self._by_key[key] = _Group(every, windows, self._rules, self._base(source), self.dictionary,
                                               changes=source is None, background_group=background)
            self.groups.append(group)
        return group

    def keep_group(self, routes: dict[str, str], owns: Callable[[int], bool]) -> None:
        """Evaluate one key group's part of the stream (``pipeline.keys.csparql_keys``):
        each query reports the solutions whose term at its key variable (``routes``) ``owns``
        accepts, and a stream named in ``step``'s elements has triples at that time even when
        the group is given none of them (``pipeline.keys.split_point`` names it), so that
        the windows hold something, and the queries report, exactly when one engine's would."""
        self._present = True
        for query, _ in self._queries:
            query.owned = (routes[query.query.name], owns)

    @property
    def queries(self) -> list[CSparqlQuery]:
        return [q.query for q, _ in self._queries]

    def store(self, name: str) -> Store:
        """The materialisation query ``name`` is evaluated on (window contents, background and
        their entailments; each fact's expiry is the last time point it holds)."""
        return next(group.m.store for q, group in self._queries if q.query.name == name)

    def step(self, t: int, elements: dict | Iterable = (), interned: bool = False) -> CSparqlOutput:
        """Feed the elements at ``t`` (non-decreasing) and report the queries evaluated at ``t``:
        ``elements`` maps a stream's IRI (None: the default stream, which every window reads; a
        stream no window reads is ignored) to its facts (any forms of ``rules.engine.inputs``, an rdflib ``Graph``, a DataFrame); facts
        not in a dict are the default stream's. ``interned``: the facts are ``(relation, ids)``
        of this engine's dictionary, nothing is checked (the pipeline's own path)."""
        if interned:
            streams = cast("dict[str | None, list]", elements)  # (as the caller says)
        else:
            t = check_time(t)
            streams = self._checked(elements)
        if self.last_t is not None and t < self.last_t:
            raise TimeOrderError(f"time {t} is before {self.last_t}")
        self.last_t = t
        d = self.dictionary
        for stream, keys in streams.items():
            for group in self.groups:
                if group.windows:
                    group.receive(t, stream, keys, self._present)
        out = CSparqlOutput(t)
        live = {id(group): group.advance(t) for group in self.groups if group.windows and t % group.every == 0}
        for query, group in self._queries:
            if id(group) not in live:
                continue
            spec = query.query
            held = any(live[id(g)] for g in query.windows)
            result = query.result(t, d) if held else Counter()
            prev = query.prev if query.last_eval == t - spec.every else Counter()
            if spec.stream_op == "istream":
                report = result - prev
            elif spec.stream_op == "dstream":
                report = prev - result
            else:
                report = result
            if held or (spec.stream_op == "dstream" and report):
                self._report(out, query, report)
            query.prev, query.last_eval = result, t
        return out

    def _checked(self, elements) -> dict[str | None, list]:
        """The elements of :meth:`step`, interned and checked."""
        if not isinstance(elements, dict) or is_frame(elements):
            elements = {None: elements}
        return {None if stream is None else str(stream): [self._read(f) for f in facts_of(facts)]
                for stream, facts in elements.items()}

    def run(self, elements: Iterable[tuple[int, dict[str | None, list]]], until: int | None = None
            ) -> Iterator[CSparqlOutput]:
        """Evaluate a stream of ``(t, {stream: facts})`` (t non-decreasing; equal t are merged),
        with the evaluation times between inputs and after the last one (up to ``until``)."""
        def merged():
            pending_t, pending = None, {}
            for t, streams in elements:
                if pending_t is not None and t != pending_t:
                    yield pending_t, pending
                    pending = {}
                pending_t = t
                for stream, facts in streams.items():
                    pending.setdefault(stream, []).extend(facts)
            if pending_t is not None:
                yield pending_t, pending

        for t, streams in merged():
            yield from self._catch_up(t - 1)
            yield self.step(t, streams)
        yield from self._catch_up(until)

    def _catch_up(self, until: int | None) -> Iterator[CSparqlOutput]:
        while self.last_t is not None:
            change = self.next_change(self.last_t)
            if change is None or (until is not None and change > until):
                return
            yield self.step(change, {})

    def _report(self, out: CSparqlOutput, query: _CSparqlQuery, report: Counter) -> None:
        term = self.dictionary.term
        if query.query.form == "ask":
            out.answers[query.query.name] = bool(report)
            return
        if query.template is not None:
            graph = sorted((tuple(term(i) for i in triple) for triple in report),
                           key=lambda triple: [format_term(x) for x in triple])
            out.graphs.append(graph)
            out.constructed[query.query.name] = graph
            return
        rows = []
        for row in report.elements():
            rows.append({v: format_term(term(i)) for v, i in zip(query.vars, row) if i is not None})
        rows.sort(key=answer_order)
        out.answers[query.query.name] = rows

    def change_background(self, add: Iterable = (), remove: Iterable = ()) -> None:
        """Change the background from the next evaluation on: remove facts (what only they
        entailed goes too), then add facts (RDF triples of rdflib terms, ground atoms, or
        interned pairs, as for the constructor). Every window sees the new background."""
        add = [self._intern(f) for f in facts_of(add)]
        remove = [self._intern(f) for f in facts_of(remove)]
        after = -1 if self.last_t is None else self.last_t
        for group in self.groups:
            if group.changes:
                group.change_background(add, remove, after)

    def next_change(self, last_t: int) -> int | None:
        """The first time after ``last_t`` at which a query reports although no input arrives
        (its window still holds something, or a DStream query must report what left), or None."""
        times = [group.next_time(last_t) for group in self.groups if group.windows]
        for query, group in self._queries:
            if query.query.stream_op == "dstream" and query.prev and query.last_eval is not None:
                times.append(query.last_eval + query.query.every)
        return min((t for t in times if t is not None and t > last_t), default=None)

    # ----------------------------------------------------------------------------- state
    def snapshot(self) -> dict:
        """The engine's state as plain data (a state file's: docs/cli.md); the term dictionary is the caller's."""
        return {"groups": [g.snapshot() for g in self.groups],
                "queries": [(q.prev, q.last_eval) for q, _ in self._queries], "last_t": self.last_t}

    def restore(self, state: dict) -> None:
        """Continue from ``snapshot()``'s state (in an engine built from the same rule file over a
        dictionary restored to the same terms; the background is part of the state)."""
        for group, group_state in zip(self.groups, state["groups"]):
            group.restore(group_state)
        for (query, _), (prev, last_eval) in zip(self._queries, state["queries"]):
            query.prev, query.last_eval = Counter(prev), last_eval
        self.last_t = state["last_t"]

