"""RDF/XML checked before it is parsed: entity declarations bounded, none external.

An XML document can declare entities that expand to other entities, ten times at each of ten
levels: a kilobyte that expands to gigabytes (the "billion laughs"), which an RDF/XML parser
expands in full. :func:`check_xml` reads the document's declarations with the standard library's
expat parser, which expands nothing here, and refuses a document whose entities expand to more
than ``MAX_EXPANSION`` characters, or that declares an external entity (which would read another
file or reach the network); the body is not read.

>>> check_xml(b'<!DOCTYPE r [<!ENTITY owl "http://www.w3.org/2002/07/owl#">]><r/>', "ok.rdf")
>>> lol = '<!ENTITY a "' + 'xxxxxxxxxx' * 10 + '">' + ''.join(
...     f'<!ENTITY {n} "{("&" + p + ";") * 10}">' for p, n in zip("abcdefg", "bcdefgh"))
>>> check_xml(f'<!DOCTYPE r [{lol}]><r>&h;</r>'.encode(), "lol.rdf")
Traceback (most recent call last):
...
dotr.rules.lang.errors.BackgroundError: lol.rdf: the entity f expands to more than 1000000 characters (an XML entity bomb): refused
"""

from __future__ import annotations

import re
from xml.parsers import expat

from dotr.rules.lang.errors import BackgroundError

#: the most characters an entity may expand to
MAX_EXPANSION = 1_000_000

_REFERENCE = re.compile(r"&([A-Za-z_:][\w.:-]*);")


class _Stop(Exception):
    """The declarations are read: the rest of the document is not."""


def check_xml(data: bytes, source: str) -> None:
    """Raise :class:`~dotr.rules.lang.errors.BackgroundError` (naming ``source``) when the XML
    document ``data`` declares an external entity or one that expands to more than
    ``MAX_EXPANSION`` characters."""
    sizes: dict[str, int] = {}

    def declared(name, is_parameter, value, base, system_id, public_id, notation):
        if value is None:  # an external entity: another file or a URL
            raise BackgroundError(f"{source}: the entity {name} refers to {system_id or public_id!r} "
                                  f"(an external XML entity): refused, dotr reads only the files it is given")
        size = len(_REFERENCE.sub("", value))
        for ref in _REFERENCE.findall(value):
            size += sizes.get(ref, len(ref) + 2)
            if size > MAX_EXPANSION:
                break
        if size > MAX_EXPANSION:
            raise BackgroundError(f"{source}: the entity {name} expands to more than {MAX_EXPANSION} characters "
                                  f"(an XML entity bomb): refused")
        sizes[name] = size

    def start(*_):
        raise _Stop

    parser = expat.ParserCreate()
    parser.EntityDeclHandler = declared
    parser.StartElementHandler = start  # (the body starts: every declaration is read)
    try:
        parser.Parse(data, True)
    except _Stop:
        pass
    except expat.ExpatError as err:
        raise BackgroundError(f"{source}: not well-formed XML: {err}") from None
