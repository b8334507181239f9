# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Join plans in compiled code over a ``NativeStore``, and the semi-naive max-min fixpoint.

The plans are those of ``rules.engine.plan`` (one per positive body atom as the seed, the other atoms
joined in a greedy order through hash indexes, tests placed as soon as their variables are bound,
a derivation's expiry the minimum of its premises'), described by C structs instead of generated
Python. They cover positive atoms (constant or variable predicates) and ``=`` / ``!=`` between
terms, with ``X = term`` assignments; a rule with anything else (value comparisons, arithmetic)
keeps its Python plans, which read the store through its views. ``NativeRules.propagate`` is
``Materialiser._propagate`` over a native store: deltas and the round's derivations stay in C
arrays, only rules without compiled plans see Python objects.
"""

cimport cython
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from cpython.tuple cimport PyTuple_GET_SIZE, PyTuple_GET_ITEM

from dotr.rules.engine.backends.native_store cimport (NativeStore, Table, Index, tbl_find, idx_find, row_at,
                                                      hash_key, MAX_ARITY, F_EXP, DOTR_FREE, DOTR_ROW_MASK,
                                                      DOTR_PREFETCH)

from dotr.rules import ir
from dotr.rules.engine.guard import GUARD
from dotr.rules.engine.planning import Assign, Compare, Compute, Negation, TermTest, Unsupported, plan_rule
from dotr.rules.lang.printer import Printer, format_rule

cdef enum:          # the values of rules.engine.planning's K_* and P_*
    K_CONST = 0     # a term id
    K_VAR = 1       # a variable's number

cdef enum:
    P_CONST = 0     # the predicate is a constant
    P_BOUND = 1     # a variable bound before the atom
    P_FREE = 2      # a variable the atom binds: every triple relation (for the seed: the delta's)

cdef enum:
    A_ROW = 0       # every position bound: one lookup
    A_INDEX = 1     # some: the chain of an index
    A_SCAN = 2      # none: every row

cdef enum:
    AHEAD = 16       # records prefetched ahead when a round's derivations are stored
    KEEP = 1 << 16   # entries of a delta or of derivations kept after a fixpoint (_trim)

#: int64 of derivations (a triple's take 4) above which they are stored before a plan goes on:
#: a round's derivations take bounded memory (``flush_at`` sets it)
cdef int64_t FLUSH = 1 << 20
#: derivations stored before their round ended, not charged to the time point's budget yet (the
#: round's charge counts what they added): what a round has made is its buffer's and these
cdef int64_t FLUSHED = 0


def flush_at(int64_t words) -> int:
    """Store derivations once they fill ``words`` int64 (the same results: tests make it small);
    returns the former value."""
    global FLUSH
    former, FLUSH = FLUSH, words
    return former

cdef enum:
    T_EQ = 0
    T_NE = 1
    T_SET = 2       # the variable lval := (rkind, rval)


cdef struct Test:
    int op
    int lkind
    int64_t lval
    int rkind
    int64_t rval


cdef struct Step:
    int pkind
    int64_t pred            # P_CONST: the predicate id; else the variable's number
    int arity
    int access
    int nkey                # positions whose value is known: constants and bound variables
    int key_pos[MAX_ARITY]
    int key_kind[MAX_ARITY]
    int64_t key_val[MAX_ARITY]
    int nbind               # positions that bind a variable
    int bind_pos[MAX_ARITY]
    int64_t bind_var[MAX_ARITY]
    int ncheck              # positions repeating a variable the atom binds
    int check_pos[MAX_ARITY]
    int64_t check_var[MAX_ARITY]
    int test0               # the tests placed after this atom: tests[test0 : test0 + ntests]
    int ntests
    Table *table            # P_CONST, resolved per run
    int ix                  # A_INDEX with P_CONST: the index number, resolved per run


cdef void _shrink(int64_t **p, int64_t n) noexcept:
    """Make the block at ``p[0]`` ``n`` int64 long, which is less (kept as it is if that fails)."""
    cdef int64_t *q = <int64_t *>realloc(p[0], n * sizeof(int64_t))
    if q != NULL:
        p[0] = q


@cython.final
cdef class Out:
    """The derivations of a round: records ``table, expiry, term ids...``."""

    cdef int64_t *data
    cdef int64_t n, cap, pushes
    cdef int64_t src    # the transitive step whose conclusions these are (-1: none)

    def __cinit__(self, int64_t src=-1):
        self.src = src
        self.cap = 1024
        self.pushes = 0
        self.data = <int64_t *>malloc(self.cap * sizeof(int64_t))
        if self.data == NULL:
            raise MemoryError()
        self.n = 0

    def __dealloc__(self):
        free(self.data)

    cdef void trim(self) noexcept:
        """Keep room for ``KEEP`` int64 only (the content is dropped)."""
        if self.cap > KEEP:
            _shrink(&self.data, KEEP)
            self.cap = KEEP
        self.n = 0

    cdef int64_t *reserve(self, int64_t n) except NULL:
        """Room for ``n`` int64 from the start (a scratch buffer, its content dropped)."""
        cdef int64_t *grown
        if n > self.cap:
            grown = <int64_t *>realloc(self.data, n * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            self.data, self.cap = grown, n
        return self.data

    cdef inline int push(self, int64_t tid, int64_t expiry, const int64_t *vals, int arity) except -1:
        cdef int64_t *grown
        if self.n + 2 + arity > self.cap:
            grown = <int64_t *>realloc(self.data, 2 * (self.cap + arity) * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            self.data, self.cap = grown, 2 * (self.cap + arity)
            GUARD.check(self.n // (2 + arity) + FLUSHED)  # (a round that grows without bound stops here)
        self.pushes += 1
        if not (self.pushes & 0x3FFFF):  # (and every 2^18 rows: a signal acts within milliseconds)
            GUARD.check(self.n // (2 + arity) + FLUSHED)
        cdef int64_t *d = self.data + self.n
        cdef int j
        d[0], d[1] = tid, expiry
        for j in range(arity):  # (a loop: memcpy of a few words is a call)
            d[2 + j] = vals[j]
        self.n += 2 + arity
        return 0


@cython.final
cdef class Plan:
    """One rule's plan seeded at one of its positive atoms."""

    cdef Step seed
    cdef Step *steps
    cdef int nsteps
    cdef Test *tests
    cdef int ntests
    cdef int nvars
    cdef int64_t vars[64]
    cdef int hkind              # P_CONST or P_BOUND
    cdef int64_t hpred
    cdef int harity
    cdef int hkinds[MAX_ARITY]
    cdef int64_t hvals[MAX_ARITY]
    cdef Table *htable
    cdef readonly object seed_rel   # (pred, arity), or None: a variable predicate (triple relations)
    cdef readonly str text
    cdef readonly int64_t step_id   # a transitive step's number (-1: not one)
    cdef readonly int filter_pos    # a position where the seed has a constant (-1: none) ...
    cdef readonly int64_t filter_val  # ... and the constant
    cdef bint precheck              # the first joined atom depends on no argument of the seed:
                                    # without a match for it, the delta is not looked at
    cdef Out own                    # a transitive step's conclusions

    def __dealloc__(self):
        free(self.steps)
        free(self.tests)

    # -------------------------------------------------------------------------------- run
    cdef inline int64_t value(self, int kind, int64_t v) noexcept:
        return v if kind == K_CONST else self.vars[v]

    cdef inline bint passes(self, int test0, int ntests) noexcept:
        cdef Test *t
        cdef int i
        for i in range(test0, test0 + ntests):
            t = &self.tests[i]
            if t.op == T_SET:
                self.vars[t.lval] = self.value(t.rkind, t.rval)
            elif (self.value(t.lkind, t.lval) == self.value(t.rkind, t.rval)) != (t.op == T_EQ):
                return False
        return True

    cdef inline bint bind(self, Step *s, const int64_t *v) noexcept:
        """Bind the variables of a matched row ``v``; False when a repeated variable differs."""
        cdef int j
        for j in range(s.nbind):
            self.vars[s.bind_var[j]] = v[s.bind_pos[j]]
        for j in range(s.ncheck):
            if v[s.check_pos[j]] != self.vars[s.check_var[j]]:
                return False
        return True

    cdef int run(self, NativeStore store, Table *T, const int64_t *rows, const int64_t *exps,
                 const int64_t *srcs, int64_t n, Out out) except -1:
        """Derive the heads from the delta ``rows`` of ``T`` (expiries ``exps``, changed by the
        transitive steps ``srcs``) into ``out``; a transitive step skips its own conclusions
        (``ontology.materialise`` explains why the result is the same)."""
        cdef Step *s
        cdef int i, j
        cdef int64_t k
        cdef const int64_t *v
        if not self.resolve(store):
            return 0
        if self.hkind == P_CONST:
            self.htable = store.table_for(self.hpred, self.harity)
        s = &self.seed
        if s.pkind == P_FREE:
            self.vars[s.pred] = T.pred
        if self.precheck and not self.first_matches(store):
            return 0
        for k in range(n):
            if srcs[k] == self.step_id and srcs[k] >= 0:
                continue
            v = row_at(T, rows[k])
            for j in range(s.nkey):
                if v[s.key_pos[j]] != self.value(s.key_kind[j], s.key_val[j]):
                    break
            else:
                if self.bind(s, v) and self.passes(s.test0, s.ntests):
                    self.step(store, 0, exps[k], out)
                    if out.n > FLUSH:  # stored now: a round's derivations take bounded memory
                        flush_out(store, out)
                        self.resolve(store)  # (an index may have been dropped)
        return 0

    cdef bint resolve(self, NativeStore store) except -1:
        """Find the tables and indexes of the steps with constant predicates; False when one
        of those tables is empty (nothing can be derived)."""
        cdef Step *s
        cdef int i
        for i in range(self.nsteps):
            s = &self.steps[i]
            if s.pkind == P_CONST:
                s.table = store.find(s.pred, s.arity)
                if s.table == NULL or s.table.size == 0:
                    return False
                if s.access == A_INDEX:
                    s.ix = store.index_of(s.table, s.nkey, s.key_pos)
        return True

    cdef bint first_matches(self, NativeStore store) except -1:
        """Whether the first joined atom (whose key is known before the delta) has a match."""
        cdef Step *s = &self.steps[0]
        cdef Table *t = s.table if s.pkind == P_CONST else store.find(self.vars[s.pred], s.arity)
        cdef int64_t key[MAX_ARITY]
        cdef int j
        if t == NULL or t.size == 0:
            return False
        for j in range(s.nkey):
            key[j] = self.value(s.key_kind[j], s.key_val[j])
        if s.access == A_ROW:
            return tbl_find(t, key) >= 0
        if s.access == A_INDEX:
            return idx_find(t, &t.idx[s.ix if s.pkind == P_CONST else store.index_of(t, s.nkey, s.key_pos)], key) >= 0
        return True

    cdef int step(self, NativeStore store, int level, int64_t m, Out out) except -1:
        cdef Step *s
        cdef Table *t
        cdef int64_t i
        if level == self.nsteps:
            return self.emit(store, m, out)
        s = &self.steps[level]
        if s.pkind == P_CONST:
            return self.match(store, s, s.table, s.ix, level, m, out)
        if s.pkind == P_BOUND:
            t = store.find(self.vars[s.pred], s.arity)
            if t == NULL or t.size == 0:
                return 0
            return self.match(store, s, t, store.index_of(t, s.nkey, s.key_pos) if s.access == A_INDEX else 0,
                              level, m, out)
        for i in range(store.ntables):  # P_FREE: every triple relation
            t = store.tables[i]
            if t.triple and t.arity == s.arity and t.size:
                self.vars[s.pred] = t.pred
                self.match(store, s, t, store.index_of(t, s.nkey, s.key_pos) if s.access == A_INDEX else 0,
                           level, m, out)
        return 0

    cdef int match(self, NativeStore store, Step *s, Table *t, int ix, int level, int64_t m, Out out) except -1:
        """The rows of ``t`` matching step ``s`` under the current bindings, each joined further."""
        cdef int64_t key[MAX_ARITY]
        cdef int64_t row, nxt, e
        cdef int j
        cdef Index *index
        for j in range(s.nkey):
            key[j] = self.value(s.key_kind[j], s.key_val[j])
        if s.access == A_ROW:
            row = tbl_find(t, key)
            if row >= 0 and self.passes(s.test0, s.ntests):
                e = row_at(t, row)[t.arity + F_EXP]
                self.step(store, level + 1, m if m < e else e, out)
            return 0
        if s.access == A_INDEX:
            index = &t.idx[ix]
            row = idx_find(t, index, key)
            while row >= 0:
                nxt = index.next[row]
                if self.bind(s, row_at(t, row)) and self.passes(s.test0, s.ntests):
                    e = row_at(t, row)[t.arity + F_EXP]
                    self.step(store, level + 1, m if m < e else e, out)
                row = nxt
            return 0
        for row in range(t.nrows):
            e = row_at(t, row)[t.arity + F_EXP]
            if e != DOTR_FREE and self.bind(s, row_at(t, row)) and self.passes(s.test0, s.ntests):
                self.step(store, level + 1, m if m < e else e, out)
        return 0

    cdef int emit(self, NativeStore store, int64_t m, Out out) except -1:
        cdef int64_t vals[MAX_ARITY]
        cdef int j
        cdef Table *t
        for j in range(self.harity):
            vals[j] = self.value(self.hkinds[j], self.hvals[j])
        if self.hkind == P_CONST:
            t = self.htable
        else:  # a variable head predicate names a triple relation, or nothing is derived
            t = store.find(self.vars[self.hpred], self.harity)
            if t == NULL:
                if self.harity != 2 or not store.is_triple((self.vars[self.hpred], 2)):
                    return 0
                t = store.table_for(self.vars[self.hpred], 2)
            elif not t.triple:
                return 0
        return out.push(t.id, m, vals, self.harity)


