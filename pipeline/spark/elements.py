"""The Spark job's first step: an input file's records as ``ELEMENTS`` rows (:func:`split_file`),
checked as the embedded run checks its input, with what the other steps need of a row (its time,
the text of a record it carries as a span, a reject's text).

>>> rows = list(split_file("s.jsonl", "auto", b'{"t": 1, "facts": ["p(a)"]}\\n{"t": 0}\\n'))
>>> [(line, t, kind) for _, line, t, kind, _ in rows]
[(1, 1, 'jsonl'), (2, 0, 'error')]
>>> time_of(b'{"t": 12, "facts": []}'), time_of('{"facts": [], "t": 3}'), time_of("4 : p(a)"), time_of("nonsense")
(12, 3, 4, None)
"""

from __future__ import annotations

import json
import mmap
import os
import pickle
import re
import struct
from typing import Iterable, Iterator

from dotr.rules import InputError

from ..files import MAX_RECORD_SIZE, TooLong
from ..io import Record, read_jsonl, taken
from ..sources.formats import FORMATS, Reading, format_of
from .changes import local_path

#: the rows of the split step: a record's file, line, time, format and payload
ELEMENTS = "source string, line long, t long, format string, payload binary"


def split_file(source: str, fmt: str, content: bytes | None = None, limit: int = MAX_RECORD_SIZE,
               max_gap: int = 0, prefixes: dict[str, str] | None = None) -> Iterator[tuple]:
    """The records of one input file as ``ELEMENTS`` rows. ``content`` is the file as Spark read
    it, or None for a local file (``file:`` path), read here: its JSON Lines records then travel as
    *spans* (``format`` ``span``, ``payload`` the record's offset and length in the file, read by
    the enrich step), so that their text crosses neither into the JVM nor through the shuffle. A
    local file is mapped, not read whole. The file's records are taken as the embedded run takes
    its input's (:func:`~pipeline.io.taken`): a record longer than ``limit`` bytes, not UTF-8,
    malformed, more than ``max_gap`` after the previous, or earlier than a record before it is
    rejected with the same message, so that both reject the same records."""
    fmt = format_of(source, fmt).name
    try:
        if content is not None:
            data = content
        else:
            with open(local_path(source), "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(f.fileno()).st_size else b""
    except OSError as err:
        yield source, 0, None, "error", reject_row(source, None, f"cannot read the file: {err}", None)
        return
    bad: list[InputError] = []
    try:
        if fmt != "jsonl":  # (parsed here)
            text = bytes(data).decode("utf-8", errors="replace")
            items = FORMATS[fmt].read(text.splitlines(keepends=True), Reading(prefixes))
            for number, item in enumerate(taken(items, bad.append, max_gap)):
                yield from _rejected(source, bad)
                if item.background:
                    yield source, item.line, item.t, "change", pickle.dumps((item.stream, item.facts, item.background,
                                                                              number))
                else:
                    yield source, item.line, item.t, "pickle", pickle.dumps((item.stream, item.facts))
            yield from _rejected(source, bad)
            return
        spans: dict[int, tuple[int, int]] = {}  # line -> (start, end), of the lines read and not yet taken
        for record in taken(read_jsonl(_lines(data, limit, spans), prefixes=prefixes), bad.append, max_gap):
            yield from _rejected(source, bad, spans)
            start, end = spans.pop(record.line)
            if record.program is not None:  # (docs/language.md: the embedded run changes programs)
                yield source, record.line, record.t, "error", reject_row(
                    source, record.line, PROGRAM_ON_SPARK, bytes(data[start:end]).decode("utf-8", "replace"))
            elif record.background:
                yield change_or(source, record.line, record.t, bytes(data[start:end]))
            elif content is None:
                yield source, record.line, record.t, "span", _SPAN.pack(start, end - start)
            else:
                yield source, record.line, record.t, "jsonl", bytes(data[start:end])
        yield from _rejected(source, bad, spans)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


#: why a record changing the program is rejected on Spark
PROGRAM_ON_SPARK = ('a record with "program" changes the program of an embedded run (dotr run without --engine '
                    'spark); the Spark job runs the program it started with')


def _lines(data, limit: int, spans: dict[int, tuple[int, int]]) -> Iterator[str]:
    """The lines of a JSON Lines file as :class:`~pipeline.files.InputLines` gives them (UTF-8,
    a byte that is not kept as a lone surrogate; a line longer than ``limit`` bytes as a
    :class:`~pipeline.files.TooLong`), each one's span put in ``spans``."""
    start, number, size = 0, 1, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        if 0 < limit < end - start:
            line = TooLong(bytes(data[start:start + 200]).decode("utf-8", "replace"))
            line.limit = limit
        else:
            line = bytes(data[start:end]).decode("utf-8", "surrogateescape")
        if line.strip():
            spans[number] = (start, end)
        yield line
        start, number = end + 1, number + 1


def _rejected(source: str, bad: list[InputError], spans: dict | None = None) -> Iterator[tuple]:
    """The ``ELEMENTS`` rows of the records rejected so far (``bad``, emptied), each at its time
    when it gives one (its micro-batch's rejects are those of its time points)."""
    for err in bad:
        if spans is not None:
            spans.pop(err.line, None)
        raw = getattr(err, "raw", None)
        yield source, err.line, time_of(raw) if raw else None, "error", reject_row(source, err.line, err, raw)
    bad.clear()


def change_or(source: str, line: int, t: int | None, raw: bytes) -> tuple:
    """The ``ELEMENTS`` row of a JSON Lines record that may change the background: if it does, it
    is parsed here (format ``change``, the record pickled: every enrich task gets a copy). A
    change's payload is ``(stream, facts, change, n)``, n telling apart the changes a TriG file
    gives without a line."""
    record = next(read_jsonl([raw.decode("utf-8", errors="replace")], line, parse=False), None)
    if isinstance(record, Record) and record.background:
        return source, line, record.t, "change", pickle.dumps((record.stream, record.facts, record.background, 0))
    return source, line, t, "jsonl", raw


_SPAN = struct.Struct("<qq")  # a record's (offset, length) in its file
_T = re.compile(rb'\s*\{\s*"t"\s*:\s*(-?[0-9]{1,18})\s*[,}]')  # a record opening with its time
_LASERPP_T = re.compile(rb"\s*(-?[0-9]{1,18})\s*:")  # a Laser++ element's time


def time_of(raw: bytes | str) -> int | None:
    """The time of a JSON Lines record, or of a Laser++ line ``t : ...`` (None if it has no
    integer time): read from its opening when ``"t"`` comes first (the enrich step checks it
    against the parsed record)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    opening = _T.match(raw)
    if opening is not None:
        return int(opening.group(1))
    if not raw.lstrip().startswith(b"{"):
        element = _LASERPP_T.match(raw)
        return int(element.group(1)) if element is not None else None
    try:
        t = json.loads(raw).get("t")
    except (ValueError, AttributeError):
        return None
    return t if type(t) is int and -2 ** 63 <= t < 2 ** 63 else None


def read_spans(rows: Iterable[tuple]) -> Iterator[tuple]:
    """``rows`` with every span replaced by its record, read from its file (one open per file)."""
    files: dict[str, object] = {}
    try:
        for row in rows:
            source, line, t, fmt, payload = row[:5]
            if fmt == "span":
                try:
                    f = files.get(source) or files.setdefault(source, open(local_path(source), "rb"))
                    start, size = _SPAN.unpack(payload)
                    f.seek(start)
                    row = (source, line, t, "jsonl", f.read(size), *row[5:])
                except OSError as err:
                    row = (source, line, t, "error", reject_row(source, line, f"cannot read the file: {err}", None),
                           *row[5:])
            yield row
    finally:
        for f in files.values():
            f.close()


def reject_row(source: str, line: int | None, reason, record: str | None) -> bytes:
    reason = str(reason).split(": ", 1)[-1] if str(reason).startswith("line ") else str(reason)
    return json.dumps({"source": source, "line": line, "reason": reason, "record": record}).encode()


__all__ = ["ELEMENTS", "change_or", "read_spans", "reject_row", "split_file", "time_of"]
