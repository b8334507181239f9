"""DOTR's synthetic evaluation (Margara et al., "Efficient Temporal Reasoning on Streams of Events
with DOTR", ESWC 2018, section 5, with its defaults; the rule file and background of
``dotr.examples.workloads.dotr_paper``).

500 sensors on objects placed in 5 rooms; a Datalog rule derives each sensor's room; every input
graph is one triple ``:sensorK :read_valA v`` (20%, the terminators) or ``:sensorK :read_valB v``;
50 pattern rules ``from A and last B(room = A.room) within 30 s from A`` with a SPARQL FILTER;
10 extra Datalog rules and 10k extra background triples; 2,000 graphs 1 s apart. Reported: mean
and p99 latency per input graph, split as the paper's Table 1 does (knowledge update and
reasoning, event queries, pattern matching, output). Sweeps: sequence length 2-6 (last and
each), number of rules, background size.

    python benchmarks/patterns.py [--events 2000] [--sweeps] [--end-to-end [RECORDS]]

``--end-to-end`` also runs the default scenario as a user does: ``dotr run`` on the rule file
(each pattern with its own event declarations), the background as N-Triples and one JSON Lines
record of Turtle per graph; CPU time per graph, start-up apart; once with the same FILTER in
every event query, once with each pattern's own threshold (distinct event filters).

With ``--per-point N`` it also runs the workload of benchmarks/spark.py: time points of N sensor
readings (``--terminators``: the share of them that are terminators) through the embedded
pipeline's two steps, ``Reasoner.enrich`` and ``Reasoner.conclude``, and reports their median
time per time point, with the patterns sharing their matching (the engine's default) and with
every pattern matched on its own (``share=False``), in the same run.

    python benchmarks/patterns.py --per-point 1000 --terminators 0.2 [--points 60]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rdflib import Literal, URIRef  # noqa: E402

from dotr.examples.workloads.dotr_paper import EX, background, program  # noqa: E402
from dotr.ontology import OntologicalStage  # noqa: E402
from dotr.rules.engine.terms import format_term  # noqa: E402
from dotr.rules import check_text  # noqa: E402
from dotr.temporal.patterns import PatternEngine  # noqa: E402
from benchmarks.peers.common import dotr_command  # noqa: E402
from dotr.pipeline.reasoner import Reasoner# noqa: E402


def stream(events: int, length: int = 2, sensors: int = 500, seed: int = 7) -> list:
    rnd = random.Random(seed)
    preds = ["read_valA"] + [f"read_val{n}" for n in "BCDEF"[:length - 1]]
    out = []
    for i in range(events):
        pred = "read_valA" if rnd.random() < 0.2 else rnd.choice(preds[1:])
        out.append((i * 1000, [(URIRef(f"{EX}sensor{rnd.randrange(sensors)}"), URIRef(EX + pred),
                                Literal(rnd.randrange(100)))]))
    return out


def run(rules=50, length=2, selection="last", extra_bg=10_000, events=2_000) -> dict:
    stage = OntologicalStage(check_text(program(rules, length, selection)), background(extra_bg))
    patterns = PatternEngine(stage.program, stage.dictionary)
    parts = {"update_reasoning": [], "event_queries": [], "pattern_matching": [], "output": []}
    totals = []
    graphs = 0
    m = stage.materialiser
    gc.collect()
    for t, triples in stream(events, length):
        t0 = time.perf_counter()
        m.advance(t)
        m.add([(*stage.intern(f), t) for f in triples])
        m.evaluate_local(t)
        t1 = time.perf_counter()
        evs = stage.run_events()
        t2 = time.perf_counter()
        out = patterns.step(t, evs, interned=True)
        t3 = time.perf_counter()
        _ = sorted(" ".join(map(format_term, tr)) for match in out.matches for tr in match.graph)  # the output text
        graphs += len(out.matches)
        t4 = time.perf_counter()
        for key, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            parts[key].append(dt)
        totals.append(t4 - t0)
    totals.sort()
    return {"rules": rules, "length": length, "selection": selection, "background": extra_bg, "events": events,
            "mean_ms": statistics.mean(totals) * 1e3, "p99_ms": totals[int(len(totals) * 0.99) - 1] * 1e3,
            "matches": graphs, **{f"{k}_ms": statistics.mean(v) * 1e3 for k, v in parts.items()}}


def large_points(points: int, per_point: int, terminators: float, seed: int = 7) -> list:
    """Time points 1 s apart of ``per_point`` readings as fact strings (benchmarks/spark.py's)."""
    rnd = random.Random(seed)
    out = []
    for i in range(points):
        facts = []
        for _ in range(per_point):
            pred = "read_valA" if rnd.random() < terminators else "read_valB"
            facts.append(f"<{EX}{pred}>(<{EX}sensor{rnd.randrange(500)}>,{rnd.randrange(100)})")
        out.append((i * 1000, facts))
    return out


def run_points(per_point: int, terminators: float, points: int, share: bool = True) -> dict:
    """Median enrich and conclude time per time point (after the first 30 s: the window filling);
    ``digest``: of the output, to check that both modes agree."""
    reasoner = Reasoner(check_text(program()), background(10_000))
    if not share:
        reasoner.patterns = PatternEngine(reasoner.program, reasoner.dictionary, share=False)
    enrich, conclude, graphs = [], [], 0
    clock = time.process_time  # CPU time: other jobs on the machine do not count
    digest = hashlib.blake2b()
    gc.collect()
    for t, facts in large_points(points, per_point, terminators):
        t0 = clock()
        point = reasoner.enrich(t, facts)
        t1 = clock()
        result = reasoner.conclude(point)
        t2 = clock()
        if t >= 30_000 or points < 60:
            enrich.append(t1 - t0)
            conclude.append(t2 - t1)
        graphs += len(result.graphs)
        digest.update(json.dumps(result.to_json()).encode())
    return {"per_point": per_point, "terminators": terminators, "points": points, "share": share,
            "enrich_ms": statistics.median(enrich) * 1e3, "conclude_ms": statistics.median(conclude) * 1e3,
            "graphs_per_point": graphs / points, "digest": digest.hexdigest()[:16]}


def run_end_to_end(events: int = 2_000, own_events: bool = True, extra_bg: int = 10_000,
                   distinct_filters: bool = False, pairs: int = 3) -> dict:
    """The default scenario through ``dotr run`` as a user runs it: the rule file, the background
    as N-Triples, one JSON Lines record per graph (Turtle with a prefix line); CPU time of the
    whole process from reading the stream to the written output, and apart from it the start-up
    (the same command on an empty stream: imports, rules, background), the two in turn in each of
    ``pairs`` pairs: per graph, the median and range of the pairs' differences."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "rules.dotr").write_text(program(own_events=own_events, distinct_filters=distinct_filters))
        (tmp / "background.nt").write_text("".join(f"{s.n3()} {p.n3()} {o.n3()} .\n" for s, p, o in background(extra_bg)))
        records = [json.dumps({"t": t, "turtle": f"@prefix : <{EX}> .\n" + "".join(
            f":{s[len(EX):]} :{p[len(EX):]} {o} .\n" for s, p, o in triples)}) for t, triples in stream(events)]
        (tmp / "stream.jsonl").write_text("\n".join(records) + "\n")
        (tmp / "empty.jsonl").write_text("")

        def cpu(stream_file: str) -> tuple[float, str]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([*dotr_command(), "run", "--rules", str(tmp / "rules.dotr"),
                            "--ontology", str(tmp / "background.nt"), "--input", str(tmp / stream_file),
                            "--output", str(tmp / "out.jsonl"), "-q"], check=True, cwd=Path(__file__).parents[1])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime), (tmp / "out.jsonl").read_text()
        totals, startups = [], []
        for _ in range(pairs):
            total, out = cpu("stream.jsonl")
            totals.append(total)
            startups.append(cpu("empty.jsonl")[0])
    per_graph = [(total - startup) / events * 1e3 for total, startup in zip(totals, startups)]
    return {"events": events, "own_events": own_events, "distinct_filters": distinct_filters,
            "startup_s": statistics.median(startups), "total_s": statistics.median(totals),
            "per_graph_ms": statistics.median(per_graph), "per_graph_range": [min(per_graph), max(per_graph)],
            "graphs": sum(len(json.loads(line).get("graphs", [])) for line in out.splitlines())}


def show(row):
    print(f"rules {row['rules']:>5} len {row['length']} {row['selection']:<4} bg {row['background']:>8,}: "
          f"mean {row['mean_ms']:.3f} ms, p99 {row['p99_ms']:.3f} ms | update+reasoning "
          f"{row['update_reasoning_ms']:.3f}, events {row['event_queries_ms']:.3f}, patterns "
          f"{row['pattern_matching_ms']:.3f}, output {row['output_ms']:.3f} ms | matches {row['matches']}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--sweeps", action="store_true")
    ap.add_argument("--per-point", type=int, help="also run time points of this many readings")
    ap.add_argument("--terminators", type=float, default=0.2, help="with --per-point: share of terminators")
    ap.add_argument("--points", type=int, default=60, help="with --per-point: time points")
    ap.add_argument("--end-to-end", type=int, nargs="?", const=10_000, metavar="RECORDS",
                    help="also run the default scenario through dotr run (each pattern with its own events) on "
                         "RECORDS records (default 10,000: the process's CPU time less the start-up is a difference "
                         "of two noisy figures, which a longer stream outweighs)")
    ap.add_argument("--pairs", type=int, default=3, help="with --end-to-end: pairs of runs (the stream, then an "
                                                            "empty one)")
    ap.add_argument("--json", default="benchmarks/results/patterns.json")
    args = ap.parse_args(argv)
    rows = [run(events=args.events)]
    show(rows[0])
    if args.end_to_end:
        for distinct in (False, True):
            row = run_end_to_end(args.end_to_end, distinct_filters=distinct, pairs=args.pairs)
            rows.append(row)
            print(f"through dotr run ({args.end_to_end:,} one-triple Turtle records, 50 patterns with their own events, "
                  f"{'distinct' if distinct else 'identical'} event filters): {row['per_graph_ms']:.3f} ms per graph "
                  f"(CPU; {row['per_graph_range'][0]:.3f}-{row['per_graph_range'][1]:.3f}), start-up "
                  f"{row['startup_s']:.2f} s apart, {row['graphs']:,} graphs; the DOTR paper: 12.09 ms per graph",
                  flush=True)
    if args.per_point:
        shared, separate = (run_points(args.per_point, args.terminators, args.points, share) for share in (True, False))
        assert shared["digest"] == separate["digest"], "the two modes disagree"
        print(f"{args.per_point:,} readings per time point, {args.terminators:.1%} terminators "
              f"({shared['graphs_per_point']:,.0f} graphs per time point), median per time point: enrich "
              f"{shared['enrich_ms']:.2f} ms, conclude {shared['conclude_ms']:.2f} ms; with every pattern matched "
              f"on its own, conclude {separate['conclude_ms']:.2f} ms "
              f"({separate['conclude_ms'] / shared['conclude_ms']:.2f}x)", flush=True)
        rows += [shared, separate]
    if args.sweeps:
        for length in range(2, 7):
            for selection in ("last", "each"):
                rows.append(run(length=length, selection=selection, events=args.events))
                show(rows[-1])
        for rules in (1, 10, 100, 1000):
            rows.append(run(rules=rules, events=args.events))
            show(rows[-1])
        for bg in (1_000, 100_000, 1_000_000):
            rows.append(run(extra_bg=bg, events=args.events))
            show(rows[-1])
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
