"""What a user of an installed dotr does first, run against the installed package alone: the
README's example command (on the example the package carries) and each stage embedded with
objects in and out. Run it with the interpreter dotr is installed in, from anywhere:
``python smoke.py`` (it works in a temporary directory of its own and reads no source tree).
tests/test_wheel.py runs it in a virtualenv where the built wheel is installed; the cibuildwheel
recipe in pyproject.toml runs it on each repaired wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

EX = "http://ex.org/"


def check_command(work: Path) -> None:
    """The README's example command, on the fire example copied where the user is."""
    copied = subprocess.run([sys.executable, "-m", "dotr.examples", "fire"], cwd=work, capture_output=True,
                            text=True, check=True)
    assert copied.stdout.strip() == str(Path("examples") / "fire"), copied.stdout
    dotr = Path(sys.executable).with_name("dotr")
    run = subprocess.run([str(dotr), "run", "--rules", "examples/fire/rules.dotr", "--ontology",
                          "examples/fire/ontology.ttl", "--input", "examples/fire/stream.jsonl"],
                         cwd=work, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = {record["t"]: record for record in map(json.loads, run.stdout.splitlines())}
    assert lines[12]["facts"] == [":is_in_room(:s2,:roomA)"], lines[12]
    assert ":Fire" in json.dumps(lines[12]["graphs"]), lines[12]


def check_stages() -> None:
    """Each stage embedded, facts given as text, tuples and rdflib objects."""
    import rdflib

    import dotr
    from dotr.rules.lang import ir

    # the reasoner, on the bundled example
    fire = dotr.examples.path("fire")
    reasoner = dotr.Reasoner.from_files(fire / "rules.dotr", [fire / "ontology.ttl"])
    result = reasoner.step(1, [":s1(:locA)", ("<http://example.org/building#is_at_location>", ":s2", ":locB")])
    assert result.t == 1

    # the ontological stage: an rdflib Graph in, events out
    stage = dotr.OntologicalStage(dotr.check_text(f"""@prefix : <{EX}> .\n@profile rdfs .
event Alarm(?s) := select ?s where {{ ?s a :Alarm }} ."""),
                                  background=[(rdflib.URIRef(EX + "Smoke"), rdflib.RDFS.subClassOf,
                                               rdflib.URIRef(EX + "Alarm"))])
    g = rdflib.Graph()
    g.add((rdflib.URIRef(EX + "r1"), rdflib.RDF.type, rdflib.URIRef(EX + "Smoke")))
    assert stage.decode(stage.process(5, g).events["Alarm"]) == [(ir.Iri(EX + "r1"),)]

    # the LARS engine: facts as text
    lars = dotr.LarsEngine(dotr.parse("@T hot(V) :- [3] @T temp(V), V > 30 .").rules)
    assert lars.format(lars.step(0, ["temp(35)"])) == ["hot(35)"]

    # the pattern engine: rows of plain values
    patterns = dotr.PatternEngine(dotr.parse("""event Smoke(?area) := smoke(?area) .
event Temp(?area, ?value) := temp(?area, ?value) .
pattern Fire from Smoke and last Temp(area = Smoke.area, value > 45) within 300 from Smoke
  emit Fire(area = Smoke.area, temp = Temp.value) ."""))
    patterns.step(1, {"Temp": [("a1", 52)]})
    fired = [patterns.emitted(m, terms=True) for m in patterns.step(2, {"Smoke": [("a1",)]}).matches]
    assert fired[0]["attributes"] == {"area": ir.Name("a1"), "temp": ir.Num(52)}, fired

    # the EP-SPARQL engine: triples as tuples
    ep = dotr.EpSparqlEngine.from_program(dotr.parse(f"""@prefix : <{EX}> .
query Up := select ?c where {{ ?c :price ?p1 }} seq {{ ?c :price ?p2 }} filter(?p2 > ?p1) within 5 ."""))
    ep.step(1, [(":price", ":acme", 10)])
    assert ep.step(2, [(":price", ":acme", 12)]).answers == {"Up": [{"c": f"<{EX}acme>"}]}

    # C-SPARQL: an rdflib Graph as the background, atoms as text in the stream
    background = rdflib.Graph()
    background.add((rdflib.URIRef(EX + "B"), rdflib.URIRef(EX + "isIn"), rdflib.URIRef(EX + "C")))
    cs = dotr.CSparqlEngine(dotr.check_text(f"""@prefix : <{EX}> .
:isIn(?x, ?z) :- :isIn(?x, ?y), :isIn(?y, ?z) .
query Where := register compute every 1 as select ?z from stream :positions [range 10 step 1] where {{ :A :isIn ?z }} ."""),
                            background=background)
    answers = cs.step(1, {EX + "positions": [":isIn(:A, :B)"]}).answers
    assert answers == {"Where": [{"z": f"<{EX}B>"}, {"z": f"<{EX}C>"}]}, answers

    # a bad fact is a DotrError naming it, never a traceback from inside an engine
    try:
        lars.step(1, ["tmep(35)"])
    except dotr.FactError as err:
        assert "tmep" in str(err), err
    else:
        raise AssertionError("a fact of a relation no rule reads was accepted")


def check_compiled() -> None:
    """The modules of a time point's path are compiled, and imported compiled."""
    from dotr import compiled

    python = compiled.as_python()
    assert not python, f"not compiled: {python}"


def main() -> int:
    import dotr

    source = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
    installed = Path(dotr.__file__).resolve()
    assert source is None or source not in installed.parents, f"dotr is imported from the source tree: {installed}"
    check_compiled()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        check_command(Path(tmp))
        check_stages()
    print(f"dotr {dotr.__version__} from {installed.parent}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
