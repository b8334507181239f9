"""The pipeline as a Spark Structured Streaming job (docs/api.md, "the Spark job").

Three steps, each running the embedded pipeline's own engine objects (:class:`Reasoner`):

1. *split* (executors, per input file): the stream's records with their file, line and time; a
   local file's JSON Lines records as spans (offset, length) that the enrich step reads back.
2. *enrich* (executors, in parallel over time points): the records, shuffled by time point, go
   through the ontological stage (:meth:`Reasoner.enrich`). The background materialisation is
   computed once on the driver, broadcast, and restored once per Python worker. Out come the time
   points as bytes (:mod:`pipeline.wire`).
3. *conclude* (the stateful operator ``applyInPandasWithState``): patterns and LARS
   (:meth:`Reasoner.conclude`) in time order. The temporal state is kept in the state store, as a
   state file,
   at every micro-batch, so a query restarted from its checkpoint continues exactly; the live
   engine stays cached in the worker between micro-batches. Where the rules allow
   (:func:`~pipeline.keys.split_keys`: patterns whose events all join on a key attribute) the
   events are split into as many key groups as the session has shuffle partitions, each group
   concluded on its own (every group sees every time point, so all agree on which points are
   evaluated and which records are late); then *merge* (a shuffle by time point) joins the
   groups' records of each time point. Otherwise one key.

Out comes a streaming DataFrame ``(t, kind, json)``: ``kind`` is ``result`` (``json`` is the
embedded pipeline's JSON Lines record for t) or ``reject`` (a bad record or a late time point:
``{"source", "line", "reason", "record"}``).

A time point is complete at the end of the micro-batch its records arrive in: a record for a
time point already evaluated is late and rejected. Publish a time point's records in one file and
files in time order (write, then rename into the watched directory).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import pickle
import secrets
import tempfile
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import urlparse

import pandas as pd

from dotr.ontology import OntologicalStage
from dotr.ontology.background import load_background
from dotr.rules import DotrError, InputError, UsageError, check
from dotr.rules.lang.loader import CheckResult
from dotr.temporal.keys import JointPartition
from dotr.temporal.program import LarsProgram

from .. import state_file
from ..files import MAX_RECORD_SIZE
from ..input_facts import intern_all
from ..io import MAX_GAP, BackgroundChange, read_jsonl
from ..keys import carried, make_partition, split_keys, split_point
from ..reasoner import Reasoner
from ..records import Result, carry_facts, merge_records
from ..sinks.formats import FORMATS
from ..wire import decode_point, encode_point
from .changes import ChangeLog, RecordId
from .elements import ELEMENTS, read_spans, reject_row, split_file
from .gaps import far_ahead, far_rejects
from .sinks import start

POINTS = "t long, grp long, kind string, payload binary"
RESULTS = "t long, kind string, json string"
GROUP_RESULTS = "t long, kind string, json string, graphs array<string>"  # a key group's, before the merge
STATE = "version long, engine binary"
#: the kind of the state files a key group's state is kept in (docs/cli.md, "State files")
STATE_KIND = "spark-group"
BINARY_FILES = "path string, modificationTime timestamp, length long, content binary"  # Spark's binaryFile
#: why a record that changes the background is rejected by a job without a change log
NO_CHANGES = ("this Spark job takes no background changes: it has no directory for its change log "
              "(SparkPipeline.results(..., changes=DIR); dotr run keeps one in its checkpoint)")

# ------------------------------------------------------------------------- per worker
class _Worker:
    """What a Python worker keeps for a job between tasks: the rules, and (built when first
    needed) a reasoner for the enrich step and per key group the live temporal engine, each over
    its own copy of the background materialisation."""

    def __init__(self, bundle: bytes):
        self.checked, self.background, self.reasoner_options, self.options = pickle.loads(bundle)
        self.keys, self.labels = self.options["keys"], self.options["groups"]
        self._enricher: Reasoner | None = None
        self.partition: JointPartition | None = None  # the enrich step's
        self._made: list[tuple] = []  # the background changes the enricher made (_key)
        self.kept_terms = 0  # the enricher's terms that are not the stream's
        self._stages: dict[int, tuple[OntologicalStage, int]] = {}  # per group: the temporal engine's
        #: per group: its temporal rules compiled over its stage's dictionary (once per stage)
        self._programs: dict[int, LarsProgram] = {}
        self.changed: set[int] = set()  # the groups whose copy of the background a change reached
        self.engines: dict[int, tuple[int, Reasoner]] = {}  # per group: (state version, the live reasoner)

    @property
    def enricher(self) -> Reasoner:
        if self._enricher is None:
            self._enricher = Reasoner(self.checked, ontology=OntologicalStage.restore(self.checked, self.background),
                                      **self.reasoner_options)
            self._made, self.kept_terms = [], self._enricher.base_terms
            if self.keys is not None:
                self.partition = make_partition(self.keys, len(self.labels), self._enricher.dictionary)
        return self._enricher

    def enricher_with(self, changes: list[tuple], k: int) -> Reasoner:
        """The enrich step's reasoner with exactly the first ``k`` background changes of
        ``changes`` made (``(t, add, remove, record ids)``, in time order; every list a task
        gets is a prefix of the job's one sequence, but for changes not made, which have no
        successor): those it has not made yet are made; if it made others, it is built again."""
        made = self._made
        if self._enricher is not None and made and (k < len(made) or _key(changes[len(made) - 1]) != made[-1]):
            self._enricher = None
        reasoner = self.enricher
        for change in changes[len(self._made):k]:
            try:
                reasoner.change_background(change[1], change[2], temporal=False)
            except InputError:  # not made (the conclude step rejects the records)
                pass
            self._made.append(_key(change))
            self.kept_terms = len(reasoner.dictionary)
        return reasoner

    def _stage(self, group: int) -> tuple[OntologicalStage, int]:
        """``group``'s copy of the background (restored once) and its number of terms."""
        if group not in self._stages:
            stage = OntologicalStage.restore(self.checked, self.background)
            self._stages[group] = (stage, len(stage.dictionary))
        return self._stages[group]

    def prepare(self) -> bool:
        """Restore the background now for the enrich step and every key group (the job's
        warm-up); whether anything was missing."""
        missing = self._enricher is None or len(self._stages) < len(self.labels)
        self.enricher
        for group in range(len(self.labels)):
            self._stage(group)
        return missing

    def fresh_reasoner(self, group: int) -> Reasoner:
        """A reasoner as built from the files, concluding ``group`` (the background is restored
        once per group, then reset)."""
        if group in self.changed:  # its background changed: restored again
            self._stages.pop(group, None)
            self._programs.pop(group, None)
            self.changed.discard(group)
        stage, terms = self._stage(group)
        stage.reset(terms)
        reasoner = Reasoner(self.checked, ontology=stage, lars_program=self._programs.get(group), **self.reasoner_options)
        if reasoner.lars is not None:
            self._programs[group] = reasoner.lars.program
        if self.keys is not None:
            reasoner.keep_group(make_partition(self.keys, len(self.labels), stage.dictionary), group)
        return reasoner


