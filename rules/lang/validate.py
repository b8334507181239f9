"""Validation: every problem of a program as a diagnostic with a stable code (see ``CODES``).

>>> from dotr.rules.lang.parser import parse
>>> _, diags = validate(parse("h(X, Y) :- p(X), not q(Z).", "r.dotr"))
>>> [(d.code, str(d.span)) for d in diags]
[('E101', 'r.dotr:1:6'), ('E102', 'r.dotr:1:24')]
"""

from __future__ import annotations

import math

from collections import Counter, defaultdict
from typing import Iterator

import networkx as nx

from . import ir
from .analysis import Analysis, analyse, body_atoms, dependency_graph, pred_key, pred_text
from .queries import ParsedQueries, joins
from .queries.csparql import is_csparql, parse_csparql
from .queries.epsparql import is_epsparql, parse_epsparql
from .errors import Diagnostic, MAX_ARITY
from .queries.select import SimpleSelect, read_select
from .queries.sparql import parse_select, query_reads
from .queries.template import template_triples

PROFILES = ("rdfs", "rdfs_full", "owl2rl")
TIME_UNITS = ("ticks", "ms")


def expr_vars(expr) -> Iterator[ir.Var]:
    """Variables of an expression, in order."""
    if isinstance(expr, ir.Var):
        yield expr
    elif isinstance(expr, ir.BinOp):
        yield from expr_vars(expr.left)
        yield from expr_vars(expr.right)


def _atom_vars(atom: ir.Atom) -> Iterator[ir.Var]:
    if isinstance(atom.pred, ir.Var):
        yield atom.pred
    yield from (a for a in atom.args if isinstance(a, ir.Var))


def _literal_vars(lit) -> list[ir.Var]:
    if isinstance(lit, ir.Comparison):
        return [*expr_vars(lit.left), *expr_vars(lit.right)]
    found = list(_atom_vars(lit.atom))
    if isinstance(lit, ir.TemporalLiteral) and isinstance(lit.op, ir.At) and isinstance(lit.op.time, ir.Var):
        found.append(lit.op.time)
    return found


def bound_variables(body: tuple[ir.BodyLiteral, ...]) -> set[str]:
    """Names of the variables a body binds: positive atoms (``@T`` binds T), then assignments
    ``X = expr`` whose other side is bound, until nothing changes."""
    bound = {v.name for lit in body if not isinstance(lit, ir.Comparison) and not lit.negated
             for v in _literal_vars(lit)}
    changed = True
    while changed:
        changed = False
        for lit in body:
            if isinstance(lit, ir.Comparison) and lit.op == "=":
                for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if (isinstance(side, ir.Var) and side.name not in bound
                            and all(v.name in bound for v in expr_vars(other))):
                        bound.add(side.name)
                        changed = True
    return bound


