"""``dotr run --engine spark``: the command's input and output around :class:`SparkPipeline`.

The input (a file, standard input, or a directory to watch) is read by Spark's file source; the
results come back to the driver per micro-batch (``foreachBatch``) and are printed exactly as the
embedded pipeline prints them.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

from dotr.rules import InputError
from ..records import Result


def _trigger(text: str) -> dict:
    return {"availableNow": True} if text == "available-now" else {"processingTime": text}


def spark_results(args: argparse.Namespace, rejects: list[dict], counts: dict,
                  on_start: Callable[[], None] = lambda: None) -> Iterator[Result]:
    """The results of ``args``'s run on Spark, in time order; bad records go to ``rejects`` (with
    ``--on-error skip``) or raise :class:`InputError`. At the end ``counts["records"]`` is the
    number of non-blank lines of the input files; ``on_start`` is called as the query starts (the
    set-up done)."""
    from .job import SparkPipeline, result_of
    from .session import spark_session

    spark = spark_session(args.master, config={"spark.ui.enabled": "true", **dict(args.conf or {})})
    if not args.quiet and spark.sparkContext.uiWebUrl:
        print(f"dotr: Spark UI at {spark.sparkContext.uiWebUrl} (--conf spark.ui.enabled=false: none)", file=sys.stderr)
    job = SparkPipeline(spark, args.rules, args.ontology, include_background=args.include_background,
                        keep_empty=args.changes or args.all_time_points, input_format=args.input_format,
                        follow_imports=args.follow_imports,
                        notice=lambda text: print(f"dotr: {text}", file=sys.stderr))
    scratch = Path(tempfile.mkdtemp(prefix="dotr-spark-"))
    try:
        # with a checkpoint, the copy of a one-file input lives next to it: a restarted query
        # must find the file it was reading at the same path
        home = Path(args.checkpoint) if args.checkpoint else scratch
        source = Path(args.input) if args.input != "-" else None
        spool = None
        if source is not None and source.is_dir():
            watched = source
        elif source is None and args.trigger != "available-now":  # a live pipe: spooled into files as it comes
            watched = home / "input"
            spool = Spool(sys.stdin, watched)
        else:  # one input file: Spark's file source watches a directory
            watched = home / "input"
            name = source.name if source is not None else "stdin.jsonl"
            if not (watched / name).exists():
                watched.mkdir(parents=True, exist_ok=True)
                part = watched.parent / (name + ".part")  # (in place at once: Spark may be listing it)
                with open(part, "w", encoding="utf-8") as f:
                    shutil.copyfileobj(open(source, encoding="utf-8") if source else sys.stdin, f)
                part.replace(watched / name)
        if args.checkpoint and args.trigger == "available-now":
            yield from _committed_results(spark, job, watched, home, args, rejects, on_start)
            counts["records"] = _input_lines(watched)
            return
        records: queue.Queue = queue.Queue()
        query = job.foreach(job.results(job.read_files(watched), home / "background"),
                            lambda _, batch: [records.put(r) for r in batch],
                            args.checkpoint or scratch / "checkpoint", _trigger(args.trigger))
        on_start()
        if spool is not None:
            spool.query = query
            spool.start()
        try:
            while query.isActive or not records.empty():
                try:
                    record = records.get(timeout=0.2)
                except queue.Empty:
                    continue
                if record.pop("kind") == "reject":
                    if args.on_error == "stop":
                        raise InputError(record["reason"], record["line"], record["source"] or None)
                    rejects.append(record)
                    continue
                yield result_of(record)
            if query.exception() is not None:
                raise RuntimeError(f"the Spark query failed: {query.exception()}")
            counts["records"] = _input_lines(watched)
        finally:
            if query.isActive:
                query.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


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
                t = _time_of(line)
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
        part.write_text("".join(lines), encoding="utf-8")
        self._mtime += 1
        os.utime(part, (self._mtime, self._mtime))
        os.replace(part, self.folder / name)


def _time_of(line: str) -> int | None:
    """The ``t`` of a JSON Lines record (or of a Laser++ line ``t : ...``), or None."""
    text = line.strip()
    if text.startswith("{"):
        try:
            t = json.loads(text).get("t")
        except (ValueError, AttributeError):
            return None
        return t if isinstance(t, int) else None
    match = re.match(r"(-?\d+)\s*:", text)
    return int(match.group(1)) if match else None


def _committed_results(spark, job, watched: Path, home: Path, args: argparse.Namespace,
                       rejects: list[dict], on_start: Callable[[], None]) -> Iterator[Result]:
    """The results of a checkpointed run: Spark's file sink in the checkpoint directory commits
    each micro-batch's results exactly once with its state, and the output is derived from
    everything committed so far, so a run killed and started again, or run again after it
    finished, gives the whole output (never only what the last start computed)."""
    import json

    from .job import result_of

    results = home / "results"
    query = job.write(job.results(job.read_files(watched), home / "background"), results, home / "spark", "jsonl",
                      {"availableNow": True})
    on_start()
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(f"the Spark query failed: {query.exception()}")
    lines = [row.value for row in spark.read.text(str(results)).collect()] if (results / "_spark_metadata").exists() else []
    records = [json.loads(line) for line in lines]
    for record in records:
        if "rejected" in record:
            reject = record["rejected"]
            if args.on_error == "stop":
                raise InputError(reject["reason"], reject["line"], reject.get("source") or None)
            rejects.append(reject)
    for record in sorted((r for r in records if "rejected" not in r), key=lambda r: r["t"]):
        yield result_of(record)
