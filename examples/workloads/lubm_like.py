"""A deterministic LUBM-like ontology (the ontology benchmarks' background): a schema with
subclass chains, subproperty chains, domain/range, a transitive property and inverse pairs, and
instance data that uses it.

>>> data = triples(1_000)
>>> len(data), data == triples(1_000), data[0][1]
(1000, True, 'http://www.w3.org/2000/01/rdf-schema#subClassOf')
"""

from __future__ import annotations

import random

EX = "http://lubm.example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"


def schema(classes_per_chain: int = 6, chains: int = 5) -> list[tuple[str, str, str]]:
    """The schema's triples: ``chains`` subclass and subproperty chains, their domains and
    ranges, ``partOf`` transitive, each chain's first property with an inverse."""
    out = []
    for c in range(chains):
        for i in range(classes_per_chain - 1):
            out.append((f"{EX}C{c}_{i}", RDFS + "subClassOf", f"{EX}C{c}_{i + 1}"))
    for c in range(chains):
        for i in range(3):
            out.append((f"{EX}p{c}_{i}", RDFS + "subPropertyOf", f"{EX}p{c}_{i + 1}"))
        out.append((f"{EX}p{c}_0", RDFS + "domain", f"{EX}C{c}_0"))
        out.append((f"{EX}p{c}_0", RDFS + "range", f"{EX}C{(c + 1) % chains}_0"))
    out.append((EX + "partOf", RDF_TYPE, OWL + "TransitiveProperty"))
    for c in range(chains):
        out.append((f"{EX}p{c}_0", OWL + "inverseOf", f"{EX}inv{c}"))
    return out


def triples(n: int, seed: int = 1, chains: int = 5) -> list[tuple[str, str, str]]:
    """About ``n`` triples (IRI strings, the same for the same ``n`` and ``seed``): the schema,
    then instance triples (types, chain properties, partOf)."""
    rnd = random.Random(seed)
    out = schema(chains=chains)
    entities = max(10, n // 4)
    while len(out) < n:
        e = rnd.randrange(entities)
        kind = rnd.random()
        if kind < 0.35:
            out.append((f"{EX}e{e}", RDF_TYPE, f"{EX}C{rnd.randrange(chains)}_0"))
        elif kind < 0.85:
            out.append((f"{EX}e{e}", f"{EX}p{rnd.randrange(chains)}_0", f"{EX}e{rnd.randrange(entities)}"))
        else:  # partOf forms shallow trees: transitive closure stays linear
            out.append((f"{EX}e{e}", EX + "partOf", f"{EX}e{e // 8}"))
    return out
