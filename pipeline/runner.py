"""``dotr run`` with the embedded pipeline: a stream in, each time point's output written as soon
as the time point is complete, and with ``--checkpoint`` a run that survives being killed.

A time point is complete when a record with a later time arrives, or the input ends; its output
is then written and flushed, so ``producer | dotr run | consumer`` sees each conclusion one record
after its input. ``--follow`` reads a growing file as ``tail -f`` does.

With ``--checkpoint DIR`` (:mod:`~dotr.pipeline.checkpoint`) the output, the rejects file and the
reasoner's state are committed together: the files are flushed to disk, then a state file
holding the reasoner's temporal state, the number and SHA-256 of the input lines consumed, each
file's committed length and SHA-256, is written beside the last one and renamed over it. The
same command run again continues from the last commit: the input's first lines and the files'
committed prefixes are checked to be those committed, the files are cut back to it, and the
result is byte for byte the output of a run that was never stopped. A run that finished is not
run again. SIGINT and SIGTERM commit and exit (130, 143) between two time points, never in one.
"""

from __future__ import annotations

import contextlib
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from dotr.rules import DotrError, InputError
from dotr.rules.engine.guard import GUARD, BudgetExceeded

from . import state_file
from .checkpoint import Checkpoint, CheckpointError, differences, fingerprint
from .files import MAX_RECORD_SIZE, OutputFile
from .io import MAX_GAP, BackgroundChange, ProgramChange, Record, taken
from .output import Output, OutputOptions, rejects_path
from .process import EXIT_OK, Interrupted, signal_code
from .locations import is_file
from .mqtt import Login
from .reasoner import Reasoner
from .records import Result
from .rollback import Point, Rollback
from .sinks import Tee, open_sink
from .sources import open_source
from .sources.formats import FORMATS, Reading
from .summary import RunStats
from .swap import NotSwapped, like, replay, swapped

#: seconds a time point under way when a signal comes may take to finish before it is abandoned
CANCEL_AFTER = 0.5


@dataclass
class Options:
    """What ``dotr run`` was asked for (the embedded part of its flags)."""

    input: str = "-"
    output: str = "-"
    format: str = "jsonl"
    input_format: str = "jsonl"
    on_error: str = "stop"
    rejects: str | None = None
    reorder_within: int = 0
    changes: bool = False
    all_time_points: bool = False
    follow: bool = False
    checkpoint: str | None = None
    commit_every: int = 1000  # time points
    commit_seconds: float = 10.0
    max_record_size: int = MAX_RECORD_SIZE  # bytes per line (0: unbounded)
    max_gap: int | None = None  # time units a record may jump after the previous (None: the unit's default; 0: no bound)
    full_iris: bool = False  # the canonical JSON Lines form (full IRIs, rdf:type triples, N-Triples graphs)
    login: Login | None = None  # an MQTT broker's (--input or --output mqtt://...)
    mapping: Any = None  # a CSV input's (pipeline/sources/csv.py)
    replay: float = 0.0  # a CSV input's pace (0: as fast as it is read)
    upgrade: bool = False  # a checkpoint's rule file or ontologies changed: evaluated from the next time point on
    rules: str | None = None  # the command line's rule file (SIGHUP under --follow reads it again)

    def fingerprinted(self) -> dict[str, Any]:
        """The options that change what a run writes (a checkpoint continues only with the same)."""
        return {"format": self.format, "full_iris": self.full_iris, "changes": self.changes,
                "all_time_points": self.all_time_points, "input_format": self.input_format,
                "max_record_size": self.max_record_size, "max_gap": self.max_gap,
                **({"mapping": self.mapping.digest} if self.mapping is not None else {})}


