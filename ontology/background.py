"""Background knowledge from files: the files named, and the ``owl:imports`` they name only when
asked.

:func:`load_background` reads files (``ontology.rdf_files`` says who reads which format) into
:class:`~ontology.rdf_files.TripleBatch` es, which ``OntologicalStage`` interns in bulk. An
``owl:imports`` is not followed unless ``follow_imports`` says so: ``"local"`` follows imports of
``file:`` IRIs (a relative IRI resolves against the importing file), ``"remote"`` also those of
``http:`` and ``https:`` IRIs (an imported document found over the network has only its remote
imports followed). An import not followed is told once to ``notice`` (by default a
:class:`BackgroundNotice` warning).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "bg.ttl").write_text("@prefix : <http://ex.org/> . :a :p :b .")
>>> list(load_triples(d / "bg.ttl"))
[('<http://ex.org/a>', '<http://ex.org/p>', '<http://ex.org/b>')]
>>> _ = (d / "main.ttl").write_text('''@prefix owl: <http://www.w3.org/2002/07/owl#> .
... <http://ex.org/main> owl:imports <bg.ttl> .''')
>>> told = []
>>> len(load_background([d / "main.ttl"], notice=told.append)), told
(1, ['.../main.ttl imports <file:///.../bg.ttl>, not followed (follow_imports="local" reads it)'])
>>> [len(batch) for batch in load_background([d / "main.ttl"], follow_imports="local")]
[1, 1]
"""

from __future__ import annotations

import urllib.parse
import warnings
from pathlib import Path
from typing import Callable, Iterable, Iterator

from dotr.rules.lang.errors import BackgroundError, UsageError

from .rdf_files import MEDIA_TYPES, TripleBatch, format_of, read_document, read_file

__all__ = ["load_background", "load_triples", "BackgroundError", "BackgroundNotice", "TripleBatch", "FOLLOW"]

OWL_IMPORTS = "http://www.w3.org/2002/07/owl#imports"
#: the values of ``follow_imports``: None follows nothing
FOLLOW = (None, "local", "remote")
#: how long a fetched import may take, in seconds, and how large it may be
FETCH_TIMEOUT = 30
FETCH_LIMIT = 1 << 30
_ACCEPT = ("text/turtle, application/rdf+xml;q=0.9, application/n-triples;q=0.9, application/ld+json;q=0.8, "
           "application/owl+xml;q=0.5, */*;q=0.1")


class BackgroundNotice(UserWarning):
    """Something about the background that the user should know (an import not followed)."""


def load_triples(path: str | Path, classify: bool = False, follow_imports: str | None = None,
                 notice: Callable[[str], None] | None = None) -> Iterator[tuple]:
    """The triples of an RDF or OWL file (and of its imports, with ``follow_imports``) as
    :class:`~ontology.turtle.TokenTriple` s. ``classify``: an OWL file's TBox is classified by
    owlready2's HermiT first (which needs Java), the inferred subsumptions kept."""
    for batch in load_background([path], classify, follow_imports, notice):
        yield from batch


def load_background(paths: Iterable[str | Path], classify: bool = False, follow_imports: str | None = None,
                    notice: Callable[[str], None] | None = None) -> list[TripleBatch]:
    """The files ``paths`` read, each into a batch, and the documents their ``owl:imports`` name
    when ``follow_imports`` is ``"local"`` or ``"remote"`` (module docstring); each document
    once. ``notice`` hears of each import not followed, once."""
    if follow_imports not in FOLLOW:
        raise UsageError(f"follow_imports: one of {FOLLOW}, not {follow_imports!r}")
    tell = notice if notice is not None else (lambda text: warnings.warn(text, BackgroundNotice, stacklevel=3))
    told: set[str] = set()
    seen: set[str] = set()
    out: list[TripleBatch] = []
    pending: list[tuple[TripleBatch, bool]] = []  # (batch, read over the network)
    for path in paths:
        path = Path(path)
        seen.add(path.resolve().as_uri())
        batch = read_file(path, classify)
        out.append(batch)
        pending.append((batch, False))
    while pending:
        batch, remote = pending.pop(0)
        for target in batch.objects(OWL_IMPORTS):
            if type(target) is not str or target in seen:
                continue
            why = _not_followed(target, follow_imports, remote)
            if why is not None:
                if target not in told:
                    told.add(target)
                    tell(f"{batch.source} imports <{target}>, not followed ({why})")
                continue
            seen.add(target)
            imported = _read_import(target, batch.source)
            out.append(imported)
            pending.append((imported, target.startswith(("http:", "https:"))))
    return out


def _not_followed(target: str, follow: str | None, from_remote: bool) -> str | None:
    """Why the import ``target`` is not followed, or None when it is."""
    scheme = target.split(":", 1)[0].lower()
    if scheme == "file":
        if from_remote:
            return "a document read over the network does not open local files"
        return None if follow is not None else 'follow_imports="local" reads it'
    if scheme in ("http", "https"):
        return None if follow == "remote" else 'follow_imports="remote" fetches it'
    return "dotr follows imports of file:, http: and https: IRIs only"


def _read_import(target: str, importer: str) -> TripleBatch:
    import urllib.request  # (here: it imports an HTTP client and SSL, 8 ms at every start otherwise)

    if target.startswith("file:"):
        parsed = urllib.parse.urlparse(target)
        path = Path(urllib.request.url2pathname(parsed.path))
        if not path.is_file():
            raise BackgroundError(f"{importer}: imports <{target}>, which is not a file")
        return read_file(path)
    request = urllib.request.Request(target, headers={"Accept": _ACCEPT, "User-Agent": "dotr"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:
            data = response.read(FETCH_LIMIT + 1)
            media = response.headers.get_content_type()
            where = response.geturl()
    except OSError as err:
        raise BackgroundError(f"{importer}: imports <{target}>, which could not be fetched: {err}") from None
    if len(data) > FETCH_LIMIT:
        raise BackgroundError(f"{importer}: imports <{target}>, larger than {FETCH_LIMIT} bytes")
    if not where.startswith(("http:", "https:")):
        raise BackgroundError(f"{importer}: imports <{target}>, which redirects to <{where}>: refused")
    fmt = MEDIA_TYPES.get(media) or format_of(Path(urllib.parse.urlparse(where).path))
    return read_document(data, "xml" if fmt in (None, "owl") and media != "application/owl+xml" else fmt, target, where)
