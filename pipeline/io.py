"""Records in: JSON Lines, Laser++ and TriG streams read into records, in time order (the
output formats' writers are ``pipeline/sinks/``).

>>> records = list(read_jsonl(['{"t": 1, "facts": ["temp(r1,25)"]}', '{"t": 2, "turtle": "<http://a> <http://b> 3 ."}']))
>>> [(r.line, r.t, len(r.facts)) for r in records]
[(1, 1, 1), (2, 2, 1)]
"""

from __future__ import annotations

import heapq
import json
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from dotr.ontology import turtle
from dotr.rules import InputError
from dotr.rules.engine.inputs import tight as _tight
from .files import TooLong
from .input_facts import _SHORT_FACT, checked_fact, fact_problem, simple_fact_list, simple_facts


@dataclass
class Record:
    line: int
    t: int
    facts: list
    raw: str
    stream: str | None = None  # the stream the record belongs to (for C-SPARQL windows)
    background: "BackgroundChange | None" = None  # facts the background gains and loses from t on
    program: "ProgramChange | None" = None  # the program in effect from t on


@dataclass
class BackgroundChange:
    """Background facts added and removed from a time point on (docs/cli.md, "Background
    changes"): fact strings, rdflib triples or Turtle tokens, as stream facts are."""

    add: list = field(default_factory=list)
    remove: list = field(default_factory=list)
    line: int | None = None  # the line of the (first) record that gave it

    def update(self, other: "BackgroundChange") -> None:
        """Apply ``other`` after this one (records of one time point, in order)."""
        self.add += other.add
        self.remove += other.remove
        self.line = self.line if self.line is not None else other.line

    def __bool__(self) -> bool:
        return bool(self.add or self.remove)


@dataclass
class ProgramChange:
    """A record's ``"program"`` (a rule file) and ``"ontology"`` (the background files, None: the
    running program's), paths as given (docs/language.md, "Changing the program")."""

    rules: str
    ontology: list[str] | None = None
    line: int | None = None


#: a record as ``json.dumps`` writes ``{"t": <integer>, "facts": [<strings>]}``, its strings with
#: nothing to unescape and its time well within ±2^62: the stream's usual record, read without
#: the JSON parser (the same record as :func:`json.loads` reads; any other text is read by it)
_PLAIN_RECORD = re.compile(r'\{"t": (-?(?:0|[1-9][0-9]{0,17})), "facts": \[((?:"[^"\\\x00-\x1f]*"(?:, "[^"\\\x00-\x1f]*")*)?)\]\}')
#: the keys a JSON Lines record may have (docs/cli.md)
RECORD_KEYS = frozenset({"t", "facts", "turtle", "background", "stream", "program", "ontology"})
#: times are below this in magnitude (the engines' "for ever" is 2^62)
MAX_TIME = 1 << 62


def _too_long(line: TooLong, number: int) -> InputError:
    return _with_raw(InputError(f"the record has more than {line.limit:,} bytes (--max-record-size)", number),
                     str(line))


