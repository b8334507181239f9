"""State files: checkpoints, snapshots and the Spark job's state, in a format that runs no code
when it is read (docs/cli.md, "State files").

A state file is three parts:

- the magic line ``dotr-state\\n``;
- a header: one line of JSON, ``{"format": 1, "kind": KIND, "dotr": VERSION, "body": {"bytes": N,
  "sha256": HEX}, ...}`` with what its writer adds (a checkpoint's fingerprints);
- the body: N bytes of MessagePack holding plain data only: nil, booleans, integers, floats,
  strings, bytes, arrays (read back as tuples), maps, and three extension types: 1 a set and 2 a
  frozenset (each its elements as an array), 3 a term of the rule language (an array: ``"n"``
  and a name, ``"i"`` and an IRI, ``"d"`` and a number, ``"D"`` and an integer's decimal text,
  ``"l"`` and a literal's lexical form, datatype and language, nil where absent).

Reading checks the magic, the format version, the kind, the body's length and SHA-256 before
decoding it; decoding builds nothing but the types above. A damaged, truncated, foreign or
crafted file is a :class:`StateFileError` naming the file and what is wrong with it.

>>> from dotr.rules import ir
>>> blob = encode("snapshot", {"t": 3, "seen": {(1, 2)}, "terms": [ir.Name("a"), ir.Num(2.5)]})
>>> decode(blob, "snapshot")[1]
{'t': 3, 'seen': {(1, 2)}, 'terms': (Name(value='a'), Num(value=2.5))}
>>> decode(blob[:-1], "snapshot", "s.state")
Traceback (most recent call last):
...
dotr.pipeline.state_file.StateFileError: s.state: damaged or incomplete (its body is 1 byte shorter than its header says)
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import msgpack

from dotr import __version__
from dotr.rules import DotrError, ir

MAGIC = b"dotr-state\n"
#: the version of the format this dotr writes; it reads every version up to it
FORMAT = 1
#: a header longer than this is not one (the file is read no further)
MAX_HEADER = 1 << 20

_SET, _FROZENSET, _TERM = 1, 2, 3


class StateFileError(DotrError):
    """A state file that cannot be read: not a state file, damaged, of another kind, or written
    by a newer dotr."""


# ------------------------------------------------------------------------------- encoding
def _default(value: Any) -> msgpack.ExtType:
    if isinstance(value, (set, frozenset)):
        return msgpack.ExtType(_SET if isinstance(value, set) else _FROZENSET, _pack(list(value)))
    kind = type(value)
    if kind is ir.Name:
        return msgpack.ExtType(_TERM, _pack(("n", value.value)))
    if kind is ir.Iri:
        return msgpack.ExtType(_TERM, _pack(("i", value.value)))
    if kind is ir.Num:
        number = value.value
        if type(number) is int and not -(1 << 63) <= number < 1 << 63:
            return msgpack.ExtType(_TERM, _pack(("D", str(number))))
        return msgpack.ExtType(_TERM, _pack(("d", number)))
    if kind is ir.Literal:
        return msgpack.ExtType(_TERM, _pack(("l", value.lexical, value.datatype, value.lang)))
    raise TypeError(f"a state holds plain data only, not {type(value).__name__}")


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, default=_default, use_bin_type=True, datetime=False)


def _ext(code: int, data: bytes) -> Any:
    items = _unpack(data)
    if code == _SET:
        return set(items)
    if code == _FROZENSET:
        return frozenset(items)
    if code == _TERM:
        return _term(items)
    raise StateFileError(f"unknown extension type {code}")  # (read() names the file)


_TERMS = {("n", 2): ir.Name, ("i", 2): ir.Iri}


def _term(items: tuple) -> ir.Const:
    shape = (items[0], len(items)) if items else None
    if shape in _TERMS and type(items[1]) is str:
        return _TERMS[shape](items[1])
    if shape == ("d", 2) and type(items[1]) in (int, float):
        return ir.Num(items[1])
    if shape == ("D", 2) and type(items[1]) is str and items[1].lstrip("-").isdigit():
        return ir.Num(int(items[1]))
    if shape == ("l", 4) and all(x is None or type(x) is str for x in items[1:]) and type(items[1]) is str:
        return ir.Literal(items[1], items[2], items[3])
    raise StateFileError(f"not a term: {items!r}")  # (read() names the file)


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, ext_hook=_ext, use_list=False, raw=False, strict_map_key=False,
                           timestamp=0)


def encode(kind: str, data: Any, header: dict | None = None) -> bytes:
    """The bytes of a state file of ``kind`` holding ``data`` (plain data, see above), with
    ``header``'s entries in its header."""
    body = _pack(data)
    head = {"format": FORMAT, "kind": kind, "dotr": __version__, **(header or {}),
            "body": {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}}
    return MAGIC + json.dumps(head, sort_keys=True).encode() + b"\n" + body


