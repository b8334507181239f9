# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""N-Triples of a plain shape read in compiled code: each distinct term once, triples as term numbers.

Large backgrounds are mostly N-Triples of plain terms. :func:`scan` reads such a document in one
pass: each line ``subject predicate object .`` whose terms are absolute IRIs of ASCII characters,
blank node labels of ASCII characters, or literals without escapes (``"x"``, ``"x"@en``,
``"x"^^<iri>``), comment lines and blank lines. Each distinct term's text is numbered in the
order it first occurs (one hash table probe per term, on its bytes); the triples come back as
those numbers, three per triple. On any other line it returns None, and the caller reads the file
with a full parser (``ontology.background``), which gives the same terms
(tests/ontology/test_loading.py compares the two).

>>> terms, triples = scan(b'<http://ex.org/a> <http://ex.org/p> "x"@en .\\n_:b <http://ex.org/p> <http://ex.org/a> .\\n')
>>> terms
['http://ex.org/a', 'http://ex.org/p', ('literal', 'x', 'en', None), ('blank', 'b')]
>>> list(triples)
[0, 1, 2, 3, 1, 0]
>>> scan(b'<http://ex.org/a> <http://ex.org/p> "a\\\\"b" .') is None  # an escape: not this reader's
True
"""

from array import array

from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_DecodeASCII
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy

cdef extern from *:
    """
    #define DOTR_PREFETCH(p) __builtin_prefetch((const void *)(p))
    """
    void DOTR_PREFETCH(const void *p) noexcept nogil

cdef enum:
    CHUNK = 4096  # lines read before their terms are numbered
    AHEAD = 16    # terms: how far ahead a slot is prefetched


cdef inline uint64_t _hash(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, p, 8)
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
        p += 8
        n -= 8
    w = 0
    if n:
        memcpy(&w, p, n)
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
    h ^= h >> 29
    h *= 0x94D049BB133111EBULL
    return h ^ (h >> 32)


cdef inline bint _scheme_char(unsigned char c) noexcept nogil:
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z') or (b'0' <= c <= b'9') or c == b'+' or c == b'-' or c == b'.'


cdef inline bint _hex(unsigned char c) noexcept nogil:
    return (b'0' <= c <= b'9') or (b'a' <= c <= b'f') or (b'A' <= c <= b'F')


# character classes, one lookup each: RFC 3987's unreserved and reserved ASCII characters in an
# IRI, but for '[' and ']' (IPv6 hosts: left to the full parser) and '%' (checked apart); and
# the characters of a blank node label
cdef unsigned char IRI_CHAR = 1, LABEL_CHAR = 2
cdef unsigned char CLASSES[256]
CLASSES[:] = [0] * 256
for _c in bytearray(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#@!$&'()*+,;="):
    CLASSES[_c] |= IRI_CHAR
for _c in bytearray(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."):
    CLASSES[_c] |= LABEL_CHAR


cdef inline bint _iri_char(unsigned char c) noexcept nogil:
    return CLASSES[c] & IRI_CHAR


cdef Py_ssize_t _iri(const unsigned char *p, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """The end (after '>') of an absolute IRI ``<scheme:...>`` of plain ASCII starting at ``i``
    ('<'), or -1. An authority's port, when there is one, is digits; at most one '#'."""
    cdef Py_ssize_t j = i + 1, colon = -1
    cdef unsigned char c
    if j >= end or not ((b'a' <= p[j] <= b'z') or (b'A' <= p[j] <= b'Z')):
        return -1
    while j < end and _scheme_char(p[j]):
        j += 1
    if j >= end or p[j] != b':':
        return -1
    j += 1
    if j + 1 < end and p[j] == b'/' and p[j + 1] == b'/':  # an authority, up to '/', '?', '#' or '>'
        j += 2
        while j < end:
            c = p[j]
            if c == b'/' or c == b'?' or c == b'#' or c == b'>':
                break
            if c == b'%':
                if j + 2 >= end or not _hex(p[j + 1]) or not _hex(p[j + 2]):
                    return -1
                j += 3
                continue
            if not _iri_char(c):
                return -1
            if c == b'@':
                colon = -1
            elif c == b':':
                colon = j
            j += 1
        if colon >= 0 and not _digits_until(p, colon + 1, j):
            return -1
    return _iri_rest(p, j, end)


