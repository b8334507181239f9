"""What ``dotr run`` writes: every example's output, readable (default) and canonical
(``--full-iris``), follows the documented JSON Schema (docs/output.schema.json); a readable fact
reads back, with the rule file's prefixes, as the canonical fact it stands for; composite events
appear in every format."""

import json
from pathlib import Path

import jsonschema
import pytest
import rdflib

from pipeline.cli import main
from pipeline.embedded import parse_fact
from rules import check

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
