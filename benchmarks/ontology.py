"""Ontological stage benchmarks, each against a peer or a naive mode in the same run.

1. Background materialisation, input triples/s, on the LUBM-like generator
   (``dotr.examples.workloads.lubm_like``): dotr's RDFS and OWL 2 RL without equality, against
   owlrl (RDFS; OWL 2 RL), maplib (RDFS) and reasonable (OWL 2 RL), where they are installed (``pip install -e '.[bench]'``).
   dotr runs on the native engine (``rules.engine.backends.native_store``), as the ontological stage does.
2. Per-time-point latency (median, p99) of 1-triple and 1,000-triple input graphs over the
   100k background, with 10 extra Datalog rules and 10 event queries, for the stage on the native
   engine and on the dict engine (``native=False``), the same graphs one after the other.
3. Window maintenance with expiry tags (the native engine, which the ontological stage and
   C-SPARQL windows use, and the dict engine) against recomputation from scratch (set-at-a-time,
   native, and fact by fact), with 0.1%, 1%, 2.5% and 13% of the background arriving and
   expiring per time point.

    python benchmarks/ontology.py [--sizes 10000 100000] [--json benchmarks/results/ontology.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

# this file is named like the package it measures: put the repository first on the path, not
# this folder (which Python puts there for a script)
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from rdflib import Literal, URIRef  # noqa: E402

from dotr.examples.workloads.lubm_like import EX, triples  # noqa: E402
from dotr.ontology.materialise import Materialiser  # noqa: E402
from dotr.ontology.stage import OntologicalStage, profile_rules  # noqa: E402
from dotr.rules.engine.store import INF  # noqa: E402
from dotr.rules import check_text  # noqa: E402
from dotr.rules.lang.ir import Iri  # noqa: E402
from dotr.rules.engine.terms import TermDictionary  # noqa: E402

SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"


def _uri_triples(raw):
    return [(URIRef(s), URIRef(p), URIRef(o)) for s, p, o in raw]


def _timed(fn):
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def owl2rl_without_equality():
    return [r for r in profile_rules("owl2rl")
            if not r.is_fact and not any(getattr(getattr(lit, "atom", None), "pred", None) == Iri(SAME_AS)
                                         for lit in r.body) and r.head.pred != Iri(SAME_AS)]


def dotr_materialise(raw, rules) -> int:
    """The closure of ``raw`` (IRI strings) from scratch, on the ontological stage's engine."""
    d = TermDictionary()
    m = Materialiser(rules, d, native=True)
    ids: dict[str, int] = {}

    def tid(x):
        i = ids.get(x)
        if i is None:
            i = ids[x] = d.intern(Iri(x))
        return i
    m.add([((tid(p), 2), (tid(s), tid(o)), INF) for s, p, o in raw])
    return len(m.store)