cdef bint _digits_until(const unsigned char *p, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    while i < end:
        if not (b'0' <= p[i] <= b'9'):
            return False
        i += 1
    return True


cdef Py_ssize_t _iri_rest(const unsigned char *p, Py_ssize_t j, Py_ssize_t end) noexcept nogil:
    """The end (after '>') of an IRI's path, query and fragment from ``j``, or -1."""
    cdef int hashes = 0
    cdef unsigned char c
    while j < end:
        c = p[j]
        if c == b'>':
            return j + 1
        if c == b'%':
            if j + 2 >= end or not _hex(p[j + 1]) or not _hex(p[j + 2]):
                return -1
            j += 3
            continue
        if not _iri_char(c):
            return -1
        if c == b'#':
            hashes += 1
            if hashes > 1:
                return -1
        j += 1
    return -1


cdef inline bint _label_char(unsigned char c) noexcept nogil:
    return CLASSES[c] & LABEL_CHAR


cdef Py_ssize_t _blank(const unsigned char *p, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """The end of a blank node ``_:label`` (ASCII) starting at ``i``, or -1."""
    cdef Py_ssize_t j = i + 2
    if j >= end or p[i + 1] != b':' or not ((b'a' <= p[j] <= b'z') or (b'A' <= p[j] <= b'Z')
                                            or (b'0' <= p[j] <= b'9') or p[j] == b'_'):
        return -1
    j += 1
    while j < end and _label_char(p[j]):
        j += 1
    while p[j - 1] == b'.':  # (a label does not end with '.': that is the statement's end)
        j -= 1
    return j


cdef Py_ssize_t _literal(const unsigned char *p, Py_ssize_t i, Py_ssize_t end, Py_ssize_t *close) noexcept nogil:
    """The end of a literal without escapes starting at ``i`` ('"'), its closing quote at
    ``close[0]``; or -1."""
    cdef Py_ssize_t j = i + 1, k
    while j < end and p[j] != b'"':
        if p[j] == b'\\' or p[j] == b'\n' or p[j] == b'\r':
            return -1
        j += 1
    if j >= end:
        return -1
    close[0] = j
    j += 1
    if j < end and p[j] == b'@':  # a language tag: [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*
        k = j + 1
        while k < end and ((b'a' <= p[k] <= b'z') or (b'A' <= p[k] <= b'Z')):
            k += 1
        if k == j + 1:
            return -1
        while k < end and p[k] == b'-':
            j = k + 1
            k = j
            while k < end and ((b'a' <= p[k] <= b'z') or (b'A' <= p[k] <= b'Z') or (b'0' <= p[k] <= b'9')):
                k += 1
            if k == j:
                return -1
        return k
    if j + 1 < end and p[j] == b'^' and p[j + 1] == b'^':
        if j + 2 >= end or p[j + 2] != b'<':
            return -1
        return _iri(p, j + 2, end)
    return j


cdef struct Slot:
    int64_t start   # where the term's text starts in the document (-1: an empty slot)
    int32_t length
    int32_t number  # the term's number


cdef class _Terms:
    """The distinct terms met so far: an open-addressing table over their bytes. A slot holds
    where the term's first occurrence is and its number: a probe reads the slot and the bytes."""

    cdef const unsigned char *data
    cdef Slot *slots
    cdef int64_t n, nslots
    cdef list texts

    def __cinit__(self):
        self.nslots, self.n = 4096, 0
        self.slots = _empty(self.nslots)
        self.texts = []

    def __dealloc__(self):
        free(self.slots)

    cdef int _grow(self) except -1:
        """Twice the slots (kept at most half full)."""
        cdef int64_t i, n = self.nslots * 2
        cdef uint64_t j, mask = <uint64_t>n - 1
        cdef Slot *slots = _empty(n)
        for i in range(self.nslots):
            if self.slots[i].start >= 0:
                j = _hash(self.data + self.slots[i].start, self.slots[i].length) & mask
                while slots[j].start >= 0:
                    j = (j + 1) & mask
                slots[j] = self.slots[i]
        free(self.slots)
        self.slots, self.nslots = slots, n
        return 0

    cdef int resolve(self, const int64_t *starts, const int64_t *lengths, const uint64_t *hashes,
                     int64_t n, int64_t *out) except -1:
        """The numbers of ``n`` terms (``data[starts[k]:starts[k] + lengths[k]]``, hashed) into
        ``out``, new terms numbered in order. Bound by memory latency: the slot of the term
        AHEAD on is prefetched, and the bytes of the term that the slot of the term half as far
        on names."""
        cdef int64_t k, t, length
        cdef uint64_t mask, j
        cdef Slot *slot
        for k in range(n):
            if (self.n + 1) * 2 > self.nslots:
                self._grow()
            mask = <uint64_t>self.nslots - 1
            if k + AHEAD < n:
                DOTR_PREFETCH(&self.slots[hashes[k + AHEAD] & mask])
            if k + AHEAD // 2 < n:
                slot = &self.slots[hashes[k + AHEAD // 2] & mask]
                if slot.start >= 0:
                    DOTR_PREFETCH(self.data + slot.start)
            length = lengths[k]
            j = hashes[k] & mask
            while True:
                slot = &self.slots[j]
                if slot.start < 0:
                    break
                if slot.length == length and memcmp(self.data + slot.start, self.data + starts[k], length) == 0:
                    break
                j = (j + 1) & mask
            if slot.start >= 0:
                out[k] = slot.number
                continue
            t = self.n
            slot.start, slot.length, slot.number = starts[k], <int32_t>length, <int32_t>t
            self.n += 1
            self.texts.append(self._text(starts[k], length))
            out[k] = t
        return 0

    cdef object _text(self, Py_ssize_t start, Py_ssize_t length):
        """What the term is: an IRI's value, ``("blank", label)`` or ``("literal", lexical,
        language, datatype)``."""
        cdef const unsigned char *p = self.data + start
        cdef Py_ssize_t close = 0, i
        if p[0] == b'<':
            return PyUnicode_DecodeASCII(<const char *>p + 1, length - 2, NULL)
        if p[0] == b'_':
            return ("blank", PyUnicode_DecodeASCII(<const char *>p + 2, length - 2, NULL))
        _literal(p, 0, length, &close)
        lexical = PyUnicode_DecodeUTF8(<const char *>p + 1, close - 1, NULL)
        i = close + 1
        if i == length:
            return ("literal", lexical, None, None)
        if p[i] == b'@':
            return ("literal", lexical, PyUnicode_DecodeASCII(<const char *>p + i + 1, length - i - 1, NULL), None)
        return ("literal", lexical, None, PyUnicode_DecodeASCII(<const char *>p + i + 3, length - i - 4, NULL))


cdef Slot *_empty(int64_t n) except NULL:
    cdef Slot *slots = <Slot *>malloc(n * sizeof(Slot))
    cdef int64_t i
    if slots == NULL:
        raise MemoryError()
    for i in range(n):
        slots[i].start = -1
    return slots


cdef inline Py_ssize_t _space(const unsigned char *p, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    while i < end and (p[i] == b' ' or p[i] == b'\t'):
        i += 1
    return i


def scan(bytes data):
    """``(terms, triples)`` of an N-Triples document of the plain shape (module docstring), or
    None. ``terms``: per distinct term, in order of first occurrence, an IRI's value (a str),
    ``("blank", label)`` or ``("literal", lexical, language, datatype)``; ``triples``: an
    ``array('q')`` of term numbers, subject, predicate and object of each triple in turn. Raises
    UnicodeDecodeError when a literal is not UTF-8. The lines are read CHUNK at a time, then
    their terms numbered."""
    cdef const unsigned char *p = data
    cdef Py_ssize_t end = len(data), i = 0, j
    cdef Py_ssize_t close = 0
    cdef _Terms terms = _Terms()
    cdef int64_t starts[3 * CHUNK]
    cdef int64_t lengths[3 * CHUNK]
    cdef uint64_t hashes[3 * CHUNK]
    cdef int64_t *out
    cdef int64_t *grown
    cdef int64_t k = 0, nout = 0, capout = 3 * CHUNK
    terms.data = p
    out = <int64_t *>malloc(capout * sizeof(int64_t))
    if out == NULL:
        raise MemoryError()
    try:
        while True:
            i = _space(p, i, end)
            if i >= end or k == 3 * CHUNK:  # number the chunk's terms
                if nout + k > capout:
                    capout = max(2 * capout, nout + k)
                    grown = <int64_t *>realloc(out, capout * sizeof(int64_t))
                    if grown == NULL:
                        raise MemoryError()
                    out = grown
                terms.resolve(starts, lengths, hashes, k, out + nout)
                nout += k
                k = 0
                if i >= end:
                    break
            if p[i] == b'\n' or p[i] == b'\r':
                i += 1
                continue
            if p[i] == b'#':  # a comment line
                while i < end and p[i] != b'\n':
                    i += 1
                continue
            # subject
            if p[i] == b'<':
                j = _iri(p, i, end)
            elif p[i] == b'_':
                j = _blank(p, i, end)
            else:
                return None
            if j < 0 or j >= end or (p[j] != b' ' and p[j] != b'\t'):
                return None
            starts[k], lengths[k] = i, j - i
            i = _space(p, j, end)
            # predicate
            if i >= end or p[i] != b'<':
                return None
            j = _iri(p, i, end)
            if j < 0 or j >= end or (p[j] != b' ' and p[j] != b'\t'):
                return None
            starts[k + 1], lengths[k + 1] = i, j - i
            i = _space(p, j, end)
            # object
            if i >= end:
                return None
            if p[i] == b'<':
                j = _iri(p, i, end)
            elif p[i] == b'_':
                j = _blank(p, i, end)
            elif p[i] == b'"':
                j = _literal(p, i, end, &close)
            else:
                return None
            if j < 0:
                return None
            starts[k + 2], lengths[k + 2] = i, j - i
            i = _space(p, j, end)
            if i >= end or p[i] != b'.':
                return None
            i = _space(p, i + 1, end)
            if i < end and p[i] == b'\r':
                i += 1
            if i < end and p[i] != b'\n':
                return None
            i += 1
            for j in range(k, k + 3):
                if lengths[j] >= 1 << 30:
                    return None
                hashes[j] = _hash(p + starts[j], lengths[j])
            k += 3
        triples = array("q")
        triples.frombytes((<char *>out)[:nout * sizeof(int64_t)])
        return terms.texts, triples
    finally:
        free(out)
