"""The input formats, in one registry: each format's name (``--input-format``), the extensions
that choose it under ``auto``, and its reader (lines in, records or the :class:`InputError` of a
bad one out). ``dotr run``, ``dotr explain`` and the Spark job read through it; adding a format
is a reader and one entry here.

>>> format_of("stream.trig").name, format_of("s.txt").name, format_of("readings.csv").name
('trig', 'laserpp', 'csv')
>>> format_of("-").name, format_of("data.csv", "jsonl").name
('jsonl', 'jsonl')
>>> [(r.t, r.facts) for r in FORMATS["laserpp"].read(["0 2\\n", "1 : p(a)\\n"], Reading())]
[(1, ['p(a)'])]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator


Items = Iterator[Any]  # (``pipeline.io.Record`` or the InputError of a bad record)


@dataclass(frozen=True)
class Reading:
    """What a reader may need besides the lines: the program's prefixes (for fact texts), the
    number of the first line given, a CSV file's mapping and its replay pace."""

    prefixes: dict[str, str] = field(default_factory=dict)
    first_line: int = 1
    mapping: Any = None
    replay: float = 0.0


# (the readers are imported when a stream is read: ``dotr check`` and ``--help`` need only the names)
def _read_jsonl(lines: Iterable[str], how: Reading) -> Items:
    from ..io import read_jsonl

    return read_jsonl(lines, first_line=how.first_line, prefixes=how.prefixes)


def _read_trig(lines: Iterable[str], how: Reading) -> Items:
    from ..io import read_trig

    return read_trig("".join(lines))


def _read_laserpp(lines: Iterable[str], how: Reading) -> Items:
    from ..io import read_laserpp

    return read_laserpp(lines, first_line=how.first_line, prefixes=how.prefixes)


def _read_csv(lines: Iterable[str], how: Reading) -> Items:
    from .csv import read_csv

    return read_csv(lines, how.mapping, first_line=how.first_line, replay=how.replay)


@dataclass(frozen=True)
class InputFormat:
    name: str
    extensions: tuple[str, ...]
    read: Callable[[Iterable[str], Reading], Items]
    #: the Spark job reads it (a CSV file's mapping is read by the embedded run only)
    spark: bool = True


FORMATS: dict[str, InputFormat] = {f.name: f for f in (
    InputFormat("jsonl", (".jsonl", ".json", ".ndjson"), _read_jsonl),
    InputFormat("trig", (".trig",), _read_trig),
    InputFormat("laserpp", (".txt",), _read_laserpp),
    InputFormat("csv", (".csv",), _read_csv, spark=False),
)}


def format_of(location: str, given: str = "auto") -> InputFormat:
    """The format ``given`` (``--input-format``), or under ``auto`` the one ``location``'s
    extension names (JSON Lines for any other, and for standard input)."""
    if given != "auto":
        return FORMATS[given]
    lower = location.lower()
    return next((f for f in FORMATS.values() if lower.endswith(f.extensions)), FORMATS["jsonl"])


__all__ = ["FORMATS", "InputFormat", "Reading", "format_of"]