# ------------------------------------------------------------------------------ the plans in C

def _tests(step, list tests) -> tuple:
    """The filters of a step as C tests appended to ``tests``: ``(first, count)``."""
    first = len(tests)
    for f in step.filters:
        if isinstance(f, TermTest):
            tests.append((T_EQ if f.op == "=" else T_NE, *f.left, *f.right))
        elif isinstance(f, Assign):
            tests.append((T_SET, K_VAR, f.var, *f.source))
        elif isinstance(f, Negation):
            raise Unsupported("negation")
        elif isinstance(f, Compare):
            raise Unsupported(f"the comparison {f.op}")
        elif isinstance(f, Compute):
            raise Unsupported("arithmetic")
        # HeadCheck: emit checks a variable head predicate
    return first, len(tests) - first


def compile_plans(rule: ir.Rule, d) -> list:
    """The compiled plans of ``rule``, one per positive atom as the seed; raises
    :class:`~rules.engine.planning.Unsupported` for a rule they do not cover.

    >>> from dotr.rules import parse
    >>> from dotr.rules.engine.terms import TermDictionary
    >>> rules = parse("q(X) :- p(X, Y), Y != X . hot(X) :- temp(X, V), V > 30 .").rules
    >>> [plan.text for plan in compile_plans(rules[0], TermDictionary())]
    ['q(X) :- p(X, Y), Y != X . seeded at p(X, Y)']
    >>> compile_plans(rules[1], TermDictionary())
    Traceback (most recent call last):
    ...
    dotr.rules.engine.planning.Unsupported: the comparison >
    """
    if len(rule.head.args) > MAX_ARITY or any(
            isinstance(lit, ir.AtomLiteral) and len(lit.atom.args) > MAX_ARITY for lit in rule.body):
        raise Unsupported(f"an atom of more than {MAX_ARITY} arguments")
    return [_plan(rule, plan, d) for plan in plan_rule(rule.head, rule.body, d)]


