"""A program change at a time point (docs/language.md, "Changing the program"): the new
program's reasoner, on the running ontological stage (its rules changed in place where they
differ) or built with its background, brought up to date by evaluating the stream history the
old one kept, without output.

>>> from dotr.rules import check_text
>>> old = Reasoner(check_text("hot(X) :- [2] <> temp(X, V), V > 30 ."))   # (it keeps 2 time units)
>>> for t in (1, 2, 3):
...     _ = old.step(t, [f"temp(a, {28 + t})"])
>>> new = swapped(old, check_text("warm(X) :- [2] <> temp(X, V), V > 29 ."), (), 4, running_background=True)
>>> new.step(4, []).facts
['warm(a)']
>>> new.ontology is old.ontology   # (the ontological part is the old one's: its stage is taken over)
True
"""

from __future__ import annotations

from typing import Iterable

from dotr.ontology.stage import OntologicalStage
from dotr.rules import DotrError, UsageError, check
from dotr.rules.lang.loader import CheckResult

from .reasoner import Reasoner


class NotSwapped(DotrError):
    """A program change that failed after the running reasoner gave its ontological stage to the
    new one: ``running`` is the running program's reasoner, restored, to go on with."""

    def __init__(self, message: str, running: Reasoner):
        super().__init__(message)
        self.running = running


def swapped(old: Reasoner, checked: CheckResult, background: Iterable, t: int, running_background: bool = False,
            in_place: bool = True) -> Reasoner:
    """A reasoner for ``checked`` and ``background`` (with ``old``'s options) that evaluated,
    without output, what ``old`` kept of the stream before ``t`` (:func:`replay`); it evaluates
    ``t`` next. ``running_background``: ``background`` is the one ``old`` was built on. When it
    is, no background change was made and ``checked`` has ``old``'s facts and profiles
    (:func:`same_background`), the new reasoner takes over ``old``'s ontological stage, back to
    the background alone, instead of materialising the background again; where the stage's rules
    differ, they are changed in place (DRed: ``OntologicalStage.change_rules``), unless not
    ``in_place`` (then the stage is built afresh: a reasoner whose stage's rules changed in place
    has its own term ids, and its state is the whole state, background included:
    ``Reasoner.state``). ``old`` is then spent (if the new one fails, :class:`NotSwapped` carries
    ``old`` restored). :class:`UsageError` when the time units differ."""
    if checked.program.timeunit != old.program.timeunit:
        raise UsageError(f"the new program's time unit ({checked.program.timeunit}) is not the running one's "
                         f"({old.program.timeunit}): times would change meaning")
    history = old.history.snapshot(old.dictionary)
    kept = running_background and same_stage(old, checked)
    if kept or running_background and in_place and same_background(old, checked):
        new = _on_the_stage_of(old, checked, history, t, kept)
    else:
        new = like(old, checked, background)
        replay(new, history, t)
    new.on_notice, new.on_stage = old.on_notice, old.on_stage
    return new


def same_background(old: Reasoner, checked: CheckResult) -> bool:
    """Whether a reasoner for ``checked`` can take over ``old``'s ontological stage (its rules
    changed in place when they differ): the same facts and profiles, and ``old`` made no
    background change."""
    was, now = old.checked.program, checked.program
    return not old.changed_background and now.profiles == was.profiles and now.facts == was.facts


def same_stage(old: Reasoner, checked: CheckResult) -> bool:
    """Whether a reasoner for ``checked`` builds ``old``'s ontological stage over the same
    background, term for term: :func:`same_background`, and the same rules of that stage, the
    same events and prefixes."""
    was, now = old.checked.program, checked.program
    return (same_background(old, checked) and checked.analysis.ontological == old.checked.analysis.ontological
            and now.events == was.events and now.prefixes == was.prefixes)


def _on_the_stage_of(old: Reasoner, checked: CheckResult, history: dict, t: int, kept: bool) -> Reasoner:
    """:func:`swapped` on ``old``'s stage, back to the background alone and to ``old``'s first
    terms, its rules changed in place unless ``kept`` (:func:`same_stage`: the new reasoner's
    terms then have the ids one built from the files gives them if ``old``'s had:
    ``Reasoner.built_from_files``)."""
    stage, terms, saved = old.ontology, old.ontology_terms, old.temporal_snapshot()
    stage.reset(terms)
    if not kept:
        stage.change_rules(checked)
        changed_terms = len(stage.dictionary)
    try:
        new = like(old, checked, (), ontology=stage)
        new.built_from_files = old.built_from_files and kept
        replay(new, history, t)
        return new
    except DotrError as err:
        if not kept:  # (its rules back, with the terms they had)
            stage.reset(changed_terms)
            stage.change_rules(old.checked)
        stage.reset(terms)
        running = like(old, old.checked, (), ontology=stage)
        running.built_from_files = old.built_from_files
        running.restore_temporal(saved)
        running.on_notice, running.on_stage = old.on_notice, old.on_stage
        raise NotSwapped(str(err), running) from None


def checked_program(path: str) -> CheckResult:
    """The rule file of a program change, checked: a :class:`DotrError` naming its first error's
    file, line and column, on one line, when it has one (or cannot be read)."""
    result = check(path)
    if not result.ok:
        diag = next(d for d in result.diagnostics if d.severity == "error")
        where = f"{diag.span.path}:{diag.span.line}:{diag.span.column}: " if diag.span is not None else ""
        raise DotrError(f"{where}error[{diag.code}]: {diag.message}")
    return result


def like(old: Reasoner, checked: CheckResult, background: Iterable, ontology: OntologicalStage | None = None
         ) -> Reasoner:
    """A new reasoner for ``checked`` and ``background`` (or the ``ontology`` stage) with ``old``'s options."""
    return Reasoner(checked, background, ontology=ontology, **old.options)


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
