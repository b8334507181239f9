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

from dotr.rules import UsageError
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.loader import CheckResult

from .reasoner import Reasoner


def swapped(old: Reasoner, checked: CheckResult, background: Iterable, t: int) -> Reasoner:
    """A reasoner for ``checked`` and ``background`` that evaluated, without output, the time
    points ``old`` kept before ``t`` (those from ``t - reach`` on, its
    :class:`~pipeline.history.History`'s reach; all of them when it keeps all), starting its
    timeline where ``old``'s began or at ``t - reach`` when that is later, with every background
    change ``old`` was given, each where it was made (those older than the kept time points from
    the start). It evaluates ``t`` next. :class:`UsageError` when the time units differ."""
    if checked.program.timeunit != old.program.timeunit:
        raise UsageError(f"the new program's time unit ({checked.program.timeunit}) is not the running one's "
                         f"({old.program.timeunit}): times would change meaning")
    new = Reasoner(checked, background, include_background=old.include_background, max_rounds=old.max_rounds)
    history = old.history
    start = None if history.reach is None else t - history.reach
    if history.first is not None and (start is None or start < history.first):
        start = history.first
    convert = _converter(old.dictionary, new.dictionary)
    changes = {}
    for when, removed, added in history.changes:
        if start is None or when <= start:  # (the background the kept stream began with)
            new.change_background([convert(f) for f in added], [convert(f) for f in removed])
        else:
            changes.setdefault(when, []).append((removed, added))
    points = {when: streams for when, streams in history.points_from(start)}
    times = sorted(set(points) | set(changes) | ({start} if start is not None and start < t else set()))
    for when in times:
        if when >= t:
            break
        for _ in new.between(when):
            pass
        for removed, added in changes.get(when, ()):
            new.change_background([convert(f) for f in added], [convert(f) for f in removed])
        facts = points.get(when, {None: []})
        new.step(when, {name: [convert(f) for f in items] for name, items in facts.items()})
    for _ in new.between(t):  # (the time points before t are the old program's)
        pass
    new.forget_printed()
    new.on_notice = old.on_notice
    return new


def _converter(old: TermDictionary, new: TermDictionary):
    """An interned fact of ``old``'s (``(relation, ids)``, maybe with an expiry) as ``new``'s."""
    term, intern = old.term, new.intern

    def convert(fact: tuple) -> tuple:
        rel, ids = fact[0], fact[1]
        return (intern(term(rel[0])), rel[1]), tuple(intern(term(i)) for i in ids)

    return convert