def _plan(rule, join, d):
    cdef Plan plan = Plan()
    cdef int j
    if join.seed_step.body < 0:
        raise Unsupported("no positive atom")
    if join.nvars > 64:
        raise Unsupported("more than 64 variables")
    plan.step_id = -1
    tests = []
    seed_step, steps = join.steps[0], join.steps[1:]
    plan.nvars = join.nvars
    _fill(&plan.seed, seed_step, _tests(seed_step, tests))
    plan.nsteps = len(steps)
    plan.steps = <Step *>malloc(max(1, len(steps)) * sizeof(Step))
    for j, step in enumerate(steps):
        _fill(&plan.steps[j], step, _tests(step, tests))
    plan.ntests = len(tests)
    plan.tests = <Test *>malloc(max(1, len(tests)) * sizeof(Test))
    for j, (op, lk, lv, rk, rv) in enumerate(tests):
        plan.tests[j].op, plan.tests[j].lkind, plan.tests[j].lval = op, lk, lv
        plan.tests[j].rkind, plan.tests[j].rval = rk, rv
    plan.hkind, plan.hpred = join.head_pkind, join.head_pred
    plan.harity = len(join.head)
    for j, code in enumerate(join.head):
        plan.hkinds[j], plan.hvals[j] = code
    plan.seed_rel = seed_step.relation
    plan.text = f"{format_rule(rule)} seeded at {Printer().atom(seed_step.atom)}"
    # the first joined atom depends on no argument of the seed when its predicate and key are
    # constants or the seed's variable predicate
    early = {seed_step.pred} if seed_step.pkind == P_FREE else set()
    plan.precheck = bool(steps) and (steps[0].pkind == P_CONST or steps[0].pred in early) and \
        steps[0].pkind != P_FREE and all(kind == K_CONST or val in early for _, kind, val in steps[0].key)
    constant = next(((pos, val) for pos, kind, val in seed_step.key if kind == K_CONST), None)
    plan.filter_pos, plan.filter_val = constant if constant is not None else (-1, 0)
    return plan


