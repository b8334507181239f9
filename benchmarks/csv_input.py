"""A CSV file through its mapping against the same rows converted to JSON Lines by hand, both
through ``dotr run`` (whole process, CPU seconds, in alternating pairs): CityBench's Aarhus traffic
file (every row new observation IRIs: many distinct constants) with
examples/citybench/aarhus-traffic.toml. The two outputs are compared before timing.

    python benchmarks/csv_input.py --data DIR [--file AarhusTrafficData158505.stream] [--pairs 5] [--json PATH]

DIR is CityBench's sample (its streams/ files; the environment's DOTR_CITYBENCH_DATA by default).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.peers.common import alternate, dotr_command, log, run_cpu, span, write_json  # noqa: E402

MAPPING = ROOT / "examples" / "citybench" / "aarhus-traffic.toml"
SERVICE = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
RULES = (f"@prefix ssn: <{SSN}> .\n@prefix sao: <http://purl.oclc.org/NET/sao/> .\n@prefix s: <{SERVICE}> .\n"
         "s:slow(?S, ?V) :- ssn:observedBy(?O, ?S), ssn:observedProperty(?O, s:AvgSpeed), sao:hasValue(?O, ?V), "
         "?V < 40 .\n")


def by_hand(source: Path, out: Path) -> None:
    """The rows as JSON Lines records of Turtle, written without the mapping."""
    with open(source, newline="") as f, open(out, "w") as w:
        for row in csv.DictReader(f):
            t = int(datetime.fromisoformat(row["TIMESTAMP"]).replace(tzinfo=timezone.utc).timestamp())
            turtle = " ".join(
                f"<{SERVICE}Observation_{kind}_{row['REPORT_ID']}_{row['_id']}> a <{SSN}Observation> ; "
                f"<{SSN}observedBy> <{SERVICE}AarhusTrafficData{row['REPORT_ID']}> ; "
                f"<{SSN}observedProperty> <{SERVICE}{kind}> ; <http://purl.oclc.org/NET/sao/hasValue> {row[column]} ."
                for kind, column in (("AvgSpeed", "avgSpeed"), ("VehicleCount", "vehicleCount")))
            w.write(json.dumps({"t": t, "turtle": turtle}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("DOTR_CITYBENCH_DATA"))
    parser.add_argument("--file", default="AarhusTrafficData158505.stream")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    if not args.data:
        raise SystemExit("--data DIR: CityBench's sample (or DOTR_CITYBENCH_DATA)")
    source = Path(args.data) / args.file
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        rules, jsonl = work / "slow.dotr", work / "rows.jsonl"
        rules.write_text(RULES)
        by_hand(source, jsonl)
        common = dotr_command() + ["run", "-q", "--rules", str(rules), "--on-error", "skip"]
        mapped = common + ["--input", str(source), "--input-format", "csv", "--mapping", str(MAPPING),
                           "--output", str(work / "mapped.jsonl"), "--rejects", str(work / "mapped.rejects")]
        hand = common + ["--input", str(jsonl), "--output", str(work / "hand.jsonl"), "--rejects",
                         str(work / "hand.rejects")]
        run_cpu(mapped, cwd=ROOT)
        run_cpu(hand, cwd=ROOT)
        if (work / "mapped.jsonl").read_text() != (work / "hand.jsonl").read_text():
            raise SystemExit("the two outputs differ")
        log("outputs equal; timing")
        figures = alternate(lambda: run_cpu(hand, cwd=ROOT)[0], lambda: run_cpu(mapped, cwd=ROOT)[0], args.pairs)
        first_csv, first_jsonl = work / "first.csv", work / "first.jsonl"  # (start-up: one row)
        first_csv.write_text("".join(open(source).readlines()[:2]))
        first_jsonl.write_text(jsonl.read_text().split("\n", 1)[0] + "\n")
        start = alternate(lambda: run_cpu(_input(hand, first_jsonl), cwd=ROOT)[0],
                          lambda: run_cpu(_input(mapped, first_csv), cwd=ROOT)[0], args.pairs)
    rows = sum(1 for _ in open(source)) - 1
    print("| rows | CSV + mapping, CPU s | JSON Lines by hand, CPU s | JSON Lines / CSV |")
    print("|---|---|---|---|")
    for count, f in ((rows, figures), (1, start)):
        print(f"| {count:,}{' (start-up)' if count == 1 else ''} | {f['dotr_s']:.2f} ({span(f['dotr_range'], '.2f')}) | "
              f"{f['peer_s']:.2f} ({span(f['peer_range'], '.2f')}) | {f['ratio']:.2f} ({span(f['ratio_range'], '.2f')}) |")
    write_json(args.json, "csv-input", {"file": args.file, "pairs": args.pairs},
               [{"rows": rows, **figures}, {"rows": 1, **start}])


def _input(command: list[str], path: Path) -> list[str]:
    """``command`` reading ``path`` instead."""
    i = command.index("--input")
    return command[:i + 1] + [str(path)] + command[i + 2:]


if __name__ == "__main__":
    main()