# ------------------------------------------------------------------------------- decoding
def decode(blob: bytes, kind: str, source: str = "state") -> tuple[dict, Any]:
    """The header and the data of a state file's bytes (``source`` names it in errors), checked
    to be a whole, undamaged state file of ``kind`` this dotr can read."""
    def fail(reason: str) -> StateFileError:
        return StateFileError(f"{source}: {reason}")

    if not blob.startswith(MAGIC):
        raise fail("not a dotr state file" + (" (a Python pickle, as dotr wrote before state format 1: it "
                                              "is not read, since reading one can run any code)"
                                              if blob[:1] == b"\x80" else ""))
    end = blob.find(b"\n", len(MAGIC), len(MAGIC) + MAX_HEADER)
    if end < 0:
        raise fail("damaged or incomplete (no header)")
    try:
        head = json.loads(blob[len(MAGIC):end])
        version, found, body_info = head["format"], head["kind"], head["body"]
        size, digest = body_info["bytes"], body_info["sha256"]
    except (ValueError, KeyError, TypeError):
        raise fail("damaged (its header is not one)") from None
    if type(version) is not int or type(size) is not int or type(digest) is not str:
        raise fail("damaged (its header is not one)")
    if version < 1:
        raise fail("damaged (its header names no format)")
    if version > FORMAT:
        raise fail(f"written by a newer dotr ({head.get('dotr', '?')}, state format {version}; this dotr "
                   f"{__version__} reads formats up to {FORMAT})")
    if found != kind:
        raise fail(f"a {found} state file, not a {kind}")
    body = blob[end + 1:]
    if len(body) != size:
        missing = size - len(body)
        raise fail("damaged or incomplete (its body is "
                   + (f"{missing} byte{'s' * (missing != 1)} shorter" if missing > 0 else f"{-missing} bytes longer")
                   + " than its header says)")
    if hashlib.sha256(body).hexdigest() != digest:
        raise fail("damaged (its body does not match its checksum)")
    try:
        return head, _unpack(body)
    except (StateFileError, ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as err:
        raise fail(f"damaged ({err})") from None


# ------------------------------------------------------------------------------- files
def write(path: str | Path, kind: str, data: Any, header: dict | None = None) -> None:
    """Write a state file atomically: to a temporary name of this process beside ``path``,
    flushed to disk, then renamed over ``path`` (and the directory flushed): a reader sees the
    old file or the new one, whole."""
    path = Path(path)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(encode(kind, data, header))
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    sync_directory(path.parent)


def read(path: str | Path, kind: str) -> tuple[dict, Any]:
    """The header and data of the state file at ``path`` (:func:`decode`)."""
    try:
        blob = Path(path).read_bytes()
    except OSError as err:
        raise StateFileError(f"{path}: cannot be read ({err.strerror or err})") from None
    return decode(blob, kind, str(path))


def sync_directory(folder: Path) -> None:
    """Flush a directory's entries to disk (a rename in it is then durable)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["FORMAT", "StateFileError", "encode", "decode", "write", "read", "sync_directory"]