@dataclass
class RunState:
    """What a commit saves besides the reasoner."""

    lines: int = 0  # input lines consumed into evaluated time points
    input_sha256: str = ""  # of those lines' bytes
    output: tuple[int, str] = (0, "")  # the output's committed length and SHA-256
    rejects: tuple[int, str] = (0, "")  # the rejects file's
    rejected: int = 0  # records rejected
    previous: list[str] = field(default_factory=list)  # --changes: the facts printed last
    counts: dict = field(default_factory=lambda: {"records": 0, "time points": 0, "outputs": 0})
    finished: bool = False
    stats: dict | None = None  # the conclusions counted (RunStats.saved; None: not counted)
    # the last time point written (after a time point undone, those before it evaluated again are not written again)
    written: int | None = None
    #: the program a record put in effect: its "rules", "ontology" files, "line", "fingerprint"
    #: (None: the command line's)
    program: dict | None = None

    def to_data(self) -> dict:
        return {"lines": self.lines, "input_sha256": self.input_sha256, "output": self.output,
                "rejects": self.rejects, "rejected": self.rejected, "previous": self.previous,
                "counts": self.counts, "finished": self.finished, "stats": self.stats,
                "written": self.written, "program": self.program}

    @classmethod
    def from_data(cls, data: dict) -> "RunState":
        state = cls(lines=data["lines"], input_sha256=data["input_sha256"], output=tuple(data["output"]),
                    rejects=tuple(data["rejects"]), rejected=data["rejected"], previous=list(data["previous"]),
                    counts=dict(data["counts"]), finished=data["finished"], stats=data.get("stats"),
                    written=data.get("written"), program=data.get("program"))
        if not (type(state.lines) is int and type(state.input_sha256) is str and type(state.finished) is bool
                and _committed(state.output) and _committed(state.rejects) and type(state.rejected) is int
                and all(type(f) is str for f in state.previous)
                and set(state.counts) == {"records", "time points", "outputs"}
                and all(type(n) is int for n in state.counts.values())
                and (state.written is None or type(state.written) is int)
                and (state.program is None or type(state.program) is dict and type(state.program.get("rules")) is str)):
            raise state_file.StateFileError("not a run's state")  # (the caller names the checkpoint)
        return state


@dataclass
class Taken:
    """The records of a time point: how many, and (to reject them) their lines and texts."""

    count: int = 0
    records: list[tuple[int, str]] = field(default_factory=list)


def _committed(value: tuple) -> bool:
    return len(value) == 2 and type(value[0]) is int and value[0] >= 0 and type(value[1]) is str