def _key(change: tuple) -> tuple:
    """A background change's identity: its time point and records."""
    return change[0], change[3]


_WORKERS: dict[str, _Worker] = {}


def _worker(job: str, bundle) -> _Worker:
    worker = _WORKERS.get(job)
    if worker is None:
        worker = _WORKERS[job] = _Worker(bundle.value)
    return worker


# ------------------------------------------------------------------------- the steps
def _is_local(path: str | Path) -> bool:
    """Whether a watched directory is on the local file system (the split step reads its files)."""
    return urlparse(str(path)).scheme in ("", "file")


def enrich_rows(worker: _Worker, rows: Iterable[tuple], log: ChangeLog | None = None) -> list[tuple]:
    """``ELEMENTS`` rows (with the ``copy`` column or without) to ``POINTS`` rows: per time point
    (its records in file and line order) the ontological stage's output, one row per key group,
    and the bad records as rejects (to the first group). A time point with records that change
    the background also gets a ``change`` row per group; the changes of earlier micro-batches
    come from ``log`` (without one, such records are rejected)."""
    out: list[tuple] = []
    by_t: dict[int, list] = defaultdict(list)
    seen: dict[RecordId, tuple[int, BackgroundChange]] = {}  # the change records (copies too)
    first = worker.labels[0]
    rows = list(rows)
    spans = {(row[0], row[1]): row[4].hex() for row in rows if row[3] == "span"}  # (a local file's records)
    for row in read_spans(rows):
        source, line, t, fmt, payload = row[:5]
        if fmt == "change" and log is not None:
            *_, change, n = pickle.loads(payload)
            seen[(source, line, n)] = (t, change)
        if len(row) > 5 and row[5]:  # a copy: for its change only
            continue
        if fmt == "error":
            out.append((t, first, "reject", payload))
        elif t is None:  # not a record: let the reader say why
            text = payload.decode("utf-8", errors="replace")
            error = next(read_jsonl([text], line))
            out.append((None, first, "reject", reject_row(source, line, error, text)))
        else:
            by_t[t].append(row[:5])
    made, here = _changes(seen, log)
    times = [change[0] for change in made]
    for t in sorted(by_t):
        reasoner = worker.enricher_with(made, bisect.bisect_right(times, t))
        stage, d, base = reasoner.ontology, reasoner.dictionary, reasoner.ontology_terms
        facts: dict = {}  # stream -> facts
        good: list[tuple] = []  # the records taken: (source, line, their span in a local file or None)
        for source, line, _, fmt, payload in sorted(by_t[t], key=lambda r: (r[0], r[1])):
            if fmt in ("pickle", "change"):
                stream, items = pickle.loads(payload)[:2]
                if fmt == "change" and log is None:
                    out.append((t, first, "reject", reject_row(source, line, NO_CHANGES, None)))
                    continue
                facts.setdefault(stream, []).extend(items)
                good.append((source, line, spans.get((source, line))))
                continue
            text = payload.decode("utf-8", errors="replace")
            record = next(read_jsonl([text], line, parse=False))
            try:
                if isinstance(record, InputError):
                    raise record
                if record.t != t:  # "t" given twice: the split read the first
                    raise InputError('a record has one "t"', line)
                if record.background:  # (a source that does not mark them: not spread over the tasks)
                    raise InputError(NO_CHANGES, line)
                facts.setdefault(record.stream, []).extend(intern_all(stage, record.facts))
                good.append((source, line, spans.get((source, line))))
            except InputError as err:
                out.append((t, first, "reject", reject_row(source, line, err, text)))
        if t in here:
            change = pickle.dumps(here[t][1:], protocol=pickle.HIGHEST_PROTOCOL)
            out.extend((t, label, "change", change) for label in worker.labels)
        if not good:  # as in the embedded pipeline: a skipped record does not make a time point
            continue
        out.append((t, first, "records", json.dumps(good).encode()))  # (rejected if t is too far ahead)
        try:
            point = reasoner.enrich(t, facts)
        except DotrError as err:
            out.append((t, first, "reject", reject_row("", None, f"time point {t}: {err}", None)))
            continue
        finally:  # back to the background alone: the next time point may be an earlier one
            stage.materialiser.advance(t + 1, report=False)
        if not reasoner.conclude_needs_stream:
            point.stream = []
        parts = [point] if worker.partition is None else split_point(point, worker.partition)
        out.extend((t, label, "point", encode_point(part, d, base)) for label, part in zip(worker.labels, parts))
    worker.enricher.ontology.reset(worker.kept_terms)  # forget the stream's terms: the worker's memory stays flat
    if worker.partition is not None:
        worker.partition.forget_terms(worker.kept_terms)
    return out