class _Validator:
    def __init__(self, program: ir.Program):
        self.program = program
        self.diags: list[Diagnostic] = []
        self.ms = program.timeunit == "ms"
        self.any_triple_output = False  # a construct template with a variable predicate
        self.queries = ParsedQueries()  # what was parsed, for the engines
        self._selects: dict[tuple, object] = {}  # event queries parsed, by text and prefixes

    def error(self, code: str, message: str, span: ir.Span | None, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, message, span, hint))

    def warning(self, code: str, message: str, span: ir.Span | None, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, message, span, hint, severity="warning"))

    # ------------------------------------------------------------------------------ rules
    def body_safety(self, body, head_vars, head_what: str) -> None:
        bound = bound_variables(body)
        for var in head_vars:
            if var.name not in bound:
                self.error("E101" if head_what == "head" else "E402",
                           f"variable {var.name} in the {head_what} is not bound by the body", var.span,
                           f"bind {var.name} in a positive body atom or with {var.name} = <expression>")
        for lit in body:
            if isinstance(lit, ir.Comparison):
                for var in _literal_vars(lit):
                    if var.name not in bound:
                        self.error("E103", f"variable {var.name} in a comparison is not bound", var.span,
                                   f"bind {var.name} in a positive body atom first")
                        break
            elif lit.negated:
                for var in _literal_vars(lit):
                    if var.name not in bound:
                        self.error("E102", f"variable {var.name} in a negated literal is not bound", var.span,
                                   "variables under 'not' must also occur in a positive body atom")
                        break
            if isinstance(lit, (ir.AtomLiteral, ir.TemporalLiteral)):
                self.atom_shape(lit.atom)
            if isinstance(lit, ir.TemporalLiteral):
                self.temporal(lit)

    def atom_shape(self, atom: ir.Atom) -> None:
        if len(atom.args) > MAX_ARITY:
            self.error("E311", f"{pred_text((atom.pred, None))} has {len(atom.args)} arguments: at most {MAX_ARITY}",
                       atom.span, "split it into atoms that share a key")
        if isinstance(atom.pred, ir.Var) and len(atom.args) != 2:
            name = atom.pred.name
            self.error("E307", f"{name} is a variable predicate (upper-case names are variables) with "
                       f"{len(atom.args)} arguments", atom.span,
                       f"write {_lowered(name)}(...) for a predicate; a variable predicate stands for a triple: "
                       "2 arguments")
        if isinstance(atom.pred, ir.Iri) and len(atom.args) != 2:
            self.error("E307", f"IRI predicate <{atom.pred.value}> has {len(atom.args)} arguments", atom.span,
                       "an IRI predicate is a property (2 arguments) or a class (1 argument)")

    def temporal(self, lit: ir.TemporalLiteral) -> None:
        window = lit.window
        if window is not None and window.unit is not None and not self.ms:
            self.error("E305", f"window [{window.size} {window.unit}] uses a time unit", window.span,
                       "declare '@timeunit ms .' or give the window in ticks")
        if window is not None and not math.isfinite(window.size):
            self.error("E308", f"a window's size is a finite number, not {window.size}", window.span)
        elif window is not None and window.tuple and not float(window.size).is_integer():
            self.error("E308", "a tuple window counts atoms: its size is a whole number", window.span)
        if isinstance(lit.op, ir.At):
            self.time_term(lit.op.time)

    def time_term(self, term) -> None:
        if not isinstance(term, ir.Var) and not (isinstance(term, ir.Num) and isinstance(term.value, int)):
            self.error("E308", "a time point is a variable or a whole number", term.span)

    def rule(self, rule: ir.Rule) -> None:
        self.atom_shape(rule.head)
        if rule.at is not None:
            self.time_term(rule.at)
            if isinstance(rule.at, ir.Var) and rule.at.name not in bound_variables(rule.body):
                self.error("E104", f"the time {rule.at.name} of an @ head is not bound by the body",
                           rule.at.span, f"bind {rule.at.name} with a body atom @{rule.at.name} p(...)")
        head_vars = list(_atom_vars(rule.head))
        if isinstance(rule.head.pred, ir.Var) and rule.head.pred.name not in bound_variables(rule.body):
            head_vars = head_vars[1:]  # (reported as a predicate, not as an unbound variable)
            pred = rule.head.pred.name
            if len(rule.head.args) == 2:  # (else E307 says it)
                self.error("E101", f"the head's predicate {pred} is a variable (upper-case names are variables) "
                           "that the body does not bind", rule.head.span, f"write {_lowered(pred)}(...) for a predicate")
        self.body_safety(rule.body, head_vars, "head")
        for lit in rule.body:
            if isinstance(lit, ir.TemporalLiteral) and isinstance(lit.atom.pred, ir.Var):
                self.error("E308", f"a variable predicate ({lit.atom.pred.name}) cannot be used inside a window or @",
                           lit.span, "derive a relation of its own with a rule and use that in the window")

    def query(self, kind: str, text: ir.SparqlText, parsed, diags: list[Diagnostic]) -> None:
        self.diags.extend(diags)
        if parsed is not None:
            self.queries.put(kind, text, parsed)

    # ----------------------------------------------------------------------------- events
    def event(self, event: ir.EventDecl, prefixes: dict[str, str]) -> set:
        """Checks an event; returns the predicate keys its query reads."""
        constants = [p for p in event.params if not isinstance(p, ir.Var)]
        for param in constants:
            self.error("E308", f"an event parameter is a variable, not {param.value}", param.span or event.span,
                       f"write ?{param.value}")
        if constants:
            return set()
        if event.query is not None:
            key = (event.query.text, tuple(prefixes.items()))
            query = self._selects.get(key)  # the same query declared again (as a pattern's own event)
            if query is None:
                query = read_select(event.query.text, prefixes)  # (one basic graph pattern: without rdflib)
                if query is not None:
                    self.diags.extend(query.warnings(event.query, f"event {event.name}"))
                else:
                    query, diags = parse_select(event.query, prefixes)
                    self.diags.extend(diags)
                    if query is not None:
                        self.diags.extend(joins.query_warnings(event.query, query.algebra["p"], f"event {event.name}"))
                if query is not None:
                    self._selects[key] = query
            if isinstance(query, SimpleSelect):
                reads, selected = query.reads(), set(query.vars)
            elif query is not None:
                self.queries.put("select", event.query, query)
                reads = query_reads(query.algebra)
                selected = {str(v) for v in query.algebra["PV"]}
            if query is not None:
                for param in event.params:
                    if param.key not in selected:
                        self.error("E402", f"event parameter {param.name} is not selected by the query",
                                   param.span, f"add ?{param.key} to the SELECT clause")
                return reads
            return set()
        for lit in event.body:
            if isinstance(lit, ir.TemporalLiteral):
                self.error("E308", "an event body is evaluated at one time point: no windows or @",
                           lit.span, "derive the predicate with a rule and use it in the event")
        self.body_safety(event.body, list(event.params), "event parameters")
        return {pred_key(atom) for atom, _, _ in body_atoms(event.body)}

    # --------------------------------------------------------------------------- patterns
    def pattern(self, pattern: ir.PatternDecl, attrs: dict[str, tuple[str, ...]], prefixes) -> set:
        """Checks a pattern; returns the predicate keys its construct template adds."""
        labels: dict[str, str] = {}  # label -> event type, for events bound so far

        def check_event(name: str, span) -> bool:
            if name not in attrs:
                self.error("E302", f"unknown event type {name}", span,
                           "declare it with 'event Name(...) := ...' or emit it from a pattern")
                return False
            return True

        def check_ref(label: str, span, scope_labels) -> None:
            if label not in scope_labels:
                self.error("E303", f"{label} is not an event bound earlier in this pattern", span,
                           "refer to the terminator or to events listed before this one")

        def check_expr(expr, scope_labels, span) -> None:
            if isinstance(expr, ir.Var):
                self.error("E403", f"variable {expr.name} in a pattern expression", expr.span or span,
                           "use Event.attribute to refer to an event's values")
            elif isinstance(expr, ir.BinOp):
                check_expr(expr.left, scope_labels, span)
                check_expr(expr.right, scope_labels, span)
            elif isinstance(expr, ir.AttrRef):
                check_ref(expr.event, expr.span, scope_labels)
                event = scope_labels.get(expr.event)
                if event in attrs and expr.attr not in attrs[event]:
                    self.error("E302", f"event {event} has no attribute {expr.attr}", expr.span,
                               f"its attributes are: {', '.join(attrs[event]) or 'none'}")
            elif isinstance(expr, ir.Aggregate):
                if check_event(expr.event, expr.span):
                    if expr.attr is not None and expr.attr not in attrs[expr.event]:
                        self.error("E302", f"event {expr.event} has no attribute {expr.attr}", expr.span)
                    if expr.attr is None and expr.func != "count":
                        self.error("E308", f"{expr.func} needs an attribute: {expr.func}({expr.event}.attr ...)",
                                   expr.span)
                    constraints(expr.event, expr.constraints, scope_labels)
                scope(expr.scope, scope_labels)

        def constraints(event: str, items, scope_labels) -> None:
            for c in items:
                if event in attrs and c.attr not in attrs[event]:
                    self.error("E302", f"event {event} has no attribute {c.attr}", c.span,
                               f"its attributes are: {', '.join(attrs[event]) or 'none'}")
                check_expr(c.value, scope_labels, c.span)

        def scope(s, scope_labels) -> None:
            if isinstance(s, ir.Within):
                check_ref(s.ref, s.span, scope_labels)
                if not math.isfinite(s.duration):
                    self.error("E308", f"a duration is a finite number, not {s.duration}", s.span)
                if s.unit is not None and not self.ms:
                    self.error("E305", f"duration {s.duration} {s.unit} uses a time unit", s.span,
                               "declare '@timeunit ms .' or give the duration in ticks")
            elif isinstance(s, ir.Between):
                check_ref(s.start, s.span, scope_labels)
                check_ref(s.end, s.span, scope_labels)

        for ref in pattern.refs:
            known = check_event(ref.event, ref.span)
            if known:
                constraints(ref.event, ref.constraints, labels)
            if ref.scope is not None:
                scope(ref.scope, labels)
            if ref.selection != "not":
                if ref.label in labels:
                    self.error("E309", f"{ref.label} is already bound in this pattern", ref.span,
                               f"give this one an alias: {ref.event}(...) as Other")
                labels[ref.label] = ref.event
        for comparison in pattern.where:
            check_expr(comparison.left, labels, comparison.span)
            check_expr(comparison.right, labels, comparison.span)
        for binding in pattern.bindings:
            check_expr(binding.value, labels, binding.span)
        if pattern.emit is not None:
            for binding in pattern.emit.bindings:
                check_expr(binding.value, labels, binding.span)
        for label in pattern.consuming:
            if label not in labels or label == pattern.terminator.label:
                self.error("E405", f"consuming {label}: not an event this pattern selects", pattern.span,
                           "name events selected with each/last/first (the terminator is never consumed)")
        added: set = set()
        if pattern.construct is not None:
            triples, diags = template_triples(pattern.construct, prefixes)
            self.query("template", pattern.construct, triples, diags)
            defined = {b.name[1:] for b in pattern.bindings}
            for triple in triples or ():
                for term in triple:
                    if isinstance(term, ir.Var) and term.name not in defined:
                        self.error("E404", f"?{term.name} in the construct template is not defined",
                                   pattern.construct.span, f"define it in the with clause: with ?{term.name} = Event.attribute")
                pred, obj = triple[1], triple[2]
                if isinstance(pred, ir.Var):
                    self.any_triple_output = True
                    continue
                atom = ir.Atom(pred, (ir.Var("?s"), obj if isinstance(obj, ir.Iri) else ir.Var("?o")))
                added.add(pred_key(atom))
        return added

    # ---------------------------------------------------------------------------- program
    def run(self) -> Analysis:
        program = self.program
        prefixes: dict[str, str] = dict(ir.DEFAULT_PREFIXES)
        names: dict[str, ir.Span | None] = {}
        event_attrs: dict[str, tuple[str, ...]] = {}
        for stmt in program.statements:
            if isinstance(stmt, ir.EventDecl):
                event_attrs[stmt.name] = stmt.attributes
            elif isinstance(stmt, ir.PatternDecl) and stmt.emit is not None:
                event_attrs.setdefault(stmt.emit.event, tuple(b.name for b in stmt.emit.bindings))
        pattern_preds: set = set()
        event_reads: set = set()
        for stmt in program.statements:
            if isinstance(stmt, ir.PrefixDecl):
                prefixes[stmt.prefix] = stmt.iri
            elif isinstance(stmt, ir.TimeUnitDecl) and stmt.unit not in TIME_UNITS:
                self.error("E308", f"unknown time unit '{stmt.unit}'", stmt.span, "use '@timeunit ms .' or ticks")
            elif isinstance(stmt, ir.ProfileDecl) and stmt.profile not in PROFILES:
                self.error("E308", f"unknown profile '{stmt.profile}'", stmt.span,
                           f"the profiles are: {', '.join(PROFILES)}")
            elif isinstance(stmt, ir.Rule):
                self.rule(stmt)
            elif isinstance(stmt, (ir.EventDecl, ir.PatternDecl, ir.QueryDecl)):
                if stmt.name in names:
                    self.error("E309", f"{stmt.name} is already declared at {names[stmt.name]}", stmt.span)
                names[stmt.name] = stmt.span
                if isinstance(stmt, ir.EventDecl):
                    event_reads |= self.event(stmt, prefixes)
                elif isinstance(stmt, ir.PatternDecl):
                    pattern_preds |= self.pattern(stmt, event_attrs, prefixes)
                elif is_csparql(stmt.query):
                    self.query(f"csparql {stmt.name}", stmt.query, *parse_csparql(stmt, prefixes, self.ms))
                elif is_epsparql(stmt.query):
                    self.query(f"epsparql {stmt.name}", stmt.query, *parse_epsparql(stmt.name, stmt.query, prefixes, self.ms))
        analysis = analyse(program, frozenset(pattern_preds), frozenset(event_reads), self.any_triple_output)
        self.arities()
        self.stratification(analysis)
        self.tuple_windows(analysis)
        self.outputs(analysis)
        self.traps(pattern_preds)
        return analysis

    def arities(self) -> None:
        seen: dict[object, dict[int, ir.Span | None]] = defaultdict(dict)
        atoms = []
        for stmt in self.program.statements:
            if isinstance(stmt, ir.Rule):
                atoms.append(stmt.head)
                atoms.extend(a for a, _, _ in body_atoms(stmt.body))
            elif isinstance(stmt, ir.EventDecl):
                atoms.extend(a for a, _, _ in body_atoms(stmt.body))
        for atom in atoms:
            if isinstance(atom.pred, ir.Name):
                by_arity = seen[atom.pred.value]
                arity = len(atom.args)
                if arity not in by_arity:
                    if by_arity:
                        first_arity, first_span = next(iter(by_arity.items()))
                        self.error("E301", f"{atom.pred.value} has {arity} arguments here but {first_arity} at "
                                   f"{first_span}", atom.span,
                                   "a predicate has one arity; rename one of them")
                    by_arity[arity] = atom.span

    def traps(self, pattern_preds: set) -> None:
        """Warnings for what is valid but rarely meant: a body predicate nothing derives that
        looks like one something derives (W301), a variable predicate bound nowhere else (W302),
        ``_`` as an argument (W303), ``true``/``false`` as a body atom (W304)."""
        produced = {key[0].value for key in pattern_preds if isinstance(key[0], ir.Name)}
        bodies = []
        for stmt in self.program.statements:
            if isinstance(stmt, ir.Rule):
                if isinstance(stmt.head.pred, ir.Name):
                    produced.add(stmt.head.pred.value)
                bodies.append((stmt.body, stmt.head))
            elif isinstance(stmt, ir.EventDecl) and stmt.body:
                bodies.append((stmt.body, None))
        warned: set[str] = set()
        lookalikes = _Lookalikes(produced)
        for body, head in bodies:
            if (split := _disconnected(body)) is not None:
                groups, lit = split
                self.warning("W305", f"the body's atoms fall into {groups} groups that share no variable: they are "
                             "joined as a cross product, whose size is the product of their matches", lit.span,
                             "join the groups by a shared variable, or split the rule in one rule per group")
            atoms = [a for a, _, _ in body_atoms(body)]
            windowed = {id(lit.atom) for lit in body if isinstance(lit, ir.TemporalLiteral)}  # (E308 there)
            occurrences = Counter(v.name for atom in [*atoms, *([head] if head else [])] for v in _atom_vars(atom))
            occurrences.update(v.name for lit in body if isinstance(lit, ir.Comparison) for v in _literal_vars(lit))
            for atom in atoms:
                pred = atom.pred
                if (isinstance(pred, ir.Var) and not pred.name.startswith("?") and occurrences[pred.name] == 1
                        and len(atom.args) == 2 and id(atom) not in windowed):
                    self.warning("W302", f"{pred.name} is a variable (upper-case names are variables): "
                                 f"{pred.name}(...) matches every triple", atom.span,
                                 f"write {_lowered(pred.name)}(...) for a predicate, or ?p(...) "
                                 "for any triple")
                for arg in atom.args:
                    if isinstance(arg, ir.Name) and arg.value == "_":
                        self.warning("W303", "_ is a constant here, not 'any value'", arg.span or atom.span,
                                     "write a variable that occurs once (Y) for any value")
                if not isinstance(pred, ir.Name) or pred.value in produced:
                    continue
                name = pred.value
                if name in ("true", "false") and not atom.args:
                    self.warning("W304", f"{name} is a propositional predicate here, which no rule derives",
                                 atom.span, "comparisons (X > 3) are written without true/false")
                elif name not in warned and (close := lookalikes.find(name)) is not None:
                    warned.add(name)
                    self.warning("W301", f"no rule or fact derives {name}, only the stream can give it; "
                                 f"did you mean {close}?", atom.span)

    def stratification(self, analysis: Analysis) -> None:
        rules_by_head: dict = defaultdict(list)
        for rule in self.program.rules:
            rules_by_head[pred_key(rule.head)].append(rule)
        graph = None  # (the dependency graph, made again for a cycle's path)
        for edges in analysis.negative_cycles:
            # report the cycle once, at its first negative literal in the source
            found = [(lit.span.line if lit.span else 0, lit.span.column if lit.span else 0, lit, body_pred, head_pred)
                     for body_pred, head_pred in edges
                     for rule in rules_by_head[head_pred]
                     for a, neg, lit in body_atoms(rule.body) if neg and pred_key(a) == body_pred]
            *_, lit, body_pred, head_pred = min(found, key=lambda f: f[:2])
            graph = graph or dependency_graph(self.program.rules)
            path = _cycle_path(graph, head_pred, body_pred)
            self.error("E201", f"{pred_text(head_pred)} depends negatively on {pred_text(body_pred)}, "
                       f"which depends on it ({' <- '.join(map(pred_text, reversed(path)))}): "
                       "negation through recursion", lit.span,
                       "negation must be stratified: break the cycle or remove the 'not'")

    def tuple_windows(self, analysis: Analysis) -> None:
        for rule in self.program.rules:
            for lit in rule.body:
                if (isinstance(lit, ir.TemporalLiteral) and lit.window is not None and lit.window.tuple
                        and pred_key(lit.atom) in analysis.derived):
                    self.error("E202", f"tuple window over {pred_text(pred_key(lit.atom))}, which rules derive",
                               lit.span, "tuple windows count stream atoms: use a time window for derived predicates")

    def outputs(self, analysis: Analysis) -> None:
        derived = {key[0] for key in analysis.derived}
        entailed = bool(self.program.profiles)  # profiles derive IRI predicates and classes too
        for decl in self.program.statements:
            if isinstance(decl, ir.OutputDecl):
                for pred in decl.preds:
                    if isinstance(pred, ir.Var):
                        self.error("E308", f"{pred.name} is a variable (upper-case names are variables): "
                                   "@output names predicates and classes", pred.span,
                                   f"write the predicate as it is derived, such as {pred.name.lstrip('?').lower()}")
                    elif pred not in derived and not (entailed and isinstance(pred, ir.Iri)):
                        self.error("E306", f"@output names {pred_text((pred, None))}, which no rule or pattern derives",
                                   pred.span, "output lists derived predicates")


