"""Time points too far ahead on Spark (``--max-gap``): the split step checks the records of one
file; :func:`far_ahead`, in the conclude step, the gaps between files and micro-batches, as
:func:`~pipeline.io.bounded_gaps` checks the embedded run's stream."""

from __future__ import annotations

from ..io import gap_reason
from .elements import read_spans


def far_ahead(times: list[int], last_t: int | None, latest: int | None, max_gap: int, points: set[int]
              ) -> tuple[dict[int, str], int | None]:
    """The time points of a micro-batch (``times``, in order) more than ``max_gap`` after the
    latest time taken before them (``latest``, from the micro-batches before; 0: no bound), with
    the reason, as :func:`~pipeline.io.bounded_gaps` gives it to the embedded run; and the latest
    time taken after the micro-batch. The split step checks the records of one file; this, the
    gaps between files and micro-batches. Late time points (at or before ``last_t``, or before a
    time point of ``points`` evaluated in the micro-batch) are not taken.

    >>> far, latest = far_ahead([5, 2_000_000, 2_000_001], 4, 4, 1_000_000, {5, 2_000_000, 2_000_001})
    >>> far[2_000_001]
    "time 2000001 is 1,999,996 after the previous record's 5 (more than --max-gap 1,000,000)"
    >>> sorted(far), latest
    ([2000000, 2000001], 5)
    """
    far: dict[int, str] = {}
    for t in times:
        if last_t is not None and t <= last_t:  # (late: rejected as such)
            continue
        if max_gap and latest is not None and t - latest > max_gap:
            far[t] = gap_reason(t, latest, max_gap)
            continue
        latest = t if latest is None else max(latest, t)
        if t in points:
            last_t = t
    return far, latest


def far_rejects(records: list[tuple], reason: str) -> list[dict]:
    """The rejects of the records of a time point too far ahead (:func:`far_ahead`), each
    ``(source, line, span)``: their text read back from their file when the split step left it
    there (``span``: a local file's JSON Lines record), else None."""
    rows = [(source, line, None, "span" if span else "none", bytes.fromhex(span) if span else b"")
            for source, line, span in records]
    return [{"source": source, "line": line, "reason": reason,
             "record": payload.decode("utf-8", "replace").strip() if fmt == "jsonl" else None}
            for source, line, _, fmt, payload in read_spans(rows)]