def _changes(seen: dict[RecordId, tuple[int, BackgroundChange]], log: ChangeLog | None
             ) -> tuple[list[tuple], dict[int, tuple]]:
    """The background changes made before and in a micro-batch whose change records are
    ``seen``, as ``(t, add, remove, record ids)`` in time order, and those of the micro-batch
    by time point (its records at a time point already evaluated are late: not made)."""
    if log is None:
        return [], {}
    before = log.evaluated_before(set(seen))
    merged: dict[int, tuple[BackgroundChange, list]] = {}
    for rid in sorted(seen):
        t, change = seen[rid]
        if before is None or t > before:
            total, ids = merged.setdefault(t, (BackgroundChange(), []))
            total.update(change)
            ids.append(rid)
    here = {t: (t, total.add, total.remove, tuple(ids)) for t, (total, ids) in merged.items()}
    return sorted(log.changes(before) + list(here.values()), key=lambda change: change[0]), here


def conclude_rows(worker: _Worker, rows: list[tuple], state: tuple | None, group: int = 0,
                  log: ChangeLog | None = None) -> tuple[list[tuple], tuple]:
    """``POINTS`` rows (one micro-batch of a key group, without the group column) to
    ``GROUP_RESULTS`` rows, continuing from ``state`` (``(version, temporal state as a state file)`` or
    None); returns the rows and the new state. With several key groups a record's graphs come
    apart, in the ``graphs`` column, for the merge step; with one they stay in the record (and
    ``graphs`` is None). The worker's live engine is used when it is the one that wrote
    ``state``. Late time points and changes that are not made are reported by group 0 (the
    others skip them alike), which also writes ``log``."""
    version, blob = state if state is not None else (0, None)
    changes = {t: pickle.loads(payload) for t, kind, payload in rows if kind == "change"}
    points = {t: payload for t, kind, payload in rows if kind == "point"}
    cached = worker.engines.pop(group, None)  # (put back at the end: a micro-batch that fails half
    if cached is not None and cached[0] == version:  # way leaves no engine its retry could take)
        _, engine, printed, latest = cached
    else:  # a new worker, or a micro-batch run again after a failure
        engine, printed, latest = worker.fresh_reasoner(group), [], None
        if blob is not None:
            saved = state_file.decode(blob, STATE_KIND, "the Spark job's state")[1]
            if saved.get("background_changes"):
                worker.changed.add(group)
            printed, latest = saved.pop("printed", []), saved.pop("latest", None)
            engine.restore_temporal(saved)
            latest = latest if latest is not None else engine.last_t  # (a state saved before it was kept)
    if changes:  # (before any is made: a failure half way leaves the background changed)
        worker.changed.add(group)
    keep_empty, carry = worker.options.get("keep_empty", False), worker.options.get("carry", False)
    out: list[tuple] = []
    if carry:  # the facts this group printed last, for the time points it does not evaluate
        out.append((engine.last_t, "carry", json.dumps({"group": group, "facts": printed}, ensure_ascii=False), None))

    apart = len(worker.labels) > 1

    def emit(result: Result) -> None:
        nonlocal printed
        if keep_empty or carry or not result.is_empty():  # (carried: the merge needs every one)
            record = result.to_json()
            graphs = record.pop("graphs", []) if apart else None
            if carry:
                record["group"], printed = group, result.facts
            out.append((result.t, "result", json.dumps(record, ensure_ascii=False), graphs))

    times = sorted(points.keys() | changes.keys())
    far, latest = far_ahead(times, engine.last_t, latest, worker.options.get("max_gap", 0), set(points))
    rejects = [(t, json.loads(payload)) for t, kind, payload in rows if kind == "reject"]
    if group == 0:
        rejects += [(t, reject) for t, kind, payload in rows if kind == "records" and t in far
                    for reject in far_rejects(json.loads(payload), far[t])]
    rejects.sort(key=lambda tr: (tr[1]["source"], tr[1]["line"] or 0))
    out.extend((t, "reject", json.dumps(r), None) for t, r in rejects)
    before, made = engine.last_t, []
    for t in times:
        if t in far:  # (its records rejected above)
            continue
        if engine.last_t is not None and t <= engine.last_t:
            if group == 0:
                reason = f"time point {t} arrived after time point {engine.last_t} was evaluated"
                out.append((t, "reject", reject_row("", None, reason, None).decode(), None))
            continue
        for result in engine.between(t):
            emit(result)
        if t in changes:
            add, remove, ids = changes[t]
            try:
                engine.change_background(add, remove)
                made.append((t, add, remove, ids))
            except InputError as err:  # (not made: the reasoner rolled it back)
                if group == 0:
                    out.append((t, "reject", reject_row(*ids[0][:2], err, None).decode(), None))
        if t in points:
            emit(engine.conclude(decode_point(points[t], engine.dictionary)))
    if group == 0 and log is not None:
        for change in made:
            log.record(*change)
        log.close_batch(engine.last_t, before, [rid for _, _, ids in changes.values() for rid in ids])
    version = secrets.randbits(62)  # unique: a cached engine matches only the state it wrote
    worker.engines[group] = (version, engine, printed, latest)
    saved = {**engine.temporal_snapshot(), "printed": printed, "latest": latest}
    return out, (version, state_file.encode(STATE_KIND, saved))