def _disconnected(body: tuple[ir.BodyLiteral, ...]) -> tuple[int, ir.BodyLiteral] | None:
    """(the number of groups, the first literal of the second) when the positive atoms of
    ``body`` that have variables fall into groups sharing no variable (a comparison or an
    assignment joins the groups of its variables: ``temp(V), limit(L), V > L`` compares), else
    None.

    >>> from dotr.rules.lang.parser import parse
    >>> body = lambda text: parse(text).rules[0].body
    >>> _disconnected(body("h(X, Y) :- p(X), q(Y), r(Z, Z).")) [0]
    3
    >>> _disconnected(body("h(X, W) :- p(X), W = X + 1, q(W).")) is None
    True
    """
    parent: dict[str, str] = {}

    def root(v: str) -> str:
        while parent.setdefault(v, v) != v:
            parent[v] = v = parent[parent[v]]
        return v

    groups: list[tuple[str, ir.BodyLiteral]] = []  # (a variable, the literal) per atom with variables
    for lit in body:
        if isinstance(lit, ir.Comparison):
            names = [v.name for v in _literal_vars(lit)]
        elif getattr(lit, "negated", False) or not hasattr(lit, "atom"):
            continue
        else:
            names = [v.name for v in _literal_vars(lit)]
            if names:
                groups.append((names[0], lit))
        for name in names[1:]:
            parent[root(name)] = root(names[0])
    roots: dict[str, ir.BodyLiteral] = {}
    for name, lit in groups:
        roots.setdefault(root(name), lit)
    if len(roots) < 2:
        return None
    return len(roots), list(roots.values())[1]


