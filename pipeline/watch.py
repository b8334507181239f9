"""``dotr run --watch``: a terminal view of a live run for a person (rich), on standard error:
the time point and rates, conclusions per pattern, event type, query and predicate, and the
latest conclusions (:class:`Watch`); without it, on a terminal, a progress line
(:class:`Progress`). The output itself goes where ``--output`` says, unchanged."""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .printing import Readable
from .summary import RunStats

#: how many predicates and latest conclusions the view lists
SHOWN = 8


class Watch:
    """Redraws the view at most four times a second, and once more at the end (it stays on the
    terminal). Without a terminal (standard error a file or a pipe) only the last view is
    written, at the end."""

    def __init__(self, stats: RunStats, counts: dict, readable: Readable, console: Console | None = None):
        self.stats, self.counts, self.readable = stats, counts, readable
        self.console = console or Console(stderr=True)
        self.t: int | None = None  # the last time point evaluated
        self.live = Live(self._view(), console=self.console, refresh_per_second=4, transient=False) \
            if self.console.is_terminal else None
        self.last = 0.0
        if self.live is not None:
            self.live.start()

    def update(self, t: int) -> None:
        self.t = t
        now = time.perf_counter()
        if self.live is not None and now - self.last >= 0.25:
            self.last = now
            self.live.update(self._view())

    def close(self) -> None:
        if self.live is None:
            self.console.print(self._view())
            return
        self.live.update(self._view())
        self.live.stop()

    def _view(self) -> Group:
        stats, c, t = self.stats, self.counts, self.t
        rate = stats.rate(c["records"]) or 0
        head = Text(f"dotr  t={t if t is not None else '-'}  records {c['records']:,}  "
                    f"time points {c['time points']:,}  outputs {c['outputs']:,}  "
                    f"{rate:,.0f} records/s", style="bold")
        table = Table(box=None, show_header=True, header_style="bold")
        table.add_column("conclusions")
        table.add_column("name")
        table.add_column("count", justify="right")
        for kind, counter, name in (("patterns", stats.graphs, str), ("events", stats.events, str),
                                    ("queries", stats.answers, str), ("facts", stats.facts, self.readable.term)):
            for key, n in counter.most_common(SHOWN):
                table.add_row(kind, name(key), f"{n:,}")
        latest = Text()
        if stats.last is not None:
            facts = self.readable.record({"t": stats.last.t, "facts": stats.last.facts[:SHOWN]})["facts"]
            more = len(stats.last.facts) - len(facts)
            latest = Text(f"latest (t={stats.last.t}): " + ", ".join(facts) + (f", ... ({more} more)" if more > 0 else ""))
        return Group(head, table, latest)


class Progress:
    """Without ``--watch``, on a terminal: a live line of records, time points, outputs and rate,
    gone at the end (the summary follows)."""

    def __init__(self, stats, counts: dict):
        self.stats, self.counts, self.last = stats, counts, 0.0
        self.live = Live("", refresh_per_second=4, transient=True, console=Console(stderr=True))
        self.live.start()

    def update(self, t: int) -> None:
        now = time.perf_counter()
        if now - self.last < 0.25:
            return
        self.last = now
        c = self.counts
        self.live.update(f"t={t}  records {c['records']:,}  time points {c['time points']:,}  "
                         f"outputs {c['outputs']:,}  {self.stats.rate(c['records']) or 0:,.0f} records/s")

    def close(self) -> None:
        self.live.stop()
