"""A program run the ways the pipeline's tests compare: through ``dotr run`` on files
(``run_text``), and on the embedded Reasoner over JSON Lines (``embedded``)."""

import json
import random
import subprocess
import sys
from itertools import groupby
from pathlib import Path

from dotr.pipeline.cli import main
from dotr.pipeline.io import BackgroundChange, read_jsonl
from dotr.pipeline.reasoner import Reasoner
from dotr.rules import InputError
from tests.strategies.composition import PREFIXES

ROOT = Path(__file__).parents[2]
#: dotr run as a process
DOTR = [sys.executable, "-m", "dotr", "run", "-q"]


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


def finish_after_kills(args: list[str], rnd: random.Random, output: Path, checkpoint: Path, seed: int,
                       kills_wanted: int = 10, cwd: Path = ROOT) -> None:
    """Run ``args`` (a ``dotr run`` with ``--checkpoint``) and kill it with -9 after a random
    0.3-1.6 s, ``kills_wanted`` times (a run that finished first starts over), then run it to
    the end."""
    kills = 0
    for _ in range(4 * kills_wanted):
        proc = subprocess.Popen(args, cwd=cwd, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=rnd.uniform(0.3, 1.6))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            kills += 1
            if kills >= kills_wanted:
                break
            continue
        assert proc.returncode == 0, (seed, proc.stderr.read())
        # finished before the kill: start over, so that enough kills land in runs
        for path in (output, checkpoint / "state.dotr"):
            path.unlink(missing_ok=True)
    assert kills >= kills_wanted, seed
    finish = subprocess.run(args, cwd=cwd, capture_output=True, text=True)  # the same command, left to finish
    assert finish.returncode == 0, (seed, finish.stderr)
