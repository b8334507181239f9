"""What a run did, for a person: time points, records, rejects, conclusions per predicate,
pattern and query, throughput, the slowest time point. ``dotr run`` prints it on standard error
at the end (``--stats FILE`` writes it as JSON) and ``--watch`` shows it live.

>>> from dotr.pipeline.records import Result
>>> stats = RunStats()
>>> stats.observe(Result(1, facts=["hot(a)", "hot(b)"], events=[{"type": "Fire", "pattern": "F", "attributes": {}}]), 0.002)
>>> stats.observe(Result(2, facts=["hot(a)"], answers={"Q": [{"x": "1"}]}), 0.001)
>>> stats.to_json()["conclusions"]
{'facts': {'hot': 3}, 'events': {'Fire': 1}, 'graphs': {}, 'answers': {'Q': 1}}
>>> stats.to_json()["slowest"]
{'t': 1, 'ms': 2.0}
"""

from __future__ import annotations

import time
from collections import Counter

from .records import Result
from .state_file import StateFileError
from .printing import Readable

_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>("


def _key(fact: str) -> str:
    """What a printed fact is counted under: its predicate, or for a class membership its class."""
    return fact[fact.rindex(",") + 1:-1] if fact.startswith(_TYPE) else fact.partition("(")[0]


class RunStats:
    """Counts gathered from each time point's result as it is written."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.startup: float | None = None  # seconds from the process's start to the first record
        self.time_points = 0
        self.facts: Counter = Counter()  # predicate (canonical; a class for a membership) -> facts printed
        self.events: Counter = Counter()  # composite event type -> events
        self.graphs: Counter = Counter()  # pattern or query -> graphs built
        self.answers: Counter = Counter()  # query -> solutions
        self.slowest: tuple[float, int] | None = None  # (seconds, t)
        self.last: Result | None = None  # the last result with something in it
        self.counting = True  # count conclusions (False: only time points, when nobody reads them)
        self.resumed_records = 0  # records read before a restart, by the runs this one continues
        self.ended: float | None = None  # when the stream ended (perf_counter; None: it runs)
        #: the facts of the last time point observed by predicate (counted from its changes)
        self._held: Counter = Counter()
        self._held_count = 0

    def saved(self) -> dict:
        """The conclusions counted so far, as plain data (a checkpoint keeps them, so that a run
        continued from it sums up the whole input, not the part after the restart)."""
        return {"time_points": self.time_points, "facts": dict(self.facts), "events": dict(self.events),
                "graphs": dict(self.graphs), "answers": dict(self.answers)}

    def restore(self, data: dict) -> None:
        """Count on from :meth:`saved`'s figures.

        >>> stats = RunStats()
        >>> stats.restore({"time_points": 4, "facts": {"a": 2}, "events": {}, "graphs": {}, "answers": {"Q": 3}})
        >>> stats.time_points, stats.answers["Q"]
        (4, 3)
        """
        if not (type(data.get("time_points")) is int and all(
                isinstance(data.get(kind), dict) and all(type(k) is str and type(n) is int for k, n in data[kind].items())
                for kind in ("facts", "events", "graphs", "answers"))):
            raise StateFileError("not a run's figures")  # (the runner names the checkpoint)
        self.time_points = data["time_points"]
        self.facts, self.events = Counter(data["facts"]), Counter(data["events"])
        self.graphs, self.answers = Counter(data["graphs"]), Counter(data["answers"])

    def start(self, process_started: float) -> None:
        """The stream starts now; the process started at ``process_started`` (perf_counter)."""
        self.started = time.perf_counter()
        self.startup = self.started - process_started

    def observe(self, result: Result, seconds: float | None, graph_sources: list[str] | None = None) -> None:
        """Count ``result``, which took ``seconds`` to evaluate (None: not known, as on Spark);
        ``graph_sources`` names the pattern or query of each of its graphs (None: not known)."""
        self.time_points += 1
        if seconds is not None and (self.slowest is None or seconds > self.slowest[0]):
            self.slowest = (seconds, result.t)
        if not self.counting:
            return
        changes = result.changes
        if changes is not None and changes[2] == self._held_count:
            if changes[0]:
                self._held.update(map(_key, changes[0]))
            if changes[1]:
                self._held.subtract(map(_key, changes[1]))
                self._held = +self._held  # (without the predicates no fact has any more)
        else:
            self._held = Counter(map(_key, result.facts))
        self._held_count = len(result.facts)
        if result.is_empty():
            return
        self.last = result
        self.facts.update(self._held)
        for event in result.events:
            self.events[event["type"]] += 1
        if graph_sources:
            self.graphs.update(graph_sources)
        for name, rows in result.answers.items():
            self.answers[name] += rows if isinstance(rows, bool) else len(rows)  # (ASK: its true answers)

    def to_json(self, records: int = 0, outputs: int = 0, rejects: int = 0, readable: Readable | None = None) -> dict:
        """The figures as plain data (predicates readable with ``readable``), with the run's
        counts of records read, records written and records rejected."""
        elapsed = self.elapsed()
        name = readable.term if readable is not None else (lambda text: text)
        out: dict = {"records": records, "time_points": self.time_points, "outputs": outputs, "rejects": rejects,
                     "seconds": round(elapsed, 3), "startup_seconds": None if self.startup is None
                     else round(self.startup, 3),
                     "records_per_second": self.rate(records, elapsed)}
        out["conclusions"] = {"facts": {name(p): n for p, n in self.facts.most_common()},
                              "events": dict(self.events.most_common()),
                              "graphs": dict(self.graphs.most_common()),
                              "answers": dict(self.answers.most_common())}
        if self.slowest is not None:
            out["slowest"] = {"t": self.slowest[1], "ms": round(self.slowest[0] * 1000, 3)}
        return out

    def stop(self) -> None:
        """The stream has ended: the figures are those of now from here on (the live view's last
        frame and the summary say the same)."""
        if self.ended is None:
            self.ended = time.perf_counter()

    def elapsed(self) -> float:
        """Seconds since the stream started, until it ended."""
        return (self.ended if self.ended is not None else time.perf_counter()) - self.started

    def rate(self, records: int, elapsed: float | None = None) -> float | None:
        """Records per second of this process, ``records`` being read in all (the runs it
        continues included), ``elapsed`` seconds since the stream started (None: until now)."""
        elapsed = self.elapsed() if elapsed is None else elapsed
        return round((records - self.resumed_records) / elapsed, 1) if elapsed > 0 else None

    def lines(self, records: int = 0, outputs: int = 0, rejects: int = 0, readable: Readable | None = None,
              top: int = 8) -> list[str]:
        """The summary for a person, a few lines."""
        data = self.to_json(records, outputs, rejects, readable)
        rate = data["records_per_second"]
        lines = [f"dotr: {records:,} records, {self.time_points:,} time points, {outputs:,} outputs, "
                 f"{rejects:,} rejected in {data['seconds']:.2f} s" + (f" ({rate:,.0f} records/s)" if rate else "")
                 + (f", start-up {self.startup:.2f} s" if self.startup is not None else "")]
        for kind, counts in data["conclusions"].items():
            if counts:
                shown = ", ".join(f"{k} {v:,}" for k, v in list(counts.items())[:top])
                more = f", ... ({len(counts) - top} more)" if len(counts) > top else ""
                lines.append(f"  {kind}: {shown}{more}")
        if "slowest" in data and self.time_points > 1:
            lines.append(f"  slowest time point: t={data['slowest']['t']} ({data['slowest']['ms']:.1f} ms)")
        return lines