def read_jsonl(lines: Iterable[str], first_line: int = 1, parse: bool = True,
               prefixes: dict[str, str] | None = None) -> Iterator[Record | InputError]:
    """Records of a JSON Lines stream: ``{"t": 12, "facts": [...]}`` or ``{"t": 12, "turtle":
    "..."}``. A malformed record is yielded as an :class:`InputError` naming its line (lines are
    numbered from ``first_line``). Fact strings are checked (:func:`~pipeline.input_facts.checked_fact`);
    with ``parse=False`` they stay strings, unchecked."""
    for number, raw in enumerate(lines, start=first_line):
        if type(raw) is TooLong:
            yield _too_long(raw, number)
            continue
        text = raw.strip()
        if not text:
            continue
        if not text.isascii():  # read with errors="surrogateescape": a byte that is no UTF-8 stays one
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                yield _with_raw(InputError("the line is not valid UTF-8", number), text)
                continue
        try:
            plain = _PLAIN_RECORD.fullmatch(text)
            if plain is not None:  # (the usual record: its "t" and its strings, without the JSON parser)
                listed = plain[2]
                record = {"t": int(plain[1]), "facts": listed[1:-1].split('", "') if listed else []}
            else:
                record = json.loads(text) if text.count('"t"') < 2 else json.loads(text, object_pairs_hook=_no_duplicates)
            if not isinstance(record, dict) or not isinstance(record.get("t"), int) or isinstance(record["t"], bool):
                raise InputError('a record is an object with an integer "t"', number)
            if not -MAX_TIME < record["t"] < MAX_TIME:
                raise InputError(f'"t" is beyond ±2^62: {record["t"]}', number)
            if not RECORD_KEYS.issuperset(record):
                unknown = sorted(set(record) - RECORD_KEYS)[0]
                raise InputError(f"a record has no key {unknown!r} (its keys: t, facts, turtle, background, stream, program, ontology)",
                                 number)
            given = record.get("facts", [])
            if type(given) is not list:
                raise InputError(f'"facts" is a list of facts, not {given!r}'[:300], number)
            facts = simple_fact_list(given) if parse else None
            if facts is None:
                facts = []
                for fact in given:
                    if not isinstance(fact, str):
                        raise InputError(f"a fact is a string, not {fact!r}", number)
                    facts.append(checked_fact(fact, prefixes) if parse else fact)
            unchecked = facts is given or not parse  # (strings checked_fact did not see: the fast path's)
            if unchecked and facts and max(map(len, facts)) >= _SHORT_FACT:
                for fact in facts:
                    if (problem := fact_problem(_tight(fact))) is not None:
                        raise InputError(problem, number)
            if plain is not None:  # (nothing else in it)
                yield Record(number, record["t"], facts, text)
                continue
            if "turtle" in record:
                if not isinstance(record["turtle"], str):
                    raise InputError(f'"turtle" is a string, not {record["turtle"]!r}', number)
                triples = turtle.read(record["turtle"])  # N-Triples-shaped: fast; else rdflib
                facts.extend(turtle.in_order(triples if triples is not None else _rdflib_turtle(record["turtle"])))
            change = _background(record.get("background"), prefixes, parse) if "background" in record else None
            if change is not None:
                change.line = number
            program = program_change(record, number) if "program" in record or "ontology" in record else None
            if "facts" not in record and "turtle" not in record and change is None and program is None:
                raise InputError('a record has "facts", "turtle", "background" or "program"', number)
            stream = record.get("stream")
            if stream is not None and not isinstance(stream, str):
                raise InputError(f'"stream" is an IRI string, not {stream!r}', number)
            if stream is not None and stream.startswith("<") and stream.endswith(">"):
                stream = stream[1:-1]  # the IRI as a rule file writes it
            yield Record(number, record["t"], facts, text, stream, change, program)
        except InputError as err:
            message = str(err).split(": ", 1)[-1] if str(err).startswith("line ") else str(err)
            yield _with_raw(InputError(message, number), text)
        except Exception as err:  # json, rdflib: name the line, keep their message
            yield _with_raw(InputError(f"{type(err).__name__}: {err}".splitlines()[0][:300], number), text)


def _rdflib_turtle(text: str) -> list:
    """A record's Turtle as rdflib reads it, each triple an RDF triple: rdflib takes a number
    where a predicate stands (``:s 1 :o``), which the record's reader rejects, naming its line."""
    import rdflib  # (imported by a record whose Turtle is not N-Triples-shaped, or by TriG input)

    triples = list(rdflib.Graph().parse(data=text, format="turtle"))
    for s, p, o in triples:
        if not isinstance(p, rdflib.URIRef):
            raise InputError(f"the predicate of a triple is an IRI, not {p.n3()}")
        if isinstance(s, rdflib.Literal):
            raise InputError(f"the subject of a triple is an IRI or a blank node, not {s.n3()}")
    return triples