def peers_rdfs(raw):
    out = {}
    try:
        import owlrl
        import rdflib

        def run():
            g = rdflib.Graph()
            for t in _uri_triples(raw):
                g.add(t)
            owlrl.DeductiveClosure(owlrl.RDFS_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(g)
            return len(g)
        out["owlrl"] = run if len(raw) <= 100_000 else None
    except ImportError:
        pass
    try:
        import maplib

        def run_maplib():
            m = maplib.Model()
            m.reads("\n".join(f"<{s}> <{p}> <{o}> ." for s, p, o in raw), format="ntriples")
            return m.infer_rdfs()
        out["maplib"] = run_maplib
    except ImportError:
        pass
    return out


def peers_owl(raw):
    out = {}
    try:
        import reasonable

        def run():
            r = reasonable.PyReasoner()
            r.from_graph(raw)
            return len(r.reason())
        out["reasonable"] = run
    except ImportError:
        pass
    try:
        import owlrl
        import rdflib

        def run_owlrl():
            g = rdflib.Graph()
            for t in _uri_triples(raw):
                g.add(t)
            owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(g)
            return len(g)
        out["owlrl"] = run_owlrl if len(raw) <= 10_000 else None
    except ImportError:
        pass
    return out


def bench_materialisation(sizes) -> list[dict]:
    rows = []
    rdfs = [r for r in profile_rules("rdfs") if not r.is_fact]
    owl = owl2rl_without_equality()
    for n in sizes:
        raw = triples(n)
        for profile, rules, peers in (("rdfs", rdfs, peers_rdfs(raw)), ("owl2rl-noeq", owl, peers_owl(raw))):
            seconds, size = _timed(lambda: dotr_materialise(raw, rules))
            row = {"triples": n, "profile": profile, "dotr_s": seconds, "dotr_tps": n / seconds, "facts": size}
            for name, run in peers.items():
                if run is None:
                    row[f"{name}_s"] = None
                    continue
                peer_s, _ = _timed(run)
                row[f"{name}_s"] = peer_s
                row[f"{name}_tps"] = n / peer_s
                row[f"speedup_vs_{name}"] = peer_s / seconds
            rows.append(row)
            print(f"materialise {profile:<12} {n:>9,} triples: dotr {n / seconds:>10,.0f} t/s ({seconds:.2f}s)"
                  + "".join(f" | {k[:-2]} {row[k]:.2f}s ({row[k] / seconds:.2f}x)" for k in row
                            if k.endswith("_s") and k != "dotr_s" and row[k]), flush=True)
    return rows


EXTRA_RULES = "\n".join(
    f":derived{i}(?s, ?r) :- :p{i % 5}_0(?s, ?x), :partOf(?x, ?r) ." for i in range(10))
EVENTS = "\n".join(
    f"event E{i}(?s, ?o) := select ?s ?o where {{ ?s :reading{i % 5} ?o . ?s a :C{i % 5}_1 "
    f"filter(?o > {i}) }} ." for i in range(10))


def bench_latency(n: int, graph_sizes=(1, 1000), points: int = 300) -> list[dict]:
    """Per time point over the background, for the stage on the native engine (its default) and
    on the dict engine: the same graphs, one stage after the other (alternating time point by
    time point would have each evict the other's data from the caches)."""
    rules = f"@prefix : <{EX}> .\n@profile rdfs .\n{EXTRA_RULES}\n{EVENTS}\n"
    background = _uri_triples(triples(n))
    rnd = random.Random(3)
    graphs = {size: [[(URIRef(f"{EX}e{rnd.randrange(n // 4)}"), URIRef(f"{EX}reading{rnd.randrange(5)}"),
                       Literal(rnd.randrange(100))) for _ in range(size)] for _ in range(points)]
              for size in graph_sizes}
    latencies: dict[tuple[str, int], list[float]] = {}
    for engine in ("native", "dict"):
        stage = OntologicalStage(check_text(rules), background, native=engine == "native")
        for size in graph_sizes:
            times = latencies[engine, size] = []
            for t, graph in enumerate(graphs[size]):
                start = time.perf_counter()
                stage.process(10_000 * size + t, graph)
                times.append(time.perf_counter() - start)
            times.sort()
        del stage
        gc.unfreeze()
        gc.collect()
    rows = []
    for size in graph_sizes:
        row = {"background": n, "graph_triples": size, "load": os.getloadavg()[0]}
        for engine, suffix in (("native", ""), ("dict", "_dict")):
            times = latencies[engine, size]
            row[f"median_ms{suffix}"] = statistics.median(times) * 1e3
            row[f"p99_ms{suffix}"] = times[int(len(times) * 0.99) - 1] * 1e3
        rows.append(row)
        print(f"latency {size:>5}-triple graphs over {n:,} background: median {row['median_ms']:.3f} ms, "
              f"p99 {row['p99_ms']:.3f} ms (dict engine: {row['median_ms_dict']:.3f} ms, "
              f"{row['p99_ms_dict']:.3f} ms; load {row['load']:.1f})", flush=True)
    return rows


def recompute(facts, rules, dictionary, engine: str = "set-at-a-time") -> int:
    """The closure of ``facts`` (``(relation, ids)``, interned with ``dictionary``) from scratch:
    what a reasoner that recomputes at each time point does (it keeps its term dictionary).
    ``engine``: ``set-at-a-time`` (rules.engine.backends.columnar), ``native`` (the compiled store and plans) or
    ``fact-by-fact`` (the dict store's plans alone)."""
    if engine == "native":
        m = Materialiser(rules, dictionary, native=True)
    else:
        m = Materialiser(rules, dictionary, bulk_threshold=None if engine == "fact-by-fact" else 0)
    m.add([(rel, fact, INF) for rel, fact in facts])
    return len(m.store)


def bench_window(n: int, fractions=(0.001, 0.01, 0.025, 0.13), steps: int = 5) -> list[dict]:
    """IMaRS's experiment: the background's instance triples stream through a window that holds
    all of them; each time point ``fraction`` of them arrives (expiring when it leaves the
    window) and as much expires. Maintenance with expiry tags, by the native engine (as the
    ontological stage and C-SPARQL windows maintain them) and by the dict engine, against
    recomputing the closure of the window's content from scratch; the ratio is against the
    faster recomputation (set-at-a-time or native), and against fact-by-fact recomputation.
    Every side starts from interned facts (a reasoner keeps its term dictionary: the time to
    intern a time point's triples, the same for all, is not counted)."""
    raw = triples(n)
    rules = [r for r in profile_rules("rdfs") if not r.is_fact]
    schema_size = 60
    rows = []
    for fraction in fractions:
        per_step = max(1, int(n * fraction))
        d = TermDictionary()
        interned = [((d.intern(Iri(p)), 2), (d.intern(Iri(s)), d.intern(Iri(o)))) for s, p, o in raw]
        schema, data = interned[:schema_size], interned[schema_size:]
        window = max(1, len(data) // per_step)  # the window holds all the instance triples
        engines = {"native": Materialiser(rules, d, native=True), "dict": Materialiser(rules, d)}
        for m in engines.values():
            m.add([(rel, fact, INF) for rel, fact in schema])
        live = []
        for step in range(window):  # fill the window
            batch = data[step * per_step:(step + 1) * per_step]
            for m in engines.values():
                m.add([(rel, fact, step + window) for rel, fact in batch])
            live.append(batch)
        cursor = window * per_step
        gc.freeze()  # as OntologicalStage does after loading: the window's content is long-lived
        times: dict[str, list[float]] = {name: [] for name in (*engines, "set-at-a-time", "native-recompute")}
        by_fact = []
        for step in range(window, window + steps):
            batch = [data[(cursor + i) % len(data)] for i in range(per_step)]
            cursor += per_step
            items = [(rel, fact, step + window) for rel, fact in batch]
            for name, m in engines.items():
                seconds, _ = _timed(lambda: (m.advance(step, report=False), m.add(items)))
                times[name].append(seconds)
            live = live[1:] + [batch]
            live_facts = schema + [f for b in live for f in b]
            for engine, name in (("set-at-a-time", "set-at-a-time"), ("native", "native-recompute")):
                seconds, _ = _timed(lambda: recompute(live_facts, rules, d, engine))
                times[name].append(seconds)
            if not by_fact:  # the fact-by-fact recomputation, once (it does not depend on the share)
                seconds, _ = _timed(lambda: recompute(live_facts, rules, d, "fact-by-fact"))
                by_fact.append(seconds)
        med = {name: statistics.median(v) for name, v in times.items()}
        best = min(med["set-at-a-time"], med["native-recompute"])
        inc, old = med["native"], med["dict"]
        row = {"background": n, "changing": fraction, "incremental_s": inc, "incremental_dict_s": old,
               "recompute_s": med["set-at-a-time"], "recompute_native_s": med["native-recompute"],
               "ratio": best / inc, "ratio_dict": best / old,
               "recompute_by_fact_s": by_fact[0], "ratio_by_fact": by_fact[0] / inc, "load": os.getloadavg()[0]}
        rows.append(row)
        print(f"window {fraction * 100:>5.1f}% changing per time point: maintenance {inc * 1e3:.2f} ms "
              f"(dict engine {old * 1e3:.1f} ms), recomputation {med['set-at-a-time'] * 1e3:.0f} ms set-at-a-time, "
              f"{med['native-recompute'] * 1e3:.0f} ms native; ratio {best / inc:.1f}x (dict engine {best / old:.1f}x); "
              f"fact-by-fact recomputation {by_fact[0] * 1e3:.0f} ms, ratio {by_fact[0] / inc:.0f}x "
              f"(load {row['load']:.1f})", flush=True)
    return rows


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--latency-background", type=int, default=100_000)
    ap.add_argument("--window-background", type=int, default=100_000)
    ap.add_argument("--window-fractions", type=float, nargs="+", default=[0.001, 0.01, 0.025, 0.13])
    ap.add_argument("--skip", nargs="*", default=[], choices=["materialise", "latency", "window"])
    ap.add_argument("--json", default="benchmarks/results/ontology.json")
    args = ap.parse_args(argv)
    result = {}
    if "materialise" not in args.skip:
        result["materialise"] = bench_materialisation(args.sizes)
    if "latency" not in args.skip:
        result["latency"] = bench_latency(args.latency_background)
    if "window" not in args.skip:
        result["window"] = bench_window(args.window_background, args.window_fractions)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
