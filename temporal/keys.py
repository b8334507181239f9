"""Partition keys for the pattern engine: which attribute of each event type the patterns of a
program can be split by, so that the events with different key values are matched apart.

A key assignment gives every event type a patterns use one attribute (its *key*). It is valid
when in every pattern every item (``each``/``last``/``first``/``not``), every aggregate, and the
emitted event are tied to the terminator by key equalities: an item ``B(k = A.k)`` where ``k`` is
B's key and ``A.k`` is the key of a label already tied (``emit E(k = A.k)`` for the emitted
type). Then all events a match binds, every event a negation or an aggregate of it looks at, and
every candidate ``last``/``first``/``consuming`` choose among share the terminator's key value: a
match depends only on the events with that value, so the engine run on each key value's events
alone finds exactly the matches the engine over all events finds. Where no assignment is valid
(an item joined on no key, an aggregate over all events) the program runs on one key.

>>> from dotr.rules import parse
>>> prog = parse('''event Smoke(?area) := smoke(?area) .
... event Temp(?area, ?value) := temp(?area, ?value) .
... pattern Fire from Smoke and last Temp(area = Smoke.area) within 300 from Smoke
...   emit Fire(area = Smoke.area, temp = Temp.value) .''')
>>> partition_keys(prog)
{'Fire': 0, 'Smoke': 0, 'Temp': 0}
>>> partition_keys(parse('''event T(?area, ?value) := temp(?area, ?value) .
... pattern Hot from T where avg(T.value within 300 from T) > 40 .'''))  # averages every area
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

from dotr.rules import ir
from dotr.rules.engine.terms import TermDictionary, format_term


def partition_keys(program: ir.Program) -> dict[str, int] | None:
    """A valid key assignment for the program's patterns (event type -> attribute position), or
    None when there is none (or there are no patterns)."""
    if not program.patterns:
        return None
    attrs: dict[str, tuple[str, ...]] = {e.name: e.attributes for e in program.events}
    for p in program.patterns:
        if p.emit is not None:
            attrs.setdefault(p.emit.event, tuple(b.name for b in p.emit.bindings))
    options = [_pattern_options(p, attrs) for p in program.patterns]
    found = consistent({}, options)
    return None if found is None else {name: attrs[name].index(a) for name, a in sorted(found.items())}


def _pattern_options(p: ir.PatternDecl, attrs: dict[str, tuple[str, ...]]) -> list[dict[str, str]]:
    """The assignments (event type -> key attribute) under which the pattern is local to its key."""
    out = []
    for key in attrs.get(p.terminator.event, ()):
        for labels, types in _tie(p.refs[1:], {p.terminator.label: key}, {p.terminator.event: key}):
            if all(_tie_aggregate(a, labels, types) for a in _aggregates(p)) and _emits_key(p, labels, types):
                out.append(types)
    return out


def _tie(loose, labels: dict[str, str], types: dict[str, str]):
    """Every way of tying all ``loose`` items to the labels tied so far: (label -> key attribute,
    event type -> key attribute). A negation binds no label (its name may be a bound label's)."""
    if not loose:
        yield labels, types
        return
    for i, ref in enumerate(loose):
        choices = [a for a in _key_equalities(ref.constraints, labels) if types.get(ref.event, a) == a]
        if choices:  # tie the first item that can be tied (the others stay tieable after it)
            rest = loose[:i] + loose[i + 1:]
            for attr in dict.fromkeys(choices):
                bound = labels if ref.selection == "not" else {**labels, ref.label: attr}
                yield from _tie(rest, bound, {**types, ref.event: attr})
            return


def _key_equalities(constraints, labels: dict[str, str]) -> list[str]:
    """The attributes ``a`` with a constraint ``a = L.k`` where ``k`` is L's key."""
    return [c.attr for c in constraints if c.op == "=" and isinstance(c.value, ir.AttrRef)
            and labels.get(c.value.event) == c.value.attr]


def _tie_aggregate(agg: ir.Aggregate, labels: dict[str, str], types: dict[str, str]) -> bool:
    """Whether the aggregate ranges over the match's key value only (``types`` gets its key)."""
    choices = [a for a in _key_equalities(agg.constraints, labels) if types.get(agg.event, a) == a]
    if choices:
        types.setdefault(agg.event, choices[0])
    return bool(choices)


def _aggregates(p: ir.PatternDecl) -> list[ir.Aggregate]:
    exprs = [c.value for r in p.refs for c in r.constraints]
    exprs += [side for w in p.where for side in (w.left, w.right)]
    exprs += [b.value for b in p.bindings] + ([b.value for b in p.emit.bindings] if p.emit else [])
    out = []
    while exprs:
        e = exprs.pop()
        if isinstance(e, ir.Aggregate):
            out.append(e)
            exprs += [c.value for c in e.constraints]
        elif isinstance(e, ir.BinOp):
            exprs += [e.left, e.right]
    return out


def _emits_key(p: ir.PatternDecl, labels: dict[str, str], types: dict[str, str]) -> bool:
    """The emitted event carries the match's key value (in an attribute that becomes its key)."""
    if p.emit is None:
        return True
    keyed = [b.name for b in p.emit.bindings
             if isinstance(b.value, ir.AttrRef) and labels.get(b.value.event) == b.value.attr]
    if not keyed:
        return False
    return types.setdefault(p.emit.event, keyed[0]) in keyed


def consistent(chosen: dict, options: list[list[dict]]) -> dict | None:
    """One option of each list (a partial assignment) such that all agree with each other and
    with ``chosen``, merged; None if there is none.

    >>> consistent({}, [[{"A": 0}, {"A": 1}], [{"A": 1, "B": 0}]])
    {'A': 1, 'B': 0}
    """
    if not options:
        return chosen
    for option in options[0]:
        if all(chosen.get(t, a) == a for t, a in option.items()):
            found = consistent({**chosen, **option}, options[1:])
            if found is not None:
                return found
    return None


class FactKeys(dict):
    """The keys of :func:`fact_keys`: (predicate text, arity) -> key position or None."""


def fact_keys(rules) -> tuple[FactKeys | None, str]:
    """A key for the LARS rules ``rules`` (the temporal rules), or why there is none.

    Each predicate the rules mention gets an argument position, its *key*, or None (not split:
    every group sees all its facts). The assignment is valid when in every rule the atoms of
    split predicates (windowed, negated or not) all have one variable X at their key, which is
    the head's key too (a rule reading only unsplit predicates derives an unsplit one). Then
    every grounding of a rule that touches split data has one key value and the data with that
    value derive it: the engine run on each key value's part, with every unsplit fact and the
    whole background, derives what the engine over everything derives for that value.
    Propositional predicates are never split; a variable predicate, or a tuple window (which
    counts the stream atoms of every predicate, so every group would need them all), means no
    key. Returns ``(keys, "")``, keys
    ``(predicate text, arity) -> position or None``, when some predicate is split, else
    ``(None, reason)``.

    >>> from dotr.rules import parse
    >>> fact_keys(parse('''hot(S) :- [3] <> temp(S, V), V > 30 .
    ... alarm(S, R) :- hot(S), not ok(S), located(S, R) .''').rules)[0]
    {('alarm', 2): 0, ('hot', 1): 0, ('located', 2): 0, ('ok', 1): 0, ('temp', 2): 0}
    >>> fact_keys(parse('near(A, B) :- [3] <> at(A, L), [3] <> at(B, L) .').rules)[1]
    'near(A, B) :- ...: no variable is at one argument of every atom and of the head'
    >>> fact_keys(parse('P(X, Y) :- [3] <> link(X, P, Y) .').rules)[1]
    'P(X, Y) :- ...: a variable predicate'
    """
    rules = list(rules)
    options = []
    for rule in rules:
        atoms = [rule.head, *(lit.atom for lit in rule.body if isinstance(lit, (ir.AtomLiteral, ir.TemporalLiteral)))]
        if any(isinstance(a.pred, ir.Var) for a in atoms):
            return None, f"{_rule_text(rule)}: a variable predicate"
        if any(isinstance(lit, ir.TemporalLiteral) and lit.window is not None and lit.window.tuple for lit in rule.body):
            return None, f"{_rule_text(rule)}: a tuple window counts the stream atoms of every predicate"
        choices = []
        for var in dict.fromkeys(v for v in rule.head.args if isinstance(v, ir.Var)):
            choice: dict[tuple[str, int], int | None] = {}
            for atom in atoms:
                key, position = _pred(atom), next((i for i, a in enumerate(atom.args) if a == var), None)
                if choice.get(key, position) != position:
                    break
                choice[key] = position
            else:
                choices.append(choice)
        choices.append({_pred(a): None for a in atoms})  # nothing split: always consistent
        options.append(choices)
    found = consistent({}, options)
    read = {_pred(lit.atom) for rule in rules for lit in rule.body if isinstance(lit, (ir.AtomLiteral, ir.TemporalLiteral))}
    if found is not None and any(v is not None for k, v in found.items() if k in read):
        return FactKeys(sorted(found.items())), ""
    if found is not None and any(v is not None for v in found.values()):
        return None, "only rule heads would be split (every group would read all the data)"
    if not rules:
        return None, "no LARS rules"
    for rule, choices in zip(rules, options):  # the first rule that cannot be split at all
        if len(choices) == 1:
            what = "triple pattern and of the result" if _rule_text(rule).startswith("query ") else "atom and of the head"
            return None, f"{_rule_text(rule)}: no variable is at one argument of every {what}"
    return None, "the rules' keys disagree (a predicate would need two keys)"


def _pred(atom: ir.Atom) -> tuple[str, int]:
    return atom.predicate_key


def _rule_text(rule: ir.Rule) -> str:
    """The rule, or the C-SPARQL query it stands for, as a reason names it.

    >>> _rule_text(ir.Rule(ir.Atom(ir.Name("query Q1"), (ir.Var("?a"),)), ()))
    'query Q1'
    >>> _rule_text(ir.Rule(ir.Atom(ir.Name("hot"), (ir.Var("X"),)), ()))
    'hot(X) :- ...'
    """
    head = rule.head
    name = head.predicate_key[0]  # (a variable predicate: the variable's name)
    if name.startswith("query "):  # (pipeline.keys: a query's atoms as a rule's body)
        return name
    args = ", ".join(getattr(a, "name", None) or str(getattr(a, "value", a)) for a in head.args)
    return f"{name}({args}) :- ..." if head.args else f"{name} :- ..."


class _ByTerm:
    """Groups of terms: a digest of the term's text modulo ``n``, the same in every process
    whatever the term ids (cached per id while the ids are valid)."""

    def __init__(self, n: int, dictionary: TermDictionary):
        self.n, self.dictionary = n, dictionary
        self._groups: dict[int, int] = {}  # term id -> group

    def group_of_term(self, term: int) -> int:
        group = self._groups.get(term)
        if group is None:
            text = format_term(self.dictionary.term(term)).encode()
            group = self._groups[term] = zlib.crc32(text) % self.n
        return group

    def forget_terms(self, first: int) -> None:
        """Drop the cached groups of term ids from ``first`` on (the dictionary was truncated)."""
        self._groups = {t: g for t, g in self._groups.items() if t < first}


class FactPartition(_ByTerm):
    """Routes the facts the LARS rules read to ``n`` groups by the term at their predicate's key
    (:func:`fact_keys`); facts of unsplit predicates go to every group, facts the rules do not
    read to group 0.

    >>> d = TermDictionary()
    >>> part = FactPartition({("temp", 2): 0, ("ok", 1): None}, 2, d)
    >>> temp, ok, other = (d.intern(ir.Name("temp")), 2), (d.intern(ir.Name("ok")), 1), (d.intern(ir.Name("x")), 1)
    >>> a, b = d.intern(ir.Name("s1")), d.intern(ir.Name("s2"))
    >>> groups = part.split([(temp, (a, 1)), (temp, (b, 2)), (ok, (a,)), (other, (a,))])
    >>> (temp, (b, 2)) in groups[part.group_of_term(b)], all((ok, (a,)) in g for g in groups), (other, (a,)) in groups[0]
    (True, True, True)
    >>> sum(len(g) for g in groups)  # each temp once, ok in both groups, the other fact once
    5
    """

    def __init__(self, keys: dict[tuple[str, int], int | None], n: int, dictionary: TermDictionary):
        super().__init__(n, dictionary)
        self.keys = keys
        self._routes: dict[tuple, int | None | str] = {}  # relation -> key position, None (all) or "0" (group 0)

    def _route(self, rel: tuple):
        route = self._routes.get(rel, "?")
        if route == "?":
            term = self.dictionary.term(rel[0])
            key = (getattr(term, "value", None), rel[1])
            route = self._routes[rel] = self.keys[key] if key in self.keys else "0"
        return route

    def split(self, facts: list[tuple]) -> list[list[tuple]]:
        """``facts`` ((relation, args), or longer tuples starting so) per group."""
        out: list[list[tuple]] = [[] for _ in range(self.n)]
        for fact in facts:
            route = self._route(fact[0])
            if route == "0":
                out[0].append(fact)
            elif route is None:
                for part in out:
                    part.append(fact)
            else:
                out[self.group_of_term(fact[1][route])].append(fact)
        return out

    def owned(self, group: int, items: list[tuple]) -> list[tuple]:
        """The items ``(relation, args, ...)`` that ``group`` reports: those whose key's value is
        the group's, and every item of a relation that is not split (an unsplit predicate, or one
        the keys do not name: the LARS engine's own auxiliary relations). A group could derive
        facts of other groups' values too (from the whole background, under a negation of data
        it does not have): those are not its own.

        >>> d = TermDictionary()
        >>> part = FactPartition({("temp", 2): 0}, 2, d)
        >>> temp, a = (d.intern(ir.Name("temp")), 2), d.intern(ir.Name("s1"))
        >>> [len(part.owned(g, [(temp, (a, 1), 5), (temp, (a, 2), 5)])) for g in range(2)] == [
        ...     2 * (part.group_of_term(a) == g) for g in range(2)]
        True
        """
        route_of, groups, out = self._route, self._groups, []
        last = route = None
        for item in items:
            rel = item[0]
            if rel is not last:  # (items come in runs of one relation)
                last, route = rel, route_of(rel)
            if type(route) is not int:
                out.append(item)
                continue
            term = item[1][route]
            found = groups.get(term)
            if (found if found is not None else self.group_of_term(term)) == group:
                out.append(item)
        return out

    def forget_terms(self, first: int) -> None:
        super().forget_terms(first)
        self._routes = {rel: r for rel, r in self._routes.items() if rel[0] < first}


class EventPartition(_ByTerm):
    """Routes events to ``n`` groups by the term of their key attribute (a digest of its text, the
    same in every process whatever the term ids).

    >>> d = TermDictionary()
    >>> part = EventPartition({"Temp": 0}, 2, d)
    >>> a = d.intern(ir.Name("area_1"))
    >>> part.group_of("Temp", (a, d.number(25))) == part.group_of("Temp", (a, d.number(99)))
    True
    """

    def __init__(self, keys: dict[str, int], n: int, dictionary: TermDictionary):
        super().__init__(n, dictionary)
        self.keys = keys

    def group_of(self, event_type: str, values: tuple[int, ...]) -> int:
        return self.group_of_term(values[self.keys[event_type]])

    def split(self, events: dict[str, list[tuple[int, ...]]]) -> list[dict[str, list[tuple[int, ...]]]]:
        """The events per group (types without a key, which no pattern uses, are left out)."""
        out: list[dict[str, list]] = [{} for _ in range(self.n)]
        for name, rows in events.items():
            if name in self.keys:
                for values in rows:
                    out[self.group_of(name, values)].setdefault(name, []).append(values)
        return out


class QueryKeys(NamedTuple):
    """Keys for EP-SPARQL queries (``temporal.epsparql.query_keys``): per query, the variable
    its answers are split by; per group of the engine (``EpSparqlEngine.groups``, in order), the
    variable its solutions are routed by."""

    queries: dict[str, str]
    groups: tuple[str, ...]


class SolutionPartition(_ByTerm):
    """Routes the solutions of the EP-SPARQL queries' groups to ``n`` groups by the term each
    binds to its group's key variable.

    >>> d = TermDictionary()
    >>> part = SolutionPartition(QueryKeys({"Q": "c"}, ("c", "c")), 2, d)
    >>> a = d.intern(ir.Name("acme"))
    >>> groups = part.split([[{"c": a, "p": 1}], [{"c": a, "p": 2}]])
    >>> groups[part.group_of_term(a)]
    [[{'c': ..., 'p': 1}], [{'c': ..., 'p': 2}]]
    >>> groups[1 - part.group_of_term(a)]
    [[], []]
    """

    def __init__(self, keys: QueryKeys, n: int, dictionary: TermDictionary):
        super().__init__(n, dictionary)
        self.keys = keys

    def split(self, solutions: list[list[dict]]) -> list[list[list[dict]]]:
        """``solutions`` (per engine group: mappings variable -> term id) per key group."""
        out: list[list[list[dict]]] = [[[] for _ in solutions] for _ in range(self.n)]
        for i, (var, mappings) in enumerate(zip(self.keys.groups, solutions)):
            for mapping in mappings:
                out[self.group_of_term(mapping[var])][i].append(mapping)
        return out


class WindowKeys(NamedTuple):
    """Keys for C-SPARQL queries (``pipeline.keys.csparql_keys``): the stream facts' keys
    (:func:`fact_keys` over the ontological stage's rules and the queries' patterns), and per
    query the variable its solutions are routed by."""

    facts: FactKeys
    queries: dict[str, str]


class WindowPartition(_ByTerm):
    """Routes the stream facts of C-SPARQL windows to ``n`` groups by their predicate's key (as
    :class:`FactPartition`), and tells which group reports a solution (by the term its query's
    key variable binds).

    >>> d = TermDictionary()
    >>> part = WindowPartition(WindowKeys(FactKeys({("temp", 2): 0}), {"Hot": "s"}), 2, d)
    >>> temp, a = (d.intern(ir.Name("temp")), 2), d.intern(ir.Name("s1"))
    >>> groups = part.split_streams({"s": [(temp, (a, 1))], None: []})
    >>> groups[part.group_of_term(a)], groups[1 - part.group_of_term(a)]
    ({'s': [((..., 2), (..., 1))]}, {'s': []})
    """

    def __init__(self, keys: WindowKeys, n: int, dictionary: TermDictionary):
        super().__init__(n, dictionary)
        self.keys = keys
        self.facts = FactPartition(keys.facts, n, dictionary)

    def split_streams(self, streams: dict) -> list[dict]:
        """Each group's part of the stream facts by stream name. A stream that has facts is named
        in every group's part, with an empty list where the group has none of them: the group's
        windows over it hold something then, as one engine's do."""
        out: list[dict] = [{} for _ in range(self.n)]
        for name, facts in streams.items():
            if facts:
                for part, own in zip(out, self.facts.split(facts)):
                    part[name] = own
        return out

    def owns(self, group: int, term: int) -> bool:
        return self.group_of_term(term) == group

    def forget_terms(self, first: int) -> None:
        super().forget_terms(first)
        self.facts.forget_terms(first)


class JointKeys(NamedTuple):
    """Keys for a program with temporal engines of several kinds (``pipeline.keys.split_keys``),
    each by its own analysis: the LARS rules' facts by :func:`fact_keys`, the patterns' events by
    :func:`partition_keys`, the EP-SPARQL queries' solutions (:class:`QueryKeys`), the C-SPARQL
    windows' stream facts (:class:`WindowKeys`); None where the program has no such engine. They
    may key different terms (the rules by sensor, the patterns by room): valid when the engines
    do not meet, that is when each reads only what the enrich step gives it (the rules read and
    derive nothing that a pattern's graph constructs, no graph re-enters the ontological stage,
    no EP-SPARQL query constructs triples)."""

    facts: FactKeys | None = None
    events: dict[str, int] | None = None
    queries: QueryKeys | None = None
    windows: WindowKeys | None = None


class JointPartition:
    """Routes each part of a time point by the partition of its engine (:class:`FactPartition`,
    :class:`EventPartition`, :class:`SolutionPartition`, :class:`WindowPartition`; None for an
    engine the program does not have), into the same ``n`` groups."""

    def __init__(self, keys: JointKeys, n: int, dictionary: TermDictionary):
        self.n = n
        self.facts = FactPartition(keys.facts, n, dictionary) if keys.facts is not None else None
        self.events = EventPartition(keys.events, n, dictionary) if keys.events is not None else None
        self.solutions = SolutionPartition(keys.queries, n, dictionary) if keys.queries is not None else None
        self.windows = WindowPartition(keys.windows, n, dictionary) if keys.windows is not None else None

    def parts(self) -> list:
        return [p for p in (self.facts, self.events, self.solutions, self.windows) if p is not None]

    def forget_terms(self, first: int) -> None:
        for part in self.parts():
            part.forget_terms(first)