def _background(value, prefixes: dict[str, str] | None, parse: bool) -> BackgroundChange:
    """A record's ``"background"``: ``{"add": ..., "remove": ...}``, each a list of facts in the
    rule syntax or a Turtle string."""
    if not isinstance(value, dict) or not value or set(value) - {"add", "remove"}:
        raise InputError('"background" is an object with "add" and/or "remove"')
    change = BackgroundChange()
    for key in ("add", "remove"):
        given = value.get(key, [])
        if isinstance(given, str):
            triples = turtle.read(given)
            facts = turtle.in_order(triples if triples is not None else _rdflib_turtle(given))
        elif isinstance(given, list) and all(isinstance(f, str) for f in given):
            facts = [checked_fact(f, prefixes) if parse else f for f in given]
        else:
            raise InputError(f'"background" "{key}" is a list of facts or a Turtle string, not {given!r}')
        getattr(change, key).extend(facts)
    return change


def program_change(record: dict, line: int | None) -> ProgramChange:
    """A record's ``"program"`` and ``"ontology"`` (:class:`InputError` when they are not a
    path and a list of paths)."""
    rules, ontology = record.get("program"), record.get("ontology")
    if not isinstance(rules, str) or not rules:
        raise InputError('"program" is the path of a rule file' if "program" in record else
                         '"ontology" comes with "program" (the background files of the program in effect from t on)')
    if ontology is not None and not (isinstance(ontology, list) and all(isinstance(p, str) and p for p in ontology)):
        raise InputError(f'"ontology" is a list of paths of RDF files, not {ontology!r}'[:300])
    return ProgramChange(rules, ontology, line)


def _no_duplicates(pairs: list[tuple]) -> dict:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise InputError('a record has one "t"' if "t" in twice else f"the key {twice[0]!r} appears twice in an object")
    return dict(pairs)


def _with_raw(err: InputError, raw: str) -> InputError:
    err.raw = raw
    return err


def read_laserpp(lines: Iterable[str], first_line: int = 1,
                 prefixes: dict[str, str] | None = None) -> Iterator[Record | InputError]:
    """The Laser++ text stream format: a first line ``start end`` (optionally followed by the
    first element ``t : facts``), then one ``t : fact, fact`` line per element (lines are numbered
    from ``first_line``: the timeline is line 1).

    >>> [(r.t, len(r.facts)) for r in read_laserpp(["1 4", "1 : p(2), q(1)", "3 : "])]
    [(1, 2), (3, 0)]
    """
    for number, raw in enumerate(lines, start=first_line):
        if type(raw) is TooLong:
            yield _too_long(raw, number)
            continue
        text = raw.strip()
        if not text:
            continue
        left, sep, right = text.partition(":")
        head = left.split()
        try:
            if number == 1 and (len(head) in (2, 3)):
                if len(head) == 2 and not sep:
                    continue  # the timeline only
                head = head[2:]
            if len(head) != 1 or not sep:
                raise InputError("expected 't : fact, fact'", number)
            facts = simple_facts(right)
            if facts is None:
                facts = [checked_fact(f, prefixes) for f in _split_facts(right)]
            elif facts and max(map(len, facts)) >= _SHORT_FACT:
                for fact in facts:
                    if (problem := fact_problem(fact)) is not None:
                        raise InputError(problem, number)
            t = int(head[0])
            if not -MAX_TIME < t < MAX_TIME:
                raise InputError(f"the time is beyond ±2^62: {t}", number)
            yield Record(number, t, facts, text)
        except InputError as err:
            yield _with_raw(InputError(str(err).split(": ", 1)[-1] if str(err).startswith("line ") else str(err),
                                       number), text)
        except ValueError as err:
            yield _with_raw(InputError(str(err), number), text)