def _cycle_path(graph: nx.DiGraph, source, target) -> list:
    """The nodes of a shortest path ``source -> ... -> target`` (in the same component): the one
    a breadth-first search from ``source`` finds first, in the graph's order, so that E201 names
    the same path at every run (networkx's ``shortest_path`` searches from both ends).

    >>> _cycle_path(nx.DiGraph([("a", "e"), ("e", "c"), ("c", "a"), ("a", "c")]), "a", "c"), _cycle_path(nx.DiGraph([("a", "a")]), "a", "a")
    (['a', 'c'], ['a'])
    >>> tie = nx.DiGraph([("a", "x"), ("a", "y"), ("y", "c"), ("x", "c")])
    >>> _cycle_path(tie, "a", "c"), nx.shortest_path(tie, "a", "c")
    (['a', 'x', 'c'], ['a', 'y', 'c'])
    """
    parent = {source: None}
    for child, node in nx.bfs_predecessors(graph, source):
        parent[child] = node
        if child == target:
            break
    path = [target]
    while (node := parent[path[-1]]) is not None:
        path.append(node)
    return path[::-1]


def _lowered(name: str) -> str:
    """A variable's name as a predicate's: ``Temp`` -> ``temp``, ``?p`` -> ``p``."""
    name = name.lstrip("?")
    return name[:1].lower() + name[1:]


