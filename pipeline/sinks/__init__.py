"""Where a run's output goes, chosen in one place (:func:`open_sink`) from the ``--output``
location: a URL of :data:`~dotr.pipeline.locations.SCHEMES` its sink (``mqtt://`` and
``mqtts://`` a broker's topic, :mod:`.mqtt`), ``-`` standard output, anything else a file
(:class:`~dotr.pipeline.files.OutputFile`).

A sink has ``write(text)`` (one time point's output), ``flush()``, ``sync()`` (what was written is
safe: on disk, or acknowledged by the broker), ``committed`` and ``close()``.
"""

from __future__ import annotations

from ..files import OutputFile, StandardOutput
from ..locations import is_file, opener
from ..mqtt import Login


def open_sink(location: str, committed: tuple[int, str] | None = None, checkpoint: str | None = None,
              login: Login | None = None):
    """The sink named by ``location``, continued after ``committed`` (a checkpoint's)."""
    if not is_file(location):
        return opener(location, 1)(location, committed, checkpoint, login or Login.from_environment())
    if location == "-":
        return StandardOutput()
    return OutputFile(location, committed)


class Tee:
    """A sink that also gives each text written to ``also`` (``dotr serve``'s events)."""

    def __init__(self, sink, also):
        self.sink, self._also = sink, also

    def write(self, text: str) -> None:
        self.sink.write(text)
        self._also(text)

    def __getattr__(self, name: str):
        return getattr(self.sink, name)


__all__ = ["Tee", "open_sink"]