_FLAT_FACTS = re.compile(r"(?:\s*[^\s,()\"]+(?:\([^()\"]*\))?\s*(?:,|\Z))*")
_FLAT_FACT = re.compile(r"[^\s,()\"]+(?:\([^()\"]*\))?")


def _split_facts(text: str) -> list[str]:
    """The facts of a comma-separated list (commas inside parentheses are the facts' own)."""
    if _FLAT_FACTS.fullmatch(text):  # no nesting, no quotes: by regex
        return _FLAT_FACT.findall(text)
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    out.append(current)
    return [f.strip() for f in out if f.strip()]


def read_trig(text: str) -> Iterator[Record | InputError]:
    """A TriG document with one named graph per time point; the default graph says each graph's
    time: ``<g> <http://dotr.invalid/time> 12 .`` (or the graph's name ends in ``:t:12``). Graphs
    named ``urn:dotr:background:add...`` or ``urn:dotr:background:remove...`` change the background
    at their time."""
    import rdflib

    time, stream = rdflib.URIRef(TIME), rdflib.URIRef(STREAM)
    dataset = rdflib.Dataset()
    try:
        dataset.parse(data=text, format="trig")
    except Exception as err:
        yield InputError(f"{type(err).__name__}: {err}".splitlines()[0][:300], None)
        return
    times = {}
    for g, _, t in dataset.default_graph.triples((None, time, None)):
        times[g] = int(t)
    streams = {g: str(s) for g, _, s in dataset.default_graph.triples((None, stream, None))}
    records = []
    for graph in dataset.graphs():
        name = graph.identifier
        if name == rdflib.graph.DATASET_DEFAULT_GRAPH_ID:
            continue
        t = times.get(name)
        if t is None and ":t:" in str(name):
            t = int(str(name).rsplit(":t:", 1)[1])
        if t is None:
            yield InputError(f"graph {name} has no time (say <{name}> <{TIME}> T in the default graph)", None)
            continue
        if str(name).startswith(BACKGROUND_GRAPH):  # urn:dotr:background:add:t:T, ...:remove:t:T
            kind = str(name)[len(BACKGROUND_GRAPH):].split(":", 1)[0]
            if kind not in ("add", "remove"):
                yield InputError(f"graph {name}: a background graph is {BACKGROUND_GRAPH}add or ...remove", None)
                continue
            change = BackgroundChange(**{kind: list(graph)})
            records.append(Record(0, t, [], str(name), None, change))
            continue
        records.append(Record(0, t, list(graph), str(name), streams.get(name)))
    yield from sorted(records, key=lambda r: r.t)


#: the predicates of a TriG stream's default graph: a graph's time, its stream
TIME = "http://dotr.invalid/time"
#: the names of TriG graphs that change the background (``...add:t:T``, ``...remove:t:T``)
BACKGROUND_GRAPH = "urn:dotr:background:"
STREAM = "http://dotr.invalid/stream"


#: the default of ``dotr run --max-gap`` per time unit (``@timeunit``): how far a record's time may
#: jump after the previous record's (a tick-mode program may evaluate every tick of a gap; in
#: milliseconds, about 116 days: a month of daily records passes)
MAX_GAP = {"ticks": 10**6, "ms": 10**10}


def gap_reason(t: int, previous: int, max_gap: int) -> str:
    """Why a record at ``t`` is rejected after one at ``previous`` (``--max-gap``)."""
    return f"time {t} is {t - previous:,} after the previous record's {previous} (more than --max-gap {max_gap:,})"


def bounded_gaps(items: Iterable[Record | InputError], max_gap: int,
                 previous: int | None = None) -> Iterator[Record | InputError]:
    """``items`` with each record whose time is more than ``max_gap`` after the latest time passed
    on before it (``previous`` to begin with) turned into an :class:`InputError` (0: no bound).

    >>> [getattr(r, "t", str(r)) for r in bounded_gaps([Record(1, 5, [], ""), Record(2, 99, [], ""),
    ...                                                   Record(3, 8, [], "")], 10)]
    [5, "line 2: time 99 is 94 after the previous record's 5 (more than --max-gap 10)", 8]
    """
    for item in items:
        if isinstance(item, Record) and max_gap:
            if previous is not None and item.t - previous > max_gap:
                yield _with_raw(InputError(gap_reason(item.t, previous, max_gap), item.line), item.raw)
                continue
            previous = item.t if previous is None else max(previous, item.t)
        yield item


