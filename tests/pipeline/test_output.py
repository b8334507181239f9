"""What ``dotr run`` writes: every example's output, readable (default) and canonical
(``--full-iris``), follows the documented JSON Schema (docs/output.schema.json); a readable fact
reads back, with the rule file's prefixes, as the canonical fact it stands for; composite events
appear in every format."""

import json
from pathlib import Path

import jsonschema
import pytest
import rdflib

from dotr.pipeline.cli import main
from dotr.pipeline.input_facts import parse_fact
from dotr.pipeline.sinks.formats import FORMATS, OutputFormat
from dotr.rules import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "rules.dotr").exists())
SCHEMA = json.loads((ROOT / "docs/output.schema.json").read_text())


def _run(example: str, tmp_path, *extra) -> list[dict]:
    ex = ROOT / "examples" / example
    out = tmp_path / f"out{len(extra)}.jsonl"
    assert main(["run", "-q", "--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"),
                 "--input", str(ex / "stream.jsonl"), "--output", str(out), *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_output_follows_the_schema_and_reads_back(example, tmp_path):
    readable, canonical = _run(example, tmp_path), _run(example, tmp_path, "--full-iris")
    assert readable and [r["t"] for r in readable] == [r["t"] for r in canonical]
    for record in readable + canonical:
        jsonschema.validate(record, SCHEMA)
    prefixes = check(ROOT / "examples" / example / "rules.dotr").program.prefixes
    for short, full in zip(readable, canonical):
        assert len(short["facts"]) == len(full["facts"])
        for a, b in zip(short["facts"], full["facts"]):
            assert parse_fact(a, prefixes) == parse_fact(b), (a, b)
        for graph, doc in zip(short.get("graphs", []), full.get("graphs", [])):
            assert isinstance(graph, list) and isinstance(doc, str) and len(graph) == doc.count("\n")
        for e, f in zip(short.get("events", []), full.get("events", []), strict=True):
            assert (e["type"], e["pattern"], list(e["attributes"])) == (f["type"], f["pattern"], list(f["attributes"]))
            for a, b in zip(e["attributes"].values(), f["attributes"].values()):
                assert parse_fact(f"x({a})", prefixes) == parse_fact(f"x({b})"), (a, b)


def test_a_class_membership_prints_as_written_and_composite_events_appear_in_every_format(tmp_path):
    records = _run("trex", tmp_path)
    assert records[-1]["facts"][0].startswith(":Alarm(<urn:dotr:match:Fire:4000:")
    assert records[-1]["events"] == [{"type": "Fire", "pattern": "Fire",
                                      "attributes": {"area": "area_1", "temperature": "52"}}]
    ex = ROOT / "examples/trex"
    for fmt in ("trig", "nquads"):
        out = tmp_path / f"o.{fmt}"
        assert main(["run", "-q", "--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"),
                     "--input", str(ex / "stream.jsonl"), "--output", str(out), "--format", fmt]) == 0
        dataset = rdflib.Dataset()
        dataset.parse(data=out.read_text(), format=fmt)
        events = dataset.graph(rdflib.URIRef("urn:dotr:t:4000:events"))
        node = rdflib.URIRef("urn:dotr:event:4000:0")
        assert (node, rdflib.RDF.type, rdflib.URIRef("urn:dotr:type:Fire")) in events
        assert (node, rdflib.URIRef("urn:dotr:attribute:temperature"), rdflib.Literal(52)) in events


def test_the_summary_on_standard_error_and_in_a_stats_file(tmp_path, capsys):
    ex = ROOT / "examples/trex"
    stats = tmp_path / "stats.json"
    assert main(["run", "--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"), "--input",
                 str(ex / "stream.jsonl"), "--output", str(tmp_path / "o.jsonl"), "--stats", str(stats)]) == 0
    err = capsys.readouterr().err.splitlines()
    # (ms: no time point after a record's facts expire, where nothing printed could change)
    assert err[0].startswith("dotr: 3 records, 3 time points, 1 outputs, 0 rejected in ") and "start-up" in err[0]
    assert err[1:4] == ["  facts: :Alarm 1", "  events: Fire 1", "  graphs: Fire 1"]
    figures = json.loads(stats.read_text())
    assert figures["conclusions"] == {"facts": {":Alarm": 1}, "events": {"Fire": 1}, "graphs": {"Fire": 1},
                                      "answers": {}}
    assert (figures["records"], figures["time_points"], figures["outputs"], figures["rejects"]) == (3, 3, 1, 0)
    assert figures["slowest"]["t"] in (1000, 2000, 3000, 4000, 4001) and figures["startup_seconds"] > 0


