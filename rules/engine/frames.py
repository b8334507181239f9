"""pandas DataFrames as facts: the shapes dotr reads, and nothing else (a DataFrame of another
shape is a :class:`FrameError`, never iterated as if it were a list of facts: that gives its
column names).

A frame of facts has one of these column sets (in any order), each row one fact:

- ``predicate``, ``arg1``, ``arg2``, ...: the fact ``predicate(arg1, arg2, ...)``; a fact with
  fewer arguments leaves the last columns empty (None or NaN);
- ``subject``, ``predicate``, ``object``: the RDF triple;
- ``fact``: the fact's text, ``"temp(s1, 25)"``.

Each cell is a term as ``rules.engine.inputs`` reads one (a dotr or rdflib term, a number, or a
string written as in a fact). A frame of a stream has a column ``t`` besides (integers; rows in
any order: they are taken in time order, each time point's in row order) and, optionally,
``stream`` (the stream's IRI, for C-SPARQL windows; empty: the default stream). pandas is
imported only when a frame is given.

>>> import pandas as pd
>>> frame = pd.DataFrame({"t": [2, 1, 2], "predicate": ["temp", "temp", "smoke"], "arg1": ["s1", "s2", "s1"],
...                       "arg2": [25, 30, None]})
>>> stream_of(frame)  # (pandas makes a column with an empty cell floats: 25.0 is the term 25)
[(1, [('temp', 's2', 30.0)], None), (2, [('temp', 's1', 25.0), ('smoke', 's1')], None)]
>>> facts_of(pd.DataFrame({"t": [1]}))
Traceback (most recent call last):
  ...
dotr.rules.lang.errors.FrameError: a DataFrame of facts with the columns ['t']: ...
"""

from __future__ import annotations

import numbers
import re
from typing import Any, Iterable

from dotr.rules.lang.errors import FrameError

from .times import check_time

_ARG = re.compile(r"arg([1-9][0-9]*)")

SHAPES = ("predicate, arg1, arg2, ... (a fact per row)", "subject, predicate, object (a triple per row)",
          "fact (a fact's text per row)")


def is_frame(value: object) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas)."""
    kind = type(value)
    return kind.__name__ == "DataFrame" and kind.__module__.split(".")[0] == "pandas"


def facts_of(facts: Any) -> Iterable:
    """The facts of a frame without a ``t`` column (each row's, as a tuple or text), or
    ``facts`` itself when it is no frame."""
    if not is_frame(facts):
        return facts
    columns = [str(c) for c in facts.columns]
    if "t" in columns or "stream" in columns:
        raise FrameError(f"a DataFrame of facts with the columns {columns}: a t or stream column belongs to a "
                         "stream (give it where a stream is read: Reasoner.run); here, " + _shapes())
    return _rows(facts, columns)


def stream_of(frame: Any) -> list[tuple[int, list, str | None]]:
    """A frame with a ``t`` column as the stream ``[(t, facts, stream), ...]`` in time order."""
    columns = [str(c) for c in frame.columns]
    if "t" not in columns:
        raise FrameError(f"a DataFrame of a stream with the columns {columns}: it needs a t column (the time "
                         "points), and " + _shapes())
    rest = [c for c in columns if c not in ("t", "stream")]
    facts = _rows(frame[rest], rest)
    times = [check_time(t, "t") for t in _cells(frame["t"])]
    streams = _cells(frame["stream"]) if "stream" in columns else [None] * len(times)
    by_time: dict[tuple, list] = {}
    for t, stream, fact in zip(times, streams, facts):
        by_time.setdefault((t, stream), []).append(fact)
    order = {key: n for n, key in enumerate(by_time)}
    return [(t, items, stream) for (t, stream), items in sorted(by_time.items(), key=lambda kv: (kv[0][0], order[kv[0]]))]


def _shapes() -> str:
    return "the columns are one of: " + "; ".join(SHAPES) + " (docs/api.md, \"Objects in and out\")"


def _rows(frame: Any, columns: list[str]) -> list:
    """Each row's fact: a tuple ``(predicate, args...)``, or the text."""
    names = set(columns)
    if names == {"fact"}:
        texts = _cells(frame[frame.columns[columns.index("fact")]])
        for n, text in enumerate(texts):
            if type(text) is not str:
                raise FrameError(f"row {n} of the DataFrame: the fact column holds a fact's text, not {text!r}")
        return texts
    if names == {"subject", "predicate", "object"}:
        s, p, o = (_cells(frame[frame.columns[columns.index(c)]]) for c in ("subject", "predicate", "object"))
        for n, triple in enumerate(zip(s, p, o)):
            if any(_missing(x) for x in triple):
                raise FrameError(f"row {n} of the DataFrame: a triple without a subject, predicate or object")
        return [(pred, subj, obj) for subj, pred, obj in zip(s, p, o)]
    args = sorted((int(m[1]), c) for c in columns if (m := _ARG.fullmatch(c)))
    if "predicate" in names and names == {"predicate", *(c for _, c in args)} \
            and [n for n, _ in args] == list(range(1, len(args) + 1)):
        preds = _cells(frame[frame.columns[columns.index("predicate")]])
        values = [_cells(frame[frame.columns[columns.index(c)]]) for _, c in args]
        out = []
        for n, pred in enumerate(preds):
            if _missing(pred):
                raise FrameError(f"row {n} of the DataFrame: no predicate")
            row = [column[n] for column in values]
            while row and _missing(row[-1]):
                row.pop()
            if any(_missing(x) for x in row):
                raise FrameError(f"row {n} of the DataFrame: an empty argument before a given one ({row!r})")
            out.append((pred, *row))
        return out
    raise FrameError(f"a DataFrame of facts with the columns {columns}: " + _shapes())


def _cells(series: Any) -> list:
    """A column's values as Python objects (numpy numbers as Python numbers)."""
    return [x.item() if isinstance(x, numbers.Number) and hasattr(x, "item") else x for x in series.tolist()]


def _missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return value != value  # NaN
    return type(value).__name__ in ("NAType", "NaTType")
