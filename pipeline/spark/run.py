"""``dotr run --engine spark``: the command's input and output around :class:`SparkPipeline`.

The input (a file, standard input, or a directory to watch) is read by Spark's file source. Each
micro-batch's results (result records and rejects) are written, on the driver, to a file of
their own in the results directory (``CHECKPOINT/results``, or a temporary one) under the
micro-batch's number, before Spark commits the micro-batch; a micro-batch run again after a
failure writes the same file again, with the same content. The output is those files' records in
micro-batch order: a run started again from its checkpoint writes first what the micro-batches
committed before, then goes on, in every trigger mode, so that a kill and the same command lose
nothing and write nothing twice.

Signals: during the start-up SIGINT and SIGTERM end the command at once; while the query runs
they stop it after its current micro-batch (a second one ends the command at once). Spark's own
output (the JVM's and its Python workers') goes to a log file, not the terminal.
"""

from __future__ import annotations

import io
import json
import os
import queue
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..process import Interrupted, signal_code
from ..state_file import sync_directory
from .elements import time_of


def _trigger(text: str) -> dict:
    return {"availableNow": True} if text == "available-now" else {"processingTime": text}


@dataclass
class SparkOptions:
    """What a Spark run is asked for besides the embedded run's :class:`~dotr.pipeline.runner.Options`."""

    rules: str
    ontologies: list[str] = field(default_factory=list)
    include_background: bool = False
    master: str = "local[*]"
    conf: dict[str, str] = field(default_factory=dict)
    trigger: str = "available-now"
    quiet: bool = False
    follow_imports: str | None = None  # the ontologies' owl:imports: "local", "remote" or not followed


def is_local(master: str) -> bool:
    return master.startswith("local")


class BatchFiles:
    """The results of the committed micro-batches: ``batch-N.jsonl`` per micro-batch N, its
    records one JSON object per line (``{"kind": "result" | "reject", ...}``).

    >>> folder = BatchFiles(tempfile.mkdtemp())
    >>> folder.write(1, [{"kind": "result", "t": 3, "facts": []}]); folder.write(0, [])
    >>> [(n, len(records)) for n, records in folder.committed()]
    [(0, 0), (1, 1)]
    """

    _NAME = re.compile(r"batch-(\d+)\.jsonl")

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def write(self, batch: int, records: list[dict]) -> None:
        """Write a micro-batch's records (again, if it runs again: the same records)."""
        name = f"batch-{batch:012d}.jsonl"
        part = self.folder / f".{name}.{os.getpid()}.part"
        with open(part, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, self.folder / name)
        sync_directory(self.folder)

    def committed(self) -> Iterator[tuple[int, list[dict]]]:
        """Every micro-batch written so far, in order."""
        found = sorted((int(m.group(1)), entry) for entry in self.folder.iterdir()
                       if (m := self._NAME.fullmatch(entry.name)))
        for batch, path in found:
            with open(path, encoding="utf-8") as f:
                yield batch, [json.loads(line) for line in f]


class _Signals:
    """SIGINT and SIGTERM while the query runs: the first asks the driver to stop the query after
    its micro-batch (``code``), the second ends the command at once."""

    def __init__(self) -> None:
        self.code: int | None = None
        self._previous: dict = {}

    def __enter__(self) -> "_Signals":
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[signum] = signal.signal(signum, self._on_signal)
            except ValueError:  # not the main thread
                pass
        return self

    def _on_signal(self, signum, _frame) -> None:
        if self.code is not None:
            print("dotr: interrupted again: ending now (the same command continues from the checkpoint)",
                  file=sys.stderr)
            os._exit(signal_code(signum))
        self.code = signal_code(signum)

    def __exit__(self, *_) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def spark_results(options, spark_options: SparkOptions, counts: dict, on_start: Callable[[], None] = lambda: None,
                  on_notice: Callable[[str], None] = lambda text: None) -> Iterator[dict]:
    """The records of a run on Spark (``options``: :class:`~dotr.pipeline.runner.Options`), in
    time order: ``{"kind": "result", ...}`` (a :meth:`Result.to_json` record) and
    ``{"kind": "reject", "source", "line", "reason", "record"}``; with a checkpoint, those the
    micro-batches committed before first. At the end ``counts["records"]`` is the number of
    non-blank lines of the input files; ``on_start`` is called as the query starts (the set-up
    done). Raises :class:`Interrupted` when a signal stopped the query."""
    from .job import SparkPipeline
    from .session import spark_session

    o, s = options, spark_options
    scratch = Path(tempfile.mkdtemp(prefix="dotr-spark-"))
    home = Path(o.checkpoint) if o.checkpoint else scratch
    # Spark's log: kept with the checkpoint; without one, kept only when the run fails
    log = home / "spark.log" if o.checkpoint else Path(tempfile.gettempdir()) / f"dotr-spark-{os.getpid()}.log"
    clean = False
    try:
        config = {"spark.ui.enabled": "true", "spark.ui.killEnabled": "false"}
        if is_local(s.master):  # the driver, its UI and its ports on the loopback interface only
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            config.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
        home.mkdir(parents=True, exist_ok=True)
        spark = spark_session(s.master, config={**config, **s.conf}, log=log)
        if not s.quiet:
            ui = spark.sparkContext.uiWebUrl
            on_notice((f"Spark UI at {ui} (--conf spark.ui.enabled=false: none); " if ui else "")
                      + f"Spark's log in {log}")
        job = SparkPipeline(spark, s.rules, s.ontologies, include_background=s.include_background,
                            keep_empty=o.changes or o.all_time_points, input_format=o.input_format,
                            follow_imports=s.follow_imports, notice=on_notice, max_record_size=o.max_record_size,
                            max_gap=o.max_gap)
        watched, spool = _watched(o, s, home)
        # the one input file (or standard input) is read from a copy the user never sees: its
        # rejects name no file, as the embedded run's (a watched directory's name theirs)
        named = watched == Path(o.input)
        batches = BatchFiles(home / "results")
        done: set[int] = set()
        for batch, records in batches.committed():  # (committed before: the output starts with them)
            done.add(batch)
            yield from _as_given(records, named)
        arrived: queue.Queue = queue.Queue()

        def on_batch(batch: int, records: list[dict]) -> None:
            batches.write(batch, records)
            arrived.put((batch, records))

        with _Signals() as signals:
            query = job.foreach(job.results(job.read_files(watched), home / "background"), on_batch,
                                home / "spark" if o.checkpoint else scratch / "checkpoint", _trigger(s.trigger))
            on_start()
            if spool is not None:
                spool.query = query
                spool.start()
            try:
                while query.isActive or not arrived.empty():
                    if signals.code is not None:
                        query.stop()
                        raise Interrupted(signals.code)
                    try:
                        batch, records = arrived.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    if batch not in done:  # (a micro-batch run again writes what was yielded already)
                        done.add(batch)
                        yield from _as_given(records, named)
                if query.exception() is not None:
                    raise SparkFailed(f"the Spark query failed ({_first_line(query.exception())}); Spark's log is "
                                      f"in {log}")
            finally:
                if query.isActive:
                    query.stop()
        counts["records"] = _input_lines(watched)
        clean = True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if clean and not o.checkpoint:
            log.unlink(missing_ok=True)