@pytest.mark.parametrize("engine", ["embedded", pytest.param("spark", marks=pytest.mark.spark)])
def test_watch_shows_a_live_view_on_a_terminal(tmp_path, engine):
    """Run under a pseudo-terminal, as a person would see it: the view on standard error, the
    output file unchanged (on Spark, graphs are counted in total)."""
    import os
    import pty
    import re
    import subprocess
    import sys

    ex = ROOT / "examples/fire"
    primary, secondary = pty.openpty()
    out = tmp_path / "o.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "dotr", "run", "--watch", "--rules", str(ex / "rules.dotr"),
                             "--ontology", str(ex / "ontology.ttl"), "--input", str(ex / "stream.jsonl"),
                             "--output", str(out), "--engine", engine], cwd=ROOT, stdin=secondary, stdout=secondary, stderr=secondary,
                            env={**os.environ, "COLUMNS": "120", "TERM": "xterm"})
    os.close(secondary)
    screen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closed: the process has ended
            break
        if not chunk:
            break
        screen += chunk
    assert proc.wait(timeout=180) == 0
    os.close(primary)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.decode("utf-8", "replace"))
    assert "records 3" in text and "time points 3" in text
    assert re.search(r"patterns\s+" + ("Fire" if engine == "embedded" else r"\(patterns and queries\)") + r"\s+1", text)
    assert re.search(r"facts\s+:is_in_room\s+3", text)
    assert "latest (t=12): :is_in_room(:s2,:roomA)" in text
    last_view = text[text.rindex("dotr  t="):]
    assert last_view.startswith("dotr  t=12 ") or engine == "spark"  # (the last time point, not "t=-")
    assert out.read_text() == (ROOT / "tests/pipeline/golden/fire.jsonl").read_text()


def test_watch_without_a_terminal_writes_its_last_view_once(tmp_path):
    """Standard error a file: one view, the last, on lines of its own before the summary, its
    rate the summary's."""
    import re
    import subprocess
    import sys

    ex = ROOT / "examples/fire"
    proc = subprocess.run([sys.executable, "-m", "dotr", "run", "--watch", "--rules", str(ex / "rules.dotr"),
                           "--ontology", str(ex / "ontology.ttl"), "--input", str(ex / "stream.jsonl"),
                           "--output", str(tmp_path / "o.jsonl")], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert sum(line.startswith("dotr  t=") for line in lines) == 1 and lines[0].startswith("dotr  t=12 ")
    summary = next(line for line in lines if line.startswith("dotr: "))
    rate = lambda line: re.search(r"([\d,]+) records/s", line).group(1)  # noqa: E731
    assert rate(lines[0]) == rate(summary)


class _Counts:
    """A tiny output format: each time point's number of facts."""

    def __init__(self, out, prefixes, full_iris):
        self.out = out

    def write(self, result) -> None:
        self.out.write(f"{result.t} {len(result.facts)}\n")


def test_an_output_format_is_one_registry_entry(tmp_path, monkeypatch):
    """A writer and one entry of the output registry: dotr run offers it (--format), picks it by
    the output's extension, and writes with it (docs/architecture.md)."""
    monkeypatch.setitem(FORMATS, "counts", OutputFormat("counts", (".counts",), _Counts))
    (tmp_path / "r.dotr").write_text("hot(X) :- temp(X, V), V > 30 .\nwarm(X) :- temp(X, V), V > 20 .\n")
    (tmp_path / "s.jsonl").write_text('{"t": 1, "facts": ["temp(a, 35)"]}\n{"t": 2, "facts": ["temp(a, 25)"]}\n')
    run = ["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"), "-q"]
    assert main([*run, "--output", str(tmp_path / "out.counts")]) == 0
    assert (tmp_path / "out.counts").read_text() == "1 2\n2 1\n"
    assert main([*run, "--output", str(tmp_path / "out.txt"), "--format", "counts"]) == 0
    assert (tmp_path / "out.txt").read_text() == "1 2\n2 1\n"


