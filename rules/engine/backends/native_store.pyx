# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The fact store in compiled code: what ``rules.engine.backends.dict_store.DictStore`` holds, in C arrays.

Each relation is a table of rows: a row holds a fact's term ids, its expiry, its expiry as an
explicit fact and the semi-naive bookkeeping, side by side (40 bytes for a triple, in one or two
cache lines: the maintenance of a large window is bound by memory latency, not by instructions).
An open-addressing hash table, at most 70% full, maps facts to rows; its slots keep a tag of the
hash beside the row, so that a probe of an absent fact rarely reads a row. Hash indexes map the
values at some positions to chains of rows (two links a row; a key's slot is found by hashing);
an index that nothing asks for while its relation changes by more than its size
is dropped (and rebuilt when asked for again), as in the dict store. Freed rows are reused. Expiry
buckets list ``(table, row)`` pairs per expiry, lazily (an entry whose row has another expiry now
is skipped); dropping them prefetches the rows and slots a few entries ahead.

``NativeStore`` offers the dict store's methods, and ``store.relation(rel).facts`` and
``store.index(rel, positions)`` read like the dicts they are there, so that every reader of a store
(join plans, events, queries, snapshots) works on both. It also keeps which facts are explicit,
and until when (``explicit``), which ``Materialiser`` keeps in dicts beside the dict store. The
compiled join plans (``rules.engine.backends.native_plans``) read the tables directly.
"""

cimport cython
from cpython.long cimport PyLong_FromLongLong
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM, PyTuple_GET_SIZE, PyTuple_GET_ITEM
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memcpy, memset

from dotr.rules.engine.store import UNUSED_INDEX_SLACK as _SLACK

cdef extern from *:
    """
    #ifdef __GLIBC__
    #include <malloc.h>
    /* blocks of 1 MB and more mapped on their own: grown by remapping (no copy) and given back
       when freed. glibc's default threshold rises to the size of a mapped block freed (up to
       32 MB), after which tables grown by doubling leave their former arrays in the heap. */
    static void dotr_map_large_blocks(void) { mallopt(M_MMAP_THRESHOLD, 1 << 20); }
    #else
    static void dotr_map_large_blocks(void) {}
    #endif
    """
    void dotr_map_large_blocks() noexcept nogil

dotr_map_large_blocks()

INF = DOTR_INF

cdef int64_t INITIAL_ROWS = 8
cdef int64_t INITIAL_SLOTS = 16
#: an index is dropped when its relation has had more insertions and deletions since the index
#: was last asked for than it has facts (plus this), as in the dict store
cdef int64_t UNUSED_INDEX_SLACK = _SLACK
cdef int AHEAD = 8  # entries prefetched ahead when expired facts are dropped
#: a relation's hash table is grown when more than this many tenths of its slots are used (each
#: slot holds a tag of its fact's hash, so a probe past other facts rarely reads their rows)
cdef int64_t MAX_LOAD = 7


# ------------------------------------------------------------------------------ C helpers

cdef int64_t *_alloc(int64_t n) except NULL:
    cdef int64_t *p = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
    if p == NULL:
        raise MemoryError()
    return p


cdef int _grow(int64_t **p, int64_t n) except -1:
    """Make room for ``n`` int64 at ``p[0]``, keeping what it holds."""
    cdef int64_t *q = <int64_t *>realloc(p[0], max(n, 1) * sizeof(int64_t))
    if q == NULL:
        raise MemoryError()
    p[0] = q
    return 0


cdef int64_t *_empty_slots(int64_t n) except NULL:
    cdef int64_t *p = _alloc(n)
    cdef int64_t i
    for i in range(n):
        p[i] = DOTR_EMPTY
    return p


cdef inline bint _first_time(int64_t *seen, int64_t mask, int64_t key) noexcept nogil:
    """Whether ``key`` (not negative) is new to the open-addressing set ``seen`` (``mask + 1``
    slots, a power of two, EMPTY where free, never full), into which it is then put."""
    cdef uint64_t slot = hash_key(&key, 1) & <uint64_t>mask
    while seen[slot] != DOTR_EMPTY:
        if seen[slot] == key:
            return False
        slot = (slot + 1) & <uint64_t>mask
    seen[slot] = key
    return True


cdef inline int64_t tag_of(uint64_t h) noexcept nogil:
    return <int64_t>(h >> (64 - (63 - DOTR_ROW_BITS)))


cdef Table *tbl_new(int64_t pred, int arity, int64_t tid, bint triple) except NULL:
    cdef Table *t = <Table *>calloc(1, sizeof(Table))
    if t == NULL:
        raise MemoryError()
    t.pred, t.arity, t.stride, t.id, t.triple = pred, arity, arity + FIELDS, tid, triple
    t.cap = INITIAL_ROWS
    t.rows = _alloc(INITIAL_ROWS * t.stride)
    t.free_rows = _alloc(INITIAL_ROWS)
    t.nslots = INITIAL_SLOTS
    t.slots = _empty_slots(INITIAL_SLOTS)
    t.dcap = INITIAL_ROWS
    t.drows = _alloc(INITIAL_ROWS)
    t.dexps = _alloc(INITIAL_ROWS)
    t.dsrcs = _alloc(INITIAL_ROWS)
    t.rcap = INITIAL_ROWS
    t.rrows = _alloc(INITIAL_ROWS)
    t.rexps = _alloc(INITIAL_ROWS)
    t.rsrcs = _alloc(INITIAL_ROWS)
    return t


cdef void idx_free(Index *ix) noexcept:
    free(ix.heads)
    free(ix.counts)
    free(ix.next)
    free(ix.prev)


cdef void tbl_drop_indexes(Table *t) noexcept:
    cdef int i
    for i in range(t.nidx):
        idx_free(&t.idx[i])
    t.nidx = 0
    t.version += 1


cdef void tbl_free(Table *t) noexcept:
    tbl_drop_indexes(t)
    free(t.rows)
    free(t.free_rows)
    free(t.slots)
    free(t.drows)
    free(t.dexps)
    free(t.dsrcs)
    free(t.rrows)
    free(t.rexps)
    free(t.rsrcs)
    free(t)


cdef int tbl_grow_rows(Table *t) except -1:
    cdef int64_t cap = t.cap * 2
    cdef int i
    _grow(&t.rows, cap * t.stride)
    _grow(&t.free_rows, cap)
    for i in range(t.nidx):
        _grow(&t.idx[i].next, cap)
        _grow(&t.idx[i].prev, cap)
    t.cap = cap
    return 0


cdef int tbl_rehash(Table *t, int64_t nslots) except -1:
    cdef int64_t *slots = _empty_slots(nslots)
    cdef uint64_t mask = <uint64_t>nslots - 1
    cdef uint64_t i, h
    cdef int64_t r
    cdef int64_t *v
    for r in range(t.nrows):
        v = row_at(t, r)
        if v[t.arity + F_EXP] != DOTR_FREE:
            h = hash_key(v, t.arity)
            i = h & mask
            while slots[i] != DOTR_EMPTY:
                i = (i + 1) & mask
            slots[i] = (tag_of(h) << DOTR_ROW_BITS) | r
    free(t.slots)
    t.slots, t.nslots, t.used = slots, nslots, t.size
    return 0


# ---------------------------------------------------------------------------------- indexes

cdef inline uint64_t row_key_hash(Table *t, Index *ix, int64_t row) noexcept nogil:
    cdef int64_t key[MAX_ARITY]
    cdef const int64_t *v = row_at(t, row)
    cdef int j
    for j in range(ix.npos):
        key[j] = v[ix.pos[j]]
    return hash_key(key, ix.npos)


cdef inline bint rows_share_key(Table *t, Index *ix, int64_t a, int64_t b) noexcept nogil:
    cdef const int64_t *va = row_at(t, a)
    cdef const int64_t *vb = row_at(t, b)
    cdef int j
    for j in range(ix.npos):
        if va[ix.pos[j]] != vb[ix.pos[j]]:
            return False
    return True


cdef int idx_rehash(Table *t, Index *ix, int64_t nslots) except -1:
    cdef int64_t *heads = _empty_slots(nslots)
    cdef int64_t *counts = _alloc(nslots)
    cdef uint64_t mask = <uint64_t>nslots - 1
    cdef uint64_t i
    cdef int64_t s
    for s in range(ix.nslots):
        if ix.heads[s] >= 0:
            i = row_key_hash(t, ix, ix.heads[s]) & mask
            while heads[i] != DOTR_EMPTY:
                i = (i + 1) & mask
            heads[i], counts[i] = ix.heads[s], ix.counts[s]
    free(ix.heads)
    free(ix.counts)
    ix.heads, ix.counts, ix.nslots, ix.used = heads, counts, nslots, ix.nkeys
    return 0


cdef int idx_add(Table *t, Index *ix, int64_t row) except -1:
    cdef uint64_t mask, i
    cdef int64_t h, tomb = -1
    if (ix.used + 1) * 2 > ix.nslots:
        idx_rehash(t, ix, ix.nslots * 2 if (ix.nkeys + 1) * 4 > ix.nslots else ix.nslots)
    mask = <uint64_t>ix.nslots - 1
    i = row_key_hash(t, ix, row) & mask
    while True:
        h = ix.heads[i]
        if h == DOTR_EMPTY:
            break
        if h == DOTR_TOMB:
            if tomb < 0:
                tomb = <int64_t>i
        elif rows_share_key(t, ix, h, row):
            ix.next[row], ix.prev[row], ix.prev[h] = h, -1, row
            ix.heads[i] = row
            ix.counts[i] += 1
            return 0
        i = (i + 1) & mask
    if tomb >= 0:
        i = <uint64_t>tomb
    else:
        ix.used += 1
    ix.heads[i], ix.counts[i] = row, 1
    ix.next[row], ix.prev[row] = -1, -1
    ix.nkeys += 1
    return 0


cdef inline int64_t idx_slot_of(Table *t, Index *ix, int64_t row) noexcept nogil:
    """The slot of the key of ``row`` (which the index holds)."""
    cdef uint64_t mask = <uint64_t>ix.nslots - 1
    cdef uint64_t i = row_key_hash(t, ix, row) & mask
    while ix.heads[i] < 0 or not rows_share_key(t, ix, ix.heads[i], row):
        i = (i + 1) & mask
    return <int64_t>i


cdef void idx_remove(Table *t, Index *ix, int64_t row) noexcept:
    cdef int64_t s = idx_slot_of(t, ix, row)
    cdef int64_t p = ix.prev[row], n = ix.next[row]
    if p >= 0:
        ix.next[p] = n
    else:
        ix.heads[s] = n if n >= 0 else DOTR_TOMB
    if n >= 0:
        ix.prev[n] = p
    ix.counts[s] -= 1
    if ix.counts[s] == 0:
        ix.heads[s] = DOTR_TOMB
        ix.nkeys -= 1


cdef int idx_build(Table *t, int npos, const int *pos) except -1:
    cdef Index *ix = &t.idx[t.nidx]
    cdef int64_t r
    memset(ix, 0, sizeof(Index))
    ix.npos = npos
    memcpy(ix.pos, pos, npos * sizeof(int))
    ix.nslots = INITIAL_SLOTS  # (grown with the keys: an index by a class has few)
    ix.heads = _empty_slots(INITIAL_SLOTS)
    ix.counts = _alloc(INITIAL_SLOTS)
    ix.next = _alloc(t.cap)
    ix.prev = _alloc(t.cap)
    t.nidx += 1
    for r in range(t.nrows):
        if row_at(t, r)[t.arity + F_EXP] != DOTR_FREE:
            idx_add(t, ix, r)
    return 0


cdef inline void tbl_churn(Table *t) noexcept:
    """Count an insertion or deletion against the indexes (which are dropped when unused)."""
    t.churn += 1
    if t.churn > t.size + UNUSED_INDEX_SLACK:
        tbl_drop_indexes(t)


# ----------------------------------------------------------------------------------- tables

cdef int64_t tbl_insert(Table *t, const int64_t *key, uint64_t h, int64_t expiry) except -1:
    """Store ``key`` (hashed to ``h``; the table does not hold it); returns its row."""
    cdef int64_t row, tomb = -1, s
    cdef int64_t *v
    cdef uint64_t mask, i
    cdef int j
    if (t.used + 1) * 10 > t.nslots * MAX_LOAD:  # (a table of tombstones is rehashed as large)
        tbl_rehash(t, t.nslots * 2 if (t.size + 1) * 20 > t.nslots * MAX_LOAD else t.nslots)
    if t.nfree:
        t.nfree -= 1
        row = t.free_rows[t.nfree]
    else:
        if t.nrows == t.cap:
            tbl_grow_rows(t)
        row = t.nrows
        t.nrows += 1
    v = row_at(t, row)
    for j in range(t.arity):  # (a loop: memcpy of a few words is a call)
        v[j] = key[j]
    v[t.arity + F_EXP] = expiry
    v[t.arity + F_XEXP] = DOTR_FREE
    v[t.arity + F_DELTA] = -1
    mask = <uint64_t>t.nslots - 1
    i = h & mask
    while True:
        s = t.slots[i]
        if s == DOTR_EMPTY:
            break
        if s == DOTR_TOMB and tomb < 0:
            tomb = <int64_t>i
        i = (i + 1) & mask
    if tomb >= 0:
        i = <uint64_t>tomb
    else:
        t.used += 1
    t.slots[i] = (tag_of(h) << DOTR_ROW_BITS) | row
    t.size += 1
    t.version += 1
    if t.nidx:
        for j in range(t.nidx):
            idx_add(t, &t.idx[j], row)
        tbl_churn(t)
    return row


cdef void tbl_remove(Table *t, int64_t row) noexcept:
    cdef int64_t *v = row_at(t, row)
    cdef uint64_t mask = <uint64_t>t.nslots - 1
    cdef uint64_t i = hash_key(v, t.arity) & mask
    cdef int j
    while (t.slots[i] & DOTR_ROW_MASK) != row or t.slots[i] < 0:
        i = (i + 1) & mask
    t.slots[i] = DOTR_TOMB
    if t.nidx:
        for j in range(t.nidx):
            idx_remove(t, &t.idx[j], row)
        tbl_churn(t)
    v[t.arity + F_EXP] = DOTR_FREE
    t.free_rows[t.nfree] = row
    t.nfree += 1
    t.size -= 1
    t.version += 1


cdef int delta_add(Table *t, int64_t row, int64_t expiry, int64_t epoch, int64_t src) except -1:
    """Put ``row`` in the table's delta with ``expiry``, changed by ``src`` (once per epoch: a
    later rise updates both)."""
    cdef int64_t *v = row_at(t, row)
    cdef int64_t mark = v[t.arity + F_DELTA]
    if (mark >> DOTR_ROW_BITS) == (epoch & DOTR_EPOCH_MASK):
        t.dexps[mark & DOTR_ROW_MASK] = expiry
        t.dsrcs[mark & DOTR_ROW_MASK] = src
        return 0
    if t.dn == t.dcap:
        _grow(&t.drows, t.dcap * 2)
        _grow(&t.dexps, t.dcap * 2)
        _grow(&t.dsrcs, t.dcap * 2)
        t.dcap *= 2
    v[t.arity + F_DELTA] = ((epoch & DOTR_EPOCH_MASK) << DOTR_ROW_BITS) | t.dn
    t.drows[t.dn], t.dexps[t.dn], t.dsrcs[t.dn] = row, expiry, src
    t.dn += 1
    return 0


cdef inline void delta_own(Table *t, int64_t *v, int64_t expiry, int64_t epoch, int64_t src) noexcept:
    """A transitive step ``src`` concluded the fact of row ``v`` with the expiry it has in this
    epoch's delta, which another rule gave it: the step need not be fed it (as when the step's
    conclusions are stored first: ``ontology.materialise``)."""
    cdef int64_t mark = v[t.arity + F_DELTA]
    if (mark >> DOTR_ROW_BITS) == (epoch & DOTR_EPOCH_MASK) and t.dexps[mark & DOTR_ROW_MASK] == expiry:
        t.dsrcs[mark & DOTR_ROW_MASK] = src


# --------------------------------------------------------------------------- Python objects

@cython.final
cdef class Bucket:
    """A growable array of ``(table, row)`` pairs."""

    def __cinit__(self):
        self.cap = 64
        self.data = _alloc(2 * self.cap)
        self.n = 0

    def __dealloc__(self):
        free(self.data)

    cdef inline int push(self, int64_t a, int64_t b) except -1:
        if self.n == self.cap:
            _grow(&self.data, 4 * self.cap)
            self.cap *= 2
        self.data[2 * self.n] = a
        self.data[2 * self.n + 1] = b
        self.n += 1
        return 0

    def __len__(self):
        return self.n


cdef int _key(object fact, int64_t *buf, int arity) except -1:
    """The term ids of a fact tuple into ``buf``."""
    cdef int j
    if not isinstance(fact, tuple) or PyTuple_GET_SIZE(fact) != arity:
        # (internal: a relation's key holds its arity, so the engines' facts have it)
        raise ValueError(f"expected a tuple of {arity} term ids, got {fact!r}")
    for j in range(arity):
        buf[j] = <int64_t>(<object>PyTuple_GET_ITEM(fact, j))
    return 0


cdef int _check_arity(Table *t) except -1:
    if t.arity > MAX_ARITY:  # (internal: E311 holds rules to MAX_ARITY, input_facts the stream's facts)
        raise ValueError(f"relations of more than {MAX_ARITY} arguments are not supported by the native store")
    return 0


cdef bint _fits(Table *t, object fact):
    return isinstance(fact, tuple) and PyTuple_GET_SIZE(fact) == t.arity and t.arity <= MAX_ARITY


cdef class NativeStore:
    """The facts of ``rules.engine.backends.dict_store.DictStore``, in C arrays (module docstring); the same methods.

    >>> s = NativeStore()
    >>> s.add((7, 2), (1, 2), 10), s.add((7, 2), (1, 3), INF), s.add((7, 2), (1, 2), 5)
    (True, True, False)
    >>> sorted(s.index((7, 2), (0,))[1])
    [(1, 2), (1, 3)]
    >>> s.expire(11)
    [((7, 2), (1, 2), 10)]
    >>> dict(s.relation((7, 2)).facts) == {(1, 3): INF}
    True
    """

    def __cinit__(self, is_triple=None):
        cdef int64_t i
        self.captables = 16
        self.tables = <Table **>malloc(self.captables * sizeof(Table *))
        if self.tables == NULL:
            raise MemoryError()
        self.ntables = 0
        self.ids = {}
        self.relations = {}
        self.triple_predicates = []
        self._is_triple = is_triple
        self._buckets = {}
        self._spare = []
        self._bucket = None
        self._bucket_when = DOTR_FREE
        self._due, self._due_bucket, self._due_when = {}, None, DOTR_FREE
        self.epoch = 0
        self._pred_slots = 64
        self._pred_keys = _alloc(2 * self._pred_slots)
        self._pred_vals = _alloc(self._pred_slots)
        for i in range(self._pred_slots):
            self._pred_vals[i] = -1

    def __dealloc__(self):
        cdef int64_t i
        if self.tables != NULL:
            for i in range(self.ntables):
                tbl_free(self.tables[i])
            free(self.tables)
        free(self._pred_keys)
        free(self._pred_vals)

    # ------------------------------------------------------------------ tables (for C code)
    cdef Table *find(self, int64_t pred, int arity) noexcept:
        """The table of ``(pred, arity)``, or NULL."""
        cdef uint64_t mask = <uint64_t>self._pred_slots - 1
        cdef int64_t key[2]
        key[0], key[1] = pred, arity
        cdef uint64_t i = hash_key(key, 2) & mask
        while self._pred_vals[i] >= 0:
            if self._pred_keys[2 * i] == pred and self._pred_keys[2 * i + 1] == arity:
                return self.tables[self._pred_vals[i]]
            i = (i + 1) & mask
        return NULL

    cdef int _map_pred(self, int64_t pred, int arity, int64_t tid) except -1:
        cdef uint64_t mask, i
        cdef int64_t key[2]
        cdef int64_t j, n
        if (self.ntables + 1) * 2 > self._pred_slots:  # grow, and re-enter every table
            n = self._pred_slots * 2
            free(self._pred_keys)
            free(self._pred_vals)
            self._pred_keys, self._pred_vals, self._pred_slots = _alloc(2 * n), _alloc(n), n
            for j in range(n):
                self._pred_vals[j] = -1
            for j in range(self.ntables):
                if j != tid:
                    self._map_pred(self.tables[j].pred, self.tables[j].arity, j)
        mask = <uint64_t>self._pred_slots - 1
        key[0], key[1] = pred, arity
        i = hash_key(key, 2) & mask
        while self._pred_vals[i] >= 0:
            i = (i + 1) & mask
        self._pred_keys[2 * i], self._pred_keys[2 * i + 1], self._pred_vals[i] = pred, arity, tid
        return 0

    cdef Table *table(self, object rel) except NULL:
        """The table of ``rel``, created if needed."""
        tid = self.ids.get(rel)
        if tid is not None:
            return self.tables[<int64_t>tid]
        return self.table_for(rel[0], rel[1])

    cdef Table *table_for(self, int64_t pred, int arity) except NULL:
        cdef Table *t = self.find(pred, arity)
        cdef Table **tables
        if t != NULL:
            return t
        rel = (pred, arity)
        triple = arity == 2 and self._is_triple is not None and bool(self._is_triple(pred))
        if self.ntables == self.captables:
            tables = <Table **>realloc(self.tables, 2 * self.captables * sizeof(Table *))
            if tables == NULL:
                raise MemoryError()
            self.tables, self.captables = tables, 2 * self.captables
        t = tbl_new(pred, arity, self.ntables, triple)
        self.tables[self.ntables] = t
        self.ntables += 1
        self._map_pred(pred, arity, t.id)
        self.ids[rel] = t.id
        self.relations[rel] = RelationView(self, t.id, rel)
        if triple:
            self.triple_predicates.append(pred)
        return t

    cdef int upsert(self, Table *t, const int64_t *key, int64_t expiry, bint delta, bint explicit) except -1:
        """Insert a fact or raise its expiry: 0 unchanged, 1 new, 2 risen. With ``delta``, a
        change is put in the table's delta of the current epoch; with ``explicit``, the fact is
        explicit until ``expiry`` (at least)."""
        return self.upsert_hashed(t, key, hash_key(key, t.arity), expiry, delta, explicit, -1)

    cdef int upsert_hashed(self, Table *t, const int64_t *key, uint64_t h, int64_t expiry, bint delta,
                           bint explicit, int64_t src) except -1:
        cdef int64_t row = tbl_probe(t, key, h)
        cdef int64_t *v
        cdef int result = 1
        if row >= 0:
            v = row_at(t, row)
            if explicit and v[t.arity + F_XEXP] < expiry:
                self._explicit_until(t, row, expiry)
            if v[t.arity + F_EXP] >= expiry:
                if src >= 0 and delta and v[t.arity + F_EXP] == expiry:
                    delta_own(t, v, expiry, self.epoch, src)
                return 0
            v[t.arity + F_EXP] = expiry
            result = 2
        else:
            row = tbl_insert(t, key, h, expiry)
            if explicit:
                self._explicit_until(t, row, expiry)
        if expiry != DOTR_INF:
            if expiry != self._bucket_when:
                bucket = self._buckets.get(expiry)
                if bucket is None:
                    bucket = self._buckets[expiry] = self._spare.pop() if self._spare else Bucket()
                self._bucket, self._bucket_when = bucket, expiry
            self._bucket.push(t.id, row)
        if delta:
            delta_add(t, row, expiry, self.epoch, src)
        return result

    cdef int next_epoch(self) except -1:
        """Start a delta epoch. A row's mark keeps the epoch's low bits only: when they come round
        to zero, every mark is cleared (a mark of long ago never equals the epoch's)."""
        cdef Table *t
        cdef int64_t i, r
        self.epoch += 1
        if (self.epoch & DOTR_EPOCH_MASK) == 0:
            for i in range(self.ntables):
                t = self.tables[i]
                for r in range(t.nrows):
                    row_at(t, r)[t.arity + F_DELTA] = -1
        return 0

    cdef int _explicit_until(self, Table *t, int64_t row, int64_t expiry) except -1:
        """Make the fact of ``row`` explicit until ``expiry``; ``expire`` ends it after then."""
        row_at(t, row)[t.arity + F_XEXP] = expiry
        if expiry != DOTR_INF:
            if expiry != self._due_when:
                bucket = self._due.get(expiry)
                if bucket is None:
                    bucket = self._due[expiry] = Bucket()
                self._due_bucket, self._due_when = bucket, expiry
            self._due_bucket.push(t.id, row)
        return 0

    cdef int index_of(self, Table *t, int npos, const int *pos) except -1:
        """The number of the table's index on ``pos``, built if needed (asking for an index
        keeps the table's indexes)."""
        cdef int i, j
        t.churn = 0
        for i in range(t.nidx):
            if t.idx[i].npos == npos:
                for j in range(npos):
                    if t.idx[i].pos[j] != pos[j]:
                        break
                else:
                    return i
        if t.nidx == MAX_INDEXES:
            raise RuntimeError(f"more than {MAX_INDEXES} indexes on one relation")
        idx_build(t, npos, pos)
        return t.nidx - 1

    cdef object fact(self, Table *t, int64_t row):
        cdef int j
        cdef object f = PyTuple_New(t.arity)
        cdef const int64_t *v = row_at(t, row)
        for j in range(t.arity):
            x = PyLong_FromLongLong(v[j])
            Py_INCREF(x)
            PyTuple_SET_ITEM(f, j, x)
        return f

    cdef int64_t _row(self, object rel, object fact, Table **found):
        """The row of a fact (-1: none) and its table."""
        cdef int64_t key[MAX_ARITY]
        tid = self.ids.get(rel)
        if tid is None:
            return -1
        cdef Table *t = self.tables[<int64_t>tid]
        if not _fits(t, fact):
            return -1
        _key(fact, key, t.arity)
        found[0] = t
        return tbl_find(t, key)

    # ----------------------------------------------------------------------- the Store API
    def relation(self, rel):
        """The relation ``rel`` (a view reading like ``dict_store.Relation``), created if needed."""
        self.table(rel)
        return self.relations[rel]

    def is_triple(self, rel) -> bool:
        return rel[1] == 2 and self._is_triple is not None and bool(self._is_triple(rel[0]))

    def index(self, rel, positions):
        """``{key: facts}`` of ``rel`` by the values at ``positions`` (the value itself for one)."""
        return self.relation(rel).index(positions)

    def expiry(self, rel, fact):
        cdef Table *t = NULL
        cdef int64_t row = self._row(rel, fact, &t)
        return None if row < 0 else row_at(t, row)[t.arity + F_EXP]

    def add(self, rel, fact, int64_t expiry) -> bool:
        """Insert ``fact`` or raise its expiry; True when it is new or its expiry rose."""
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = self.table(rel)
        _check_arity(t)
        _key(fact, key, t.arity)
        return self.upsert(t, key, expiry, False, False) != 0

    def add_new(self, rel, facts, int64_t expiry) -> int:
        """Insert facts the relation does not hold, all with the same expiry; returns how many."""
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = self.table(rel)
        cdef int64_t count = 0
        _check_arity(t)
        for fact in facts:
            _key(fact, key, t.arity)
            if self.upsert(t, key, expiry, False, False) == 1:
                count += 1
        return count

    def add_batch(self, rel, facts, expiries, new) -> None:
        """Store facts with their expiries (new ones, or risen ones)."""
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = self.table(rel)
        _check_arity(t)
        for fact, expiry in zip(facts, expiries):
            _key(fact, key, t.arity)
            self.upsert(t, key, expiry, False, False)

    def apply(self, items, delta=None) -> dict:
        """``add`` for each ``(rel, fact, expiry)``; returns (or extends) the delta: rel ->
        {fact: expiry} of what is new or rose."""
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = NULL
        delta = {} if delta is None else delta
        last = None
        changed = None
        for rel, fact, expiry in items:
            if rel is not last:
                t = self.table(rel)
                _check_arity(t)
                changed = delta.get(rel)
                if changed is None:
                    changed = delta[rel] = {}
                last = rel
            _key(fact, key, t.arity)
            if self.upsert(t, key, expiry, False, False):
                changed[fact] = expiry
        return delta

    def load(self, items, bint explicit=False) -> None:
        """``add`` for each ``(rel, fact, expiry)``, reporting nothing; ``explicit``: the facts
        are explicit until their expiry (at least), added or not."""
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = NULL
        last = None
        for rel, fact, expiry in items:
            if rel is not last:
                t = self.table(rel)
                _check_arity(t)
                last = rel
            _key(fact, key, t.arity)
            self.upsert(t, key, expiry, False, explicit)

    def remove(self, rel, fact) -> bool:
        cdef Table *t = NULL
        cdef int64_t row = self._row(rel, fact, &t)
        if row < 0:
            return False
        tbl_remove(t, row)
        return True

    def expire(self, int64_t now, bint report=True):
        """Drop every fact whose expiry is before ``now``; return what was dropped, with the
        expiry each had (``report=False``: how many). Explicit facts whose explicit expiry is
        before ``now`` are no longer explicit."""
        cdef Bucket bucket
        cdef Table *t
        cdef Table *ahead
        cdef int64_t *v
        cdef int64_t k, tid, row, when, count = 0, n
        cdef int64_t *data
        dropped = [] if report else None
        rels = self._rels() if report else None
        for w in sorted(w for w in self._buckets if w < now):
            bucket = self._buckets.pop(w)
            when = w
            if when == self._bucket_when:
                self._bucket, self._bucket_when = None, DOTR_FREE
            data, n = bucket.data, bucket.n
            for k in range(n):
                if k + 2 * AHEAD < n:  # the row of an entry further on, while this one is handled
                    ahead = self.tables[data[2 * (k + 2 * AHEAD)]]
                    DOTR_PREFETCH(row_at(ahead, data[2 * (k + 2 * AHEAD) + 1]))
                if k + AHEAD < n:  # the slot of a row prefetched before, if it goes
                    ahead = self.tables[data[2 * (k + AHEAD)]]
                    v = row_at(ahead, data[2 * (k + AHEAD) + 1])
                    if v[ahead.arity + F_EXP] == when:
                        DOTR_PREFETCH(ahead.slots + (hash_key(v, ahead.arity) & <uint64_t>(ahead.nslots - 1)))
                tid, row = data[2 * k], data[2 * k + 1]
                t = self.tables[tid]
                v = row_at(t, row)
                if v[t.arity + F_EXP] == when:  # else: freed, or its expiry rose and it is listed again
                    if report:
                        dropped.append((rels[tid], self.fact(t, row), w))
                    tbl_remove(t, row)
                    count += 1
            bucket.n = 0
            if len(self._spare) < 4:
                self._spare.append(bucket)
        for w in [w for w in self._due if w < now]:  # explicit until before now: no longer explicit
            bucket = self._due.pop(w)
            when = w
            if when == self._due_when:
                self._due_bucket, self._due_when = None, DOTR_FREE
            for k in range(bucket.n):
                t = self.tables[bucket.data[2 * k]]
                v = row_at(t, bucket.data[2 * k + 1])
                if v[t.arity + F_EXP] != DOTR_FREE and v[t.arity + F_XEXP] == when:
                    v[t.arity + F_XEXP] = DOTR_FREE
        return dropped if report else count

    def _rels(self) -> list:
        """The relation of each table, by number: the keys of ``relations`` (one object a
        relation, which every fact listed with it shares)."""
        out = [None] * self.ntables
        for rel, view in self.relations.items():
            out[(<RelationView>view).tid] = rel
        return out

    def clear(self) -> None:
        """Drop every fact (and every relation)."""
        cdef int64_t i
        for i in range(self.ntables):
            tbl_free(self.tables[i])
        self.ntables = 0
        for i in range(self._pred_slots):
            self._pred_vals[i] = -1
        for view in self.relations.values():
            (<RelationView>view).store = None
        self.ids.clear()
        self.relations.clear()
        self.triple_predicates.clear()
        self._buckets.clear()
        self._bucket, self._bucket_when = None, DOTR_FREE
        self._due.clear()
        self._due_bucket, self._due_when = None, DOTR_FREE

    def __iter__(self):
        """Every fact: ``(rel, fact, expiry)``."""
        cdef Table *t
        cdef int64_t i, r
        out = []
        for i in range(self.ntables):
            t = self.tables[i]
            rel = (t.pred, t.arity)
            for r in range(t.nrows):
                if row_at(t, r)[t.arity + F_EXP] != DOTR_FREE:
                    out.append((rel, self.fact(t, r), row_at(t, r)[t.arity + F_EXP]))
        return iter(out)

    def __len__(self):
        cdef int64_t i, n = 0
        for i in range(self.ntables):
            n += self.tables[i].size
        return n

    def footprint(self) -> dict:
        """Bytes the store's arrays hold, by part: ``rows`` (the facts with their expiries and
        bookkeeping), ``slots`` (the hash table of each relation), ``chains`` (the indexes' links
        between rows), ``keys`` (the indexes' hash tables), ``deltas`` (a round's changes, kept
        for the next), ``buckets`` (the expiry lists). Counted as far as written: memory
        allocated and never written is not resident.

        >>> s = NativeStore()
        >>> s.add((7, 2), (1, 2), 10)
        True
        >>> s.footprint()["rows"]  # one row: 2 term ids and 3 fields of 8 bytes
        40
        """
        cdef Table *t
        cdef Index *ix
        cdef int64_t i, j
        out = dict.fromkeys(("rows", "slots", "chains", "keys", "deltas", "buckets"), 0)
        for i in range(self.ntables):
            t = self.tables[i]
            out["rows"] += t.nrows * t.stride * 8 + t.nfree * 8
            out["slots"] += t.nslots * 8
            out["deltas"] += (t.dcap + t.rcap) * 3 * 8
            for j in range(t.nidx):
                ix = &t.idx[j]
                out["chains"] += t.nrows * 2 * 8
                out["keys"] += ix.nslots * 2 * 8
        for b in [*self._buckets.values(), *self._due.values()]:
            out["buckets"] += (<Bucket>b).cap * 2 * 8
        return out

    def expiry_times(self, int64_t since) -> list:
        """The times from ``since`` on at which some fact stops holding (its expiry), sorted."""
        cdef Bucket bucket
        cdef Table *t
        cdef int64_t k, when
        out = []
        for w, b in self._buckets.items():
            when = w
            if when < since:
                continue
            bucket = b
            for k in range(bucket.n):
                t = self.tables[bucket.data[2 * k]]
                if row_at(t, bucket.data[2 * k + 1])[t.arity + F_EXP] == when:
                    out.append(w)
                    break
        out.sort()
        return out

    def tagged(self, int64_t since, exclude=None) -> list:
        """The facts whose expiry is finite and at least ``since``, as ``(relation, fact)``, each
        once; without those in ``exclude`` (relation -> facts; for this store's ``explicit``
        view, which ``Materialiser.explicit`` is, the explicit facts are left out here)."""
        cdef Bucket bucket
        cdef Table *t
        cdef int64_t k, when, row, n = 0
        cdef int64_t *v
        cdef bint implicit = isinstance(exclude, ExplicitView) and (<ExplicitView>exclude).store is self
        rels = self._rels()
        out = []
        buckets = [(w, b) for w, b in self._buckets.items() if w >= since]
        for _, b in buckets:
            n += (<Bucket>b).n
        # (a row is listed twice under one expiry only if it was freed and used again between: the
        # rows met are kept in a set of (table << ROW_BITS) | row, open addressing, in C)
        cdef int64_t nslots = 16
        while nslots < 2 * n:
            nslots *= 2
        cdef int64_t *seen = _empty_slots(nslots)
        try:
            for w, b in buckets:
                when, bucket = w, b
                for k in range(bucket.n):
                    t, row = self.tables[bucket.data[2 * k]], bucket.data[2 * k + 1]
                    v = row_at(t, row)
                    if v[t.arity + F_EXP] != when or (implicit and v[t.arity + F_XEXP] != DOTR_FREE):
                        continue
                    if _first_time(seen, nslots - 1, (t.id << DOTR_ROW_BITS) | row):
                        out.append((rels[t.id], self.fact(t, row)))
        finally:
            free(seen)
        if exclude is not None and not implicit:
            out = [(rel, fact) for rel, fact in out if fact not in exclude.get(rel, ())]
        return out

    def drop(self, rels) -> None:
        """Forget the relations ``rels`` and their facts (the ontological stage forgets the
        relations of a batch's terms when the dictionary forgets the terms)."""
        cdef Table *t
        cdef Bucket bucket
        cdef int64_t i, k, j = 0
        gone = {self.ids[rel] for rel in rels if rel in self.ids}
        if not gone:
            return
        renumber = {}
        for i in range(self.ntables):
            t = self.tables[i]
            if i in gone:
                (<RelationView>self.relations.pop((t.pred, t.arity))).store = None
                del self.ids[(t.pred, t.arity)]
                tbl_free(t)
                continue
            renumber[i] = j
            t.id = j
            self.tables[j] = t
            self.ids[(t.pred, t.arity)] = j
            (<RelationView>self.relations[(t.pred, t.arity)]).tid = j
            j += 1
        self.ntables = j
        for k in range(self._pred_slots):
            self._pred_vals[k] = -1
        for i in range(self.ntables):
            self._map_pred(self.tables[i].pred, self.tables[i].arity, i)
        self.triple_predicates[:] = [self.tables[i].pred for i in range(self.ntables) if self.tables[i].triple]
        for b in [*self._buckets.values(), *self._due.values()]:  # entries of the forgotten tables go
            bucket = b
            j = 0
            for k in range(bucket.n):
                i = bucket.data[2 * k]
                if i not in gone:
                    bucket.data[2 * j], bucket.data[2 * j + 1] = renumber[i], bucket.data[2 * k + 1]
                    j += 1
            bucket.n = j

    # ------------------------------------------------------------------------ explicit facts
    @property
    def explicit(self):
        """The explicit facts, read like ``Materialiser.explicit`` (rel -> {fact: the expiry as an
        explicit fact}): those added with ``explicit``, until an ``expire`` passes that expiry."""
        return ExplicitView(self)

    def set_explicit(self, rel, fact, expiry) -> bool:
        """Make a stored fact explicit until ``expiry`` (None: not explicit); False when the
        store does not hold it."""
        cdef Table *t = NULL
        cdef int64_t row = self._row(rel, fact, &t)
        if row < 0:
            return False
        if expiry is None:
            row_at(t, row)[t.arity + F_XEXP] = DOTR_FREE
        else:
            self._explicit_until(t, row, expiry)
        return True


# ------------------------------------------------------------------------------------ views

cdef class RelationView:
    """The facts of one relation, read like ``Relation.facts`` (a dict fact -> expiry); also
    ``index(positions)``. ``facts`` is the view itself."""

    cdef NativeStore store
    cdef int64_t tid
    cdef readonly object rel
    cdef dict _views  # positions -> IndexView, made once (queries ask at every time point)

    def __cinit__(self, NativeStore store, int64_t tid, rel):
        self.store, self.tid, self.rel = store, tid, rel
        self._views = {}

    cdef Table *_t(self) except NULL:
        if self.store is None:
            raise RuntimeError("the store was cleared: this relation is gone")
        return self.store.tables[self.tid]

    @property
    def facts(self):
        return self

    @property
    def indexes(self) -> dict:
        """``{positions: index}`` of the indexes the relation keeps now."""
        cdef Table *t = self._t()
        cdef int i, j
        return {tuple(t.idx[i].pos[j] for j in range(t.idx[i].npos)):
                IndexView(self, tuple(t.idx[i].pos[j] for j in range(t.idx[i].npos))) for i in range(t.nidx)}

    def index(self, positions):
        """``{key: [facts]}`` by the values at ``positions`` (the value itself for one position)."""
        cdef Table *t = self._t()
        if type(positions) is not tuple:
            positions = tuple(positions)
        view = self._views.get(positions)
        if view is None:
            if not 0 < len(positions) <= min(t.arity, MAX_ARITY):  # (internal: the planners' positions)
                raise ValueError(f"cannot index {len(positions)} positions of a relation of {t.arity}")
            view = self._views[positions] = IndexView(self, positions)
        return view

    cdef int64_t _row(self, object fact) except -2:
        cdef int64_t key[MAX_ARITY]
        cdef Table *t = self._t()
        if not _fits(t, fact):
            return -1
        _key(fact, key, t.arity)
        return tbl_find(t, key)

    def get(self, fact, default=None):
        cdef int64_t row = self._row(fact)
        cdef Table *t = self._t()
        return default if row < 0 else row_at(t, row)[t.arity + F_EXP]

    def __getitem__(self, fact):
        cdef int64_t row = self._row(fact)
        cdef Table *t = self._t()
        if row < 0:
            raise KeyError(fact)
        return row_at(t, row)[t.arity + F_EXP]

    def __contains__(self, fact):
        return self._row(fact) >= 0

    def __len__(self):
        return self._t().size

    def __bool__(self):
        return self._t().size > 0

    def __iter__(self):
        cdef Table *t = self._t()
        cdef int64_t r
        return iter([self.store.fact(t, r) for r in range(t.nrows) if row_at(t, r)[t.arity + F_EXP] != DOTR_FREE])

    def keys(self):
        return list(self)

    def values(self):
        cdef Table *t = self._t()
        cdef int64_t r
        return [row_at(t, r)[t.arity + F_EXP] for r in range(t.nrows) if row_at(t, r)[t.arity + F_EXP] != DOTR_FREE]

    def items(self):
        cdef Table *t = self._t()
        cdef int64_t r
        return [(self.store.fact(t, r), row_at(t, r)[t.arity + F_EXP]) for r in range(t.nrows)
                if row_at(t, r)[t.arity + F_EXP] != DOTR_FREE]

    def __eq__(self, other):
        if isinstance(other, RelationView):
            other = dict(other.items())
        return isinstance(other, dict) and dict(self.items()) == other

    def __repr__(self):
        return f"RelationView({self.rel!r}, {len(self)} facts)"


cdef class IndexView:
    """One index of a relation, read like the dict store's: ``get(key, ())`` gives the facts
    whose values at the index's positions are ``key`` (a :class:`Chain`)."""

    cdef RelationView relation
    cdef int npos
    cdef int pos[MAX_ARITY]

    def __cinit__(self, RelationView relation, tuple positions):
        cdef int j
        self.relation, self.npos = relation, len(positions)
        for j in range(self.npos):
            self.pos[j] = positions[j]

    cdef Index *_index(self, Table **found) except NULL:
        cdef Table *t = self.relation._t()
        found[0] = t
        return &t.idx[self.relation.store.index_of(t, self.npos, self.pos)]

    cdef int64_t _head(self, object key, Table **found, Index **index) except -2:
        cdef int64_t k[MAX_ARITY]
        cdef int j
        index[0] = self._index(found)
        if self.npos == 1:
            if isinstance(key, tuple):
                return -1
            k[0] = key
        else:
            if not isinstance(key, tuple) or len(key) != self.npos:
                return -1
            for j in range(self.npos):
                k[j] = key[j]
        return idx_find(found[0], index[0], k)

    cdef Chain _chain(self, Table *t, Index *ix, int64_t row):
        cdef Chain c = Chain.__new__(Chain)
        c.relation, c.ii, c.head = self.relation, ix - &t.idx[0], row
        c.count, c.version = ix.counts[idx_slot_of(t, ix, row)], t.version
        return c

    def get(self, key, default=()):
        cdef Table *t
        cdef Index *ix
        cdef int64_t row = self._head(key, &t, &ix)
        return default if row < 0 else self._chain(t, ix, row)

    def __getitem__(self, key):
        cdef Table *t
        cdef Index *ix
        cdef int64_t row = self._head(key, &t, &ix)
        if row < 0:
            raise KeyError(key)
        return self._chain(t, ix, row)

    def __contains__(self, key):
        cdef Table *t
        cdef Index *ix
        return self._head(key, &t, &ix) >= 0

    def __len__(self):
        cdef Table *t
        return self._index(&t).nkeys

    def keys(self):
        cdef Table *t
        cdef Index *ix = self._index(&t)
        cdef int64_t s, h
        cdef int j
        out = []
        for s in range(ix.nslots):
            h = ix.heads[s]
            if h >= 0:
                if ix.npos == 1:
                    out.append(row_at(t, h)[ix.pos[0]])
                else:
                    out.append(tuple(row_at(t, h)[ix.pos[j]] for j in range(ix.npos)))
        return out

    def __iter__(self):
        return iter(self.keys())

    def items(self):
        return [(key, self[key]) for key in self.keys()]


cdef class Chain:
    """The facts of one key of an index (what the dict store's index holds as a set): its size
    at once, its facts one by one; reading it after the relation changed raises RuntimeError,
    as iterating a dict that changed does."""

    cdef RelationView relation
    cdef int ii
    cdef int64_t head, count, version

    cdef Table *_t(self) except NULL:
        cdef Table *t = self.relation._t()
        if t.version != self.version:
            raise RuntimeError("the relation changed since this index lookup")
        return t

    def __len__(self):
        self._t()
        return self.count

    def __bool__(self):
        return len(self) > 0

    def __iter__(self):
        cdef ChainIterator it = ChainIterator.__new__(ChainIterator)
        self._t()
        it.chain, it.row = self, self.head
        return it

    def __contains__(self, fact):
        cdef Table *t = self._t()
        cdef Index *ix = &t.idx[self.ii]
        cdef int64_t row = self.relation._row(fact)
        return row >= 0 and rows_share_key(t, ix, row, self.head)

    def __eq__(self, other):
        try:
            return set(self) == set(other)
        except TypeError:
            return NotImplemented

    def __repr__(self):
        return f"Chain({sorted(self)!r})"


cdef class ChainIterator:
    cdef Chain chain
    cdef int64_t row

    def __iter__(self):
        return self

    def __next__(self):
        cdef Table *t = self.chain._t()
        cdef int64_t row = self.row
        if row < 0:
            raise StopIteration
        self.row = t.idx[self.chain.ii].next[row]
        return self.chain.relation.store.fact(t, row)


cdef class ExplicitView:
    """``{rel: {fact: expiry}}`` of the explicit facts of a native store (read like the dicts of
    ``Materialiser.explicit``; a relation's view also has ``pop``)."""

    cdef NativeStore store

    def __cinit__(self, NativeStore store):
        self.store = store

    def get(self, rel, default=None):
        return ExplicitRelation(self.store, rel) if rel in self.store.ids else default

    def __getitem__(self, rel):
        if rel not in self.store.ids:
            raise KeyError(rel)
        return ExplicitRelation(self.store, rel)

    def __contains__(self, rel):
        return rel in self.store.ids

    def __iter__(self):
        return iter(list(self.store.ids))

    def keys(self):
        return list(self.store.ids)

    def items(self):
        return [(rel, ExplicitRelation(self.store, rel)) for rel in self.store.ids]


cdef class ExplicitRelation:
    """The explicit facts of one relation: fact -> the expiry as an explicit fact."""

    cdef NativeStore store
    cdef object rel

    def __cinit__(self, NativeStore store, rel):
        self.store, self.rel = store, rel

    cdef int64_t _xexp(self, object fact, Table **found, int64_t **row):
        """The explicit expiry of ``fact`` (FREE: not explicit now)."""
        cdef Table *t = NULL
        cdef int64_t r = self.store._row(self.rel, fact, &t)
        cdef int64_t x
        if r < 0:
            return DOTR_FREE
        row[0], found[0] = row_at(t, r), t
        return row[0][t.arity + F_XEXP]

    def get(self, fact, default=None):
        cdef Table *t
        cdef int64_t *row
        cdef int64_t x = self._xexp(fact, &t, &row)
        return default if x == DOTR_FREE else x

    def __getitem__(self, fact):
        cdef Table *t
        cdef int64_t *row
        cdef int64_t x = self._xexp(fact, &t, &row)
        if x == DOTR_FREE:
            raise KeyError(fact)
        return x

    def __contains__(self, fact):
        cdef Table *t
        cdef int64_t *row
        return self._xexp(fact, &t, &row) != DOTR_FREE

    def pop(self, fact, default=None):
        cdef Table *t
        cdef int64_t *row
        cdef int64_t x = self._xexp(fact, &t, &row)
        if x == DOTR_FREE:
            return default
        row[t.arity + F_XEXP] = DOTR_FREE
        return x

    def items(self):
        cdef Table *t = self.store.table(self.rel)
        cdef int64_t r, x
        out = []
        for r in range(t.nrows):
            x = row_at(t, r)[t.arity + F_XEXP]
            if row_at(t, r)[t.arity + F_EXP] != DOTR_FREE and x != DOTR_FREE:
                out.append((self.store.fact(t, r), x))
        return out

    def __iter__(self):
        return iter([fact for fact, _ in self.items()])

    def keys(self):
        return list(self)

    def values(self):
        return [x for _, x in self.items()]

    def __len__(self):
        return len(self.items())

    def __bool__(self):
        return len(self) > 0
