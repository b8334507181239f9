"""``dotr run`` with the embedded pipeline: a stream in, each time point's output written as soon
as the time point is complete, and with ``--checkpoint`` a run that survives being killed.

A time point is complete when a record with a later time arrives, or the input ends; its output
is then written and flushed, so ``producer | dotr run | consumer`` sees each conclusion one record
after its input. ``--follow`` reads a growing file as ``tail -f`` does.

With ``--checkpoint DIR`` the output and the reasoner's state are committed together: the output
is flushed and fsynced, then the state (the reasoner's snapshot, the number of input lines
consumed, the output's length, the rejected records) is written to a new file, fsynced and renamed
over the last one. The same command run again continues from the last commit: the output is cut
back to its committed length, the input lines already consumed are skipped, and the result is
byte for byte the output of a run that was never stopped. A run that finished is not run again.
SIGINT and SIGTERM commit and exit (130, 143) between two time points, never in one.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, TextIO

from dotr.rules import InputError
from .reasoner import Reasoner
from .records import Result
from .summary import RunStats
from .io import MAX_RECORD_SIZE, BackgroundChange, Record, TooLong, ResultWriter, in_order, read_jsonl, read_laserpp, read_trig

#: exit codes (docs/cli.md)
EXIT_OK, EXIT_USAGE, EXIT_BAD_RECORD, EXIT_SIGINT, EXIT_SIGTERM = 0, 2, 3, 130, 143

STATE = "state.pickle"


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (``code``: the exit code). Not an ``Exception``: a reader that
    turns any error of a record into a bad record (``except Exception``) must let it through,
    or a signal landing while a record is read ends the run as a bad record (exit 3)."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


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
    max_record_size: int = MAX_RECORD_SIZE  # characters per line (0: unbounded)
    full_iris: bool = False  # the canonical JSON Lines form (full IRIs, rdf:type triples, N-Triples graphs)


@dataclass
class RunState:
    """What a commit saves besides the reasoner."""

    lines: int = 0  # input lines consumed into evaluated time points
    output_bytes: int = 0
    previous: set = field(default_factory=set)  # --changes: the facts printed last
    counts: dict = field(default_factory=lambda: {"records": 0, "time points": 0, "outputs": 0})
    rejects: list = field(default_factory=list)
    finished: bool = False


class EmbeddedRun:
    """One ``dotr run``: :meth:`start` builds or restores the reasoner, :meth:`run` evaluates."""

    def __init__(self, options: Options, build_reasoner, notice=None):
        self.o = options
        self._build = build_reasoner  # (saved state or None) -> Reasoner
        self._notice = notice  # (text) -> None: what the reasoner has to say on the way
        self.state = RunState()
        self.reasoner: Reasoner | None = None
        self.out: TextIO | None = None
        self._writer: ResultWriter | None = None
        self.stats = RunStats()  # this process's figures (not saved with a checkpoint)
        self.on_time_point = None  # called with each time point evaluated (a progress line)
        self._busy = False  # in a time point or a commit: a signal waits for its end
        self._stop: int | None = None  # an exit code, when a signal asked to stop
        self._last_commit = (0, time.monotonic())  # (time points, clock) at the last commit

    # ------------------------------------------------------------------------ checkpoints
    @property
    def _state_file(self) -> Path | None:
        return Path(self.o.checkpoint) / STATE if self.o.checkpoint else None

    def start(self) -> bool:
        """Build the reasoner, or restore it from the checkpoint; False if the run had finished."""
        state_file = self._state_file
        if state_file is not None and state_file.exists():
            with open(state_file, "rb") as f:
                saved = pickle.load(f)
            self.state = saved["run"]
            if self.state.finished:
                return False
            self.reasoner = self._build(saved["reasoner"])
        else:
            self.reasoner = self._build(None)
        self.reasoner.on_notice = self._notice
        self._open_output()
        return True

    def _open_output(self) -> None:
        if self.o.output == "-":
            self.out = sys.stdout
            return
        if self.o.checkpoint is None:
            self.out = open(self.o.output, "w", encoding="utf-8")
            return
        if not os.path.exists(self.o.output):
            open(self.o.output, "w").close()
        self.out = open(self.o.output, "r+", encoding="utf-8", newline="")
        self.out.truncate(self.state.output_bytes)  # what was written after the last commit goes
        self.out.seek(self.state.output_bytes)

    def commit(self, finished: bool = False) -> None:
        """Output, then state: the state never names output that is not on disk."""
        if self.o.checkpoint is None:
            return
        self.out.flush()
        if self.out is not sys.stdout:
            os.fsync(self.out.fileno())
            self.state.output_bytes = self.out.tell()
        self.state.finished = finished
        directory = Path(self.o.checkpoint)
        directory.mkdir(parents=True, exist_ok=True)
        part = directory / (STATE + ".part")
        with open(part, "wb") as f:
            pickle.dump({"run": self.state, "reasoner": self.reasoner.snapshot()}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, directory / STATE)
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._last_commit = (self.state.counts["time points"], time.monotonic())

    def _commit_due(self) -> bool:
        points, clock = self._last_commit
        return self.o.checkpoint is not None and (
            self.state.counts["time points"] - points >= self.o.commit_every
            or time.monotonic() - clock >= self.o.commit_seconds)

    # ------------------------------------------------------------------------ signals
    def _on_signal(self, signum, _frame) -> None:
        code = EXIT_SIGINT if signum == signal.SIGINT else EXIT_SIGTERM
        if self._busy:
            self._stop = code  # a time point or a commit is under way: stop after it
        else:
            raise Interrupted(code)

    # ------------------------------------------------------------------------ the run
    def run(self) -> int:
        """Evaluate the input; returns the exit code (an :class:`InputError` propagates)."""
        handlers = {}
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                handlers[signum] = signal.signal(signum, self._on_signal)
            except ValueError:  # not the main thread: signals stay as they are
                pass
        try:
            self._evaluate(self._records())
            self._busy = True
            self.commit(finished=True)
            return EXIT_OK
        except Interrupted as stop:
            self._busy = True
            self.commit()
            print(f"dotr: interrupted after {self.state.counts['time points']} time points"
                  + ("; the same command continues from there" if self.o.checkpoint else ""), file=sys.stderr)
            return stop.code
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            if self.out is not None:
                self.out.flush()
                if self.out is not sys.stdout:
                    self.out.close()
            self._write_rejects()

    def _evaluate(self, records: Iterator[Record]) -> None:
        state = self.state
        pending_t, pending, count, change = None, {}, 0, BackgroundChange()
        for record in records:
            if pending_t is not None and record.t != pending_t:
                self._time_point(pending_t, pending, count, change)
                pending, count, change = {}, 0, BackgroundChange()
                if record.line:
                    state.lines = record.line - 1  # the lines before this record are evaluated
                if self._stop is not None:
                    raise Interrupted(self._stop)
                if self._commit_due():
                    self._busy = True
                    self.commit()
                    self._busy = False
                    if self._stop is not None:
                        raise Interrupted(self._stop)
            pending_t = record.t
            pending.setdefault(record.stream, []).extend(record.facts)
            if record.background:
                change.update(record.background)
            count += 1
        if pending_t is not None:
            self._time_point(pending_t, pending, count, change)

    def _time_point(self, t: int, facts: dict, records: int, change: BackgroundChange | None = None) -> None:
        """Evaluate ``t`` (and the time points before it where the output can change) and write."""
        self._busy = True
        try:
            clock = time.perf_counter
            start = clock()
            for result in self._results(t, facts, change):
                now = clock()
                self._write(result, now - start)
                start = clock()
            self.state.counts["records"] += records
            self.out.flush()
        finally:
            self._busy = False

    def _results(self, t: int, facts: dict, change: BackgroundChange | None) -> Iterator[Result]:
        yield from self.reasoner.between(t)
        if change:
            try:
                self.reasoner.change_background(change.add, change.remove)
            except InputError as err:  # (the change is not made: the reasoner rolled it back)
                if self.o.on_error == "stop":
                    raise InputError(str(err), change.line) from None
                self.state.rejects.append({"line": change.line, "reason": str(err), "record": None})
        yield self.reasoner.step(t, facts)

    def _write(self, result: Result, seconds: float = 0.0) -> None:
        state = self.state
        state.counts["time points"] += 1
        self.stats.observe(result, seconds, [m if isinstance(m, str) else m.pattern for m in self.reasoner.last_matches]
                           if result.graphs else None)
        if self.on_time_point is not None:
            self.on_time_point(result.t)
        if self.o.changes:  # only what was added or removed since the previous time point
            state.previous = result.keep_changes(state.previous)
            if not result.removed and result.is_empty() and not self.o.all_time_points:
                return
        elif result.is_empty() and not self.o.all_time_points:
            return
        state.counts["outputs"] += 1
        if self._writer is None or self._writer.out is not self.out:
            self._writer = ResultWriter(self.out, self.o.format, self.reasoner.program.prefixes, self.o.full_iris)
        self._writer.write(result)

    # ------------------------------------------------------------------------ input
    def _records(self) -> Iterator[Record]:
        """The input's records in time order, from the first line not evaluated yet (after a
        restart: records of time points evaluated before it are skipped too, as are rejects
        already recorded)."""
        skip, state = self.state.lines, self.state
        last_t, prefixes = self.reasoner.last_t, self.reasoner.program.prefixes
        rejected = {r["line"] for r in state.rejects}

        def reject(line, reason: str, raw) -> None:
            if line not in rejected or not line:
                state.rejects.append({"line": line, "reason": reason, "record": raw})

        def records(lines):
            if self.o.input_format == "trig":
                items = read_trig("".join(lines))
            elif self.o.input_format == "laserpp":
                items = read_laserpp(lines, first_line=skip + 1, prefixes=prefixes)
            else:
                items = read_jsonl(lines, first_line=skip + 1, prefixes=prefixes)
            for item in items:
                if isinstance(item, InputError):
                    if self.o.on_error == "stop":
                        raise item
                    reject(item.line, str(item).split(": ", 1)[-1], getattr(item, "raw", None))
                elif last_t is None or item.t > last_t:
                    yield item

        source = open(self.o.input, encoding="utf-8", errors="surrogateescape") if self.o.input != "-" else \
            open(sys.stdin.fileno(), encoding="utf-8", errors="surrogateescape", closefd=False)
        with source:
            yield from in_order(records(self._lines(source, skip)), self.o.reorder_within,
                                (lambda r, reason: reject(r.line, reason, r.raw)) if self.o.on_error == "skip" else None)

    def _lines(self, source: TextIO, skip: int) -> Iterator[str]:
        """The lines after the first ``skip``; with ``--follow``, waiting at the end for more."""
        number, partial = 0, ""
        limit = self.o.max_record_size
        while True:
            line = source.readline(limit + 1 if limit > 0 else -1)
            too_long = 0 < limit < len(partial) + len(line) and not line.endswith("\n")
            if too_long:  # read past the rest of it, keeping its start for the rejects file
                while (rest := source.readline(1 << 20)) and not rest.endswith("\n"):
                    pass
            if not line:
                if not self.o.follow:
                    if partial:
                        yield partial
                    return
                time.sleep(0.1)
                continue
            if self.o.follow and not line.endswith("\n") and not too_long:  # a line still being written
                partial += line
                continue
            line, partial = partial + line, ""
            if too_long:
                line = TooLong(line[:200])
                line.limit = limit
            number += 1
            if number > skip:
                yield line

    def _write_rejects(self) -> None:
        rejects = self.state.rejects
        if not rejects:
            return
        path = self.o.rejects or ((self.o.output if self.o.output != "-" else "dotr") + ".rejects.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for r in rejects:
                f.write(json.dumps(r) + "\n")
        print(f"dotr: {len(rejects)} record(s) rejected, see {path}", file=sys.stderr)


__all__ = ["EmbeddedRun", "Options", "Interrupted", "EXIT_OK", "EXIT_USAGE", "EXIT_BAD_RECORD", "EXIT_SIGINT",
           "EXIT_SIGTERM"]