@pytest.mark.parametrize(("output", "first"), [("out.trig", "@prefix"), ("out.nq", "<"), ("out.nquads", "<"),
                                               ("out.jsonl", "{"), ("out", "{")])
def test_the_output_format_follows_the_extension(tmp_path, output, first):
    (tmp_path / "r.dotr").write_text("@prefix : <http://ex.org/> .\n:hot(?x, true) :- :temp(?x, ?v), ?v > 30 .\n")
    (tmp_path / "s.jsonl").write_text('{"t": 1, "facts": [":temp(:a, 35)"]}\n')
    assert main(["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"), "-q",
                 "--output", str(tmp_path / output)]) == 0
    assert (tmp_path / output).read_text().startswith(first)


def test_a_format_chosen_by_the_extension_is_named_when_it_cannot_write_the_program(tmp_path, capsys):
    (tmp_path / "r.dotr").write_text("hot(X) :- temp(X, V), V > 30 .\n")
    (tmp_path / "s.jsonl").write_text('{"t": 1, "facts": ["temp(a, 35)"]}\n')
    out = tmp_path / "out.trig"
    assert main(["run", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"),
                 "--output", str(out)]) == 2
    assert (f"dotr: --output {out} (--format trig, chosen by its extension) writes RDF triples, and these "
            "predicates are not triples: hot/1") in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["trig", "nquads"])
def test_changes_in_rdf_replay_to_what_each_time_point_holds(fmt, tmp_path):
    """With ``--changes``, TriG and N-Quads write the added triples of t in ``<urn:dotr:t:T>`` and
    the removed ones in ``<urn:dotr:t:T:removed>``: replayed, they give at each time point the
    graph the run without ``--changes`` writes (facts come and go through a window)."""
    (tmp_path / "rules.dotr").write_text("@prefix : <http://ex.org/> .\n"
                                         ":hot(X, Y) :- [2] <> :temp(X, Y) .\n:Warm(X) :- :hot(X, Y) .\n")
    (tmp_path / "bg.ttl").write_text("")
    stream = [(1, "a", 50), (2, "b", 60), (3, "a", 50), (7, "c", 70), (8, "c", 71), (9, "a", 50), (15, "b", 61)]
    (tmp_path / "in.jsonl").write_text("".join(
        json.dumps({"t": t, "facts": [f"<http://ex.org/temp>(<http://ex.org/{s}>,{v})"]}) + "\n"
        for t, s, v in stream))

    def run(*extra: str) -> rdflib.Dataset:
        out = tmp_path / f"out{len(extra)}.{fmt}"
        assert main(["run", "-q", "--rules", str(tmp_path / "rules.dotr"), "--ontology", str(tmp_path / "bg.ttl"),
                     "--input", str(tmp_path / "in.jsonl"), "--output", str(out), "--format", fmt, *extra]) == 0
        dataset = rdflib.Dataset()
        dataset.parse(data=out.read_text(), format=fmt)
        return dataset

    def graph(dataset: rdflib.Dataset, name: str) -> set:
        return set(dataset.graph(rdflib.URIRef(name)))

    full, changes = run(), run("--changes")
    state: set = set()
    removals = 0
    for t in range(1, 16):  # (the run ends at the last input)
        added, removed = graph(changes, f"urn:dotr:t:{t}"), graph(changes, f"urn:dotr:t:{t}:removed")
        assert removed <= state and not added & state, t
        state = (state - removed) | added
        removals += len(removed)
        assert state == graph(full, f"urn:dotr:t:{t}"), t
    assert removals
