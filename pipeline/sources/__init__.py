"""Where a run's records come from, chosen in one place (:func:`open_source`) from the
``--input`` location: a URL of :data:`~dotr.pipeline.locations.SCHEMES` its source (``mqtt://``
and ``mqtts://`` a broker's topic, :mod:`.mqtt`), anything else a file or standard input
(:class:`~dotr.pipeline.files.InputLines`).

A source is an iterable of lines (one record each) with what a checkpoint needs:
``consumed(n)`` (the first ``n`` lines are evaluated), ``digest``, ``lines_read``, ``close()``,
and optionally ``after_commit()`` (called once a commit naming the consumed lines is on disk).
"""

from __future__ import annotations

from typing import Callable

from ..files import InputLines
from ..locations import is_file, opener
from ..mqtt import Login


def open_source(location: str, limit: int, follow: bool = False, skip: tuple[int, str] | None = None,
                digest: bool = False, checkpoint: str | None = None, login: Login | None = None,
                notice: Callable[[str], None] | None = None):
    """The source named by ``location`` (``skip``: a checkpoint's ``(lines, SHA-256)`` to continue
    after; ``checkpoint``: its directory, for a broker's persistent session; ``notice``: told what
    a followed file's reader has to say, a truncation or a rotation)."""
    if not is_file(location):
        return opener(location, 0)(location, limit, skip, checkpoint, login or Login.from_environment())
    return InputLines(location, limit, follow, skip, digest=digest, notice=notice)


__all__ = ["open_source"]
