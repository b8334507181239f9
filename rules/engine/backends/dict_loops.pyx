# cython: language_level=3, boundscheck=False, wraparound=False
"""The dict store's two hot loops in compiled code: storing items and dropping expired facts.

``rules.engine.backends.dict_store.DictStore.apply`` and ``.expire`` call these on the store's own dicts; the
behaviour is theirs (see there). Compiled, each item costs dict probes, not interpreted bytecode:
a LARS program stores and drops every stream atom, its window facts and its conclusions at every
time point.
"""

cdef long long _INF = 1 << 62  # rules.engine.store.INF (no expiry bucket)


def apply_items(store, items, dict delta):
    """Add each ``(rel, fact, expiry)`` of ``items`` to ``store`` (a new fact, or a higher
    expiry); record what changed in ``delta`` (rel -> {fact: expiry}), which is returned."""
    cdef dict relations = store.relations
    buckets = store.buckets
    cdef dict facts = None
    cdef dict changed = None
    cdef list bucket = None
    cdef object last = None
    cdef object r = None
    cdef object old
    cdef long long e
    cdef long long last_e = -1
    for rel, fact, expiry in items:
        if rel is not last:  # items come in runs of one relation (one rule's head)
            r = relations.get(rel)
            if r is None:
                r = store.relation(rel)
            facts = r.facts
            changed = delta.get(rel)
            if changed is None:
                changed = delta[rel] = {}
            last = rel
        e = expiry
        old = facts.get(fact)
        if old is None:
            facts[fact] = expiry
            if r.indexes:
                r._insert(fact)
        elif <long long>old >= e:
            continue
        else:
            facts[fact] = expiry
        if e != _INF:
            if e != last_e or bucket is None:
                bucket, last_e = buckets[expiry], e
            bucket.append((rel, fact))
        changed[fact] = expiry
    return delta


def expire_buckets(store, now, bint report=True):
    """Drop every fact of ``store`` whose expiry is before ``now``; return the dropped facts as
    ``(rel, fact, expiry)``, bucket by bucket (``report=False``: how many)."""
    cdef dict relations = store.relations
    buckets = store.buckets
    cdef list dropped = []
    cdef Py_ssize_t count = 0
    cdef dict facts = None
    cdef object last
    cdef object r = None
    cdef object held
    for when in sorted([t for t in buckets if t < now]):
        last = None
        for rel, fact in buckets.pop(when):
            if rel is not last:  # entries come in runs of one relation
                r = relations[rel]
                facts, last = r.facts, rel
            held = facts.get(fact)
            if held is not None and held == when:  # else: its expiry rose, it is listed again later
                del facts[fact]
                if r.indexes:
                    r._delete(fact)
                if report:
                    dropped.append((rel, fact, when))
                else:
                    count += 1
    return dropped if report else count
