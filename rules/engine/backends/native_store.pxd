# Declarations of the compiled fact store (native_store.pyx), shared with native_plans.pyx: the
# tables as C structs, and the lookups both modules inline.

cimport cython
from libc.stdint cimport int64_t, uint64_t

cdef extern from *:
    """
    #define DOTR_FREE INT64_MIN           /* the expiry of a row that holds no fact */
    #define DOTR_EMPTY (-1)               /* a hash slot never used */
    #define DOTR_TOMB (-2)                /* a hash slot whose entry was removed */
    #define DOTR_INF (((int64_t)1) << 62) /* the expiry of facts that never expire */
    #define DOTR_ROW_BITS 40              /* a slot holds (hash tag << 40) | row */
    #define DOTR_ROW_MASK ((((int64_t)1) << 40) - 1)
    #define DOTR_EPOCH_MASK ((((int64_t)1) << 23) - 1) /* a row's delta mark keeps the epoch's low bits */
    #define DOTR_PREFETCH(p) __builtin_prefetch((const void *)(p))
    """
    const int64_t DOTR_FREE
    const int64_t DOTR_EMPTY
    const int64_t DOTR_TOMB
    const int64_t DOTR_INF
    const int DOTR_ROW_BITS
    const int64_t DOTR_ROW_MASK
    const int64_t DOTR_EPOCH_MASK
    void DOTR_PREFETCH(const void *p) noexcept nogil

cdef enum:
    MAX_INDEXES = 16   # indexes per relation
    MAX_ARITY = 16     # the compiled plans' and the views' limit
    # a row: the fact's term ids (arity of them), then these fields
    F_EXP = 0          # the expiry (FREE: the row holds no fact)
    F_XEXP = 1         # the expiry as an explicit fact (FREE: not explicit)
    F_DELTA = 2        # (epoch << ROW_BITS) | place: the delta epoch in which it was last put in
                       # the delta (its low bits, DOTR_EPOCH_MASK) and its place in that delta
    FIELDS = 3

cdef struct Index:
    int npos
    int pos[MAX_ARITY] # the positions the index is keyed by
    int64_t nslots     # a power of two
    int64_t used       # slots holding a key or a tombstone
    int64_t nkeys
    int64_t *heads     # per slot: the first row of the key's chain, EMPTY or TOMB
    int64_t *counts    # per slot: the length of the chain
    int64_t *next      # per row: the next row with the same key (-1: none)
    int64_t *prev      # per row

cdef struct Table:
    int64_t pred
    int arity
    int stride         # arity + FIELDS
    bint triple        # an RDF triple relation (an IRI predicate of arity 2)
    int64_t id         # the table's number in the store
    int64_t nrows      # rows in use or freed (the high-water mark)
    int64_t cap        # rows allocated
    int64_t size       # facts held
    int64_t *rows      # row r at rows + r * stride
    int64_t *free_rows
    int64_t nfree
    int64_t nslots     # the primary hash table: a power of two
    int64_t used
    int64_t *slots     # per slot: (tag << ROW_BITS) | row, EMPTY or TOMB
    int nidx
    Index idx[MAX_INDEXES]
    int64_t churn      # insertions and deletions since an index was last asked for
    int64_t version    # bumped when rows come or go or indexes are dropped (views' iterators check it)
    # the delta of a semi-naive round: rows that are new or rose, with their expiry then
    int64_t *drows
    int64_t *dexps
    int64_t *dsrcs     # the transitive step whose conclusion the change was (-1: none)
    int64_t dn
    int64_t dcap
    # the delta a round reads, while the next is built in the arrays above (native_plans swaps them)
    int64_t *rrows
    int64_t *rexps
    int64_t *rsrcs
    int64_t rcap


cdef inline uint64_t hash_key(const int64_t *key, int n) noexcept nogil:
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n
    cdef int i
    for i in range(n):
        h ^= <uint64_t>key[i]
        h *= 0xBF58476D1CE4E5B9ULL
        h ^= h >> 29
    return h ^ (h >> 32)


cdef inline int64_t *row_at(Table *t, int64_t r) noexcept nogil:
    return t.rows + r * t.stride


cdef inline bint same(const int64_t *a, const int64_t *b, int n) noexcept nogil:
    cdef int i
    for i in range(n):
        if a[i] != b[i]:
            return False
    return True


