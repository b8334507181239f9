"""A program run the ways the pipeline's tests compare: through ``dotr run`` on files
(``run_text``), and on the embedded Reasoner over JSON Lines (``embedded``)."""

import json
from itertools import groupby
from pathlib import Path

from dotr.pipeline.cli import main
from dotr.pipeline.io import BackgroundChange, read_jsonl
from dotr.pipeline.reasoner import Reasoner
from dotr.rules import InputError
from tests.strategies.composition import PREFIXES


def run_text(tmp: Path, rules: str, records: list[dict], turtle: str = PREFIXES, *options: str) -> list[dict]:
    (tmp / "rules.dotr").write_text(PREFIXES + rules)
    (tmp / "bg.ttl").write_text(turtle)
    (tmp / "stream.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp / "out.jsonl"
    code = main(["run", "-q", "--rules", str(tmp / "rules.dotr"), "--ontology", str(tmp / "bg.ttl"),
                 "--input", str(tmp / "stream.jsonl"), "--output", str(out), "--full-iris", *options])
    assert code == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def facts_by_time(records: list[dict]) -> dict[int, list[str]]:
    return {r["t"]: r["facts"] for r in records}


def embedded(checked, background, lines: list[str], **options) -> tuple[list[str], list[int]]:
    """The embedded reasoner's records (every time point) and the lines of changes it rejects."""
    reasoner = Reasoner(checked, background, **options)
    out, rejected = [], []
    for t, records in groupby(read_jsonl(lines, parse=False), key=lambda r: r.t):
        facts, change = {}, BackgroundChange()
        for record in records:
            facts.setdefault(record.stream, []).extend(record.facts)
            if record.background:
                change.update(record.background)
        out += [json.dumps(r.to_json(), ensure_ascii=False) for r in reasoner.between(t)]
        if change:
            try:
                reasoner.change_background(change.add, change.remove)
            except InputError:
                rejected.append(change.line)
        out.append(json.dumps(reasoner.step(t, facts).to_json(), ensure_ascii=False))
    return out, rejected
