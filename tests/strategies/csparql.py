"""The C-SPARQL tests' vocabulary: rules and background over :p, :q, :v and rdf:type (recursion,
negation, RDFS), and streams of triples on :s1, :s2 or the default stream."""

from hypothesis import strategies as st
from rdflib import Literal, URIRef

from dotr.rules import ir


EX = "http://ex.org/"
PREFIX = f"@prefix : <{EX}> .\n"
NODES = ["a", "b", "c", "d"]
STREAMS = [EX + "s1", EX + "s2"]
RULES = [
    "",
    ":p(?x, ?z) :- :p(?x, ?y), :p(?y, ?z) .",
    ":q(?y, ?x) :- :p(?x, ?y) .\n:p(?x, ?z) :- :q(?x, ?y), :q(?y, ?z) .",
    "@profile rdfs .",
    ":r(?x, ?y) :- :p(?x, ?y), not :q(?x, ?y) .",
]
BACKGROUND = [(":p", ":q", "rdfs:subPropertyOf"), (":C", ":D", "rdfs:subClassOf"), (":p", ":C", "rdfs:domain"),
              (":a", ":b", ":p"), (":c", ":C", "rdf:type"), (":d", "2", ":v")]


def node(text: str):
    if text.isdigit():
        return Literal(int(text))
    prefix, local = text.split(":")
    base = {"": EX, "rdf": str(ir.RDF), "rdfs": str(ir.RDFS)}[prefix]
    return URIRef(base + local)


@st.composite
def triples(draw):
    s = draw(st.sampled_from(NODES))
    kind = draw(st.sampled_from(["p", "p", "q", "v", "type"]))
    if kind == "v":
        return node(":" + s), node(":v"), Literal(draw(st.integers(1, 4)))
    if kind == "type":
        return node(":" + s), node("rdf:type"), node(":C")
    return node(":" + s), node(":" + kind), node(":" + draw(st.sampled_from(NODES)))


streams = st.lists(st.tuples(st.integers(0, 12), st.sampled_from([*STREAMS, None]), triples()), max_size=14)
