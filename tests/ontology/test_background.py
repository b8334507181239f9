"""Background knowledge in every supported format gives the same facts."""

import pytest

from dotr.ontology.background import BackgroundError, load_triples
from dotr.ontology.stage import OntologicalStage
from dotr.rules import check_text

HERE = __import__("pathlib").Path(__file__).parent
TTL = """@prefix : <http://ex.org/> .
:a :p :b . :b :p "lit"@en . :c :q 3 ."""
FORMATS = {
    "bg.ttl": TTL,
    "bg.nt": '<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n'
             '<http://ex.org/b> <http://ex.org/p> "lit"@en .\n'
             '<http://ex.org/c> <http://ex.org/q> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .\n',
    "bg.nq": '<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> <http://ex.org/g> .\n'
             '<http://ex.org/b> <http://ex.org/p> "lit"@en <http://ex.org/g> .\n'
             '<http://ex.org/c> <http://ex.org/q> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .\n',
    "bg.trig": "@prefix : <http://ex.org/> . :g { :a :p :b . :b :p \"lit\"@en . } :c :q 3 .",
    "bg.rdf": """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/">
  <rdf:Description rdf:about="http://ex.org/a"><ex:p rdf:resource="http://ex.org/b"/></rdf:Description>
  <rdf:Description rdf:about="http://ex.org/b"><ex:p xml:lang="en">lit</ex:p></rdf:Description>
  <rdf:Description rdf:about="http://ex.org/c">
    <ex:q rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">3</ex:q></rdf:Description>
</rdf:RDF>""",
    "bg.jsonld": """{"@context": {"ex": "http://ex.org/"}, "@graph": [
  {"@id": "ex:a", "ex:p": {"@id": "ex:b"}},
  {"@id": "ex:b", "ex:p": {"@value": "lit", "@language": "en"}},
  {"@id": "ex:c", "ex:q": 3}]}""",
}


def _facts(path):
    stage = OntologicalStage(check_text(""), list(load_triples(path)), freeze_gc=False)
    return sorted(stage.format_fact(rel, f) for rel, f, _ in stage.live_facts())


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_gives_the_same_facts(tmp_path, name):
    path = tmp_path / name
    path.write_text(FORMATS[name])
    assert _facts(path) == [
        '<http://ex.org/p>(<http://ex.org/a>,<http://ex.org/b>)',
        '<http://ex.org/p>(<http://ex.org/b>,"lit"@en)',
        '<http://ex.org/q>(<http://ex.org/c>,3)',
    ]


def test_owl_file_through_owlready2_and_classification():
    plain = {tuple(t.strip("<>") for t in triple) for triple in load_triples(HERE / "taxonomy.owl")}
    classified = {tuple(t.strip("<>") for t in triple) for triple in load_triples(HERE / "taxonomy.owl", classify=True)}
    onto = "http://ex.org/onto#"
    assert (onto + "A", "http://www.w3.org/2000/01/rdf-schema#subClassOf", onto + "B") in plain
    # HermiT's inferences are kept: D = A (owlready2 before 0.51 also asserts what follows, D
    # under B; from 0.51 on it leaves that to the equivalence)
    equivalent = (onto + "A", "http://www.w3.org/2002/07/owl#equivalentClass", onto + "D")
    assert equivalent in classified - plain
    assert classified - plain <= {equivalent, (onto + "D", "http://www.w3.org/2000/01/rdf-schema#subClassOf", onto + "B")}


def test_bad_file_names_the_file(tmp_path):
    path = tmp_path / "broken.ttl"
    path.write_text("@prefix : <http://ex.org/> . :a :p")
    with pytest.raises(BackgroundError, match="broken.ttl"):
        list(load_triples(path))
