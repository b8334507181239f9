"""Background knowledge from files: Turtle and N-Triples shaped like N-Triples through the fast
reader (``ontology.turtle``), other RDF through rdflib, OWL through owlready2.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "bg.ttl")
>>> _ = open(path, "w").write("@prefix : <http://ex.org/> . :a :p :b .")
>>> list(load_triples(path))
[('<http://ex.org/a>', '<http://ex.org/p>', '<http://ex.org/b>')]
>>> _ = open(path, "w").write('@prefix : <http://ex.org/> . :a :p "b" .')
>>> [tuple(str(x) for x in t) for t in load_triples(path)]  # a string: rdflib's terms
[('http://ex.org/a', 'http://ex.org/p', 'b')]
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Iterator

import rdflib
from rdflib.util import guess_format

from dotr.rules.lang.errors import DotrError

from . import turtle

_FORMATS = {".ttl": "turtle", ".nt": "nt", ".nq": "nquads", ".trig": "trig", ".rdf": "xml", ".xml": "xml",
            ".jsonld": "json-ld", ".json": "json-ld", ".n3": "n3", ".owx": "owl"}


_INFERRED = "http://dotr.invalid/inferred"


class BackgroundError(DotrError):
    """A background file could not be read."""


def load_triples(path: str | Path, classify: bool = False) -> Iterator[tuple]:
    """The triples of an RDF or OWL file, as ``OntologicalStage`` takes them: rdflib triples, or
    :class:`~ontology.turtle.TokenTriple` s (term texts) where the fast reader read the file.
    ``.owl`` and ``.owx`` files are read with owlready2;
    ``classify`` runs its bundled reasoner (HermiT, needs Java) on the TBox first and keeps the
    inferred subsumptions."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".owl", ".owx") or classify:
        yield from _owlready_triples(path, classify)
        return
    if path.is_dir():
        raise BackgroundError(f"{path}: a directory, not an RDF file")
    fmt = _FORMATS.get(suffix) or guess_format(str(path))
    if fmt is None:
        raise BackgroundError(f"{path}: unknown RDF format (use .ttl, .nt, .nq, .trig, .rdf, .jsonld or .owl)")
    try:
        if fmt in ("nquads", "trig"):
            dataset = rdflib.Dataset()
            dataset.parse(str(path), format=fmt)
            for s, p, o, _ in dataset.quads((None, None, None, None)):
                yield s, p, o
        else:
            fast = turtle.read(path.read_text(encoding="utf-8")) if fmt in ("turtle", "nt") else None
            if fast is not None:  # shaped like N-Triples: no rdflib parse (ontology.turtle)
                yield from dict.fromkeys(fast)  # (a graph: a triple written twice is one)
                return
            graph = rdflib.Graph()
            graph.parse(str(path), format=fmt)
            yield from graph
    except Exception as err:  # rdflib raises many kinds; name the file and keep the message
        raise BackgroundError(f"{path}: {err}") from err


def _owlready_reason(err: Exception, printed: str) -> str:
    """owlready2's error in one line: the parser's reason (``unbound prefix: line 2, column 65``)
    when its traceback named one, else the error's own text."""
    reasons = [line.split(": ", 1)[1] for line in printed.splitlines()
               if line.startswith(("xml.parsers.expat.ExpatError: ", "owlready2.base.OwlReadyOntologyParsingError: "))]
    if reasons:
        return "; ".join(dict.fromkeys(reasons))
    text = str(err.args[1][0]) if len(err.args) == 2 and isinstance(err.args[1], tuple) and err.args[1] else str(err)
    return text


def _owlready_triples(path: Path, classify: bool) -> Iterator[tuple]:
    import owlready2  # only this module imports owlready2

    world = owlready2.World()
    printed = io.StringIO()  # owlready2's parser thread prints a traceback before it raises
    try:
        with contextlib.redirect_stderr(printed):
            world.get_ontology(path.resolve().as_uri()).load()
            if classify:
                with world.get_ontology(_INFERRED + "#"):
                    owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    except Exception as err:
        raise BackgroundError(f"{path}: {_owlready_reason(err, printed.getvalue())}") from err
    graph = world.as_rdflib_graph()
    for s, p, o in graph:
        if str(s) != _INFERRED:  # the ontology holding the inferences is not part of the data
            yield s, p, o
