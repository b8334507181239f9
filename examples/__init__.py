"""The examples that come with dotr, installed with the package: each a folder with a rule file
(``rules.dotr``), an ontology (``ontology.ttl``) and a stream (``stream.jsonl``).

>>> from dotr import examples
>>> examples.names()
['citybench', 'cooling', 'fire', 'moves', 'parking', 'stocks', 'traffic', 'trex']
>>> (examples.path("fire") / "rules.dotr").is_file()
True

``python -m dotr.examples NAME [FOLDER]`` copies example NAME into ``FOLDER/NAME`` (default
``examples/NAME``), so that the commands of the README and docs/cli.md run where you are.
"""

from __future__ import annotations

from pathlib import Path
from dotr.rules.lang.errors import UsageError

_HERE = Path(__file__).resolve().parent


def names() -> list[str]:
    """The examples' names."""
    return sorted(p.name for p in _HERE.iterdir() if (p / "rules.dotr").is_file())


def path(name: str) -> Path:
    """The folder of example ``name`` (``fire``, ``trex``, ...), where the package is installed."""
    if name not in names():
        raise UsageError(f"no example {name!r}: the examples are {', '.join(names())}")
    return _HERE / name