cdef void _fill(Step *s, step, tuple tests):
    cdef int j
    s.pkind, s.pred, s.arity = step.pkind, step.pred, step.arity
    s.nkey, s.nbind, s.ncheck = len(step.key), len(step.bind), len(step.check)
    s.access = A_ROW if s.nkey == s.arity else A_INDEX if s.nkey else A_SCAN
    for j, (pos, kind, val) in enumerate(step.key):
        s.key_pos[j], s.key_kind[j], s.key_val[j] = pos, kind, val
    for j, (pos, var) in enumerate(step.bind):
        s.bind_pos[j], s.bind_var[j] = pos, var
    for j, (pos, var) in enumerate(step.check):
        s.check_pos[j], s.check_var[j] = pos, var
    s.test0, s.ntests = tests
    s.table = NULL
    s.ix = 0


# ------------------------------------------------------------------------------- propagation

cdef class NativeRules:
    """The incremental rules of a materialiser over a :class:`NativeStore`: compiled plans where
    they cover a rule, its Python plans (``rules.engine.plan``, through the store's views) otherwise.

    >>> from dotr.rules import parse
    >>> from dotr.rules.engine.backends.native_store import NativeStore
    >>> from dotr.rules.engine.plan import compile_rule
    >>> from dotr.rules.engine.terms import TermDictionary
    >>> d, store = TermDictionary(), NativeStore()
    >>> rules = parse("path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).").rules
    >>> native = NativeRules(rules, [compile_rule(r.head, r.body, d) for r in rules], d)
    >>> edge, path = (d.intern(ir.Name("edge")), 2), (d.intern(ir.Name("path")), 2)
    >>> native.propagate(store, [(edge, (1, 2), 5), (edge, (2, 3), 9)])  # facts added or risen
    5
    >>> sorted(store.relation(path).facts.items())
    [((1, 2), 5), ((1, 3), 5), ((2, 3), 9)]
    """

    cdef dict by_rel            # (pred, arity) -> [Plan] seeded there
    cdef dict filtered          # (pred, arity) -> [(position, [constant], [[Plan] per constant])]:
                                # plans seeded at an atom with a constant, fed only what has it
    cdef list by_triple         # [Plan] seeded at a variable predicate
    cdef dict py_by_rel         # (pred, arity) -> [Python plan]
    cdef list py_by_triple      # [Python plan] seeded at a variable predicate
    cdef readonly list unsupported   # (rule, reason) of the rules left to their Python plans
    cdef readonly list steps    # the plans of transitive steps, by step number
    cdef Out out
    cdef Out chosen             # scratch: the delta rows with a plan's constant (_filtered)

    def __init__(self, rules, compiled, d, steps=None):
        """``rules`` (ir.Rule) and their ``rules.engine.plan.CompiledRule`` s, in the same order;
        ``steps``: the transitive steps among them (``rules.lang.analysis.transitive_steps``)."""
        cdef Plan p
        self.by_rel, self.by_triple, self.py_by_rel, self.py_by_triple = {}, [], {}, []
        self.filtered = {}
        self.unsupported, self.steps = [], []
        self.out, self.chosen = Out(), Out()
        steps = steps or {}
        for i, (rule, c) in enumerate(zip(rules, compiled)):
            try:
                plans = compile_plans(rule, d)
            except Unsupported as e:
                self.unsupported.append((rule, str(e)))
                for rel, fn in zip(c.body_relations, c.seeded):
                    (self.py_by_triple if rel is None else self.py_by_rel.setdefault(rel, [])).append(fn)
                continue
            if i in steps:
                p = plans[steps[i]]
                p.step_id = len(self.steps)
                p.own = Out(p.step_id)
                self.steps.append(p)
            for plan in plans:
                p = plan
                if p.seed_rel is None:
                    self.by_triple.append(p)
                elif p.filter_pos < 0:
                    self.by_rel.setdefault(p.seed_rel, []).append(p)
                else:
                    groups = self.filtered.setdefault(p.seed_rel, [])
                    group = next((g for g in groups if g[0] == p.filter_pos), None)
                    if group is None:
                        group = (p.filter_pos, [], [])
                        groups.append(group)
                    if p.filter_val not in group[1]:
                        group[1].append(p.filter_val)
                        group[2].append([])
                    group[2][group[1].index(p.filter_val)].append(p)

    def propagate(self, NativeStore store, items, bint explicit=False) -> int:
        """Store ``items`` ``(rel, fact, expiry)`` (``explicit``: as explicit facts) and run the
        rules to the fixpoint (semi-naive rounds); returns how many facts were added or rose."""
        self._begin(store)
        self._push(store, items)
        return self._fixpoint(store, explicit)

    def propagate_pairs(self, NativeStore store, pairs, int64_t expiry, bint explicit=False) -> int:
        """``propagate`` for ``(rel, fact)`` pairs that all hold until ``expiry`` (a time
        point's stream facts: no item made per fact)."""
        self._begin(store)
        self._push(store, pairs, expiry)
        return self._fixpoint(store, explicit)

    def propagate_triples(self, NativeStore store, const int64_t[:] triples, const int64_t[:] ids,
                          int64_t expiry, bint explicit=False) -> int:
        """``propagate`` for RDF triples given as term numbers, subject, predicate and object of
        each in turn (``ontology.rdf_files.TripleBatch``), ``ids`` mapping a number to its term
        id: no Python object per triple."""
        cdef int64_t k, n = triples.shape[0], pred, last = -1
        cdef int64_t key[2]
        cdef Table *t = NULL
        self._begin(store)
        for k in range(0, n - 2, 3):
            pred = ids[triples[k + 1]]
            if pred != last:
                t = store.find(pred, 2)
                if t == NULL:
                    t = store.table((pred, 2))
                last = pred
            key[0], key[1] = ids[triples[k]], ids[triples[k + 2]]
            self.out.push(t.id, expiry, key, 2)
            if self.out.n > FLUSH:
                flush_out(store, self.out, explicit)
        return self._fixpoint(store, explicit)

    cdef int _begin(self, NativeStore store) except -1:
        global FLUSHED
        cdef int64_t i
        FLUSHED = 0
        store.next_epoch()
        for i in range(store.ntables):
            store.tables[i].dn = 0
        self.out.n = 0
        return 0

    cdef int64_t _fixpoint(self, NativeStore store, bint explicit) except -1:
        """Store the derivations pushed (the input), then run the semi-naive rounds."""
        global FLUSHED
        cdef int64_t i, n, count = 0, total
        cdef Table *t
        cdef Plan step
        apply_out(store, self.out, explicit)
        while True:
            total = 0
            for i in range(store.ntables):
                total += store.tables[i].dn
            if total == 0:
                self._trim(store)
                return count
            count += total
            FLUSHED = 0
            GUARD.charge(total)  # (the budget of the time point, and a cancellation: between rounds)
            # the round reads its delta from the tables' second arrays, while its derivations,
            # stored as they come (a plan stores them once they fill FLUSH), build the next
            parts = []
            for i in range(store.ntables):
                t = store.tables[i]
                if t.dn:
                    t.drows, t.rrows = t.rrows, t.drows
                    t.dexps, t.rexps = t.rexps, t.dexps
                    t.dsrcs, t.rsrcs = t.rsrcs, t.dsrcs
                    t.dcap, t.rcap = t.rcap, t.dcap
                    parts.append((i, t.dn))
                    t.dn = 0
            store.next_epoch()
            self.out.n = 0
            for step in self.steps:
                step.own.n = 0
            for i, n in parts:
                t = store.tables[i]
                self._round(store, t, t.rrows, t.rexps, t.rsrcs, n)
            # the steps' conclusions first, so that what another rule raises further is fed to them
            for step in self.steps:
                apply_out(store, step.own)
            apply_out(store, self.out)

    cdef void _trim(self, NativeStore store) noexcept:
        """Give back the memory of deltas and derivations larger than ``KEEP`` entries (a
        background's closure leaves them as large as its largest round; the pages of a large
        block go back to the system)."""
        cdef int64_t i
        cdef Table *t
        cdef Plan step
        for i in range(store.ntables):
            t = store.tables[i]
            if t.dcap > KEEP:
                _shrink(&t.drows, KEEP)
                _shrink(&t.dexps, KEEP)
                _shrink(&t.dsrcs, KEEP)
                t.dcap = KEEP
            if t.rcap > KEEP:
                _shrink(&t.rrows, KEEP)
                _shrink(&t.rexps, KEEP)
                _shrink(&t.rsrcs, KEEP)
                t.rcap = KEEP
        self.out.trim()
        self.chosen.trim()
        for step in self.steps:
            step.own.trim()

    cdef int _round(self, NativeStore store, Table *t, int64_t *rows, int64_t *exps, int64_t *srcs,
                    int64_t n) except -1:
        cdef int64_t k
        cdef Plan p
        rel = (t.pred, t.arity)
        for plan in self.by_rel.get(rel, ()):
            p = plan
            p.run(store, t, rows, exps, srcs, n, self.out if p.own is None else p.own)
        for pos, values, plans in self.filtered.get(rel, ()):
            self._filtered(store, t, rows, exps, srcs, n, pos, values, plans)
        if t.triple:
            for plan in self.by_triple:
                p = plan
                p.run(store, t, rows, exps, srcs, n, self.out if p.own is None else p.own)
        python = self.py_by_rel.get(rel, [])
        if t.triple and self.py_by_triple:
            python = python + self.py_by_triple
        if python:
            delta = [(store.fact(t, rows[k]), exps[k]) for k in range(n)]
            derived = []
            for fn in python:
                fn(delta, store, derived.append, t.pred)
            self._push(store, derived)
        return 0

    cdef int _filtered(self, NativeStore store, Table *t, int64_t *rows, int64_t *exps, int64_t *srcs,
                       int64_t n, int pos, list values, list plans) except -1:
        """Run the plans seeded at constants at ``pos`` (``plans[i]`` at ``values[i]``) on the
        delta rows that have their constant there (one pass over the delta for them all)."""
        cdef int64_t k, m = 0, c, val
        cdef int w, nv = len(values)
        cdef int64_t *sel = self.chosen.reserve(n * 5 + nv)
        cdef int64_t *which = sel + n
        cdef int64_t *grows = sel + 2 * n
        cdef int64_t *gexps = sel + 3 * n
        cdef int64_t *gsrcs = sel + 4 * n
        cdef int64_t *consts = sel + 5 * n
        cdef Plan p
        for w in range(nv):
            consts[w] = values[w]
        for k in range(n):  # the delta entries with one of the constants: (entry, which)
            val = row_at(t, rows[k])[pos]
            for w in range(nv):
                if val == consts[w]:
                    sel[m], which[m] = k, w
                    m += 1
                    break
        for w in range(nv if m else 0):
            c = 0
            for k in range(m):
                if which[k] == w:
                    grows[c], gexps[c], gsrcs[c] = rows[sel[k]], exps[sel[k]], srcs[sel[k]]
                    c += 1
            for plan in (plans[w] if c else ()):
                p = plan
                p.run(store, t, grows, gexps, gsrcs, c, self.out if p.own is None else p.own)
        return 0

    cdef int _push(self, NativeStore store, items, int64_t until=DOTR_FREE) except -1:
        """Put ``(rel, fact, expiry)`` items in the round's derivations (``out``); with ``until``,
        ``(rel, fact)`` pairs holding until then."""
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = NULL
        cdef int k
        cdef int64_t expiry = until
        last = None
        for item in items:
            if until == DOTR_FREE:
                rel, fact, expiry = item
            else:
                rel, fact = item
            if rel is not last:  # (items mostly come in runs of one relation)
                t = store.find(rel[0], rel[1])
                if t == NULL:
                    t = store.table(rel)
                last = rel
            if not isinstance(fact, tuple) or PyTuple_GET_SIZE(fact) != t.arity or t.arity > MAX_ARITY:
                # (internal: the engines' facts, of their relation's arity, held to MAX_ARITY as the store's)
                raise ValueError(f"expected a tuple of {t.arity} term ids for {rel}, got {fact!r}")
            for k in range(t.arity):
                key[k] = <int64_t>(<object>PyTuple_GET_ITEM(fact, k))
            self.out.push(t.id, expiry, key, t.arity)
        return 0


