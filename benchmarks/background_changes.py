"""Background changes while a window is live, through the documented API (``dotr run`` applies a
record's ``"background"`` the same way): per change, the time ``Reasoner.change_background`` takes
(DRed on the materialisation, then the time point after it) against rebuilding the reasoner with
the changed background, in the same run.

The background is the LUBM-like ontology of ``dotr.examples.workloads.lubm_like``
(``--background`` triples) under ``@profile rdfs``; a stream of instance triples (a 20-tick window of readings
whose types the schema entails) runs alongside. The changes: removing and adding back one
instance fact, and removing and adding back one ``rdfs:subClassOf`` axiom of a subclass chain.
With ``--lars``, a LARS rule joins the window with every ``rdf:type`` fact, so that the LARS
engine takes the changes too.

    python benchmarks/background_changes.py [--background 100000] [--repeat 5] [--lars]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import rdflib  # noqa: E402

from dotr.examples.workloads.lubm_like import EX, RDF_TYPE, RDFS, triples  # noqa: E402
from dotr.pipeline.reasoner import Reasoner# noqa: E402
from dotr.rules import check_text  # noqa: E402

RULES = f"""@prefix : <{EX}> .
@profile rdfs .
recent(X) :- [20] <> :reading(X, V) .
"""
#: ``--lars``: a LARS rule also joins the window with the background's types
LARS = "typed(X, C) :- [20] <> :reading(X, V), rdf:type(X, C) .\n"


def _triple(s: str, p: str, o: str) -> tuple:
    return rdflib.URIRef(s), rdflib.URIRef(p), rdflib.URIRef(o)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--background", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lars", action="store_true", help="a LARS rule reads the changed facts too")
    args = ap.parse_args(argv)
    checked = check_text(RULES + (LARS if args.lars else ""))
    background = [_triple(*t) for t in triples(args.background)]
    started = time.perf_counter()
    reasoner = Reasoner(checked, background)
    rebuild = time.perf_counter() - started
    t = 0

    def tick() -> None:  # a time point of the live window: readings of typed entities
        nonlocal t
        t += 1
        reasoner.step(t, [_triple(f"{EX}e{(t * 7 + i) % 1000}", EX + "reading", f"{EX}v{i}") for i in range(20)])

    for _ in range(25):
        tick()
    instance = next(tr for tr in background if str(tr[1]) == RDF_TYPE)
    axiom = next(tr for tr in background if str(tr[1]) == RDFS + "subClassOf")
    print(f"background {args.background:,} triples (materialised: {len(reasoner.ontology.store):,} facts); "
          f"rebuilding the reasoner: {rebuild:.2f} s")
    for name, fact in (("instance fact", instance), ("subClassOf axiom", axiom)):
        times = []
        for _ in range(args.repeat):
            for change in ({"remove": [fact]}, {"add": [fact]}):
                started = time.perf_counter()
                reasoner.change_background(**change)
                tick()
                times.append(time.perf_counter() - started)
        median = statistics.median(times)
        print(f"{name:>17}: {median * 1000:8.2f} ms per change and time point (median of {len(times)}); "
              f"rebuilding: {rebuild:.2f} s = {rebuild / median:,.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