# ------------------------------------------------------------------------- the job
class SparkPipeline:
    """The streaming job for a rule file and ontology files.

    ``results(elements)`` turns a stream of elements (:meth:`read_files`, :meth:`read_feed`) into
    results; :meth:`write` and :meth:`foreach` start the query.
    """

    def __init__(self, spark, rules: str | Path | CheckResult, ontologies: Iterable[str | Path] = (), *,
                 include_background: bool = False, keep_empty: bool = False, input_format: str = "auto",
                 split_by_key: bool = True, warm_up: bool = True, follow_imports: str | None = None,
                 notice: Callable[[str], None] | None = None, max_record_size: int = MAX_RECORD_SIZE,
                 max_gap: int | None = None):
        checked = rules if isinstance(rules, CheckResult) else check(rules)
        checked.raise_for_errors()
        #: what the split step checks a file's records against (``split_file``: as the embedded run)
        self.checks = {"limit": max_record_size, "prefixes": checked.program.prefixes,
                       "max_gap": MAX_GAP[checked.program.timeunit] if max_gap is None else max_gap}
        background = load_background(ontologies, follow_imports=follow_imports, notice=notice)
        stage = OntologicalStage(checked, background)
        self.keys = split_keys(checked) if split_by_key else None
        #: the key groups evaluate different time points (ms): the merge carries their facts. Every
        #: time point printed (``keep_empty``) would need the one reasoner's time points: one key
        self.carry = self.keys is not None and carried(checked)
        if self.carry and keep_empty:
            self.keys, self.carry = None, False
        groups = int(spark.conf.get("spark.sql.shuffle.partitions")) if self.keys is not None else 1
        self.groups = _group_labels(spark, groups)
        bundle = pickle.dumps((checked, stage.snapshot(), {"include_background": include_background},
                               {"keep_empty": keep_empty, "keys": self.keys, "groups": self.groups,
                                "carry": self.carry, "max_gap": self.checks["max_gap"]}),
                              protocol=pickle.HIGHEST_PROTOCOL)
        self.spark = spark
        self.job = hashlib.sha1(bundle).hexdigest()
        self.input_format = input_format
        self._bundle = spark.sparkContext.broadcast(bundle)
        if warm_up:
            self.warm_up()

    def warm_up(self, rounds: int = 4) -> int:
        """Start a Python worker per task slot and restore the background in each (for the enrich
        step and every key group), so that the first micro-batch does not wait for it; returns
        how many workers are ready. Rounds of one task per slot run until one finds every worker
        ready (Spark hands out idle workers in turn); then :meth:`warm_query`. Spark stops workers
        idle for a minute: a stream quiet for longer pays the restore again at its next micro-batch."""
        job, bundle = self.job, self._bundle
        slots = self.spark.sparkContext.defaultParallelism
        ready: set[int] = set()

        def prepare(frames):
            for _ in frames:
                pass
            yield pd.DataFrame({"pid": [os.getpid()], "built": [_worker(job, bundle).prepare()]})

        for _ in range(rounds):
            rows = self.spark.range(slots, numPartitions=slots).mapInPandas(prepare, "pid long, built boolean").collect()
            ready.update(row.pid for row in rows)
            if not any(row.built for row in rows):
                break
        self.warm_query()
        return len(ready)

    def warm_query(self) -> int:
        """Run the query once, as :meth:`read_files` and :meth:`write` make it, over one empty
        time point in a scratch directory (removed after): Spark plans it, generates and compiles
        its code, and opens the stateful operator's state store before the stream's first
        micro-batch (which took 0.7-1.3 s longer than the next ones without this). Returns how many
        micro-batches it ran (1). A failure is reported as a warning: the job runs without."""
        try:
            with tempfile.TemporaryDirectory(prefix="dotr-warm-up-") as scratch:
                folder = Path(scratch)
                (folder / "in").mkdir()
                (folder / "in" / "warm-up.jsonl").write_text('{"t": 0, "facts": []}\n')
                query = self.write(self.results(self.read_files(folder / "in"), folder / "changes"), folder / "out",
                                   folder / "checkpoint")
                query.awaitTermination()
                return sum(1 for p in query.recentProgress if p["numInputRows"])
        except Exception as err:  # an optimisation only: the job itself may still run
            warnings.warn(f"the Spark job's warm-up query failed (the first micro-batch will be slower): {err}")
            return 0

    def read_files(self, path: str | Path, max_files_per_trigger: int | None = None):
        """The elements of the files in a watched directory (JSON Lines, TriG, Laser++ text). A
        local directory's files are read by the split step itself (Spark lists them); others
        (``hdfs:``, ``s3a:``, ...) by Spark."""
        from pyspark.sql import functions as F

        reader = self.spark.readStream.format("binaryFile").schema(BINARY_FILES)
        if max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger", max_files_per_trigger)
        local = _is_local(path)
        files = reader.load(str(path)).select(  # without the content column Spark does not read the files
            "path", F.lit(None).cast("binary").alias("content") if local else F.col("content"))
        fmt, checks = self.input_format, self.checks

        def dotr_split(frames):
            for frame in frames:
                rows = [row for source, content in zip(frame["path"], frame["content"])
                        for row in split_file(source, fmt, content, **checks)]
                yield pd.DataFrame(rows, columns=["source", "line", "t", "format", "payload"]).astype({"t": "Int64"})

        return files.mapInPandas(dotr_split, ELEMENTS)

    def read_feed(self, generator: str, count: int, per_batch: int = 1000, partitions: int = 2):
        """The elements a generator makes (``"module:function"``, ``function(i)`` is the i-th
        JSON Lines record, times non-decreasing in i): ``per_batch`` records per micro-batch."""
        from .source import register

        register(self.spark)
        return (self.spark.readStream.format("dotr-feed").option("generator", generator)
                .option("count", count).option("perBatch", per_batch).option("partitions", partitions).load())

    def results(self, elements, changes: str | Path | None = None):
        """The streaming ``(t, kind, json)`` results of a stream of elements (``ELEMENTS``).
        ``changes``: a directory for the job's log of background changes (on a file system the
        driver and every executor see; keep it with the checkpoint); without it, records that
        change the background are rejected."""
        from pyspark.sql import functions as F
        from pyspark.sql.streaming.state import GroupStateTimeout

        job, bundle, labels = self.job, self._bundle, self.groups
        log = None if changes is None else str(changes)

        def dotr_enrich(frames):
            rows = _rows(frames, ["source", "line", "t", "format", "payload", "copy"])
            out = enrich_rows(_worker(job, bundle), rows, None if log is None else ChangeLog(log))
            yield pd.DataFrame(out, columns=["t", "grp", "kind", "payload"]).astype({"t": "Int64"})

        def dotr_conclude(key, frames, state):
            rows = _rows(frames, ["t", "kind", "payload"])
            out, new_state = conclude_rows(_worker(job, bundle), rows, state.get if state.exists else None,
                                           labels.index(int(key[0])), None if log is None else ChangeLog(log))
            state.update(new_state)
            frame = pd.DataFrame(out, columns=["t", "kind", "json", "graphs"]).astype({"t": "Int64"})
            yield frame if len(labels) > 1 else frame.drop(columns="graphs")

        partitions = self.spark.sparkContext.defaultParallelism
        # a record that changes the background goes to its time point's task (``copy`` 0) and a
        # copy of it to every task (pipeline.spark.changes)
        spread = F.when(F.col("format") == "change", F.array("t", *map(F.lit, _group_labels(self.spark, partitions))))
        elements = elements.select("*", F.posexplode(spread.otherwise(F.array("t"))).alias("copy", "part"))
        points = elements.repartition(partitions, "part").mapInPandas(dotr_enrich, POINTS)
        results = points.groupBy("grp").applyInPandasWithState(
            dotr_conclude, RESULTS if len(labels) == 1 else GROUP_RESULTS, STATE, "append", GroupStateTimeout.NoTimeout)
        if len(labels) == 1:
            return results
        # the stateful operator's rows go into a shuffle only through a projection that copies
        # them: otherwise Spark 4.3 fails casting them (ColumnarBatchRow) to UnsafeRow. A
        # projection the optimizer keeps (``t + 0`` it removes):
        copied = results.select("t", F.concat("kind", F.lit("")).alias("kind"), "json", "graphs")
        # carried facts go from a group's time points to the next ones: one task sees them all
        merged = copied.repartition(1) if self.carry else copied.repartition(partitions, "t")
        return merged.mapInPandas(dotr_merge, RESULTS)

    # --------------------------------------------------------------------- sinks
    def write(self, results, path: str | Path, checkpoint: str | Path, fmt: str = "jsonl",
              trigger: dict | None = None):
        """Start a query writing the results to files in ``fmt``, exactly once: a format of the
        output registry with a Spark file sink (:mod:`pipeline.spark.sinks`: ``jsonl``,
        ``parquet``)."""
        sinks = [f.name for f in FORMATS.values() if f.spark_sink is not None]
        if fmt not in sinks:
            raise UsageError(f"unknown sink format {fmt!r} (the formats with a Spark file sink: {', '.join(sinks)})")
        return start(FORMATS[fmt].spark_sink(results).option("path", str(path)), checkpoint, trigger)

    def foreach(self, results, callback: Callable[[int, list[dict]], None], checkpoint: str | Path,
                trigger: dict | None = None):
        """Start a query calling ``callback(batch_id, records)`` on the driver per micro-batch with
        its records (result records and rejects, ``{"kind": ..., ...}``) in time order."""

        def batch(frame, batch_id: int) -> None:
            callback(batch_id, records(frame))

        return start(results.writeStream.foreachBatch(batch), checkpoint, trigger)