cdef int flush_out(NativeStore store, Out out, bint explicit=False) except -1:
    """Store ``out``'s derivations before the round ends, and empty it (they count towards the
    time point's budget from now: ``FLUSHED``)."""
    global FLUSHED
    FLUSHED += apply_out(store, out, explicit)
    out.n = 0
    return 0


cdef int64_t apply_out(NativeStore store, Out out, bint explicit=False) except -1:
    """Store the derivations of ``out`` (a transitive step's own, or not), putting what is new or
    rose in the next delta; returns how many there were. Bound by memory latency: the slot of the
    record AHEAD records on is prefetched, and the row that the slot of the record half as far on
    names (``hashes`` keeps the hashes of the records in between). A cancellation or the budget
    raises between two records: the store holds those before."""
    cdef int64_t p = 0, q = 0, r = 0, s, k = 0
    cdef int64_t *data = out.data
    cdef int64_t n = out.n
    cdef uint64_t hashes[AHEAD]
    cdef uint64_t h
    cdef Table *t
    while q < n and k < AHEAD:  # the first records: hashed, their slots prefetched
        t = store.tables[data[q]]
        hashes[k] = hash_key(data + q + 2, t.arity)
        DOTR_PREFETCH(t.slots + (hashes[k] & <uint64_t>(t.nslots - 1)))
        q += 2 + t.arity
        if k < AHEAD // 2:
            r = q
        k += 1
    k = 0
    while p < n:
        if r < n:  # record k + AHEAD/2: the row its slot names
            t = store.tables[data[r]]
            s = t.slots[hashes[(k + AHEAD // 2) % AHEAD] & <uint64_t>(t.nslots - 1)]
            if s >= 0:
                DOTR_PREFETCH(row_at(t, s & DOTR_ROW_MASK))
            r += 2 + t.arity
        t = store.tables[data[p]]
        store.upsert_hashed(t, data + p + 2, hashes[k % AHEAD], data[p + 1], True, explicit, out.src)
        p += 2 + t.arity
        if q < n:  # record k + AHEAD: hashed, its slot prefetched
            t = store.tables[data[q]]
            h = hash_key(data + q + 2, t.arity)
            hashes[k % AHEAD] = h
            DOTR_PREFETCH(t.slots + (h & <uint64_t>(t.nslots - 1)))
            q += 2 + t.arity
        k += 1
        if not (k & 0x3FFFF):  # (a large batch: a signal, or the budget, acts within it)
            GUARD.check(FLUSHED + k)
    return k