def taken(items: Iterable[Record | InputError], reject: Callable[[InputError], None], max_gap: int = 0,
          after: int | None = None, reorder_within: int = 0) -> Iterator[Record]:
    """The records a run takes of a reader's items (:func:`read_jsonl`, :func:`read_laserpp`,
    ...) in time order, the same on every engine: each bad record, each more than ``max_gap``
    after the previous (:func:`bounded_gaps`) and each earlier than a record passed on
    (:func:`in_order`) goes to ``reject`` as an :class:`InputError` naming its line (``raw``: the
    record's text); records at or before ``after`` (a checkpoint's last time point) are passed
    over.

    >>> bad = []
    >>> lines = ['{"t": 1, "facts": []}', '{"t": 3, "facts": []}', '{"t": 2, "facts": []}', '{"t": 4, "facts": 1}']
    >>> [r.t for r in taken(read_jsonl(lines), bad.append)], [str(e) for e in bad]
    ([1, 3], ['line 3: time 2 is before 3, already evaluated', 'line 4: "facts" is a list of facts, not 1'])
    """
    if not reorder_within:
        return _taken_in_order(items, reject, max_gap, after)

    def good() -> Iterator[Record]:
        for item in bounded_gaps(items, max_gap, after):
            if isinstance(item, InputError):
                reject(item)
            elif after is None or item.t > after:
                yield item

    def late(record: Record, reason: str) -> None:
        reject(_with_raw(InputError(reason, record.line), record.raw))

    return in_order(good(), reorder_within, late)


def _taken_in_order(items: Iterable[Record | InputError], reject: Callable[[InputError], None], max_gap: int,
                    after: int | None) -> Iterator[Record]:
    """:func:`taken` without reordering, in one loop (what :func:`bounded_gaps`, the filter and
    :func:`in_order` do one after the other, record by record)."""
    previous, emitted_t = after, None
    for item in items:
        if not isinstance(item, Record):
            reject(item)
            continue
        t = item.t
        if max_gap:
            if previous is not None and t - previous > max_gap:
                reject(_with_raw(InputError(gap_reason(t, previous, max_gap), item.line), item.raw))
                continue
            previous = t if previous is None or t > previous else previous
        if after is not None and t <= after:
            continue
        if emitted_t is not None and t < emitted_t:
            reject(_with_raw(InputError(f"time {t} is before {emitted_t}, already evaluated", item.line), item.raw))
            continue
        emitted_t = t
        yield item


def in_order(records: Iterable[Record], reorder_within: int = 0,
             rejected=None) -> Iterator[Record]:
    """Records in time order. A record earlier than one already passed on is an error, or, given
    ``rejected``, passed to ``rejected(record, reason)`` and skipped. With ``reorder_within`` > 0
    records are buffered and sorted within that many time units first."""
    heap: list = []
    emitted_t = None
    newest = None
    for seq, record in enumerate(records):
        if emitted_t is not None and record.t < emitted_t:
            reason = f"time {record.t} is before {emitted_t}, already evaluated"
            if rejected is None:
                raise InputError(reason, record.line)
            rejected(record, reason)
            continue
        if not reorder_within:
            emitted_t = record.t
            yield record
            continue
        heapq.heappush(heap, (record.t, seq, record))
        newest = record.t if newest is None else max(newest, record.t)
        while heap and heap[0][0] <= newest - reorder_within:
            t, _, r = heapq.heappop(heap)
            emitted_t = t
            yield r
    while heap:
        t, _, r = heapq.heappop(heap)
        yield r