def dotr_merge(frames):
    """The *merge* step: ``GROUP_RESULTS`` rows to ``RESULTS`` rows, the records of each time
    point from the key groups, with their graphs, as one record (the graphs never parsed). With
    ``carry`` rows (the groups' facts before the micro-batch), the groups evaluated different time
    points: each group's facts are carried to the others' (``carry_facts``)."""
    rows = _rows(frames, ["t", "kind", "json", "graphs"])
    by_t: dict[int, list[dict]] = defaultdict(list)
    held: dict[int, list[str]] = {}  # (carry rows: the groups' facts before the micro-batch)
    carried_rows = False
    out = []
    for t, kind, text, graphs in rows:
        if kind == "result":
            by_t[t].append({**json.loads(text), "graphs": graphs})
        elif kind == "carry":
            carried_rows, row = True, json.loads(text)
            held[row["group"]] = row["facts"]
        else:
            out.append((t, kind, text))
    if carried_rows:
        records = [(record.pop("group"), record) for parts in by_t.values() for record in parts]
        out.extend((m["t"], "result", json.dumps(m, ensure_ascii=False)) for m in carry_facts(records, held)[0])
    else:
        out.extend((t, "result", json.dumps(merge_records(parts), ensure_ascii=False)) for t, parts in by_t.items())
    yield pd.DataFrame(out, columns=["t", "kind", "json"]).astype({"t": "Int64"})