class _Lookalikes:
    """The names of ``names`` one edit (insertion, deletion, substitution, swap of neighbours)
    away from a name, found through an index of the names with one character deleted, so that
    looking up every body predicate costs time linear in the program, not in its square:

    >>> _Lookalikes({"smoke", "heat"}).find("smokee"), _Lookalikes({"smoke"}).find("smoek")
    ('smoke', 'smoke')
    """

    def __init__(self, names: set[str]):
        self.names = {n for n in names if len(n) >= 3}
        self.deleted: dict[str, list[str]] = defaultdict(list)  # a name less one character -> names
        self.deleted_at: dict[tuple[int, str], list[str]] = defaultdict(list)
        for other in self.names:
            for i in range(len(other)):
                less = other[:i] + other[i + 1:]
                self.deleted[less].append(other)
                self.deleted_at[i, less].append(other)

    def find(self, name: str) -> str | None:
        """The first (in sorted order) name one edit away from ``name`` (three or more
        characters), or None."""
        if len(name) < 3:
            return None
        found = set(self.deleted.get(name, ()))  # an insertion
        for i in range(len(name)):
            less = name[:i] + name[i + 1:]
            if less in self.names:  # a deletion
                found.add(less)
            found.update(self.deleted_at.get((i, less), ()))  # a substitution
            if i + 1 < len(name):
                swapped = name[:i] + name[i + 1] + name[i] + name[i + 2:]
                if swapped in self.names:
                    found.add(swapped)
        found.discard(name)
        return min(found, default=None)


def validate(program: ir.Program, queries: ParsedQueries | None = None) -> tuple[Analysis, list[Diagnostic]]:
    """The program's analysis and every diagnostic, in source order; ``queries`` receives the
    parsed form of the program's query texts."""
    validator = _Validator(program)
    if queries is not None:
        validator.queries = queries
    analysis = validator.run()
    return analysis, sorted(validator.diags, key=lambda d: (d.span.line, d.span.column) if d.span else (0, 0))
