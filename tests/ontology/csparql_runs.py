"""The C-SPARQL engine driven as the pipeline drives it, optionally restored from a state file on
the way, its reports in the form of the reference's (``csparql_reference``)."""

from dotr.ontology.csparql import CSparqlEngine
from dotr.rules.engine.terms import format_term
from tests.ontology.csparql_reference import _order
from tests.state_files import round_trip


def run_engine(engine: CSparqlEngine, elements, until: int, restart_at: int | None = None, checked=None):
    """Drive the engine as the pipeline does (``run``), optionally continuing from a snapshot read back
    from a state file in a new engine after ``restart_at``; the reports in the reference's form."""
    elements = sorted(elements, key=lambda e: e[0])
    stream = [(t, {s: [f]}) for t, s, f in elements]
    if restart_at is None:
        outputs = list(engine.run(stream, until))
    else:
        outputs = list(engine.run([e for e in stream if e[0] <= restart_at], restart_at))
        state = round_trip((engine.snapshot()))
        engine = CSparqlEngine(checked, dictionary=engine.dictionary)
        engine.restore(state)
        outputs += engine.run([e for e in stream if e[0] > restart_at], until)
    return reported(engine, outputs)


def reported(engine: CSparqlEngine, outputs) -> dict:
    out = {}
    for result in outputs:
        reported = {}
        for compiled, _ in engine._queries:
            name = compiled.query.name
            if isinstance(result.answers.get(name), bool):  # ASK
                reported[name] = result.answers[name]
            elif name in result.answers:
                rows = (tuple(r.get(v) for v in compiled.vars) for r in result.answers[name])
                reported[name] = sorted(rows, key=_order)
            elif name in result.constructed:
                reported[name] = sorted(tuple(format_term(x) for x in tr) for tr in result.constructed[name])
        if reported:
            out[result.t] = reported
    return out
