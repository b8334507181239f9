"""``GET /metrics``: a run's figures in Prometheus's text format (prometheus-client), read from
the run when scraped (the run's loop does no more than keep its counts and clock its stages).

>>> from dotr.pipeline.runner import EmbeddedRun, Options
>>> run = EmbeddedRun(Options(), build=lambda: None)
>>> text = exposition(run, StageTimes()).decode()
>>> 'dotr_time_points_total 0.0' in text and 'dotr_records_read_total 0.0' in text
True
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from ..runner import EmbeddedRun


class StageTimes:
    """Seconds spent per stage of the time points (``enrich``: the ontological stage; then each
    step of ``conclude``, by its name), and when the last time point ended."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.last_end: float | None = None  # (time.time())

    def add(self, stage: str, seconds: float) -> None:
        """Count ``seconds`` spent in ``stage`` (a :attr:`Reasoner.on_stage
        <dotr.pipeline.reasoner.Reasoner.on_stage>` hook)."""
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds


class _RunCollector:
    def __init__(self, run: EmbeddedRun, stages: StageTimes):
        self.run, self.stages = run, stages

    def collect(self):
        run = self.run
        counts = run.state.counts
        output = run.output
        for name, value, text in (
                ("dotr_records_read", counts["records"], "Records evaluated"),
                ("dotr_records_rejected", output.rejected if output is not None else 0, "Records rejected"),
                ("dotr_time_points", counts["time points"], "Time points evaluated"),
                ("dotr_outputs", counts["outputs"], "Time points written (those with something to write)")):
            yield CounterMetricFamily(name, text, value=value)
        stages = CounterMetricFamily("dotr_stage_seconds", "Seconds spent in each stage of the time points",
                                     labels=["stage"])
        for stage, seconds in sorted(self.stages.seconds.items()):
            stages.add_metric([stage], seconds)
        yield stages
        last_t = run.reasoner.last_t if run.reasoner is not None else None
        yield GaugeMetricFamily("dotr_last_time_point", "The last time point completed (the stream's time)",
                                value=last_t if last_t is not None else float("nan"))
        end = self.stages.last_end
        yield GaugeMetricFamily("dotr_lag_seconds", "Seconds since the last time point was completed",
                                value=time.time() - end if end is not None else float("nan"))


def registry(run: EmbeddedRun, stages: StageTimes) -> CollectorRegistry:
    """A registry of the run's figures and the process's (CPU, resident memory, open files)."""
    reg = CollectorRegistry()
    reg.register(_RunCollector(run, stages))
    ProcessCollector(registry=reg)
    return reg


def exposition(run: EmbeddedRun, stages: StageTimes, reg: CollectorRegistry | None = None) -> bytes:
    """The text ``GET /metrics`` answers."""
    return generate_latest(reg if reg is not None else registry(run, stages))
