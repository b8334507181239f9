"""The Spark job's log of background changes (docs/cli.md, "Background changes").

The enrich step evaluates the time points of a micro-batch apart, on Python workers that keep
the background between micro-batches; a record changing the background at T must reach every
one of them, for every time point from T on, in this micro-batch and the later ones. Within a
micro-batch, every enrich task gets a copy of each such record (the job spreads them over the
partitions). Across micro-batches, this log does: the conclude step of key group 0, which decides
which records are late, writes each change it made, and at the end of every micro-batch the
last time point evaluated. The enrich step of the next micro-batch reads both.

A micro-batch that failed half way and is run again finds what its first attempt wrote: a change
logged for a time point after the last one evaluated before the micro-batch was never committed
(it is the attempt's own, and comes again with the records), and an ``evaluated`` entry naming
one of the micro-batch's own change records is the attempt's (its ``before`` is the time
evaluated before the micro-batch). Spark runs one micro-batch at a time, so nothing else writes.

The directory must be one the driver and every executor see (any directory on one machine; a
shared mount on a cluster), kept with the checkpoint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from dotr.ontology.convert import from_rdflib
from dotr.ontology.turtle import TokenTriple
from dotr.rules.lang.ir import Atom, Iri, Num

from .. import state_file

#: the kind of the log's state files (docs/cli.md, "State files")
KIND = "background-change"


def local_path(path: str) -> str:
    """The local file of a ``file:`` path as Spark gives it (not URL-encoded)."""
    return path[7:] if path.startswith("file://") else path[5:] if path.startswith("file:") else path


#: per log directory, the change files read in this process: name -> (modification time, entry)
_READ: dict[str, dict[str, tuple[int, tuple]]] = {}

#: a change record's identity: (source file, line, n), n telling apart the changes of a TriG file
RecordId = tuple[str, int, int]


class ChangeLog:
    """The changes a job made, one file per time point, and what it had evaluated.

    >>> import tempfile
    >>> log = ChangeLog(tempfile.mkdtemp())
    >>> log.evaluated_before({("a.jsonl", 3, 0)}) is None  # nothing evaluated yet
    True
    >>> log.record(5, ["p(a)"], [], [("a.jsonl", 3, 0)])
    >>> log.close_batch(7, None, [("a.jsonl", 3, 0)])
    >>> log.evaluated_before({("a.jsonl", 3, 0)}) is None  # the record's own micro-batch, run again
    True
    >>> log.evaluated_before(set()), log.changes(7)
    (7, [(5, ['p(a)'], [], (('a.jsonl', 3, 0),))])
    """

    def __init__(self, path: str | Path):
        self.path = Path(local_path(str(path)))
        self.path.mkdir(parents=True, exist_ok=True)

    def evaluated_before(self, ids: set[RecordId]) -> int | None:
        """The last time point evaluated before the micro-batch whose change records are ``ids``
        (None: none)."""
        try:
            entry = json.loads((self.path / "evaluated.json").read_text())
        except FileNotFoundError:
            return None
        if any(tuple(i) in ids for i in entry["changes"]):  # written by an attempt of this micro-batch
            return entry["before"]
        return entry["last_t"]

    def changes(self, before: int | None) -> list[tuple[int, list, list, tuple[RecordId, ...]]]:
        """The changes made at the time points up to ``before``, in time order:
        ``(t, add, remove, record ids)``. (Each file is read once per process.)"""
        if before is None:
            return []
        cache = _READ.setdefault(str(self.path), {})
        out = []
        with os.scandir(self.path) as entries:
            for entry in entries:
                if not (entry.name.startswith("change.") and entry.name.endswith(".dotr")):
                    continue
                t = int(entry.name.split(".")[1])
                if t > before:
                    continue
                stamp = entry.stat().st_mtime_ns
                cached = cache.get(entry.name)
                if cached is None or cached[0] != stamp:
                    cached = cache[entry.name] = (stamp, _entry(state_file.read(entry.path, KIND)[1]))
                out.append(cached[1])
        return sorted(out, key=lambda change: change[0])

    def record(self, t: int, add: list, remove: list, ids: list[RecordId]) -> None:
        """The change made at ``t`` (by the records ``ids``)."""
        self._write(f"change.{t}.dotr", state_file.encode(KIND, (t, [_plain(f) for f in add],
                                                                  [_plain(f) for f in remove], tuple(map(tuple, ids)))))

    def close_batch(self, last_t: int | None, before: int | None, ids: list[RecordId]) -> None:
        """A micro-batch evaluated up to ``last_t`` (``before`` it: up to ``before``); ``ids``:
        its change records."""
        self._write("evaluated.json", json.dumps({"last_t": last_t, "before": before,
                                                  "changes": [list(i) for i in ids]}).encode())

    def _write(self, name: str, data: bytes) -> None:
        part = self.path / f".{name}.part"
        part.write_bytes(data)
        os.replace(part, self.path / name)


def _entry(data: tuple) -> tuple:
    """A logged change as :meth:`ChangeLog.changes` gives it, from its state file (every list
    read back as a tuple): ``(t, add, remove, record ids)``."""
    t, add, remove, ids = data
    return t, [_fact(f) for f in add], [_fact(f) for f in remove], tuple(map(tuple, ids))


def _plain(fact) -> str | tuple:
    """A background fact as a state file holds it: a fact string as it is, any other form (a
    ground atom, an rdflib triple, a Turtle reader's triple of term texts) as the tuple of its
    predicate's and arguments' terms.

    >>> _fact(_plain(TokenTriple(("<http://a>", "<http://p>", "3"))))
    Atom(pred=Iri(value='http://p'), args=(Iri(value='http://a'), Num(value=3)))
    """
    if isinstance(fact, str):
        return fact
    if isinstance(fact, Atom):
        return (fact.pred, *fact.args)
    if type(fact) is TokenTriple:
        s, p, o = (Iri(token[1:-1]) if token[0] == "<" else Num(int(token)) for token in fact)
    else:  # an rdflib triple
        s, p, o = map(from_rdflib, fact)
    return p, s, o


def _fact(plain: str | tuple) -> str | Atom:
    return plain if isinstance(plain, str) else Atom(plain[0], tuple(plain[1:]))
