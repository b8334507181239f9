"""The window atoms of LARS rules as the engine stores them: their kinds, the auxiliary relation
that stands for each, and horizon arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dotr.rules.engine.store import INF, RelKey


class Kind(StrEnum):
    """The window atoms' kinds (the value names the auxiliary relation)."""

    DIAMOND = "dia"  # [n] <> p, <> p: maintained incrementally, with horizons
    BOX = "box"
    AT = "at"
    TUPLE_DIAMOND = "tdia"
    TUPLE_BOX = "tbox"
    TUPLE_AT = "tat"

    @property
    def tuple_based(self) -> bool:
        """Whether the window counts atoms (``[n #]``) rather than time points."""
        return self in _TUPLE

    @property
    def operator(self) -> str:
        """The operator as a rule writes it: ``<>``, ``[]`` or ``@``.

        >>> Kind.TUPLE_BOX.operator, Kind.AT.operator
        ('[]', '@')
        """
        return {"dia": "<>", "box": "[]", "at": "@"}[self.value.removeprefix("t")]


_TUPLE = (Kind.TUPLE_DIAMOND, Kind.TUPLE_BOX, Kind.TUPLE_AT)


@dataclass
class _Aux:
    """An auxiliary relation standing for one window atom ``[window] op base`` (what
    ``LarsEngine.window_of`` tells of a rewritten rule's relation)."""

    rel: RelKey
    base: RelKey
    kind: Kind
    size: int  # window length in time points or atoms; INF for the whole stream


def _add(e: int, n: int) -> int:
    return INF if e >= INF or n >= INF else min(e + n, INF)
