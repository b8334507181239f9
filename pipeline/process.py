"""The process boundary of the ``dotr`` command: its exit codes (docs/cli.md) and its signals.
SIGINT and SIGTERM end the command at any moment, start-up included, with their exit code and
one line on standard error, never a traceback: until a run installs its own handlers (which let
a time point finish first), they raise :class:`Interrupted`."""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_USAGE = 2  # rule, background, file or usage errors; a checkpoint that belongs to another run
EXIT_BAD_RECORD = 3  # a bad record with --on-error stop
EXIT_BUDGET = 4  # a time point made more facts and answers than --max-derived
EXIT_MEMORY = 5  # memory ran out
EXIT_IO = 74  # a file could not be read or written while running (disk full, read-only, I/O error)
EXIT_SIGINT = 130
EXIT_PIPE = 141  # standard output was closed by its reader (``dotr run | head``)
EXIT_SIGTERM = 143


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (``code``: the exit code). Not an ``Exception``: a reader that
    turns any error of a record into a bad record (``except Exception``) must let it through,
    or a signal landing while a record is read ends the run as a bad record (exit 3).
    ``inside``: raised in a time point by the engines' check (the time point is abandoned)."""

    def __init__(self, code: int, inside: bool = False):
        super().__init__(code)
        self.code, self.inside = code, inside


def signal_code(signum: int) -> int:
    return EXIT_SIGINT if signum == signal.SIGINT else EXIT_SIGTERM


def _interrupt(signum, _frame) -> None:
    raise Interrupted(signal_code(signum))


def interruptible() -> None:
    """From now on SIGINT and SIGTERM raise :class:`Interrupted` (the command's start-up)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(signum, _interrupt)
        except ValueError:  # not the main thread
            pass