cdef inline int64_t tbl_probe(Table *t, const int64_t *key, uint64_t h) noexcept nogil:
    """The row holding ``key`` (hashed to ``h``), or -1."""
    cdef uint64_t mask = <uint64_t>t.nslots - 1
    cdef uint64_t i = h & mask
    cdef int64_t tag = <int64_t>(h >> (64 - (63 - DOTR_ROW_BITS)))
    cdef int64_t s
    while True:
        s = t.slots[i]
        if s == DOTR_EMPTY:
            return -1
        if s >= 0 and (s >> DOTR_ROW_BITS) == tag and same(row_at(t, s & DOTR_ROW_MASK), key, t.arity):
            return s & DOTR_ROW_MASK
        i = (i + 1) & mask


cdef inline int64_t tbl_find(Table *t, const int64_t *key) noexcept nogil:
    return tbl_probe(t, key, hash_key(key, t.arity))


cdef inline bint key_matches(Table *t, Index *ix, int64_t row, const int64_t *key) noexcept nogil:
    cdef const int64_t *v = row_at(t, row)
    cdef int j
    for j in range(ix.npos):
        if v[ix.pos[j]] != key[j]:
            return False
    return True


cdef inline int64_t idx_slot(Table *t, Index *ix, const int64_t *key) noexcept nogil:
    """The slot of the index's hash table that holds ``key`` (the values at the index's
    positions), or -1."""
    cdef uint64_t mask = <uint64_t>ix.nslots - 1
    cdef uint64_t i = hash_key(key, ix.npos) & mask
    cdef int64_t h
    while True:
        h = ix.heads[i]
        if h == DOTR_EMPTY:
            return -1
        if h >= 0 and key_matches(t, ix, h, key):
            return <int64_t>i
        i = (i + 1) & mask


cdef inline int64_t idx_find(Table *t, Index *ix, const int64_t *key) noexcept nogil:
    """The first row of the chain of rows whose values at the index's positions are ``key``, or -1."""
    cdef int64_t i = idx_slot(t, ix, key)
    return -1 if i < 0 else ix.heads[i]


@cython.final
cdef class Bucket:
    cdef int64_t *data   # (table, row) pairs
    cdef int64_t n       # pairs
    cdef int64_t cap
    cdef inline int push(self, int64_t a, int64_t b) except -1


cdef class NativeStore:
    cdef Table **tables
    cdef int64_t ntables
    cdef int64_t captables
    cdef dict ids                  # (predicate, arity) -> table number
    cdef public dict relations     # (predicate, arity) -> RelationView
    cdef public list triple_predicates
    cdef object _is_triple
    cdef dict _buckets             # expiry -> Bucket of (table, row) pairs
    cdef list _spare               # emptied buckets, reused (a window's buckets are all alike)
    cdef int64_t _bucket_when      # the expiry of _bucket (a cache for runs of one expiry)
    cdef Bucket _bucket
    cdef dict _due                 # explicit expiry -> Bucket: explicit facts stop being explicit then
    cdef int64_t _due_when
    cdef Bucket _due_bucket
    cdef public int64_t epoch      # the current delta epoch (native_plans)
    cdef int64_t *_pred_keys       # (predicate, arity) -> table number, for the compiled plans
    cdef int64_t *_pred_vals
    cdef int64_t _pred_slots

    cdef Table *find(self, int64_t pred, int arity) noexcept
    cdef int _map_pred(self, int64_t pred, int arity, int64_t tid) except -1
    cdef Table *table(self, object rel) except NULL
    cdef Table *table_for(self, int64_t pred, int arity) except NULL
    cdef int next_epoch(self) except -1
    cdef int _explicit_until(self, Table *t, int64_t row, int64_t expiry) except -1
    cdef int upsert(self, Table *t, const int64_t *key, int64_t expiry, bint delta, bint explicit) except -1
    cdef int upsert_hashed(self, Table *t, const int64_t *key, uint64_t h, int64_t expiry, bint delta,
                           bint explicit, int64_t src) except -1
    cdef int index_of(self, Table *t, int npos, const int *pos) except -1
    cdef object fact(self, Table *t, int64_t row)
    cdef int64_t _row(self, object rel, object fact, Table **found)
