"""``dotr run --watch``: a terminal view of a live run for a person (rich), on standard error:
the time point and rates, conclusions per pattern, event type, query and predicate, and the
latest conclusions. The output itself goes where ``--output`` says, unchanged."""

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
    terminal)."""

    def __init__(self, stats: RunStats, counts: dict, readable: Readable, console: Console | None = None):
        self.stats, self.counts, self.readable = stats, counts, readable
        self.live = Live(self._view(None), console=console or Console(stderr=True), refresh_per_second=4,
                         transient=False)
        self.last = 0.0
        self.live.start()

    def update(self, t: int) -> None:
        now = time.perf_counter()
        if now - self.last >= 0.25:
            self.last = now
            self.live.update(self._view(t))

    def close(self, t: int | None = None) -> None:
        self.live.update(self._view(t))
        self.live.stop()

    def _view(self, t: int | None) -> Group:
        stats, c = self.stats, self.counts
        elapsed = max(time.perf_counter() - stats.started, 1e-9)
        head = Text(f"dotr  t={t if t is not None else '-'}  records {c['records']:,}  "
                    f"time points {c['time points']:,}  outputs {c['outputs']:,}  "
                    f"{c['records'] / elapsed:,.0f} records/s", style="bold")
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
