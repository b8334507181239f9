"""Query engines, each against a peer or a naive mode in the same run.

1. EP-SPARQL (``bench_epsparql_*``): stock prices of a few companies, one price per company per
   time point; the paper's drop-then-rise query (SEQ of three groups with a FILTER and a duration
   bound) and the down-rating query (OPTIONALSEQ). The incremental engine (``temporal.epsparql``)
   against recomputing every time point's answers from scratch with the literal interval
   semantics (``tests/temporal/epsparql_reference.py``) over the time points within the horizon
   (which gives the same answers). Group solutions are computed once per time point for both and
   not timed. Reported: input triples per second of each, and the ratio.
2. C-SPARQL, ``bench_imars_*``: IMaRS's experiment (Barbieri et al., ESWC 2010, Section 5). Trees
   of transitive ``isIn`` triples; N of them are background, the others stream through a window
   of R steps; per step a fraction of N enters (and as much leaves). Maintenance time per step of
   the transitive closure: expiry tags (IMaRS, on the native store as the C-SPARQL engine
   maintains it; and on the dict store) against DRed (the window's triples retracted when they
   leave, Materialiser.retract) and against naive recomputation, in the same run; plus the whole
   C-SPARQL engine step (maintenance and a query).
3. C-SPARQL, ``bench_citybench_*``: CityBench-style Q1 (two congestion streams) and Q2 (congestion
   and weather) as C-SPARQL queries with [range 3 s step 1 s] on generated traffic and weather
   streams, against the DOTR-style pattern rules of the same queries run through the embedded
   pipeline (ontological stage + pattern engine), on the same input.

    python benchmarks/queries.py [--points 200] [--background 5000] [--seconds 30]
                                 [--skip epsparql imars citybench] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from rdflib import Literal, URIRef  # noqa: E402

from dotr.rules.engine.sparql.algebra import compile_select  # noqa: E402
from dotr.ontology.materialise import Materialiser  # noqa: E402
from dotr.pipeline.reasoner import Reasoner# noqa: E402
from dotr.rules import check_text, ir, parse  # noqa: E402
from dotr.rules.lang.queries.epsparql import parse_epsparql  # noqa: E402
from dotr.rules.lang.ir import Iri  # noqa: E402
from dotr.rules.engine.backends.dict_store import DictStore  # noqa: E402
from dotr.rules.engine.store import INF  # noqa: E402
from dotr.rules.engine.terms import TermDictionary  # noqa: E402
from dotr.ontology.csparql import CSparqlEngine  # noqa: E402
from dotr.temporal.epsparql import EpSparqlEngine  # noqa: E402
from tests.temporal.epsparql_reference import Reference  # noqa: E402

EX = "http://ex.org/"


# -------------------------------------------------------------------------------- EP-SPARQL

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
        store = DictStore()
        for s, p, o in facts:
            obj = d.number(o) if isinstance(o, int) else d.intern(ir.Name(o))
            store.add((d.intern(ir.Iri(EX + p)), 2), (d.intern(ir.Name(s)), obj), t)
        sols = [g.run(store) for g in groups]
        inputs += len(facts)
        start = time.perf_counter()
        out = engine.step(t, solutions=sols)
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


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


# ------------------------------------------------------------------------------ C-SPARQL: IMaRS

def isin_trees(edges: int, branching: int = 3, depth: int = 6, seed: int = 1) -> list[tuple[str, str]]:
    """``edges`` (child, parent) pairs forming trees of the given shape, shuffled."""
    pairs = []
    tree = 0
    while len(pairs) < edges:
        level = [f"t{tree}"]
        for d in range(depth):
            nxt = []
            for parent in level:
                for b in range(branching):
                    child = f"{parent}.{b}"
                    pairs.append((child, parent))
                    nxt.append(child)
            level = nxt
        tree += 1
    pairs = pairs[:edges]
    random.Random(seed).shuffle(pairs)
    return pairs


def bench_imars_maintenance(background: int = 5000, fractions=(0.001, 0.01, 0.025, 0.1), window: int = 10,
                            steps: int = 5) -> list[dict]:
    """Per step, the median time to bring the closure up to date: IMaRS (expiry tags), DRed and
    naive recomputation, on the native store and plans as the C-SPARQL engine maintains windows
    (recomputation: the faster of them and the set-at-a-time path), expiry tags on the dict
    store, and the C-SPARQL engine's whole step (maintenance + query)."""
    rule_text = f"@prefix : <{EX}> .\n:isIn(?x, ?z) :- :isIn(?x, ?y), :isIn(?y, ?z) .\n"
    rules = parse(rule_text).rules
    rows = []
    for fraction in fractions:
        per_step = max(1, int(background * fraction))
        pool = isin_trees(background + per_step * (window + steps + 1))
        bg, stream = pool[:background], pool[background:]
        batches = [stream[i * per_step:(i + 1) * per_step] for i in range(window + steps)]
        d = TermDictionary()
        isin = (d.intern(Iri(EX + "isIn")), 2)
        key = lambda pair: (isin, (d.intern(Iri(EX + pair[0])), d.intern(Iri(EX + pair[1]))))
        bg_keys = [key(p) for p in bg]
        batch_keys = [[key(p) for p in b] for b in batches]
        imars, dred, imars_dict = (Materialiser(rules, d, native=True), Materialiser(rules, d, native=True),
                                   Materialiser(rules, d))
        for m in (imars, dred, imars_dict):
            m.add([(*k, INF) for k in bg_keys])
        # the C-SPARQL engine on the same stream, with a selective query
        checked = check_text(rule_text + f"query Q := register compute every 1 as select ?y from stream :s "
                             f"[range {window} step 1] where {{ <{EX}{stream[0][0]}> :isIn ?y }} .")
        triples = lambda b: [(URIRef(EX + c), URIRef(EX + "isIn"), URIRef(EX + p)) for c, p in b]
        engine = CSparqlEngine(checked, triples(bg), dictionary=d)
        times = {"imars": [], "imars_dict": [], "dred": [], "naive": [], "engine": []}
        for t, keys in enumerate(batch_keys):
            leaving = batch_keys[t - window] if t >= window else []
            measured = t >= window
            gc.collect()
            for name, m in (("imars", imars), ("imars_dict", imars_dict)):
                s, _ = _timed(lambda: (m.advance(t, report=False), m.add([(*k, t + window - 1) for k in keys])))
                times[name].append(s) if measured else None
            s, _ = _timed(lambda: (dred.retract(leaving), dred.add([(*k, INF) for k in keys])))
            times["dred"].append(s) if measured else None
            s, _ = _timed(lambda: engine.step(t, {None: triples(batches[t])}))
            times["engine"].append(s) if measured else None
            if measured:
                live = bg_keys + [k for b in batch_keys[t - window + 1:t + 1] for k in b]
                s, _ = _timed(lambda: Materialiser(rules, d, native=True).add([(*k, INF) for k in live]))
                s2, _ = _timed(lambda: Materialiser(rules, d).add([(*k, INF) for k in live]))
                times["naive"].append(min(s, s2))
                assert len(imars.store.relation(isin).facts) == len(dred.store.relation(isin).facts)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"background": background, "change": fraction, "per_step": per_step, "window": window,
               "closure": len(imars.store.relation(isin).facts),
               **{f"{k}_ms": v * 1e3 for k, v in med.items()},
               "dred_over_imars": med["dred"] / med["imars"], "naive_over_imars": med["naive"] / med["imars"]}
        rows.append(row)
        print(f"IMaRS {fraction * 100:>5.1f}% change ({per_step} triples/step, closure {row['closure']}): "
              f"expiry tags {row['imars_ms']:.2f} ms (dict store {row['imars_dict_ms']:.2f} ms), "
              f"DRed {row['dred_ms']:.1f} ms "
              f"({row['dred_over_imars']:.0f}x), naive {row['naive_ms']:.1f} ms ({row['naive_over_imars']:.0f}x), "
              f"C-SPARQL engine step {row['engine_ms']:.2f} ms", flush=True)
    return rows


