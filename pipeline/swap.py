"""A program change at a time point (docs/language.md, "Changing the program"): the new
program's reasoner, built with its background and brought up to date by evaluating the stream
history the old one kept, without output.

>>> from dotr.rules import check_text
>>> old = Reasoner(check_text("hot(X) :- [2] <> temp(X, V), V > 30 ."))   # (it keeps 2 time units)
>>> for t in (1, 2, 3):
...     _ = old.step(t, [f"temp(a, {28 + t})"])
>>> new = swapped(old, check_text("warm(X) :- [2] <> temp(X, V), V > 29 ."), (), 4)
>>> new.step(4, []).facts
['warm(a)']
"""

from __future__ import annotations

from typing import Iterable

from dotr.rules import DotrError, UsageError, check
from dotr.rules.lang.loader import CheckResult

from .reasoner import Reasoner


def swapped(old: Reasoner, checked: CheckResult, background: Iterable, t: int) -> Reasoner:
    """A reasoner for ``checked`` and ``background`` (with ``old``'s options) that evaluated,
    without output, what ``old`` kept of the stream before ``t`` (:func:`replay`); it evaluates
    ``t`` next. :class:`UsageError` when the time units differ."""
    if checked.program.timeunit != old.program.timeunit:
        raise UsageError(f"the new program's time unit ({checked.program.timeunit}) is not the running one's "
                         f"({old.program.timeunit}): times would change meaning")
    new = like(old, checked, background)
    replay(new, old.history.snapshot(old.dictionary), t)
    new.on_notice, new.on_stage = old.on_notice, old.on_stage
    return new


def checked_program(path: str) -> CheckResult:
    """The rule file of a program change, checked: a :class:`DotrError` naming its first error's
    file, line and column, on one line, when it has one (or cannot be read)."""
    result = check(path)
    if not result.ok:
        diag = next(d for d in result.diagnostics if d.severity == "error")
        where = f"{diag.span.path}:{diag.span.line}:{diag.span.column}: " if diag.span is not None else ""
        raise DotrError(f"{where}error[{diag.code}]: {diag.message}")
    return result


def like(old: Reasoner, checked: CheckResult, background: Iterable) -> Reasoner:
    """A new reasoner for ``checked`` and ``background`` with ``old``'s options."""
    return Reasoner(checked, background, include_background=old.include_background, max_rounds=old.max_rounds,
                    history=old.history_limit)


def replay(new: Reasoner, history: dict, t: int) -> None:
    """Evaluate, without output, on a reasoner that evaluated nothing yet, the time points of
    ``history`` (:meth:`History.snapshot <pipeline.history.History.snapshot>`) before ``t``
    from ``t - reach`` on, starting the timeline where the
    history's began or at ``t - reach`` when that is later, with every background change of the
    history, each where it was made (those older than the kept time points from the start); and
    the time points up to ``t`` where the output can change. What it prints next is whole
    (:meth:`Reasoner.forget_printed`)."""
    reach, first = history["reach"], history["first"]
    start = t if first is None else max(t - reach, first)  # (nothing evaluated yet: nothing to replay)
    changes: dict[int, list] = {}
    for when, removed, added in history["changes"]:
        if when <= start:  # (the background the kept stream began with)
            new.change_background(added, removed)
        else:
            changes.setdefault(when, []).append((removed, added))
    points = {when: streams for when, streams in history["points"] if when >= start}
    times = sorted(set(points) | set(changes) | {start})
    for when in times:
        if when >= t:
            break
        for _ in new.between(when):
            pass
        for removed, added in changes.get(when, ()):
            new.change_background(added, removed)
        new.step(when, {name: list(facts) for name, facts in points.get(when, ())})
    for _ in new.between(t):  # (the time points before t are the old program's)
        pass
    new.forget_printed()