def _group_labels(spark, n: int) -> list[int]:
    """``n`` values of the group column that Spark's hash partitioning (Murmur3 of the long value,
    modulo the shuffle partitions) sends to ``n`` different partitions, so that the key groups run
    in parallel."""
    if n == 1:
        return [0]
    from pyspark.sql import functions as F

    found: dict[int, int] = {}
    for row in spark.range(0, 64 * n).select("id", F.pmod(F.hash("id"), F.lit(n)).alias("p")).collect():
        found.setdefault(row["p"], row["id"])
    return [found[p] for p in range(n)]


def _rows(frames, columns: list[str]) -> list[tuple]:
    """The rows of pandas frames as tuples, the nullable ``t`` and ``line`` as int or None."""
    rows = []
    for frame in frames:
        frame = frame[columns].astype({c: "Int64" for c in ("t", "line") if c in columns}).astype(object)
        rows.extend(tuple(None if v is pd.NA else v for v in row)
                    for row in frame.where(frame.notna(), None).itertuples(index=False, name=None))
    return rows


def records(frame) -> list[dict]:
    """The rows of a results DataFrame (not streaming) as records: the rejects as they came,
    then the results in time order; each the JSON object of its row plus ``kind``."""
    rows = frame.collect()
    indexed = sorted(enumerate(rows), key=lambda ir: (ir[1]["kind"] == "result", ir[1]["kind"] == "result" and
                                                      ir[1]["t"], ir[0]))
    return [{"kind": row["kind"], **json.loads(row["json"])} for _, row in indexed]


def result_of(record: dict) -> Result:
    """The :class:`Result` of a result record."""
    return Result(record["t"], record.get("facts", []), {int(k): v for k, v in record.get("at", {}).items()},
                  record.get("graphs", []), events=record.get("events", []), answers=record.get("answers", {}))