class EmbeddedRun:
    """One ``dotr run``: :meth:`start` checks the files and builds or restores the reasoner,
    :meth:`run` evaluates.

    ``build`` makes the reasoner (from the files, or from ``--resume``); ``program`` is the
    program's fingerprint (:func:`~dotr.pipeline.checkpoint.fingerprint`), which a checkpoint
    must match; ``notice`` takes what the reasoner has to say on the way; ``load`` reads the
    program and background of a program change (a record's ``"program"``), raising a
    :class:`DotrError` when it cannot be applied."""

    def __init__(self, options: Options, build: Callable[[], Reasoner], program: dict | None = None,
                 output: OutputOptions | None = None, notice: Callable[[str], None] | None = None,
                 load: Callable[[ProgramChange], tuple] | None = None):
        self.o = options
        self._build = build
        self._rebuild = build  # the program in effect's reasoner, made afresh (what an undo restores into)
        self._load = load
        self.in_effect: ProgramChange | None = None  # the last program change made (None: the command line's)
        self.effect_print: dict | None = None  # its fingerprint (checkpoint.fingerprint)
        self._prefixes: dict[str, str] = {}  # the command line program's, for reading the stream
        #: program changes asked for outside the stream (dotr serve's POST /program, SIGHUP),
        #: made at the next time point
        self.pending_programs: list[ProgramChange] = []
        self._program = program or {}
        self._output_options = output or OutputOptions(options.format, {}, options.full_iris, options.changes,
                                                       options.all_time_points)
        self._notice = notice
        self.state = RunState()
        self.stats = RunStats()  # the run's figures (its conclusions' counts kept by a checkpoint)
        self.reasoner: Reasoner | None = None
        self.output: Output | None = None
        self.on_time_point: Callable[[int], None] | None = None  # called with each time point evaluated
        self.on_output: Callable[[str], None] | None = None  # given what is written of each time point
        self.lock: contextlib.AbstractContextManager = contextlib.nullcontext()  # held through each time point
        self._checkpoint = Checkpoint(options.checkpoint) if options.checkpoint else None
        self._input = None  # the source (pipeline/sources)
        self._files: list[Any] = []  # the output and the rejects file, once opened
        self._busy = False  # in a time point or a commit: a signal waits for its end
        self._stop: int | None = None  # an exit code, when a signal asked to stop
        self._last_commit = (0, time.monotonic())  # (time points, clock) at the last commit
        # in the gap before a time point (its records read, not evaluated: the input position
        # stays before them, so a restart reads them again and goes on from the reasoner's last
        # time point), with the rejects before its first record
        self._in_gap = False
        self._rejects_mark: tuple[int, tuple[int, str]] = (0, (0, ""))
        # --on-error skip: a time point that cannot finish is undone (pipeline/rollback.py)
        self._rollback = Rollback() if options.on_error == "skip" else None
        self.on_reasoner: Callable[[Reasoner], None] | None = None  # told of the reasoner that replaces one

    # ------------------------------------------------------------------------ start
    def start(self) -> bool:
        """Check the files, then build the reasoner, or restore it from the checkpoint; False if
        the checkpoint's run had finished (its output is checked, and left as it is)."""
        saved = None
        if self._checkpoint is not None:
            self._checkpoint.open()
            loaded = self._checkpoint.load(self._program, upgrade=True)  # (_continue decides on changed files)
            if loaded is not None:
                saved = loaded[1]
                try:
                    self.state = RunState.from_data(saved["run"])
                    if self.state.stats is not None:
                        self.stats.restore(self.state.stats)
                    self.stats.resumed_records = self.state.counts["records"]
                except Exception as err:  # (a state file with a valid checksum but no run's state in it)
                    raise state_file.StateFileError(f"{self.o.checkpoint}: not a run's state ({err})") from None
                if self.state.finished:
                    self._check_finished()
                    return False
        o, state = self.o, self.state
        skip = (state.lines, state.input_sha256) if self._checkpoint is not None else None
        self._input = open_source(o.input, o.max_record_size, o.follow, skip, self._checkpoint is not None,
                                  o.checkpoint, o.login, notice=self._notice)
        sink = open_sink(o.output, state.output if self._checkpoint is not None else None, o.checkpoint, o.login)
        if self.on_output is not None:
            sink = Tee(sink, self.on_output)
        self._files.append(sink)
        rejects = rejects_path(o.rejects, o.output)

        def open_rejects() -> OutputFile:
            file = OutputFile(rejects, None, lazy=True)
            self._files.append(file)
            return file

        committed_rejects = None
        if self._checkpoint is not None and state.rejects[0]:
            committed_rejects = OutputFile(rejects, state.rejects)
            self._files.append(committed_rejects)
        self.output = Output(sink, self._output_options, self.stats, open_rejects, state.counts,
                             set(state.previous))
        self.output.rejects, self.output.rejected = committed_rejects, state.rejected
        self.output.on_time_point = self.on_time_point
        self.reasoner = self._build()
        self._prefixes = self.reasoner.program.prefixes  # (the stream is read with the command line's)
        if saved is not None:
            try:
                self._continue(loaded[0], saved["reasoner"])
            except DotrError:
                raise
            except Exception as err:  # (as above: a well-formed file that is not a reasoner's state)
                raise state_file.StateFileError(f"{self.o.checkpoint}: not a reasoner's state for these rules "
                                                f"({type(err).__name__}: {err})") from None
        self.reasoner.on_notice = self._notice
        if self._rollback is not None:
            self._rollback.mark(self.reasoner)
        return True

    def _continue(self, header: dict, saved: dict) -> None:
        """Restore the reasoner of the last commit: the command line's, or the one a program
        change put in effect (its files unchanged); or, with ``--upgrade`` when the command line's
        files or those in effect changed, evaluate the command line's program from the time point
        after the last one committed on, over the history the state kept."""
        state, upgrade, built = self.state, False, self.reasoner
        checked, build = built.checked, lambda: built
        changed = differences(header.get("program", {}), self._program)  # (only the files: Checkpoint.load)
        if changed and not self._reloaded(state.program):
            if not self.o.upgrade:
                raise CheckpointError(f"--checkpoint {self.o.checkpoint} belongs to another program: "
                                      f"{'; '.join(changed)} changed since it was written. Its state cannot "
                                      "continue with this one: give a new --checkpoint directory (and --output) to "
                                      "start over, or --upgrade to evaluate the changed rule file or ontologies "
                                      "from the next time point on")
            upgrade = True
        elif state.program is not None:
            effect = ProgramChange(state.program["rules"], list(state.program["ontology"]), state.program["line"])
            checked, background, files = self._load(effect)
            changed = differences(state.program["fingerprint"], fingerprint(checked, files, {}))
            if not changed:
                build = self._rebuild = lambda: like(built, checked, background)
                self.in_effect, self.effect_print = effect, state.program["fingerprint"]
            elif self.o.upgrade:
                upgrade = True
            else:
                raise CheckpointError(
                    f"--checkpoint {self.o.checkpoint}: the program in effect since the program change on line "
                    f"{effect.line} of the input ({effect.rules}) changed since the last commit: "
                    f"{'; '.join(changed)}. Restore it, or give --upgrade to evaluate the command line's program "
                    "from the next time point on")
        if not upgrade:
            self.reasoner = Reasoner.resumed(saved, checked, build, **built.options)
            return
        state.program = None
        if saved["last_t"] is not None:
            replay(self.reasoner, saved["history"], saved["last_t"] + 1)

    def _reloaded(self, program: dict | None) -> bool:
        """Whether the program in effect is the command line's rule file as it is now, read
        again after the last start (SIGHUP, or a record naming it)."""
        if program is None or program["rules"] != self.o.rules or program["ontology"] is None:
            return False
        checked, _, files = self._load(ProgramChange(program["rules"], list(program["ontology"])))
        return not differences(program["fingerprint"], fingerprint(checked, files, {}))

    @property
    def source_name(self) -> str:
        """The input as messages name it (a broker's address without credentials)."""
        return getattr(self._input, "path", self.o.input)

    def _check_finished(self) -> None:
        """A finished run's output and rejects file are still what it committed (else a re-run
        would say its output stands when it does not)."""
        state, o = self.state, self.o
        for path, committed in ((o.output, state.output), (rejects_path(o.rejects, o.output), state.rejects)):
            if committed[0] and is_file(path):  # (a broker's messages cannot be read back)
                OutputFile(path, committed, check_only=True).close()

    # ------------------------------------------------------------------------ commits
    def commit(self, finished: bool = False) -> None:
        """Files, then state: the state never names output that is not on disk. Inside a time
        point's gap the rejects file is committed as it was before the time point's first record
        (what was rejected after it is read again by a restart)."""
        if self._checkpoint is None:
            return
        state, output = self.state, self.output
        output.sink.sync()
        state.output = output.sink.committed
        if output.rejects is not None:
            output.rejects.sync()
        state.rejected, state.rejects = self._rejects_mark if self._in_gap else (
            output.rejected, output.rejects.committed if output.rejects is not None else state.rejects)
        state.previous = sorted(output.previous)
        self._input.consumed(state.lines)
        state.input_sha256 = self._input.digest
        state.finished = finished
        state.stats = self.stats.saved() if self.stats.counting else None
        change = self.in_effect
        state.program = None if change is None else {"rules": change.rules, "ontology": change.ontology,
                                                      "line": change.line, "fingerprint": self.effect_print}
        self._checkpoint.commit({"run": state.to_data(), "reasoner": self.reasoner.state()},
                                self._program)
        if hasattr(self._input, "after_commit"):  # (a broker's messages are acknowledged now)
            self._input.after_commit()
        self._last_commit = (state.counts["time points"], time.monotonic())

    def _commit_due(self) -> bool:
        points, clock = self._last_commit
        return self._checkpoint is not None and (
            self.state.counts["time points"] - points >= self.o.commit_every
            or time.monotonic() - clock >= self.o.commit_seconds)

    # ------------------------------------------------------------------------ signals
    def _on_signal(self, signum, _frame) -> None:
        code = signal_code(signum)
        if self._busy:
            self._stop = code  # a time point or a commit is under way: stop after it ...
            # ... or, in a time point still running half a second later, at the engines' next
            # check: the time point is abandoned, its output not written, nothing committed
            GUARD.cancel(Interrupted(code, inside=True), at=time.monotonic() + CANCEL_AFTER)
        else:
            raise Interrupted(code)

    def _on_hangup(self, _signum, _frame) -> None:
        """SIGHUP (under ``--follow``): the command line's rule file, read again, is the program
        from the next time point on."""
        self.pending_programs.append(ProgramChange(self.o.rules))

    # ------------------------------------------------------------------------ the run
    def run(self) -> int:
        """Evaluate the input; returns the exit code (an :class:`InputError` propagates)."""
        handlers = {}
        reload = self.o.follow and self.o.rules is not None and self._load is not None
        for signum, handler in ((signal.SIGINT, self._on_signal), (signal.SIGTERM, self._on_signal),
                                *([(signal.SIGHUP, self._on_hangup)] if reload else [])):
            try:
                handlers[signum] = signal.signal(signum, handler)
            except ValueError:  # not the main thread: signals stay as they are
                pass
        try:
            try:
                self._evaluate(self._records())
            except InputError:
                self._busy = True
                self.commit()  # (the time points before the bad record: the same command starts after them)
                raise
            self._busy = True
            self.commit(finished=True)
            return EXIT_OK
        except Interrupted as stop:
            self._busy = True
            if not stop.inside:  # (inside a time point: the state is half of one, the last commit stands)
                self.commit()
            return stop.code
        finally:
            GUARD.cancel(None)  # (a signal during the last commit: nothing is left to cancel)
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            self.close()

    def close(self) -> None:
        """Close the files (flushed) and release the checkpoint."""
        try:
            for file in self._files:
                file.close()
        finally:
            if self._input is not None:
                self._input.close()
            if self._checkpoint is not None:
                self._checkpoint.close()

    def _evaluate(self, records: Iterator[Record]) -> None:
        state = self.state
        # the time point's records: how many, and with --on-error skip their lines and texts (to reject them)
        pending_t, pending, taken, change, programs = None, {}, Taken(), None, []
        keep = self._rollback is not None
        for record in records:
            if pending_t is not None and record.t != pending_t:
                evaluated = self._time_point(Point(pending_t, pending, change), taken, programs)
                pending, taken, change = {}, Taken(), None
                if programs:
                    programs = []
                if record.line:
                    state.lines = record.line - 1  # the lines before this record are evaluated
                if self._stop is not None:
                    raise Interrupted(self._stop)
                if self._commit_due() or not evaluated:  # (a re-run does not meet a rejected time point again)
                    self._busy = True
                    self.commit()
                    self._busy = False
                    if self._stop is not None:
                        raise Interrupted(self._stop)
            if record.t != pending_t:  # (what a commit inside this time point's gap keeps of the rejects file)
                self._rejects_mark = (self.output.rejected, self.output.rejects.committed
                                      if self.output.rejects is not None else self.state.rejects)
            pending_t = record.t
            pending.setdefault(record.stream, []).extend(record.facts)
            if record.background:
                if change is None:
                    change = BackgroundChange()
                change.update(record.background)
            if record.program is not None:
                programs.append((record.program, record.raw))
            taken.count += 1
            if keep:
                taken.records.append((record.line, record.raw))
        if pending_t is not None:
            self._time_point(Point(pending_t, pending, change), taken, programs)
            state.lines = self._input.lines_read

    def _time_point(self, point: Point, records: Taken, programs: list[tuple[ProgramChange, str]] = ()) -> bool:
        """Evaluate ``point`` (and the time points before it where the output can change) and
        write, after the program changes ``programs`` (with their records' texts); False if it
        could not finish and its records were rejected (``--on-error skip``)."""
        self._busy = True
        GUARD.cancel(None)
        try:
            with self.lock:
                clock = time.perf_counter
                # (the process's CPU clock is a system call of a few µs: read only for --on-error skip)
                cpu = time.process_time() if self._rollback is not None else 0.0
                start = clock()
                try:
                    for result in self._results(point.t, point.facts, point.change, programs):
                        now = clock()
                        if self.state.written is not None and result.t <= self.state.written:
                            start = now  # (evaluated again after a time point was undone: written before)
                            continue
                        matches = self.reasoner.last_matches if result.graphs else None
                        self.output.result(result, now - start,
                                           [m if isinstance(m, str) else m.pattern for m in matches] if matches else None)
                        self.state.written = result.t
                        start = clock()
                except BudgetExceeded as err:
                    if self._rollback is None or err.t != point.t:  # (a time point without input: no record to reject)
                        raise
                    self._undo(err, records)
                    return False
                self.state.counts["records"] += records.count
                self.output.flush()  # (the next time point can take long: a reader sees this one now)
                if self._rollback is not None:
                    self._rollback.evaluated(self.reasoner, point, time.process_time() - cpu)
                return True
        finally:
            self._busy = False
            GUARD.cancel(None)  # (a signal that came after the engines' last check: _stop has it)

    def _undo(self, err: BudgetExceeded, records: Taken) -> None:
        """Reject the records of the time point that could not finish, the reasoner as if they
        had never come (the time points without input written before it are not written again)."""
        reasoner = self._rollback.rewind(self._rebuild, self._notice)
        reasoner.on_stage = self.reasoner.on_stage
        self._replace(reasoner)
        for line, raw in records.records:
            self.output.reject({"line": line, "reason": str(err), "record": raw})
        self.output.flush()
        if self._notice is not None:
            self._notice(f"{err}: its {records.count} record{'s' * (records.count != 1)} rejected, the run goes on")

    def _replace(self, reasoner: Reasoner) -> None:
        """Go on with ``reasoner`` (a program change, a time point undone)."""
        self.reasoner = reasoner
        if self.on_reasoner is not None:
            self.on_reasoner(reasoner)

    def _results(self, t: int, facts: dict, change: BackgroundChange | None,
                 programs: list[tuple[ProgramChange, str]]) -> Iterator[Result]:
        self._in_gap = True
        for result in self.reasoner.between(t):  # (a gap can be long: stop and commit inside it too)
            yield result
            if self._stop is not None:
                raise Interrupted(self._stop)  # (run commits)
            if self._commit_due():
                self.output.flush()
                self.commit()
        self._in_gap = False
        if programs or self.pending_programs:
            asked, self.pending_programs = self.pending_programs, []
            for program, raw in [*programs, *((change, None) for change in asked)]:
                self._change_program(t, program, raw)
        if change:
            try:
                self.reasoner.change_background(change.add, change.remove)
            except InputError as err:  # (the change is not made: the reasoner rolled it back)
                if self.o.on_error == "stop":
                    raise InputError(str(err), change.line) from None
                self.output.reject({"line": change.line, "reason": str(err), "record": None})
        yield self.reasoner.step(t, facts)

    def _change_program(self, t: int, change: ProgramChange, raw: str | None) -> None:
        """Evaluate the program of ``change`` from ``t`` on; one that cannot be applied is a bad
        record, or for one asked for outside the stream (``raw`` None) a notice, and the running
        program runs on."""
        try:
            if self._load is None:
                raise DotrError("this run cannot change its program")
            checked, background, files = self._load(change)
            # (with a checkpoint, not on a stage whose rules changed in place: each commit would hold the background)
            self._replace(swapped(self.reasoner, checked, background, t, running_background=change.ontology is None,
                                  in_place=self._checkpoint is None))
            if self._rollback is not None:  # (an undo comes back no further than the change)
                self._rebuild = lambda: like(self.reasoner, checked, background)
                self._rollback.mark(self.reasoner)
            self.in_effect, self.effect_print = ProgramChange(change.rules, files, change.line), \
                fingerprint(checked, files, {})
        except DotrError as err:
            if isinstance(err, NotSwapped):  # (the running reasoner had given its stage away)
                self._replace(err.running)
            reason = f"the program change to {change.rules} is not made: {err}"
            if raw is None:
                if self._notice is not None:
                    self._notice(f"{reason}; the program in effect runs on")
                return
            if self.o.on_error == "stop":
                raise InputError(reason, change.line) from None
            self.output.reject({"line": change.line, "reason": reason, "record": raw})

    # ------------------------------------------------------------------------ input
    def _records(self) -> Iterator[Record]:
        """The input's records in time order, from the first line not evaluated yet (after a
        restart: records of time points evaluated before it are skipped too)."""
        o = self.o
        first = self.state.lines + 1
        last_t, prefixes = self.reasoner.last_t, self._prefixes
        max_gap = o.max_gap if o.max_gap is not None else MAX_GAP[self.reasoner.program.timeunit]

        def reject(err: InputError) -> None:
            if o.on_error == "stop":
                raise err
            self.output.reject({"line": err.line, "reason": str(err).split(": ", 1)[-1],
                                "record": getattr(err, "raw", None)})

        items = FORMATS[o.input_format].read(self._input, Reading(prefixes, first, o.mapping, o.replay))
        return taken(items, reject, max_gap, last_t, o.reorder_within)


__all__ = ["EmbeddedRun", "Options", "RunState"]
