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
        if self.readable is not None:
            record = self.readable.record(record)
        changes = result.changes if removed is None else None
        line = f'{{"t": {json.dumps(result.t)}, "facts": {self._facts.array(facts, changes)}'
        if removed is not None:
            line += f', "removed": {self._facts.array(removed)}'
        rest = json.dumps(record, ensure_ascii=False)
        self.out.write(f"{line}, {rest[1:]}\n" if record else line + "}\n")
