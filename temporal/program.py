"""LARS rules compiled for the engine (:class:`LarsProgram`): everything that depends on the rules
alone, built once; a :class:`temporal.lars.LarsEngine` holds the state of one run over it.

Compiling rewrites each window atom into an auxiliary relation (``temporal.windows``), compiles the
join plans, stratifies the rewritten program, and decides how each rule is evaluated: semi-naively
from the changes, in full at each time point, or as a view kept from one time point to the next
(``temporal.negation``, ``temporal.tuples``). The join plans read term values through the
dictionary the program was compiled over: a program runs over that dictionary only.

>>> from dotr.rules import parse
>>> from dotr.temporal.lars import LarsEngine
>>> program = LarsProgram(parse("alarm(R) :- [2] <> smoke(R).").rules)
>>> smoke, r1 = program.relation("smoke", 1), program.dictionary.intern(ir.Name("r1"))
>>> first, second = LarsEngine(program), LarsEngine(program)   # two runs over the same rules
>>> first.format(first.step(0, [(smoke, (r1,))])), second.format(second.step(5))
(['alarm(r1)'], [])
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, NamedTuple

from networkx import DiGraph, has_path, strongly_connected_components

from dotr.rules import Diagnostic, RuleError, UsageError, ir
from dotr.rules.engine.fixpoint import SemiNaive
from dotr.rules.engine.plan import CompiledRule, compile_rule
from dotr.rules.engine.store import INF, RelKey
from dotr.rules.engine.terms import TermDictionary, format_fact
from dotr.rules.lang.analysis import stratify
from dotr.temporal.negation import Term, split_rule, terms_of
from dotr.temporal.tuples import Reader, reader
from dotr.temporal.windows import Kind, Window, _Aux


class ViewSpec(NamedTuple):
    """How to build the :class:`~temporal.negation.NegationView` of a rule with ``not`` or a
    tuple window: its body relation, head relation, head terms and negated atoms, and whether
    it holds its heads itself (no rule reads them)."""

    body: RelKey
    head: RelKey
    head_terms: list[Term]
    negated: list[tuple[RelKey, list[Term]]]
    sink: bool


def _reach(rule: ir.Rule) -> int:
    """How far before the evaluation time the ``@`` head of ``rule`` can place an atom: for
    ``@T`` with T from ``[n] @T p`` n, for ``@U`` with ``U = T + k`` n - k; otherwise no bound
    (INF: T from a whole-stream or tuple window, from data, or a fixed time).

    >>> from dotr.rules import parse
    >>> [_reach(r) for r in parse("@U h(X) :- [3] @T p(X), U = T + -2 .  @T g(X) :- [1] @T p(X) .").rules]
    [5, 1]
    >>> _reach(parse("@T g(X) :- @T p(X) .").rules[0]) == INF
    True
    """
    at, offset = rule.at, 0
    if not isinstance(at, ir.Var):
        return INF
    name = at.name
    for lit in rule.body:
        if isinstance(lit, ir.Comparison) and lit.op == "=" and isinstance(lit.left, ir.Var) and lit.left.name == name:
            expr = lit.right
            if not (isinstance(expr, ir.BinOp) and expr.op in "+-" and isinstance(expr.left, ir.Var)
                    and isinstance(expr.right, ir.Num) and isinstance(expr.right.value, int)):
                return INF
            name, offset = expr.left.name, expr.right.value * (1 if expr.op == "+" else -1)
    sizes = [lit.window.length() for lit in rule.body
             if isinstance(lit, ir.TemporalLiteral) and isinstance(lit.op, ir.At) and not lit.negated
             and isinstance(lit.op.time, ir.Var) and lit.op.time.name == name
             and lit.window is not None and not lit.window.tuple]
    return max(min(sizes) - offset, 0) if sizes else INF


class LarsProgram:
    """LARS rules compiled over a term dictionary; build engines over it with
    ``LarsEngine(program)`` (see the module docstring). ``semi_naive=False`` evaluates every rule
    in full at every time point (for comparison)."""

    def __init__(self, rules: Iterable[ir.Rule], dictionary: TermDictionary | None = None, semi_naive: bool = True):
        self.dictionary = d = dictionary if dictionary is not None else TermDictionary()
        self.semi_naive = semi_naive
        first = len(d)
        rules = list(rules)
        #: the rules' facts, interned (they hold at every time point)
        self.facts = [((d.intern(r.head.pred), len(r.head.args)), tuple(d.intern(a) for a in r.head.args))
                      for r in rules if r.is_fact]
        #: the rules without the facts
        self.rules = rules = [r for r in rules if not r.is_fact]
        #: window atom (kind, size, base) -> its auxiliary relation
        self.aux: dict[tuple, _Aux] = {}
        #: each rule with its body over stored relations (window atoms as auxiliary atoms)
        self.rewritten: list[tuple[ir.Rule, tuple]] = []
        self.dia_of: dict[RelKey, list[_Aux]] = defaultdict(list)  # base -> diamond aux
        self.pertime: list[_Aux] = []  # aux recomputed at every time point
        #: the relations the rules derive (their heads)
        self.intensional: set[RelKey] = set()
        self.reads: set[RelKey] | None = set()  # None: a variable predicate reads every triple
        self.at_heads: dict[RelKey, RelKey] = {}  # pseudo head relation -> placed relation
        plain_heads: set[RelKey] = set()
        compiled: list[tuple[ir.Rule, CompiledRule, bool, ir.Atom, tuple]] = []
        graph = DiGraph()
        for rule in rules:
            head_rel = (d.intern(rule.head.pred), len(rule.head.args))
            self.intensional.add(head_rel)
            body = tuple(self._rewrite(lit, graph) for lit in rule.body)
            self.rewritten.append((rule, body))
            head = rule.head
            if rule.at is not None:  # the time is an extra argument of a pseudo relation
                pseudo = ir.Atom(ir.Name(f"_lars:place:{head_rel[0]}:{head_rel[1]}"), (*head.args, rule.at))
                self.at_heads[(d.intern(pseudo.pred), len(pseudo.args))] = head_rel
                head = pseudo
            else:
                plain_heads.add(head_rel)
            for lit in body:
                if isinstance(lit, ir.AtomLiteral):
                    rel: RelKey | None = (d.intern(lit.atom.pred), len(lit.atom.args))
                    strict = lit.negated
                    if graph.has_edge(rel, head_rel):
                        graph[rel][head_rel]["negative"] |= strict
                    else:
                        graph.add_edge(rel, head_rel, negative=strict)
            graph.add_node(head_rel)
            for lit in rule.body:
                if isinstance(lit, (ir.AtomLiteral, ir.TemporalLiteral)) and self.reads is not None:
                    pred = lit.atom.pred
                    if isinstance(pred, ir.Var):
                        self.reads = None
                    else:
                        self.reads.add((d.intern(pred), len(lit.atom.args)))
            negated = any(isinstance(l, ir.AtomLiteral) and l.negated for l in body)
            compiled.append((rule, compile_rule(head, body, d), negated, head, body))
        # a rule with ``not`` or a tuple window whose positive part does not depend on its head
        # is maintained incrementally (temporal.negation, temporal.tuples): its positive part as
        # a rule of its own
        tuple_windows = {aux.rel for aux in self.pertime if aux.window.tuple_based}
        #: rule number -> its view's body atom and relation, positive literals, negated atoms, tuple windows, head
        views: dict[int, tuple[ir.Atom, RelKey, tuple, list[ir.Atom], tuple[ir.Atom, ...], RelKey]] = {}
        for i, (rule, c, negated, head, body) in enumerate(compiled):
            head_rel = (d.intern(rule.head.pred), len(rule.head.args))
            windows = tuple(lit.atom for lit in body if isinstance(lit, ir.AtomLiteral) and not lit.negated
                            and (d.intern(lit.atom.pred), len(lit.atom.args)) in tuple_windows)
            if (negated or windows) and semi_naive and c.head is not None and c.body_relations \
                    and None not in c.body_relations and not any(
                    has_path(graph, head_rel, rel) for rel in c.body_relations):
                body_atom, positive, negated_atoms = split_rule(i, head, body, windows)
                body_rel = (d.intern(body_atom.pred), len(body_atom.args))
                for rel in c.body_relations:
                    graph.add_edge(rel, body_rel, negative=False)
                graph.add_edge(body_rel, head_rel, negative=False)
                views[i] = (body_atom, body_rel, positive, negated_atoms, windows, c.head)
        strata, recursive, ratchets = self._stratify(graph)
        self.graph = graph  # relation -> the relations derived from it (a background removal cuts them)
        self.strata = strata
        self.stratum_count = max(strata.values(), default=-1) + 1
        self.loop = SemiNaive()  # the semi-naive rules' plans by seed (rules.engine.fixpoint)
        #: stratum -> rules evaluated in full at each time point, their conclusions holding then only:
        #: rules with negation that no view keeps (below), and rules in a recursion through a diamond window (whose horizons
        #: would otherwise rise by the window's length at each round, for ever)
        self.full: dict[int, list[CompiledRule]] = defaultdict(list)
        #: stratum -> the semi-naive rules (evaluated in full once after a background removal)
        self.positive: dict[int, list[CompiledRule]] = defaultdict(list)
        #: stratum -> the views of the rules with ``not`` maintained incrementally
        self.views: dict[int, list[ViewSpec]] = defaultdict(list)
        readers: dict[RelKey, list[Reader | None]] = defaultdict(list)  # tuple window -> its readers (None: not a view)
        for i, (rule, c, negated, head, body) in enumerate(compiled):
            head_rel = (d.intern(rule.head.pred), len(rule.head.args))
            stratum = strata.get(head_rel, 0)
            if i in views and head_rel not in ratchets:
                body_atom, body_rel, positive, negated_atoms, windows, view_head = views[i]
                for atom in windows:
                    readers[(d.intern(atom.pred), len(atom.args))].append(reader(body_rel, body_atom, atom, d.intern))
                body_rule = compile_rule(body_atom, positive, d)
                for rel, plan in zip(body_rule.body_relations, body_rule.seeded):
                    self.loop.add(rel, plan)
                self.positive[strata.get(body_rel, 0)].append(body_rule)
                neg = [((d.intern(a.pred), len(a.args)), terms_of(a, body_atom, d.intern)) for a in negated_atoms]
                # a view whose head no rule reads (nor an @ head places) holds its heads itself
                sink = self.reads is not None and view_head in self.intensional and view_head not in self.reads \
                    and view_head not in self.at_heads.values()
                self.views[stratum].append(ViewSpec(body_rel, view_head, terms_of(head, body_atom, d.intern), neg, sink))
                continue
            for rel in c.body_relations:
                if rel in tuple_windows:
                    readers[rel].append(None)
            if negated or not c.body_relations or not semi_naive or head_rel in ratchets:
                self.full[stratum].append(c)  # (naive mode: all rules in full)
            else:
                for rel, plan in zip(c.body_relations, c.seeded):
                    self.loop.add(rel, plan)
                self.positive[stratum].append(c)
        self.aux_stratum = {aux.rel: strata.get(aux.base, 0) for aux in self.pertime}
        #: the relations the rules derive: heads, window auxiliaries, the positive parts of views
        self.derived = self.intensional | {aux.rel for aux in self.aux.values()} | {
            view.body for views in self.views.values() for view in views}
        #: stratum -> box and @ auxiliaries in a recursion of that stratum: recomputed as their
        #: base grows at t, to the least model
        self.recursive: dict[int, list[_Aux]] = defaultdict(list)
        for aux in self.pertime:
            if aux.rel in recursive:
                self.recursive[strata.get(aux.rel, 0)].append(aux)
        #: tuple windows kept from one time point to the next (temporal.tuples), with the view
        #: bodies built on them: those that only views read (the others are drawn again at every
        #: time point)
        self.kept_tuples: dict[RelKey, tuple[_Aux, list[Reader]]] = {
            aux.rel: (aux, readers[aux.rel]) for aux in self.pertime
            if aux.rel in tuple_windows and aux.rel not in recursive and None not in readers[aux.rel]}
        #: base relation -> the windows over it that an atom placed in its past changes
        self.placed_into: dict[RelKey, list[tuple[_Aux, Window]]] = defaultdict(list)
        for aux in self.pertime:
            if aux.window.sees_placements:
                self.placed_into[aux.base].append((aux, aux.window))
        self.tuple_size = max((a.size for a in self.pertime if a.window.tuple_based), default=0)
        #: the relations @ heads place atoms of, and those of them that plain rules derive too
        self.at_targets = set(self.at_heads.values())
        self.tracked = self.at_targets & plain_heads
        #: how far back an @ head can place an atom again: placements and when their atoms held
        #: are kept that long
        self.placement_horizon = max((_reach(r) for r in rules if r.at is not None), default=0) + 1
        #: how far back a box window can look (its runs are kept that long), and the bases of
        #: whole-stream boxes (their runs from the timeline's start are kept)
        self.box_horizon = max((a.size for a in self.aux.values() if a.size < INF), default=0) + 1
        self.whole_boxes = {a.base for a in self.pertime if a.kind == Kind.BOX and a.size >= INF}
        #: box auxiliaries that a rule reads over a relation that only the stream gives (no rule
        #: derives or places it; a head with a variable predicate derives any triple relation):
        #: drawn with the stream's atoms (``LarsEngine._renew``)
        any_triple = any(isinstance(rule.head.pred, ir.Var) for rule in rules)
        self.early_boxes = [a for a in self.pertime if a.kind == Kind.BOX and a.base not in self.intensional
                            and not (any_triple and a.base[1] == 2 and isinstance(d.term(a.base[0]), ir.Iri))
                            and self.aux_stratum[a.rel] < self.stratum_count - 1]
        #: the terms the compilation added to the dictionary, from id ``_first`` on
        self._first, self._terms = first, [d.term(i) for i in range(first, len(d))]

    # ------------------------------------------------------------------ compilation
    def _rewrite(self, lit, graph: DiGraph):
        """A body literal over stored relations: window atoms become auxiliary atoms."""
        if not isinstance(lit, ir.TemporalLiteral):
            return lit
        d = self.dictionary
        atom = lit.atom
        if isinstance(atom.pred, ir.Var):
            raise UsageError("a variable predicate cannot be used inside a window (E308: check the program first)")
        base = (d.intern(atom.pred), len(atom.args))
        window, op = lit.window, lit.op
        size = INF if window is None else window.length()
        kind = {ir.Diamond: Kind.DIAMOND, ir.Box: Kind.BOX, ir.At: Kind.AT}[type(op)]
        if window is not None and window.tuple:
            kind = {Kind.DIAMOND: Kind.TUPLE_DIAMOND, Kind.BOX: Kind.TUPLE_BOX, Kind.AT: Kind.TUPLE_AT}[kind]
        behaviour = kind.window
        key = (kind, size, base)
        aux = self.aux.get(key)
        if aux is None:
            name = ir.Name(f"_lars:{kind}:{size}:{base[0]}:{base[1]}")
            aux = _Aux((d.intern(name), base[1] + behaviour.with_time), base, kind, size)
            self.aux[key] = aux
            if behaviour.per_time:
                self.pertime.append(aux)
            else:
                self.dia_of[base].append(aux)
        # the auxiliary relation depends on its base: a diamond like a positive atom; the others
        # are computed once the base is complete at t (like a negation: a strict edge)
        strict = behaviour.per_time
        if graph.has_edge(base, aux.rel):
            graph[base][aux.rel]["negative"] |= strict
        else:
            graph.add_edge(base, aux.rel, negative=strict)
        args = (*atom.args, op.time) if isinstance(op, ir.At) else atom.args  # (with_time)
        return ir.AtomLiteral(ir.Atom(ir.Name(f"_lars:{kind}:{size}:{base[0]}:{base[1]}"), args), lit.negated)

    def _stratify(self, graph: DiGraph) -> tuple[dict, set, set]:
        """Strata of the rewritten program, the box and @ auxiliaries inside a recursion, and the
        relations in a recursion through a diamond of finite positive length.

        A box, @ or tuple window over ``p`` is computed once ``p`` is complete at t (a strict edge,
        as for a negation), unless ``p`` depends on the window itself: positive recursion through
        a window has a least model at t, which recomputing the auxiliary as ``p`` grows reaches.
        Only negation through recursion has none: a :class:`RuleError` (E201), as the checker
        reports it."""
        windows = {aux.rel for aux in self.pertime}
        members = {}
        for number, component in enumerate(strongly_connected_components(graph)):
            for node in component:
                members[node] = number
        recursive = set()
        for base, aux in list(graph.edges()):
            if aux in windows and members[base] == members[aux]:
                graph[base][aux]["negative"] = False
                recursive.add(aux)
        strata, cycles = stratify(graph)
        if cycles:  # (the checker reports it first; rules given to the engine directly come here)
            d, heads = self.dictionary, {v for edges in cycles for _, v in edges}
            rule, head = next((r, rel) for r, _ in self.rewritten
                              if (rel := (d.intern(r.head.pred), len(r.head.args))) in heads)
            raise RuleError([Diagnostic("E201", f"negation through recursion: {format_fact(d, head, ())} depends "
                                                "negatively on itself", rule.span, "negation must be stratified")])
        ratcheting = {members[aux.rel] for aux in self.aux.values()
                      if aux.window.ratchets(aux) and members[aux.base] == members[aux.rel]}
        return strata, recursive, {node for node, number in members.items() if number in ratcheting}

    # ------------------------------------------------------------------ use
    def bind(self, dictionary: TermDictionary | None = None) -> TermDictionary:
        """The program's dictionary, checked (``dictionary``: the one an engine is to run over;
        None: the program's): the terms the compilation added are interned again where a
        truncation (``TermDictionary.truncate``) dropped them. A :class:`UsageError` for
        another dictionary, or one that no longer has the program's terms."""
        d = self.dictionary
        if dictionary is not None and dictionary is not d:
            raise UsageError("a LarsProgram runs over the term dictionary it was compiled over (its join plans "
                             "read that dictionary's values): compile the rules over this one")
        if len(d) < self._first:
            raise UsageError(f"the term dictionary was truncated to {len(d)} terms, below the {self._first} "
                             "it had when the LarsProgram was compiled: compile the rules again")
        for i, term in enumerate(self._terms, self._first):
            if d.intern(term) != i:
                raise UsageError(f"the term dictionary gives {term} another id than when the LarsProgram was "
                                 "compiled: compile the rules again")
        return d

    def relation(self, pred: str | ir.Name | ir.Iri, arity: int) -> RelKey:
        """The relation of ``pred`` with ``arity`` arguments in the program's dictionary."""
        if isinstance(pred, str):
            pred = ir.Name(pred)
        return (self.dictionary.intern(pred), arity)

    def window_of(self, rel: RelKey) -> _Aux | None:
        """The window atom that the auxiliary relation ``rel`` of a rewritten rule stands for
        (its kind, size and base relation), or None for a relation of the program's own."""
        return next((aux for aux in self.aux.values() if aux.rel == rel), None)

    def uses(self, rel: RelKey) -> bool:
        """Whether a rule reads ``rel`` (plainly or through a window) or derives it."""
        return self.reads is None or rel in self.reads or rel in self.intensional