# ------------------------------------------------------------------------------ CityBench

CITY = "http://example.org/city#"
CITY_HEAD = f"""@prefix : <{CITY}> .
@timeunit ms .
@profile rdfs .
:monitors(?S, ?R) :- :mountedOn(?S, ?R), :RoadSegment(?R) .
"""
CONGESTED = "?o{i} a :TrafficObservation ; :observedBy ?s{i} ; :congestionLevel ?l{i} . ?s{i} :monitors :road{i} ."
WEATHER = "?wo a :WeatherObservation ; :temperature ?t ; :humidity ?h ; :windSpeed ?w ."
CSPARQL_Q = {
    "Q1": f"""query Q1 := register compute every 1 s as select ?o1 ?o2 ?l1 ?l2
  from stream :traffic1 [range 3 s step 1 s] from stream :traffic2 [range 3 s step 1 s]
  where {{ {CONGESTED.format(i=1)} {CONGESTED.format(i=2)} filter(?l1 >= 3 && ?l2 >= 3) }} .""",
    "Q2": f"""query Q2 := register compute every 1 s as select ?o1 ?l1 ?t ?h ?w
  from stream :traffic1 [range 3 s step 1 s] from stream :weather [range 3 s step 1 s]
  where {{ {CONGESTED.format(i=1)} {WEATHER} filter(?l1 >= 3) }} .""",
}
EVENTS = "\n".join(f"event Congestion{i}(?obs, ?level) := select ?obs ?level where {{ "
                   f"{CONGESTED.format(i=i).replace('?o' + str(i), '?obs').replace('?l' + str(i), '?level')} }} ."
                   for i in (1, 2)) + """
event Temperature(?obs, ?v) := select ?obs ?v where { ?obs a :WeatherObservation ; :temperature ?v } .
event Humidity(?obs, ?v) := select ?obs ?v where { ?obs a :WeatherObservation ; :humidity ?v } .
event Wind(?obs, ?v) := select ?obs ?v where { ?obs a :WeatherObservation ; :windSpeed ?v } .
"""
PATTERN_Q = {
    "Q1": "\n".join(f"""pattern Both{a}{b} from Congestion{a}(level >= 3)
   and each Congestion{b}(level >= 3) within 3 s from Congestion{a}
  construct {{ _:j a :JointCongestion ; :level1 ?l1 ; :level2 ?l2 }}
  with ?l1 = Congestion1.level, ?l2 = Congestion2.level .""" for a, b in ((1, 2), (2, 1))),
    "Q2": """pattern CongestionInWeather from Congestion1(level >= 3)
   and last Temperature within 3 s from Congestion1 and last Humidity within 3 s from Congestion1
   and last Wind within 3 s from Congestion1
  construct { _:c a :CongestionInWeather ; :level ?l ; :temperature ?t ; :humidity ?h ; :windSpeed ?w }
  with ?l = Congestion1.level, ?t = Temperature.v, ?h = Humidity.v, ?w = Wind.v .""",
}


