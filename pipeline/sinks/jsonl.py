"""The JSON Lines output format (``--format jsonl``, the default): one JSON object per time point,
readable with the rule file's prefixes (:mod:`pipeline.printing`) or, with ``full_iris``, in
the canonical form (docs/cli.md, "Output").

>>> import io
>>> from dotr.pipeline.records import Result
>>> out = io.StringIO()
>>> JsonlWriter(out, {"": "http://ex.org/"}, False).write(Result(3, ["<http://ex.org/hot>(<http://ex.org/r1>)"]))
>>> out.getvalue()
'{"t": 3, "facts": [":hot(:r1)"]}\\n'
"""

from __future__ import annotations

import json
from typing import TextIO

from ..printing import EncodedFacts, Readable
from ..records import Result


class JsonlWriter:
    """Writes each time point's :class:`Result` as one line: the record ``json.dumps`` would
    write, its facts encoded once each (:class:`~pipeline.printing.EncodedFacts`)."""

    def __init__(self, out: TextIO, prefixes: dict[str, str], full_iris: bool):
        self.out = out
        self.readable = None if full_iris else Readable(prefixes)
        self._facts = EncodedFacts(self.readable)

    def write(self, result: Result) -> None:
        record = result.to_json()
        facts, removed = record.pop("facts"), record.pop("removed", None)
        del record["t"]
        readable = self.readable
        graphs = record.pop("graphs", None) if readable is not None else None
        if readable is not None:
            record = readable.record(record)
        changes = result.changes if removed is None else None
        parts = [f'{{"t": {json.dumps(result.t)}, "facts": {self._facts.array(facts, changes)}']
        if removed is not None:
            parts.append(f'"removed": {self._facts.array(removed)}')
        if graphs:  # (after "at", before the rest, as json.dumps of the whole record places it)
            if "at" in record:
                parts.append(json.dumps({"at": record.pop("at")}, ensure_ascii=False)[1:-1])
            parts.append(f'"graphs": [{", ".join(map(readable.graph_json, graphs))}]')
        if record:
            parts.append(json.dumps(record, ensure_ascii=False)[1:-1])
        self.out.write(", ".join(parts) + "}\n")