def _as_given(records: list[dict], named: bool) -> list[dict]:
    """A micro-batch's records; unless ``named``, the rejects without their ``source``."""
    if not named:
        for record in records:
            if record["kind"] == "reject":
                record.pop("source", None)
    return records


class SparkFailed(RuntimeError):
    """The Spark query stopped with an error (the message says where Spark's log is)."""


def _first_line(err) -> str:
    return str(err).strip().splitlines()[0][:300] if str(err).strip() else type(err).__name__


def _watched(o, s: SparkOptions, home: Path) -> tuple[Path, "Spool | None"]:
    """The directory Spark's file source watches, and the spool that fills it from standard input
    in live mode (else None)."""
    source = Path(o.input) if o.input != "-" else None
    if source is not None and source.is_dir():
        return source, None
    watched = home / "input"
    if source is None and s.trigger != "available-now":  # a live pipe: spooled into files as it comes
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")  # (bytes kept as they came)
        return watched, Spool(stdin, watched)
    # one input file: Spark's file source watches a directory; with a checkpoint, the copy of the
    # file lives next to it (a restarted query must find the file it was reading at the same path)
    name = source.name if source is not None else "stdin.jsonl"
    if not (watched / name).exists():
        watched.mkdir(parents=True, exist_ok=True)
        part = watched.parent / (name + ".part")  # (in place at once: Spark may be listing it)
        with open(part, "wb") as f, (open(source, "rb") if source else open(sys.stdin.fileno(), "rb", closefd=False)) \
                as given:  # (as bytes: a line that is not UTF-8 is the split step's to reject)
            shutil.copyfileobj(given, f)
        part.replace(watched / name)
    return watched, None


def _input_lines(folder: Path) -> int:
    """The non-blank lines of the files in ``folder`` (the input the query read)."""
    count = 0
    for path in folder.iterdir():
        if path.is_file() and not path.name.startswith("."):
            with open(path, "rb") as f:
                count += sum(1 for line in f if line.strip())
    return count


class Spool(threading.Thread):
    """Standard input into the watched directory as it comes: the records of the time points that
    are complete (a record with a later ``t`` has arrived) go into a new file at most every
    ``every`` seconds, moved in whole, so that a time point is never split between files. At the
    end of the input the rest goes into a last file, and the query (``query``, set before
    :meth:`start`) stops once it has processed everything."""

    def __init__(self, stream, folder: Path, every: float = 0.5):
        super().__init__(daemon=True, name="dotr-spool")
        self.stream, self.folder, self.every = stream, folder, every
        self.query = None
        self._mtime = time.time() - 86_400  # (Spark's file source takes no file from the future)
        folder.mkdir(parents=True, exist_ok=True)
        self.files = len(list(folder.glob("*.jsonl")))  # (a restart adds after the files spooled before)

    def run(self) -> None:
        lines: queue.Queue = queue.Queue()

        def read() -> None:
            for line in self.stream:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True, name="dotr-stdin").start()
        done, current, current_t, last_write = [], [], None, time.monotonic()
        while True:
            try:
                line = lines.get(timeout=self.every)
            except queue.Empty:
                line = ""
            if line is None:  # the end of the input
                self._write(done + current)
                break
            if line:
                t = time_of(line)
                if t is not None and current_t is not None and t != current_t:
                    done += current
                    current = []
                current.append(line if line.endswith("\n") else line + "\n")
                current_t = t if t is not None else current_t
            if done and time.monotonic() - last_write >= self.every:
                self._write(done)
                done, last_write = [], time.monotonic()
        if self.query is not None and self.query.isActive:
            self.query.processAllAvailable()
            self.query.stop()

    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        self.files += 1
        name = f"{self.files:09d}.jsonl"
        part = self.folder.parent / f".{name}.part"
        part.write_text("".join(lines), encoding="utf-8", errors="surrogateescape")
        self._mtime += 1
        os.utime(part, (self._mtime, self._mtime))
        os.replace(part, self.folder / name)