def city_background(extra: int) -> list[tuple]:
    """The sensor taxonomy and roads, plus ``extra`` triples of city layout."""
    c = lambda n: URIRef(CITY + n)
    sub = URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf")
    typ = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    triples = [(c("CongestionReading"), sub, c("TrafficObservation")), (c("TrafficObservation"), sub, c("Observation")),
               (c("WeatherReading"), sub, c("WeatherObservation")), (c("WeatherObservation"), sub, c("Observation"))]
    for i in (1, 2):
        triples += [(c(f"road{i}"), typ, c("RoadSegment")), (c(f"roadSensor{i}"), c("mountedOn"), c(f"road{i}"))]
    for i in range(extra):
        triples.append((c(f"segment{i}"), c("connectedTo"), c(f"segment{i + 1}")))
    return triples


def city_stream(seconds: int, rate: int, seed: int = 7) -> list[tuple[int, dict[str, list]]]:
    """Per time point (``rate`` per second): a congestion reading on each road's stream and a
    weather report (temperature, humidity, wind speed) on the weather stream."""
    rnd = random.Random(seed)
    c = lambda n: URIRef(CITY + n)
    typ = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    out = []
    for k in range(seconds * rate):
        t = k * 1000 // rate
        streams = {}
        for i in (1, 2):
            o = c(f"c{i}_{k}")
            streams[CITY + f"traffic{i}"] = [(o, typ, c("CongestionReading")), (o, c("observedBy"), c(f"roadSensor{i}")),
                                             (o, c("congestionLevel"), Literal(rnd.randint(0, 5)))]
        o = c(f"w_{k}")
        streams[CITY + "weather"] = [(o, typ, c("WeatherReading"))] + [
            (o, c(prop), Literal(rnd.randint(lo, hi)))
            for prop, lo, hi in (("temperature", -5, 30), ("humidity", 20, 100), ("windSpeed", 0, 40))]
        out.append((t, streams))
    return out


