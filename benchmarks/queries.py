"""Query engines against naive recomputation, in the same run.

EP-SPARQL (``bench_epsparql_*``): stock prices of a few companies, one price per company per
time point; the paper's drop-then-rise query (SEQ of three groups with a FILTER and a duration
bound) and the down-rating query (OPTIONALSEQ). The incremental engine (``temporal.epsparql``)
against recomputing every time point's answers from scratch with the literal interval semantics
(``tests/temporal/epsparql_reference.py``) over the time points within the horizon (which gives
the same answers). Group solutions are computed once per time point for both and not timed.
Reported: input triples per second of each, and the ratio.

    python benchmarks/queries.py [--points 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ontology.events import compile_select  # noqa: E402
from rules import ir, parse  # noqa: E402
from rules.epsparql import parse_epsparql  # noqa: E402
from rules.store import Store  # noqa: E402
from rules.terms import TermDictionary  # noqa: E402
from temporal.epsparql import EpSparqlEngine  # noqa: E402
from tests.temporal.epsparql_reference import Reference  # noqa: E402

EX = "http://ex.org/"
EPSPARQL_QUERIES = {
    "seq": "select ?c where { ?c :price ?p1 } seq { ?c :price ?p2 } seq { ?c :price ?p3 } "
           "filter(?p2 < ?p1 * 0.9 && ?p3 > ?p1 && getDURATION() < {h})",
    "optionalseq": "select ?c ?agency where { ?c :downratedBy ?agency } optionalseq "
                   "{ { ?c :price ?p1 } seq { ?c :price ?p2 } filter(?p2 < ?p1 * 0.8) } filter(getDURATION() < {h})",
}


def _stream(points: int, companies: int, seed: int = 1):
    rng = random.Random(seed)
    prices = {c: 100 for c in range(companies)}
    for t in range(points):
        facts = []
        for c in range(companies):
            prices[c] = max(1, prices[c] + rng.randint(-15, 15))
            facts.append((f"c{c}", "price", prices[c]))
            if rng.random() < 0.05:
                facts.append((f"c{c}", "downratedBy", f"agency{rng.randint(0, 2)}"))
        yield t, facts


def _epsparql(query: str, points: int, companies: int, horizon: int) -> dict:
    text = EPSPARQL_QUERIES[query].replace("{h}", str(horizon + 1))
    program = parse(f"@prefix : <{EX}> .\nquery Q := {text} .")
    d = TermDictionary()
    engine = EpSparqlEngine.from_program(program, d)
    groups = [compile_select(g, program.prefixes, d) for g in engine.groups]
    parsed, _ = parse_epsparql("Q", program.queries[0].query, program.prefixes)
    reference = Reference(parsed, program.prefixes, d, parsed.horizon)
    window: dict[int, list] = {}
    inputs = engine_time = naive_time = 0.0
    answers = [0, 0]
    for t, facts in _stream(points, companies):
        store = Store()
        for s, p, o in facts:
            obj = d.number(o) if isinstance(o, int) else d.intern(ir.Name(o))
            store.add((d.intern(ir.Iri(EX + p)), 2), (d.intern(ir.Name(s)), obj), t)
        sols = [g.run(store) for g in groups]
        inputs += len(facts)
        start = time.perf_counter()
        out = engine.step(t, sols)
        engine_time += time.perf_counter() - start
        answers[0] += len(out.answers["Q"])
        window[t] = sols
        window.pop(t - horizon - 1, None)
        start = time.perf_counter()
        answers[1] += len(reference.answers(window).get(t, []))
        naive_time += time.perf_counter() - start
    assert answers[0] == answers[1], answers
    return {"bench": f"epsparql_{query}", "points": points, "companies": companies, "horizon": horizon,
            "inputs": int(inputs), "answers": answers[0],
            "engine_events_per_s": round(inputs / engine_time), "naive_events_per_s": round(inputs / naive_time),
            "speedup": round(naive_time / engine_time, 1)}


def bench_epsparql_seq(points: int = 200, companies: int = 3, horizon: int = 10) -> dict:
    return _epsparql("seq", points, companies, horizon)


def bench_epsparql_optionalseq(points: int = 200, companies: int = 3, horizon: int = 10) -> dict:
    return _epsparql("optionalseq", points, companies, horizon)


def show(row: dict) -> None:
    print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--json", default="benchmarks/results/queries.json")
    args = ap.parse_args(argv)
    rows = []
    for bench in (bench_epsparql_seq, bench_epsparql_optionalseq):
        for horizon in (5, 10, 20):
            rows.append(bench(points=args.points, horizon=horizon))
            show(rows[-1])
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
