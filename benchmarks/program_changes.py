"""A program change in the stream, through ``dotr run`` as a user runs it: what the change costs
against stopping and starting over with the new program.

The background is the LUBM-like ontology of ``dotr.examples.workloads.lubm_like``
(``--background`` triples, as N-Triples) under ``@profile rdfs``; the stream is ``--ticks`` time
points of 20 readings of its entities (``--distinct``: of 20 new entities each, with new values:
every reading brings new terms). The old program keeps the readings of a ``--window``-tick window
(default 20: the history kept) and has two rules of the ontological stage, one over the
background (``:linked``), one over the stream (``:Busy``); the new one adds a temporal rule over
half of the window. Five commands,
whole-process CPU (user + system), run in turn ``--pairs`` times (median and range of each):

- *no change*: the old program over the whole stream (the yardstick);
- *change*: the stream with ``{"t": T, "program": "new.dotr"}`` at its middle (the new program
  takes the running ontological stage over: its ontological part is the old one's);
- *change, rules changed*: the same change to the new program with its two ontological rules
  changed (another property, another threshold: the stage's rules changed in place, by DRed);
- *change, ontology named*: the same as *change* with ``"ontology": ["bg.nt"]`` in the record
  (the background files read again and materialised under the new program);
- *restart*: the old program over the records before T, then the new one, started anew, over the
  rest (two processes: what a user does without program changes; the new program's windows
  start empty).

*change - no change* is what the change costs, *restart - no change* what starting over costs.
In process, the change's parts: building the new program's reasoner on the loaded background (its
materialisation) and evaluating the kept history without output; and the change on the running
stage, both together, without and with the rules changed (``pipeline.swap``).

    python benchmarks/program_changes.py [--background 100000] [--ticks 2000] [--pairs 5] [--window 20]
                                         [--distinct]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dotr.examples.workloads.lubm_like import EX, triples  # noqa: E402
from benchmarks.background import measured  # noqa: E402
from benchmarks.peers.common import dotr_command  # noqa: E402

OLD = "@prefix : <{ex}> .\n@profile rdfs .\nrecent(X) :- [{w}] <> :reading(X, V) .\n"
NEW = "busy(X) :- [{h}] <> :reading(X, V), [{h}] <> :reading(X, W), V != W .\n"
#: the rules of the ontological stage, over the background and over the stream, with their
#: property and threshold
RULES = ":linked(X, Y) :- :{p}(X, Y), :partOf(Y, Z) .\n:Busy(X) :- :reading(X, V), V > {v} .\n"


def cpu(cmds: list[list[str]]) -> float:
    """CPU seconds (user + system) of the commands run one after the other, each to its end."""
    return sum(measured(cmd)[0] for cmd in cmds)


def records(ticks: int, distinct: bool) -> list[str]:
    out = []
    for t in range(ticks):
        nt = " ".join(f"<{EX}n{t}_{i}> <{EX}reading> {t * 20 + i} ." if distinct else
                      f"<{EX}e{(t * 7 + i) % 1000}> <{EX}reading> {(t + i) % 97} ." for i in range(20))
        out.append(json.dumps({"t": t, "turtle": nt}))
    return out


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--background", type=int, default=100_000)
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--distinct", action="store_true", help="every reading of new entities and values")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        d = Path(folder)
        (d / "bg.nt").write_text("".join(f"<{s}> <{p}> <{o}> .\n" for s, p, o in triples(args.background)))
        old = OLD.format(ex=EX, w=args.window)
        rules = RULES.format(p="p0_0", v=90)
        (d / "old.dotr").write_text(old + rules)
        (d / "new.dotr").write_text(old + rules + NEW.format(h=args.window // 2))
        (d / "rules.dotr").write_text(old + RULES.format(p="p1_0", v=80) + NEW.format(h=args.window // 2))
        change_t = args.ticks // 2
        lines = records(args.ticks, args.distinct)
        (d / "whole.jsonl").write_text("\n".join(lines) + "\n")
        for name, program, change in (("change", "new", {}), ("rules", "rules", {}),
                                      ("named", "new", {"ontology": [str(d / "bg.nt")]})):
            (d / f"{name}.jsonl").write_text("\n".join(lines[:change_t] + [json.dumps(
                {"t": change_t, "program": str(d / f"{program}.dotr"), **change})] + lines[change_t:]) + "\n")
        (d / "first.jsonl").write_text("\n".join(lines[:change_t]) + "\n")
        (d / "second.jsonl").write_text("\n".join(lines[change_t:]) + "\n")

        def run(rules: str, stream: str) -> list[str]:
            return [*dotr_command(), "run", "-q", "--rules", str(d / rules), "--ontology", str(d / "bg.nt"),
                    "--input", str(d / stream), "--output", str(d / "out.jsonl")]

        sides = {"no change": [run("old.dotr", "whole.jsonl")], "change": [run("old.dotr", "change.jsonl")],
                 "change, rules changed": [run("old.dotr", "rules.jsonl")],
                 "change, ontology named": [run("old.dotr", "named.jsonl")],
                 "restart": [run("old.dotr", "first.jsonl"), run("new.dotr", "second.jsonl")]}
        figures: dict[str, list[float]] = {name: [] for name in sides}
        cpu(sides["change"])  # (a warm-up: the file system's caches)
        for _ in range(args.pairs):
            for name, cmds in sides.items():
                figures[name].append(cpu(cmds))
        base = figures["no change"]
        print(f"background {args.background:,} triples, {args.ticks:,} ticks of 20 readings"
              f"{' (all distinct)' if args.distinct else ''}, window {args.window}, change at {change_t:,}; "
              f"CPU s of the whole process(es), median (range) of {args.pairs}")
        for name, values in figures.items():
            extra = "" if name == "no change" else \
                f"; less no change: {summary([v - b for v, b in zip(values, base)])}"
            print(f"{name:>23}: {summary(values)}{extra}")
        print(in_process(d, change_t, lines))
    return 0


def in_process(d: Path, change_t: int, lines: list[str]) -> str:
    """The change's parts, timed in this process: the new reasoner built on the loaded background
    (what a change naming the ontology files does after reading them) or on the running stage,
    and the kept history evaluated without output."""
    from dotr.ontology.background import load_background
    from dotr.pipeline.io import read_jsonl
    from dotr.pipeline.reasoner import Reasoner
    from dotr.pipeline.swap import like, replay, swapped
    from dotr.rules import check

    background = load_background([d / "bg.nt"])
    clock = time.process_time

    def old() -> Reasoner:
        running = Reasoner(check(d / "old.dotr"), background)
        for record in read_jsonl(lines[:change_t]):
            running.step(record.t, record.facts)
        return running

    before, new = old(), check(d / "new.dotr")
    started = clock()
    built = like(before, new, background)
    building = clock() - started
    history = before.history.snapshot(before.dictionary)
    started = clock()
    replay(built, history, change_t)
    replayed = clock() - started
    taken = []
    for program in (new, check(d / "rules.dotr")):
        before = old()
        started = clock()
        swapped(before, program, background, change_t, running_background=True)
        taken.append(clock() - started)
    return (f"in process: the new reasoner {building:.2f} s CPU, the kept history ({len(history['points'])} "
            f"time points) evaluated {replayed:.2f} s CPU; the change on the running stage, both: {taken[0]:.2f} s "
            f"CPU, with its rules changed: {taken[1]:.2f} s CPU")


if __name__ == "__main__":
    sys.exit(main())