def bench_citybench_queries(seconds: int = 30, rates=(2, 10), extra: int = 1000, repeat: int = 3) -> list[dict]:
    """Q1 and Q2: the C-SPARQL engine against the DOTR pattern rules, time per input time point."""
    rows = []
    for rate in rates:
        stream = city_stream(seconds, rate)
        background = city_background(extra)
        for q in ("Q1", "Q2"):
            def csparql():
                engine = CSparqlEngine(check_text(CITY_HEAD + CSPARQL_Q[q]), background)
                start = time.perf_counter()
                answers = sum(len(out.answers.get(q, ())) for out in engine.run(stream))
                return time.perf_counter() - start, answers

            def patterns():
                reasoner = Reasoner(check_text(CITY_HEAD + EVENTS + PATTERN_Q[q]), background)
                flat = [(t, [f for facts in streams.values() for f in facts]) for t, streams in stream]
                start = time.perf_counter()
                graphs = sum(len(out.graphs) for out in reasoner.run(flat))
                return time.perf_counter() - start, graphs

            c_runs = [csparql() for _ in range(repeat)]
            p_runs = [patterns() for _ in range(repeat)]
            c_s, p_s = min(s for s, _ in c_runs), min(s for s, _ in p_runs)
            n = len(stream)
            row = {"query": q, "rate_per_s": rate, "time_points": n, "csparql_ms_per_point": c_s / n * 1e3,
                   "patterns_ms_per_point": p_s / n * 1e3, "csparql_answers": c_runs[0][1],
                   "pattern_matches": p_runs[0][1], "csparql_over_patterns": c_s / p_s}
            rows.append(row)
            print(f"CityBench {q} at {rate}/s ({n} time points): C-SPARQL {row['csparql_ms_per_point']:.2f} ms/point "
                  f"({row['csparql_answers']} answers), DOTR patterns {row['patterns_ms_per_point']:.2f} ms/point "
                  f"({row['pattern_matches']} matches), ratio {row['csparql_over_patterns']:.2f}", flush=True)
    return rows


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200, help="EP-SPARQL: time points")
    ap.add_argument("--background", type=int, default=5000, help="IMaRS: background triples")
    ap.add_argument("--window", type=int, default=10, help="IMaRS: window range in steps")
    ap.add_argument("--seconds", type=int, default=30, help="CityBench: stream length")
    ap.add_argument("--skip", nargs="*", default=[], choices=["epsparql", "imars", "citybench"])
    ap.add_argument("--json", default="benchmarks/results/queries.json")
    args = ap.parse_args(argv)
    result: dict = {}
    if "epsparql" not in args.skip:
        rows = result["epsparql"] = []
        for bench in (bench_epsparql_seq, bench_epsparql_optionalseq):
            for horizon in (5, 10, 20):
                rows.append(bench(points=args.points, horizon=horizon))
                show(rows[-1])
    if "imars" not in args.skip:
        result["imars"] = bench_imars_maintenance(args.background, window=args.window)
    if "citybench" not in args.skip:
        result["citybench"] = bench_citybench_queries(args.seconds)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
