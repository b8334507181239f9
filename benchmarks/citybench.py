"""CityBench's continuous queries through ``dotr run``, written the way the benchmark writes them
(the queries and inputs of ``dotr.examples.workloads.citybench``).

CityBench (Ali et al., ISWC 2015) replays the city of Aarhus's sensor streams (traffic, weather,
parking, pollution) as RDF: each CSV row becomes one ``ssn:Observation`` per property its sensor
observes (``ssn:observedBy`` the sensor, ``ssn:observedProperty`` the property, ``sao:hasValue`` an
``xsd:double``), one row per second per stream. Its C-SPARQL queries join the streams with the
sensor repository (each property's type, ``ct:CongestionLevel`` ...), and write the type patterns
outside the groups that use their variables (``?p1 a ct:CongestionLevel . ?p2 a
ct:CongestionLevel . { ?obId1 ... ?p1 } { ?obId2 ... ?p2 }``), with ``#`` comments, ASK, and a
FROM clause naming the repository. The queries here are written that way (the repository a file
beside the rules); each that writes type patterns apart also runs as the hand-reshaped form (the
type patterns moved into the groups), which gives the same answers: the planner is to make the
two cost the same.

Inputs are generated, shaped like the Aarhus ones: a repository of ``--services`` traffic
sensors (five typed properties each and a feature of interest with coordinates; CityBench's has
449 congestion levels) plus the weather, parking and pollution sensors the queries read, and
``--seconds`` rows per stream. ``--data DIR`` (or the environment variable DOTR_CITYBENCH_DATA)
uses CityBench's own sample instead: its ``SensorRepository.n3`` and the raw ``Aarhus*.stream``
files with ``trafficMetaData.csv``, turned into observations as CityBench does.

Each query runs with its own streams; the two forms alternate, ``--rounds`` pairs; figures are
whole-process CPU seconds of ``dotr run`` (reading the stream, writing the answers), median and
range, with the start-up (``dotr run`` on a one-record stream: interpreter, rules, the repository
loaded and closed) measured apart; throughput is input triples per CPU-second after start-up.

    python benchmarks/citybench.py [--seconds 600] [--services 449 4490] [--rounds 5]
                                   [--queries Q1 Q2 ...] [--data DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from benchmarks.peers.common import dotr_command, log, print_table, run_cpu, write_json  # noqa: E402
from dotr.examples.workloads.citybench import (  # noqa: E402
    generated_repository, generated_rows, queries, real_properties, real_rows, write_stream)

# ------------------------------------------------------------------------------------ timing

def _dotr(rules: Path, stream: Path, output: Path) -> float:
    cpu, _, _ = run_cpu(dotr_command() + ["run", "-q", "--rules", str(rules), "--input", str(stream),
                                          "--output", str(output)], cwd=rules.parent)
    return cpu


def _spread(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def bench(name: str, spec: dict, repository: Path, properties: dict, work: Path, seconds: int, rounds: int,
          rows_of) -> dict:
    """One query: both forms' answers compared, then their runs alternated."""
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    stream = folder / "stream.jsonl"
    triples = write_stream(stream, spec["streams"], properties, seconds, rows_of)
    one = folder / "one.jsonl"
    one.write_text(stream.read_text().split("\n", 1)[0] + "\n")
    forms = {"written": spec["written"], "reshaped": spec["reshaped"]}
    files = {}
    for form, text in forms.items():
        if text is None:
            continue
        files[form] = folder / f"{form}.dotr"
        files[form].write_text(f"@timeunit ms .\nquery {name} := {text.replace('<repository>', f'<{repository}>')} .\n")
    outputs = {form: (folder / f"{form}.jsonl") for form in files}
    cpu: dict[str, list[float]] = {form: [] for form in files}
    startup: list[float] = []
    for _ in range(rounds):
        for form in files:
            cpu[form].append(_dotr(files[form], stream, outputs[form]))
        startup.append(_dotr(files["written"], one, folder / "one.out"))
    if "reshaped" in files and outputs["written"].read_bytes() != outputs["reshaped"].read_bytes():
        raise SystemExit(f"{name}: the two forms answer differently ({outputs['written']}, {outputs['reshaped']})")
    records = [json.loads(line) for line in outputs["written"].read_text().splitlines()]
    answers = sum(len(a) if isinstance(a, list) else 1 for r in records for a in r.get("answers", {}).values())
    row = {"query": name, "triples": triples, "answers": answers, "startup": statistics.median(startup)}
    row["written"], row["written_min"], row["written_max"] = _spread(cpu["written"])
    after = row["written"] - row["startup"]
    row["throughput"] = triples / after if after > 0 else None
    if "reshaped" in files:
        row["reshaped"], row["reshaped_min"], row["reshaped_max"] = _spread(cpu["reshaped"])
        ratios = [a / b for a, b in zip(cpu["written"], cpu["reshaped"])]
        row["ratio"], row["ratio_min"], row["ratio_max"] = _spread(ratios)
    log(f"{name}: {row}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=600, help="rows per stream (one per second)")
    parser.add_argument("--services", type=int, nargs="+", default=[449, 4490],
                        help="traffic sensors in the generated repository, one table row set per size")
    parser.add_argument("--rounds", type=int, default=5, help="alternated runs of each form")
    parser.add_argument("--queries", nargs="+", default=["Q1", "Q3", "Q7", "Q10", "Q11", "Q12"],
                        help="the queries to run (also Q2: its three weather groups, as CityBench writes it, "
                             "are a cross product of the window's observations, 10,000 answers a second)")
    parser.add_argument("--data", default=os.environ.get("DOTR_CITYBENCH_DATA"),
                        help="CityBench's sample (SensorRepository.n3, Aarhus*.stream, trafficMetaData.csv)")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()
    specs = queries()
    names = args.queries
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.data:
            data = Path(args.data)
            repository = data / "SensorRepository.n3"
            properties = real_properties(repository)
            sizes = [("CityBench's", repository, properties, lambda s: real_rows(s, args.seconds, data))]
        else:
            sizes = []
            for services in args.services:
                repository = work / f"repository-{services}.nt"
                rng = random.Random(services)
                properties = generated_repository(repository, services, rng)
                sizes.append((f"{services:,} traffic sensors", repository, properties,
                              lambda s, rng=rng: generated_rows(s, args.seconds, rng)))
        for label, repository, properties, rows_of in sizes:
            for name in names:
                row = bench(name, specs[name], repository, properties, work / label.split()[0], args.seconds,
                            args.rounds, rows_of)
                rows.append({"repository": label, **row})
    columns = [("repository", "repository", ""), ("query", "query", ""), ("triples", "input triples", ",d"),
               ("answers", "answers", ",d"), ("written", "as written (s)", ".2f"), ("reshaped", "reshaped (s)", ".2f"),
               ("ratio", "ratio", ".2f"), ("startup", "start-up (s)", ".2f"),
               ("throughput", "triples / CPU-s", ",.0f")]
    print_table(f"CityBench queries through dotr run, {args.seconds} s of streams, median of {args.rounds}", columns,
                rows)
    print("\nranges (min-max):")
    for row in rows:
        parts = [f"as written {row['written_min']:.2f}-{row['written_max']:.2f}"]
        if "reshaped" in row:
            parts += [f"reshaped {row['reshaped_min']:.2f}-{row['reshaped_max']:.2f}",
                      f"ratio {row['ratio_min']:.2f}-{row['ratio_max']:.2f}"]
        print(f"  {row['repository']} {row['query']}: " + ", ".join(parts))
    write_json(args.json, "citybench", {"seconds": args.seconds, "rounds": args.rounds}, rows)


if __name__ == "__main__":
    main()
