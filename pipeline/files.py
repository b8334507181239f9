"""The files a run reads and writes, with what a checkpoint needs to know of them: the input read
line by line, with the SHA-256 of the lines consumed so far (:class:`InputLines`), and each
output written in order, with the length and SHA-256 of what was written (:class:`OutputFile`),
so that a run continued from a checkpoint can check that both are still the ones it committed.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "out.jsonl")
>>> out = OutputFile(path)
>>> out.write('{"t": 1}\\n')
>>> out.sync(); committed = out.committed
>>> out.write('{"t": 2}\\n'); out.close()  # (written after the commit)
>>> again = OutputFile(path, committed)  # continued: cut back to what was committed
>>> again.size, open(path).read()
(9, '{"t": 1}\\n')
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections import deque
from typing import BinaryIO, Callable, Iterator

from dotr.rules import DotrError

#: the default bound on a record's length in bytes (``dotr run --max-record-size``): a record is
#: held in memory whole, at about 80 bytes per byte once parsed and interned
MAX_RECORD_SIZE = 16 * 2**20


class FileProblem(DotrError):
    """A file a run needs cannot be read or written (missing, a directory, no permission, disk
    full), or is not what a checkpoint committed."""


class FileIOError(FileProblem):
    """A file could not be read or written while the run went on (a full disk, a read-only file
    system, an I/O error): what was committed stands."""


def describe(err: OSError) -> str:
    """An ``OSError``'s reason in a few words (``no such file or directory``)."""
    return (err.strerror or str(err)).lower()


class TooLong(str):
    """A line longer than the bound, cut to its first characters (what the rejects file shows):
    the readers turn it into a bad record naming its line."""

    limit: int = MAX_RECORD_SIZE


