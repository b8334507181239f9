"""CSV files through a mapping (pipeline/sources/csv.py): the output of ``dotr run`` on a CSV file
and its mapping is the output on the same rows converted to JSON Lines by hand (the project's
parking example; CityBench's Aarhus traffic files when DOTR_CITYBENCH_DATA names their folder);
a bad mapping is one line naming its file and key; a bad row is a bad record; --replay paces."""

import csv
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dotr.pipeline.sources.csv import Mapping, MappingError, read_csv

ROOT = Path(__file__).parents[2]
PARKING = ROOT / "examples" / "parking"
CITYBENCH = os.environ.get("DOTR_CITYBENCH_DATA")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dotr", "run", "-q", *args], cwd=ROOT, capture_output=True,
                          text=True)


def _minutes(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()) // 60


def _parking_by_hand(path: Path) -> Path:
    """readings.csv as JSON Lines, written here without the mapping."""
    lines = []
    with open(PARKING / "readings.csv", newline="") as f:
        for row in csv.DictReader(f):
            reading = f"<http://example.org/parking/reading/{row['garage']}/{row['time'].replace(':', '%3A')}>"
            turtle = (f"@prefix p: <http://example.org/parking#> . {reading} a p:Reading ; p:garage p:{row['garage']} ; "
                      f"p:freeSpaces {row['free']}" + (f' ; p:status "{row["status"]}"' if row["status"] else "") + " .")
            lines.append(json.dumps({"t": _minutes(row["time"]), "turtle": turtle}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("options", [[], ["--changes", "--format", "nquads"]])
def test_a_csv_file_and_its_mapping_give_what_its_json_lines_give(tmp_path, options):
    rules = ["--rules", str(PARKING / "rules.dotr"), *options]
    mapped = _run(*rules, "--input", str(PARKING / "readings.csv"), "--mapping", str(PARKING / "mapping.toml"))
    by_hand = _run(*rules, "--input", str(_parking_by_hand(tmp_path / "readings.jsonl")))
    assert mapped.returncode == by_hand.returncode == 0, mapped.stderr + by_hand.stderr
    assert "signpostFull" in mapped.stdout
    assert mapped.stdout == by_hand.stdout


def _traffic_by_hand(csv_path: Path, out: Path, rows: int) -> Path:
    service = "http://www.insight-centre.org/dataset/SampleEventService#"
    lines = []
    with open(csv_path, newline="") as f:
        for row, _ in zip(csv.DictReader(f), range(rows)):
            t = int(datetime.fromisoformat(row["TIMESTAMP"]).replace(tzinfo=timezone.utc).timestamp())
            triples = []
            for kind, column in (("AvgSpeed", "avgSpeed"), ("VehicleCount", "vehicleCount")):
                obs = f"<{service}Observation_{kind}_{row['REPORT_ID']}_{row['_id']}>"
                triples.append(f"{obs} a <http://purl.oclc.org/NET/ssnx/ssn#Observation> ; "
                               f"<http://purl.oclc.org/NET/ssnx/ssn#observedBy> <{service}AarhusTrafficData{row['REPORT_ID']}> ; "
                               f"<http://purl.oclc.org/NET/ssnx/ssn#observedProperty> <{service}{kind}> ; "
                               f"<http://purl.oclc.org/NET/sao/hasValue> {row[column]} .")
            lines.append(json.dumps({"t": t, "turtle": " ".join(triples)}))
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.skipif(not CITYBENCH, reason="DOTR_CITYBENCH_DATA names no folder with CityBench's sample")
def test_citybench_traffic_csv_through_its_mapping(tmp_path):
    source = Path(CITYBENCH) / "AarhusTrafficData158505.stream"
    rows = 3000
    head = tmp_path / "traffic.csv"
    head.write_text("".join(open(source).readlines()[:rows + 1]))
    rules = tmp_path / "slow.dotr"
    rules.write_text("@prefix ssn: <http://purl.oclc.org/NET/ssnx/ssn#> .\n@prefix sao: <http://purl.oclc.org/NET/sao/> .\n"
                     "@prefix s: <http://www.insight-centre.org/dataset/SampleEventService#> .\n"
                     "s:slow(?S, ?V) :- ssn:observedBy(?O, ?S), ssn:observedProperty(?O, s:AvgSpeed), sao:hasValue(?O, ?V), "
                     "?V < 40 .\n")
    mapped = _run("--rules", str(rules), "--input", str(head), "--mapping",
                  str(ROOT / "examples" / "citybench" / "aarhus-traffic.toml"))
    by_hand = _run("--rules", str(rules), "--input", str(_traffic_by_hand(head, tmp_path / "t.jsonl", rows)))
    assert mapped.returncode == by_hand.returncode == 0, mapped.stderr + by_hand.stderr
    assert mapped.stdout.count("\n") > 10 and mapped.stdout == by_hand.stdout


MAPPING = """
[prefixes]
ex = "http://example.org/"
xsd = "http://www.w3.org/2001/XMLSchema#"
[time]
column = "t"
[[subjects]]
template = "ex:r/{id}"
predicates."ex:v" = { column = "v", datatype = "xsd:integer" }
"""


@pytest.mark.parametrize("change, message", [
    (("column = \"t\"", "column = \"time\""), "m.toml: [time] column: the CSV file has no column 'time' (its columns: t, id, v)"),
    (("ex:r/{id}", "ex:r/{ident}"), "m.toml: subject 1: the CSV file has no column 'ident'"),
    (("xsd:integer", "xs:integer"), "m.toml: subject 1, predicate ex:v: the prefix xs: is not declared in [prefixes]"),
    (("[time]", "[times]"), "m.toml: [time]: give the column of the rows' times"),
    (("column = \"v\", ", ""), "m.toml: subject 1, predicate ex:v: give a column (a literal) or a template (an IRI)"),
    (("[prefixes]", "[prefixes"), "m.toml: not TOML"),
])
def test_a_bad_mapping_names_its_file_and_key(change, message):
    with pytest.raises(MappingError) as err:
        Mapping.parse(MAPPING.replace(*change), "m.toml", ["t", "id", "v"])
    assert str(err.value).startswith(message)


def test_bad_rows_are_bad_records_naming_their_line(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("t,id,v\n1,a,5\n2,b,five\n3,c\nyesterday,d,1\n4,e,7\n")
    mapping = tmp_path / "m.toml"
    mapping.write_text(MAPPING)
    rules = tmp_path / "r.dotr"
    rules.write_text("@prefix ex: <http://example.org/> .\nex:big(?R) :- ex:v(?R, ?V), ?V > 4 .\n")
    run = _run("--rules", str(rules), "--input", str(data), "--mapping", str(mapping), "--on-error", "skip",
               "--rejects", str(tmp_path / "rejects.jsonl"))
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["t"] for line in run.stdout.splitlines()] == [1, 4]
    rejects = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"]) for r in rejects] == [
        (3, "column v: 'five' is not an integer"), (4, "2 fields, the header has 3"),
        (5, "the time 'yesterday' is neither an integer nor an ISO 8601 date-time")]
    stopped = _run("--rules", str(rules), "--input", str(data), "--mapping", str(mapping))
    assert stopped.returncode == 3 and f"{data}:line 3: column v: 'five' is not an integer" in stopped.stderr


def test_cli_refuses_a_mapping_without_a_csv_and_a_csv_without_a_mapping():
    csv_only = _run("--rules", str(PARKING / "rules.dotr"), "--input", str(PARKING / "readings.csv"))
    assert csv_only.returncode == 2 and "--mapping MAP.toml" in csv_only.stderr
    jsonl = _run("--rules", str(PARKING / "rules.dotr"), "--input", str(ROOT / "examples/fire/stream.jsonl"),
                 "--mapping", str(PARKING / "mapping.toml"))
    assert jsonl.returncode == 2 and "--mapping maps a CSV file" in jsonl.stderr


def test_replay_paces_the_rows_by_their_times():
    mapping = Mapping.parse(MAPPING.replace('column = "t"', 'column = "t"\nunit = "s"'), "m.toml", ["t", "id", "v"])
    rows = ["t,id,v", "0,a,1", "1,b,1", "2,c,1", "3,d,1"]
    start = time.monotonic()
    assert [r.t for r in read_csv(rows, mapping, replay=10)] == [0, 1, 2, 3]  # 3 s of data at 10 times real time
    assert 0.3 <= time.monotonic() - start < 2
    start = time.monotonic()
    list(read_csv(rows, mapping))
    assert time.monotonic() - start < 0.3


def test_explain_reads_a_csv_file_through_its_mapping_as_run_does(tmp_path):
    """``dotr explain`` reads its input through the same formats as ``dotr run`` (it read JSON Lines
    only): the CSV file with its mapping and the same rows as JSON Lines explain alike."""
    def explain(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dotr", "explain", "--rules", str(PARKING / "rules.dotr"),
                               *args, "--at", "29540660", ":signpostFull(:south)"], cwd=ROOT, capture_output=True,
                              text=True)
    mapped = explain("--input", str(PARKING / "readings.csv"), "--mapping", str(PARKING / "mapping.toml"))
    by_hand = explain("--input", str(_parking_by_hand(tmp_path / "readings.jsonl")))
    assert mapped.returncode == by_hand.returncode == 0, mapped.stderr + by_hand.stderr
    assert mapped.stdout.startswith(":signpostFull(:south): by ") and mapped.stdout == by_hand.stdout
    unmapped = explain("--input", str(PARKING / "readings.csv"))
    assert unmapped.returncode == 2 and "--mapping MAP.toml" in unmapped.stderr
