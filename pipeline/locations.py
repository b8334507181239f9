"""The ``--input`` and ``--output`` locations that are not files: a URL scheme each, and the
source and sink classes that read and write it. Anything else is a file, or ``-`` (standard
input or output). A new kind of location is a source and/or a sink module (as
:mod:`~dotr.pipeline.sources.mqtt` and :mod:`~dotr.pipeline.sinks.mqtt`) and one line of
:data:`SCHEMES`; :func:`~dotr.pipeline.sources.open_source` and
:func:`~dotr.pipeline.sinks.open_sink` open it, and ``dotr run`` checks no file for it.

>>> scheme_of("mqtts://broker.example/city/#"), scheme_of("out.jsonl"), is_file("-")
('mqtts', None, True)
"""

from __future__ import annotations

from importlib import import_module

_MQTT = ("dotr.pipeline.sources.mqtt:MqttSource", "dotr.pipeline.sinks.mqtt:MqttSink")

#: URL scheme -> (its source class, its sink class), each ``module:Class`` (imported when opened).
#: A source is built as ``Source(location, limit, skip, checkpoint, login)``, a sink as
#: ``Sink(location, committed, checkpoint, login)`` (what they are asked: sources/__init__.py,
#: sinks/__init__.py)
SCHEMES: dict[str, tuple[str, str]] = {"mqtt": _MQTT, "mqtts": _MQTT}


def scheme_of(location: str) -> str | None:
    """The scheme of a location :data:`SCHEMES` names (lower case), or None for a file or ``-``."""
    scheme, sep, _ = location.partition("://")
    return scheme.lower() if sep and scheme.lower() in SCHEMES else None


def is_file(location: str) -> bool:
    """Whether ``location`` is a file's path or ``-``, not a URL of :data:`SCHEMES`."""
    return scheme_of(location) is None


def opener(location: str, which: int):
    """The class that opens ``location`` (``which``: 0 its source, 1 its sink)."""
    module, name = SCHEMES[scheme_of(location) or ""][which].split(":")
    return getattr(import_module(module), name)


__all__ = ["SCHEMES", "is_file", "scheme_of"]