# ------------------------------------------------------------------------------- outputs
class OutputFile:
    """A file written in order (``write`` takes text, written as UTF-8) whose committed prefix is
    known by its length and SHA-256 (``committed``). Opened with ``committed`` (a checkpoint's),
    the file must still begin with exactly that prefix: it is cut back to it and written on from
    there. ``lazy``: the file is created at the first write (a rejects file exists only when
    something was rejected); ``check_only``: the committed prefix must be the whole file, which
    is left as it is. Never follows a symbolic link at ``path``."""

    def __init__(self, path: str, committed: tuple[int, str] | None = None, lazy: bool = False,
                 check_only: bool = False):
        self.path = path
        self.size = 0
        self._hash = hashlib.sha256()
        self._file: BinaryIO | None = None
        if committed is not None and committed[0] > 0:
            self._reopen(*committed, check_only)
        elif not lazy:
            self._open(truncate=True)

    def _open(self, truncate: bool) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | (os.O_TRUNC if truncate else 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as err:
            if os.path.islink(self.path):
                raise FileProblem(f"{self.path} is a symbolic link: dotr does not write through links (give the "
                                  "file it points to)") from None
            raise FileProblem(f"{self.path}: cannot be written ({describe(err)})") from None
        # (written only: a buffer that also reads would seek, a system call, at every flush)
        self._file = os.fdopen(fd, "wb", buffering=1 << 16)

    def _reopen(self, size: int, digest: str, check_only: bool) -> None:
        if not os.path.lexists(self.path):
            raise FileProblem(f"{self.path} is gone: it held the {size:,} bytes this checkpoint committed")
        self._open(truncate=False)
        f = self._file
        have = os.fstat(f.fileno()).st_size
        if have < size or check_only and have != size:
            raise FileProblem(f"{self.path} is {'shorter' if have < size else 'longer'} ({have:,} bytes) than the "
                              f"{size:,} bytes this checkpoint committed")
        done = 0
        while done < size:
            chunk = os.pread(f.fileno(), min(size - done, 1 << 20), done)
            if not chunk:
                break
            self._hash.update(chunk)
            done += len(chunk)
        if self._hash.hexdigest() != digest:
            raise FileProblem(f"{self.path} does not hold what this checkpoint committed (its first {size:,} bytes "
                              "differ)")
        if check_only:
            return
        f.truncate(size)  # (what was written after the last commit goes)
        f.seek(size)
        self.size = size

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        if self._file is None:
            self._open(truncate=True)
        try:
            self._file.write(data)
        except OSError as err:
            raise FileIOError(f"{self.path}: cannot be written ({describe(err)})") from None
        self._hash.update(data)
        self.size += len(data)

    def flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as err:
                raise FileIOError(f"{self.path}: cannot be written ({describe(err)})") from None

    def sync(self) -> None:
        """Flush to disk (before a commit names this length)."""
        if self._file is not None:
            self.flush()
            try:
                os.fsync(self._file.fileno())
            except OSError as err:
                raise FileIOError(f"{self.path}: cannot be written ({describe(err)})") from None

    @property
    def committed(self) -> tuple[int, str]:
        """``(length, SHA-256)`` of what was written: what a commit records."""
        return self.size, self._hash.hexdigest()

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as err:
                raise FileIOError(f"{self.path}: cannot be written ({describe(err)})") from None


class StandardOutput:
    """Standard output as :class:`OutputFile`'s writer side (no commits: a checkpoint needs a file)."""

    path = "-"

    def __init__(self) -> None:
        self.size = 0
        self._out = sys.stdout.buffer

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        try:
            self._out.write(data)
        except BrokenPipeError:  # (its reader went away: the command ends quietly)
            raise
        except OSError as err:
            raise FileIOError(f"standard output cannot be written ({describe(err)})") from None
        self.size += len(data)

    def flush(self) -> None:
        try:
            self._out.flush()
        except BrokenPipeError:
            raise
        except OSError as err:
            raise FileIOError(f"standard output cannot be written ({describe(err)})") from None

    sync = close = flush


# ------------------------------------------------------------------------------- input
class InputLines:
    """The lines of the input (a file, or standard input for ``-``), numbered from 1, as text
    (UTF-8; a byte that is not UTF-8 kept as a lone surrogate for the reader to reject). A line
    longer than ``limit`` bytes (0: no bound) comes as a :class:`TooLong` with its first
    characters, the rest read past without being held. ``follow``: at the end, wait for more, as
    ``tail -F`` does: a file cut shorter than what was read, or replaced by a new file at its path
    (rotated: ``mv f f.1``, then a new ``f``), is read again from its start, and ``notice`` (by
    default standard error) is told.

    With ``digest`` (or ``skip``), ``consumed(n)`` says that the first ``n`` lines are evaluated:
    ``digest`` is then the SHA-256 of exactly those lines' bytes. Given ``skip`` (a checkpoint's
    ``(lines, SHA-256)``), the first lines are read, checked against it and not yielded."""

    def __init__(self, path: str, limit: int = MAX_RECORD_SIZE, follow: bool = False,
                 skip: tuple[int, str] | None = None, digest: bool = False,
                 notice: Callable[[str], None] | None = None):
        self.path, self.limit, self.follow = path, limit, follow
        self._notice = notice or (lambda text: print(f"dotr: {text}", file=sys.stderr, flush=True))
        self._digest = digest or skip is not None  # (only a checkpoint needs it: else lines are not kept)
        try:
            self._file: BinaryIO = open(path, "rb") if path != "-" else open(sys.stdin.fileno(), "rb", closefd=False)
        except OSError as err:
            raise FileProblem(f"{path}: cannot be read ({describe(err)})") from None
        self._hash = hashlib.sha256()
        self._pending: deque[tuple[int, bytes]] = deque()  # lines read, not yet consumed
        self._number = 0
        self._consumed = 0
        self._skip = skip

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()

    @property
    def lines_read(self) -> int:
        return self._number

    def consumed(self, lines: int) -> None:
        """The first ``lines`` lines are evaluated: their bytes go into :attr:`digest`."""
        pending = self._pending
        while pending and pending[0][0] <= lines:
            self._hash.update(pending.popleft()[1])
        self._consumed = max(self._consumed, lines)

    def __iter__(self) -> Iterator[str]:
        if self._skip is not None and self._skip[0]:
            self._skip_committed(*self._skip)
        while (line := self._next_line(self.follow)) is not None:
            data, size = line
            self._number += 1
            if size is None:
                if self._digest:
                    self._pending.append((self._number, data))
                yield data.decode("utf-8", "surrogateescape")
            else:
                if self._digest:
                    self._pending.append((self._number, _cut(data, size)))
                text = TooLong(data[:200].decode("utf-8", "replace"))
                text.limit = self.limit
                yield text

    def _next_line(self, wait: bool) -> tuple[bytes, int | None] | None:
        """The next line's bytes and None, or for a line longer than the limit its first bytes
        and its length (the rest read past, not held); None at the end of the input (``wait``:
        there is no end, a line still being written is waited for)."""
        f, limit = self._file, self.limit
        partial = b""
        while True:
            try:
                raw = f.readline(limit + 1 - len(partial) if limit > 0 else -1)
            except OSError as err:
                raise FileIOError(f"{self.path}: cannot be read ({describe(err)})") from None
            partial += raw
            if raw.endswith(b"\n"):
                return partial, None
            if 0 < limit < len(partial):  # too long: read past the rest of it
                size = len(partial)
                while not (rest := f.readline(1 << 20)).endswith(b"\n"):
                    if not rest:
                        if not wait:
                            break
                        time.sleep(0.1)
                    size += len(rest)
                return partial, size + len(rest)
            if not raw:  # the end of the input, for now
                if not wait:
                    return (partial, None) if partial else None
                if self._started_over():
                    f = self._file
                    if partial:  # (the old content's last line, never ended: it stands alone)
                        return partial, None
                    continue
                time.sleep(0.1)

    def _started_over(self) -> bool:
        """At the end of a followed file: whether it was cut shorter than what was read, or
        another file took its path; then the file at the path is read from its start."""
        try:
            now = os.stat(self.path)
            mine = os.fstat(self._file.fileno())
        except OSError:  # (renamed away, no new file yet: wait on the old one)
            return False
        if (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev):
            try:
                file = open(self.path, "rb")
            except OSError:
                return False
            self._file.close()
            self._file = file
            self._notice(f"{self.path} was replaced by a new file (rotated): reading the new file from its start "
                         f"(after line {self._number:,})")
            return True
        if mine.st_size < self._file.tell():
            self._file.seek(0)
            self._notice(f"{self.path} was cut to {mine.st_size:,} bytes (truncated): reading it again from its "
                         f"start (after line {self._number:,})")
            return True
        return False

    def _skip_committed(self, lines: int, digest: str) -> None:
        """Read the first ``lines`` lines, which a checkpoint evaluated, checking they are the
        ones it read."""
        for _ in range(lines):
            line = self._next_line(False)
            if line is None:
                raise FileProblem(f"{self.path} has fewer lines than the {lines:,} this checkpoint evaluated "
                                  "(another file, or cut)")
            self._hash.update(line[0] if line[1] is None else _cut(*line))
        if self._hash.hexdigest() != digest:
            raise FileProblem(f"{self.path} is not the input this checkpoint read (its first {lines:,} lines differ)")
        self._number = self._consumed = lines

    def close(self) -> None:
        if self.path != "-":
            self._file.close()


def _cut(data: bytes, size: int) -> bytes:
    """What the input's digest takes of a line too long to hold: its first bytes and its length."""
    return data + b"\0" + str(size).encode()
