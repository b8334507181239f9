# cython: language_level=3, boundscheck=False, wraparound=False
"""The dict store's two hot loops in compiled code: storing items and dropping expired facts;
and the LARS engine's loops over what a time point stored and dropped.

``rules.engine.backends.dict_store.DictStore.apply`` and ``.expire`` call these on the store's own dicts; the
behaviour is theirs (see there). Compiled, each item costs dict probes, not interpreted bytecode:
a LARS program stores and drops every stream atom, its window facts and its conclusions at every
time point.
"""

cdef long long _INF = 1 << 62  # rules.engine.store.INF (no expiry bucket)


def apply_items(store, items, dict delta, list new=None):
    """Add each ``(rel, fact, expiry)`` of ``items`` to ``store`` (a new fact, or a higher
    expiry); record what changed in ``delta`` (rel -> {fact: expiry}), which is returned, and
    the facts that were not held before in ``new`` as ``(rel, fact)``, if given."""
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
            if new is not None:
                new.append((rel, fact))
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


def relations_of(items):
    """The set of the relations of ``items`` (tuples whose first element is a relation): a
    relation's items mostly come in runs, which mostly share its key object, so that a run costs
    one set probe, not one per item."""
    cdef set out = set()
    cdef object last = None
    for item in items:
        rel = item[0]
        if rel is not last and rel != last:
            out.add(rel)
            last = rel
    return out


# -- the LARS engine's loops over what a time point stored and dropped (temporal.lars): each
# -- replaces a Python loop of the engine, which tests/temporal/test_lars_loops.py keeps as the
# -- reference it is compared with

def note_dropped(list dropped, on_expired, intensional, set dirty):
    """Read what the store dropped (``(rel, fact, expiry)``, in runs of one relation): each fact
    is told to the callbacks ``on_expired`` lists for its relation, and each fact of a relation in
    ``intensional`` is added to ``dirty`` as ``(rel, fact)``."""
    cdef object last = None
    cdef object tells = None
    cdef bint derived = False
    for rel, fact, _ in dropped:
        if rel is not last:
            last = rel
            tells = on_expired.get(rel)
            derived = rel in intensional
        if tells:
            for tell in tells:
                tell(fact)
        if derived:
            dirty.add((rel, fact))


def held_changes(dirty, dict relations, sinks, inputs, set out):
    """Of the pairs ``(rel, fact)`` of ``dirty``: those that hold (the facts of the relation in
    ``relations`` have the fact, or the ``heads`` of a view that ``sinks`` lists for the relation)
    and are no ``inputs`` but were not in ``out`` (``held``), and those of ``out`` that do not
    (``removed``). Returns ``(held, removed)``."""
    cdef list held = []
    cdef list removed = []
    cdef object last = None
    cdef object facts = None
    cdef object views = None
    cdef bint holds
    for item in dirty:
        rel = item[0]
        if rel is not last:
            last = rel
            r = relations.get(rel)
            facts = r.facts if r is not None else None
            views = sinks.get(rel)
        fact = item[1]
        holds = facts is not None and fact in facts
        if not holds and views:
            for view in views:
                if fact in view.heads:
                    holds = True
                    break
        if holds and item not in inputs:
            if item not in out:
                held.append(item)
        elif item in out:
            removed.append(item)
    return held, removed


def box_facts(base_facts, dict occ, rel, t, first, list out, record, covered):
    """A box window's facts at ``t``: each fact of ``base_facts`` extends its run in ``occ``
    (fact -> runs ``[start, end]``, kept by ``record``) to ``t``, and is added to ``out`` as
    ``(rel, fact, t)`` when a run covers ``[first, t]`` (``covered``: whether one of the runs
    does)."""
    before = t - 1  # (no negative indexes: this module does without wraparound)
    for f in base_facts:
        runs = occ.get(f)
        if runs:
            last = runs[len(runs) - 1]
            if last[1] == before:  # (the usual case: it held just before)
                last[1] = t
            elif last[1] < t:
                record(occ, f, t, t)
                last = runs[len(runs) - 1]
        else:
            record(occ, f, t, t)
            runs = occ[f]
            last = runs[len(runs) - 1]
        if last[0] <= first and last[1] >= t or covered(runs, first, t):
            out.append((rel, f, t))
