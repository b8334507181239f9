"""A checkpoint directory (``dotr run --checkpoint DIR``): one run at a time holds it, and it
continues only the run it belongs to.

``DIR/lock`` is held (an exclusive ``flock``) by the run using the directory, for its whole life;
the kernel releases it when the process ends, however it ends. ``DIR/state.dotr`` is the last
commit, a state file (:mod:`~dotr.pipeline.state_file`) whose header holds the fingerprint of
the program the run evaluates (the rule files' texts, each ontology file's bytes, the options
that change what is written): a run with another program is refused before any work, naming
what changed (:func:`differences`).

>>> differences({"rules": "a", "ontologies": ["b"], "options": {"format": "jsonl"}},
...             {"rules": "a", "ontologies": ["c"], "options": {"format": "trig"}})
['the ontology file 1 (its content)', '--format (was jsonl, now trig)']
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
import time
from pathlib import Path
from typing import Any, Iterable

from dotr.rules import DotrError
from dotr.rules.lang.loader import CheckResult

from . import state_file
from .files import FileProblem, describe

LOCK = "lock"
STATE = "state.dotr"
KIND = "checkpoint"
#: the state files of dotr before state format 1 (Python pickles, never read)
OLD_STATE = "state.pickle"


class CheckpointError(DotrError):
    """The checkpoint directory cannot be used: another run holds it, it belongs to another
    program or input, or it is not a directory."""


def fingerprint(checked: CheckResult, ontologies: Iterable[str], options: dict[str, Any]) -> dict:
    """What a run's output depends on besides its input: the rule files' texts (the file and its
    ``@import``s), each ontology file's bytes (SHA-256, in order), and ``options`` (those that
    change what is written)."""
    rules = hashlib.sha256()
    for path in sorted(checked.sources):
        rules.update(checked.sources[path].encode("utf-8", "surrogateescape") + b"\0")
    hashes = []
    for path in ontologies:
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
        except OSError as err:
            raise FileProblem(f"{path}: cannot be read ({describe(err)})") from None
        hashes.append(digest.hexdigest())
    return {"rules": rules.hexdigest(), "ontologies": hashes, "options": dict(sorted(options.items()))}


def differences(saved: dict, now: dict) -> list[str]:
    """What differs between two fingerprints, in words (empty: the same program)."""
    if not isinstance(saved, dict):
        saved = {}
    out = []
    if saved.get("rules") != now["rules"]:
        out.append("the rule file (its text, or a file it imports)")
    before, after = saved.get("ontologies"), now["ontologies"]
    if not isinstance(before, (list, tuple)) or len(before) != len(after):
        out.append(f"the ontology files ({len(before) if isinstance(before, (list, tuple)) else 'none'} then, "
                   f"{len(after)} now)")
    else:
        out += [f"the ontology file {i + 1} (its content)" for i, (a, b) in enumerate(zip(before, after)) if a != b]
    options = saved.get("options") if isinstance(saved.get("options"), dict) else {}
    for key, value in now["options"].items():
        if key in options and options[key] != value:  # (a key it lacks is an option added since)
            out.append(f"--{key.replace('_', '-')} (was {_shown(options.get(key))}, now {_shown(value)})")
    return out


def _shown(value: Any) -> str:
    return "off" if value is False or value is None else "on" if value is True else str(value)


class Checkpoint:
    """A checkpoint directory, held by this process from :meth:`open` to :meth:`close`."""

    def __init__(self, directory: str):
        self.directory = Path(directory)
        self._lock: int | None = None

    def open(self) -> None:
        """Create the directory if needed and take its lock (:class:`CheckpointError` when another
        process holds it)."""
        d = self.directory
        if d.exists() and not d.is_dir():
            raise CheckpointError(f"--checkpoint {d}: a file, not a directory")
        try:
            d.mkdir(parents=True, exist_ok=True)
            fd = os.open(d / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as err:
            raise CheckpointError(f"--checkpoint {d}: cannot be used ({describe(err)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise CheckpointError(f"--checkpoint {d} is in use by another dotr run ({holder or 'a process'}): "
                                  "wait for it to end, or stop it") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} on {socket.gethostname()}, since "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
        self._lock = fd

    def load(self, program: dict, upgrade: bool = False) -> tuple[dict, Any] | None:
        """The last commit's header and data, or None for a new directory. A commit of another
        program is refused (:class:`CheckpointError`, saying what changed), unless ``upgrade``
        and only the rule files and ontologies changed (the caller evaluates them from the next
        time point on)."""
        path = self.directory / STATE
        if not path.exists():
            if (self.directory / OLD_STATE).exists():
                raise CheckpointError(f"--checkpoint {self.directory} was written by an older dotr (a Python pickle, "
                                      "which is not read: reading one can run any code); start over with a new "
                                      "directory")
            return None
        header, data = state_file.read(path, KIND)
        changed = differences(header.get("program", {}), program)
        if upgrade:  # (the program's files may change; not the options)
            changed = [c for c in changed if not c.startswith(("the rule file", "the ontology file"))]
        if changed:
            raise CheckpointError(f"--checkpoint {self.directory} belongs to another program: "
                                  f"{'; '.join(changed)} changed since it was written. Its state cannot continue "
                                  "with this one: give a new --checkpoint directory (and --output) to start over")
        return header, data

    def commit(self, data: Any, program: dict) -> None:
        """Replace the last commit with ``data`` (atomically: a crash leaves one or the other)."""
        state_file.write(self.directory / STATE, KIND, data, {"program": program})

    def close(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # (releases the lock)
            self._lock = None
