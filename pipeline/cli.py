"""The ``dotr`` command.

>>> from dotr import examples
>>> main(["check", "--quiet", str(examples.path("fire") / "rules.dotr")])
0
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Sequence

from dotr.rules import check, format_diagnostic
from dotr.rules.lang.loader import CheckResult

from .arguments import build_parser
from .sinks.formats import FORMATS, output_format_of, unwritable


def _summary(path: str, result: CheckResult) -> str:
    a, p = result.analysis, result.program
    return (
        f"{path}: ok\n"
        f"  rules: {len(a.ontological)} ontological, {len(a.temporal)} temporal, "
        f"{a.stratum_count} strat{'um' if a.stratum_count == 1 else 'a'}\n"
        f"  facts: {len(p.facts)}, events: {len(p.events)}, patterns: {len(p.patterns)}, "
        f"queries: {len(p.queries)}, time unit: {p.timeunit}"
        + (f", profiles: {', '.join(p.profiles)}" if p.profiles else "")
        + f"\n  split by key: {_split_line(result)}"
    )


def _split_line(result: CheckResult) -> str:
    """How the temporal stage splits into key groups on Spark (argument positions from 1), or
    why it does not."""
    from .keys import split_keys, split_reason
    from dotr.temporal.keys import FactKeys, JointKeys, QueryKeys, WindowKeys

    def facts(keys: FactKeys) -> str:
        return ", ".join(f"{f'<{pred}>' if ':' in pred else pred}/{arity} at {pos + 1}"
                         for (pred, arity), pos in keys.items() if pos is not None)

    def events(keys: dict) -> str:
        return "events " + ", ".join(f"{event} at {pos + 1}" for event, pos in keys.items())

    def line(keys) -> str:
        if isinstance(keys, JointKeys):
            return "; ".join(line(part) for part in keys if part is not None)
        if isinstance(keys, (QueryKeys, WindowKeys)):
            queries = "queries " + ", ".join(f"{name} by ?{var}" for name, var in keys.queries.items())
            return f"{queries}; {facts(keys.facts)}" if isinstance(keys, WindowKeys) else queries
        return facts(keys) if isinstance(keys, FactKeys) else events(keys)

    keys = split_keys(result)
    return f"no ({split_reason(result)})" if keys is None else line(keys)


def _print_warnings(result: CheckResult) -> None:
    """A valid program's warnings, on standard error (an invalid one's errors are raised later)."""
    if result.ok:
        for diag in result.diagnostics:
            source = result.sources.get(diag.span.path) if diag.span else None
            print(format_diagnostic(diag, source), file=sys.stderr)


def cmd_check(args: argparse.Namespace) -> int:
    if args.graph and len(args.files) > 1:
        print("dotr: --graph writes the dependency graph of one rule file; give one", file=sys.stderr)
        return 2
    status = 0
    for path in args.files:
        result = check(path)
        if result.ok:
            _print_warnings(result)
            if not args.quiet:
                print(_summary(path, result))
            if args.graph:
                from dotr.rules.lang.dot import to_dot

                try:
                    with open(args.graph, "w", encoding="utf-8") as out:
                        out.write(to_dot(result))
                except OSError as err:
                    print(f"dotr: --graph {args.graph}: {err.strerror}", file=sys.stderr)
                    return 74
            continue
        status = 2
        for diag in result.diagnostics:
            source = result.sources.get(diag.span.path) if diag.span else None
            print(format_diagnostic(diag, source), file=sys.stderr)
        errors = sum(d.severity == "error" for d in result.diagnostics)
        print(f"{path}: {errors} error{'s' if errors != 1 else ''}", file=sys.stderr)
    return status


def cmd_run(args: argparse.Namespace) -> int:
    """``dotr run``: evaluate a stream with the embedded pipeline (or Spark, see docs/cli.md)."""
    import time

    started = time.perf_counter()
    if args.command == "serve" and args.engine == "spark":
        print("dotr: dotr serve runs the embedded pipeline: leave out --engine spark", file=sys.stderr)
        return 2
    if args.engine == "spark":
        from .extras import missing

        absent = missing("spark")
        if absent is not None:
            print(f"dotr: {absent}", file=sys.stderr)
            return 2
        unsupported = [flag for flag, value in (("--reorder-within", args.reorder_within), ("--follow", args.follow),
                                                ("--snapshot", args.snapshot), ("--resume", args.resume)) if value]
        if unsupported:
            print(f"dotr: {', '.join(unsupported)} cannot be used with --engine spark (docs/cli.md: a Spark query "
                  "continues from its --checkpoint)", file=sys.stderr)
            return 2
    from .locations import is_file

    fmt = output_format_of(args.output if is_file(args.output) else "-", args.format)
    #: how the format was chosen, as the messages name it
    args.format_named = f"--format {fmt.name}" if args.format != "auto" else \
        f"--output {args.output} (--format {fmt.name}, chosen by its extension)"
    args.format = fmt.name
    problem = _check_files(args)
    if problem is not None:
        print(f"dotr: {problem}", file=sys.stderr)
        return 2
    checked = check(args.rules)
    _print_warnings(checked)
    others, answering = unwritable(FORMATS[args.format], checked) if checked.ok else ([], [])
    if others:
        print(f"dotr: {args.format_named} writes RDF triples, and these predicates are not triples: "
              f"{', '.join(others)} (write them with --format jsonl, or leave them out with @output)", file=sys.stderr)
        return 2
    if answering:
        print(f"dotr: {args.format_named} writes RDF triples, and these queries answer with solutions or "
              f"a boolean: {', '.join(answering)} (write their answers with --format jsonl, or make them "
              "CONSTRUCT queries)", file=sys.stderr)
        return 2
    if args.engine == "spark":
        return _run_spark(args, started, checked)
    return _run_embedded(args, started, checked)


def _check_files(args: argparse.Namespace) -> str | None:
    """What is wrong with the files of ``dotr run``, before anything is loaded (None: nothing)."""
    from .files import describe
    from .locations import is_file, scheme_of

    if not (is_file(args.input) and is_file(args.output)):
        scheme = scheme_of(args.input) or scheme_of(args.output)
        if args.engine == "spark":
            return f"a {scheme}:// location is read and written by the embedded run: leave out --engine spark"
        if args.follow and not is_file(args.input):
            return f"--follow reads a growing file; a {scheme}:// input is read until the run is stopped anyway"
        if not is_file(args.input) and input_format(args) in ("trig", "csv"):
            return (f"--input-format {input_format(args)} reads a file; a {scheme}:// input's messages are JSON "
                    "Lines or Laser++ lines")
    if (input_format(args) == "csv") != bool(args.mapping):
        return ("--mapping MAP.toml says how a CSV file's rows become records: give it with a CSV input"
                if args.mapping is None else "--mapping maps a CSV file (--input FILE.csv, or --input-format csv)")
    if input_format(args) == "csv" and (args.input == "-" or args.engine == "spark"):
        return "a CSV input is a file (its first line the header) read by the embedded run"
    if args.replay and input_format(args) != "csv":
        return "--replay paces a CSV file's rows (--input FILE.csv with --mapping)"
    if args.input != "-" and is_file(args.input):
        if not os.path.exists(args.input):
            return f"--input {args.input}: no such file"
        if os.path.isdir(args.input) and args.engine != "spark":
            return f"--input {args.input}: a directory (the embedded run reads a file; --engine spark watches a directory)"
        if not os.access(args.input, os.R_OK):
            return f"--input {args.input}: cannot be read (permission denied)"
    if args.input != "-" and args.output != "-" and os.path.exists(args.output) and is_file(args.input):
        try:
            if os.path.samefile(args.input, args.output):
                return f"--output {args.output} is the input: writing it would empty it before it is read"
        except OSError as err:
            return f"--output {args.output}: {describe(err)}"
    from .output import rejects_path

    rejects = rejects_path(args.rejects, args.output) if args.on_error == "skip" else None
    for flag, path in (("--output", args.output if is_file(args.output) else None), ("--stats", args.stats),
                       ("--rejects", rejects), ("--snapshot", args.snapshot)):
        if path and path != "-":
            folder = os.path.dirname(os.path.abspath(path))
            if os.path.islink(path):
                return f"{flag} {path} is a symbolic link: dotr does not write through links (give the file it " \
                       "points to)"
            if os.path.isdir(path):
                return f"{flag} {path}: a directory, not a file"
            if not os.path.isdir(folder):
                return f"{flag} {path}: the directory {folder} does not exist"
            if not os.access(folder, os.W_OK):
                return f"{flag} {path}: the directory {folder} cannot be written (permission denied)"
    for flag, path in (("--ontology", p) for p in args.ontology):
        if not os.path.isfile(path):
            return f"{flag} {path}: " + ("a directory, not an RDF file" if os.path.isdir(path) else "no such file")
    if args.resume and not os.path.isfile(args.resume):
        return f"--resume {args.resume}: no such file"
    if args.checkpoint and os.path.exists(args.checkpoint) and not os.path.isdir(args.checkpoint):
        return f"--checkpoint {args.checkpoint}: a file, not a directory"
    return None


def _run_embedded(args: argparse.Namespace, started: float, checked: CheckResult) -> int:
    """``dotr run`` in this process: live output, ``--checkpoint`` commits (pipeline/runner.py)."""
    from dotr.ontology.background import load_background
    from dotr.rules import DotrError, InputError, RuleError

    from . import state_file
    from .checkpoint import fingerprint
    from .files import FileIOError
    from .output import OutputOptions
    from .printing import Readable
    from dotr.rules.engine.guard import GUARD, BudgetExceeded

    from .process import EXIT_BAD_RECORD, EXIT_BUDGET, EXIT_IO, EXIT_OK, EXIT_SIGINT, EXIT_SIGTERM
    from .reasoner import Reasoner
    from .runner import EmbeddedRun
    from .swap import checked_program

    if args.checkpoint and (args.input == "-" or args.output == "-" or args.reorder_within or args.resume
                            or args.snapshot):
        print("dotr: --checkpoint reads --input FILE again and cuts --output FILE back to its last commit when it "
              "continues, and keeps its own state: it needs both files (or broker topics), and cannot be used with "
              "--reorder-within, --resume or --snapshot", file=sys.stderr)
        return 2
    if args.follow and args.input == "-":
        print("dotr: --follow reads a growing file: give it with --input", file=sys.stderr)
        return 2
    options = _options(args, input_format(args))
    reasoner_options = {"include_background": args.include_background, "history": args.history}
    prefixes = checked.program.prefixes
    GUARD.limit = args.max_derived

    def build() -> Reasoner:
        if args.resume:
            header, data = state_file.read(args.resume, SNAPSHOT)
            if header.get("program", {}).get("rules") != rules_print:
                raise state_file.StateFileError(f"--resume {args.resume}: saved by a run of other rules (the rule "
                                                "file's text, or a file it imports, changed since)")
            try:
                return Reasoner.restore(checked, data["reasoner"], **reasoner_options)
            except Exception as err:  # (a well-formed file that is not a reasoner's state)
                raise state_file.StateFileError(f"--resume {args.resume}: not a reasoner's state for these rules "
                                                f"({type(err).__name__}: {err})") from None
        background = load_background(args.ontology, follow_imports=args.follow_imports, notice=_notice)
        backgrounds[tuple(args.ontology)] = background
        return Reasoner(checked, background, **reasoner_options)

    backgrounds: dict[tuple, object] = {}  # the backgrounds loaded, by their files (reused by program changes)

    def load(change) -> tuple[CheckResult, object, list[str]]:
        """The program, background and background files of a program change (pipeline.runner)."""
        new = checked_program(change.rules)
        predicates, queries = unwritable(FORMATS[args.format], new)
        others = predicates + queries
        if others:
            raise DotrError(f"{args.format_named} writes RDF triples, and these of the new program's are "
                            f"not: {', '.join(others)} (leave them out with @output)")
        files = change.ontology if change.ontology is not None else (
            run.in_effect.ontology if run.in_effect is not None and run.in_effect.ontology is not None
            else args.ontology)
        key = tuple(files)
        if change.ontology is not None or key not in backgrounds:  # (named in the record: read again)
            for path in files:
                if not os.path.isfile(path):
                    raise DotrError(f"the ontology file {path}: " + (
                        "a directory, not an RDF file" if os.path.isdir(path) else "no such file"))
            backgrounds[key] = load_background(files, follow_imports=args.follow_imports, notice=_notice)
        return new, backgrounds[key], list(files)

    run = None
    try:
        checked.raise_for_errors()
        options.login = _login(args)
        if options.input_format == "csv":
            from .sources.csv import Mapping

            options.mapping = Mapping.load(args.mapping, args.input)
        # (the ontology files' hashes matter to a checkpoint only: a 100 MB background takes 0.15 s)
        program = fingerprint(checked, args.ontology if args.checkpoint else [],
                              {**options.fingerprinted(), **reasoner_options, "follow_imports": args.follow_imports})
        rules_print = program["rules"]
        run = EmbeddedRun(options, build, program,
                          OutputOptions(args.format, prefixes, args.full_iris, args.changes, args.all_time_points),
                          notice=_notice, load=load)
        run.stats.counting = _counted(args)
        progress = _progress(args, run.stats, run.state.counts, prefixes)
        run.on_time_point = progress.update if progress is not None else None
        service = None
        if args.command == "serve":
            from .serve import Service, parse_address

            service = Service(run, parse_address(args.http))
        try:
            if not run.start():
                run.close()
                print(f"dotr: the run in {args.checkpoint} has finished; its output {args.output} stands",
                      file=sys.stderr)
                return 0
            if progress is not None:
                progress.counts = run.state.counts  # (restored from the checkpoint)
            from .locations import is_file

            if not is_file(args.input):  # (a producer may start now: what it publishes reaches the run)
                print(f"dotr: subscribed to {run.source_name}", file=sys.stderr, flush=True)
            if service is not None:
                print(f"dotr: serving {service.start()}", file=sys.stderr, flush=True)
            run.stats.start(started)  # (the figures count from here; start-up apart)
            code = run.run()
            if service is not None and code == EXIT_OK:
                run.stats.stop()  # (the figures are the stream's, not the serving after it)
                code = service.serve_on()
        finally:
            run.close()
            run.stats.stop()
            if service is not None:
                service.close()
            if progress is not None:
                progress.close()
        if code in (EXIT_SIGINT, EXIT_SIGTERM):
            print(f"dotr: interrupted after {run.state.counts['time points']} time points"
                  + ("; the same command continues from there" if args.checkpoint else ""), file=sys.stderr)
        if args.snapshot and code == 0:
            effect = run.effect_print  # (after a program change: the snapshot is that program's)
            state_file.write(args.snapshot, SNAPSHOT, {"reasoner": run.reasoner.snapshot()},
                             {"program": {"rules": effect["rules"] if effect is not None else rules_print}})
    except RuleError as err:
        print(err.render(), file=sys.stderr)
        return 2
    except InputError as err:
        print(f"{err.source or args.input}:{err}", file=sys.stderr)
        print("dotr: stopped at this record; the time points before it are written "
              "(use --on-error skip to skip bad records)", file=sys.stderr)
        _rejected(run.output if run is not None else None, args)
        return EXIT_BAD_RECORD
    except FileIOError as err:
        print(f"dotr: {err}" + ("; the last commit stands: the same command continues from it" if args.checkpoint
                                else ""), file=sys.stderr)
        return EXIT_IO
    except BudgetExceeded as err:
        print(f"dotr: {err}; stopped there: the time points before it are written", file=sys.stderr)
        _rejected(run.output if run is not None else None, args)
        return EXIT_BUDGET
    except DotrError as err:
        print(f"dotr: {err}", file=sys.stderr)
        return 2
    _rejected(run.output, args)
    _report(args, run.stats, run.state.counts, run.output.rejected, Readable(prefixes))
    return code


#: the kind of ``--snapshot`` state files
SNAPSHOT = "snapshot"


def _rejected(output, args: argparse.Namespace) -> None:
    if output is not None and output.rejected:
        from .output import rejects_path

        print(f"dotr: {output.rejected} record(s) rejected, see {rejects_path(args.rejects, args.output)}",
              file=sys.stderr)


def _progress(args: argparse.Namespace, stats, counts: dict, prefixes: dict):
    """The live view on standard error: ``--watch``'s, else a progress line on a terminal."""
    if args.watch:
        from .printing import Readable
        from .watch import Watch

        return Watch(stats, counts, Readable(prefixes))
    if sys.stderr.isatty() and not args.quiet:
        from .watch import Progress

        return Progress(stats, counts)
    return None


def _notice(text: str) -> None:
    print(f"dotr: {text}", file=sys.stderr)


def _counted(args: argparse.Namespace) -> bool:
    """Whether the run's conclusions are counted: someone reads the counts (summary, --stats, --watch),
    or a run continued from the checkpoint may (it sums up the whole input)."""
    return bool(not args.quiet or args.stats or args.watch or args.checkpoint)


def _report(args: argparse.Namespace, stats, counts: dict, rejects: int, readable) -> None:
    """The run's summary on standard error (unless ``-q``), and in ``--stats FILE``."""
    import json

    figures = (counts["records"], counts["outputs"], rejects)
    if not args.quiet:
        print("\n".join(stats.lines(*figures, readable=readable)), file=sys.stderr)
    if args.stats:
        with open(args.stats, "w", encoding="utf-8") as f:
            json.dump(stats.to_json(*figures, readable=readable), f, indent=1)


def _options(args: argparse.Namespace, fmt: str):
    """The run's :class:`~dotr.pipeline.runner.Options` from the command line (``fmt``: the input
    format, ``auto`` left to the Spark job)."""
    from .runner import Options

    return Options(input=args.input, output=args.output, format=args.format, input_format=fmt,
                   on_error=args.on_error, rejects=args.rejects, reorder_within=args.reorder_within,
                   changes=args.changes, all_time_points=args.all_time_points, follow=args.follow,
                   checkpoint=args.checkpoint, commit_every=args.commit_every, commit_seconds=args.commit_seconds,
                   max_record_size=args.max_record_size, max_gap=args.max_gap, full_iris=args.full_iris,
                   replay=args.replay, upgrade=args.upgrade, rules=args.rules)


def _run_spark(args: argparse.Namespace, started: float, checked: CheckResult) -> int:
    """``dotr run --engine spark``: the Spark job's records, written here as the embedded run
    writes its results (pipeline/spark/run.py)."""
    from dotr.rules import DotrError, InputError, RuleError

    from .files import FileIOError, OutputFile, StandardOutput
    from .output import Output, OutputOptions, rejects_path
    from .printing import Readable
    from .process import Interrupted
    from .spark.job import result_of
    from .spark.run import SparkFailed, SparkOptions, spark_results
    from .summary import RunStats

    options = _options(args, args.input_format)  # ("auto": a watched directory's files each by its extension)
    spark_options = SparkOptions(args.rules, args.ontology, args.include_background, args.master,
                                 dict(args.conf or {}), args.trigger, args.quiet, args.follow_imports)
    stats, readable = RunStats(), Readable(checked.program.prefixes)
    stats.counting = _counted(args)
    counts = {"records": 0, "time points": 0, "outputs": 0}
    live = args.trigger != "available-now"  # runs until interrupted: the output is written as it comes
    if args.output == "-":
        sink = StandardOutput()
    elif live:
        sink = OutputFile(args.output)
    else:  # written whole at the end (a stopped run leaves no half output)
        folder, name = os.path.split(os.path.abspath(args.output))
        sink = OutputFile(os.path.join(folder, f".{name}.{os.getpid()}.part"))
    rejects: list = []

    def open_rejects():
        rejects.append(OutputFile(rejects_path(args.rejects, args.output)))
        return rejects[0]

    output = Output(sink, OutputOptions(args.format, checked.program.prefixes, args.full_iris, args.changes,
                                        args.all_time_points), stats, open_rejects, counts)
    progress = _progress(args, stats, counts, checked.program.prefixes)
    output.on_time_point = progress.update if progress is not None else None
    code, finished = 0, False
    records = spark_results(options, spark_options, counts, on_start=lambda: stats.start(started),
                            on_notice=lambda text: print(f"dotr: {text}", file=sys.stderr))
    try:
        checked.raise_for_errors()
        for record in records:
            if record.pop("kind") == "reject":
                if args.on_error == "stop":
                    raise InputError(record["reason"], record["line"], record.get("source") or None)
                output.reject(record)
                continue
            result = result_of(record)  # (the records do not say which pattern or query built each graph)
            output.result(result, None, ["(patterns and queries)"] * len(result.graphs))
            if live:
                output.flush()
        finished = True
    except Interrupted as stop:
        code = stop.code
        print(f"dotr: interrupted after {counts['time points']} time points"
              + ("; the same command continues from there" if args.checkpoint else ""), file=sys.stderr)
    except RuleError as err:
        print(err.render(), file=sys.stderr)
        return 2
    except InputError as err:
        print(f"{err.source or args.input}:{err}", file=sys.stderr)
        print("dotr: stopped; " + ("the time points before it are written" if live else "nothing was written")
              + " (use --on-error skip to skip bad records)", file=sys.stderr)
        return 3
    except (SparkFailed, FileIOError) as err:
        print(f"dotr: {err}", file=sys.stderr)
        return 74 if isinstance(err, FileIOError) else 1
    except DotrError as err:
        print(f"dotr: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # Spark's own (a JVM that cannot start, a lost connection): one line
        text = (str(err).strip().splitlines() or [""])[0][:300]
        print(f"dotr: Spark failed: {type(err).__name__}: {text} (Spark's log: spark.log in the checkpoint "
              "directory, or dotr-spark-PID.log in the temporary directory)", file=sys.stderr)
        return 1
    finally:
        records.close()
        stats.stop()
        if progress is not None:
            progress.close()
        sink.close()
        for file in rejects:
            file.close()
        if not live and args.output != "-":
            if finished:
                os.replace(sink.path, args.output)
            else:
                os.unlink(sink.path)
    if output.rejected:
        print(f"dotr: {output.rejected} record(s) rejected, see {rejects_path(args.rejects, args.output)}",
              file=sys.stderr)
    _report(args, stats, counts, output.rejected, readable)
    return code


def _login(args: argparse.Namespace):
    """How to log in to an MQTT broker (the options, else the environment)."""
    from .mqtt import Login

    return Login.from_environment(args.mqtt_username, args.mqtt_password_file, tls=args.mqtt_tls,
                                  ca_file=args.mqtt_ca, cert_file=args.mqtt_cert, key_file=args.mqtt_key)


def input_format(args: argparse.Namespace) -> str:
    """``--input-format``, with ``auto`` decided by the input's extension (JSON Lines for a topic)."""
    from .locations import is_file
    from .sources.formats import format_of

    return format_of(args.input if is_file(args.input) else "-", args.input_format).name


def cmd_explain(args: argparse.Namespace) -> int:
    """``dotr explain``: why a fact holds, or why a graph was built, at a time point."""
    from dotr.rules import DotrError

    from dotr.rules import InputError, UsageError
    from .reasoner import Reasoner
    from .explain import NothingToExplain, explain
    from .sources.formats import Reading, format_of

    try:
        fmt = format_of(args.input, args.input_format)
        mapping = None
        if fmt.name == "csv" or args.mapping:
            from .sources.csv import Mapping

            if fmt.name != "csv":
                raise UsageError("--mapping maps a CSV file (--input FILE.csv, or --input-format csv)")
            if args.mapping is None or args.input == "-":
                raise UsageError("a CSV input is a file read with its --mapping MAP.toml")
            mapping = Mapping.load(args.mapping, args.input)
        reasoner = Reasoner.from_files(args.rules, args.ontology, follow_imports=args.follow_imports, notice=_notice)
        source = open(args.input, encoding="utf-8") if args.input != "-" else sys.stdin
        with source:
            elements = []
            for item in fmt.read(source, Reading(reasoner.program.prefixes, mapping=mapping)):
                if isinstance(item, InputError):
                    raise item
                elements.append((item.t, item.facts))
        lines = explain(reasoner, args.what, elements, args.at)
    except NothingToExplain as err:
        print(f"dotr: {err}", file=sys.stderr)
        return 1
    except DotrError as err:
        print(f"dotr: {err}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


#: each subcommand's function
COMMANDS = {"check": cmd_check, "run": cmd_run, "serve": cmd_run, "explain": cmd_explain}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit code. SIGINT
    and SIGTERM end it at any moment with their exit code, a closed standard output quietly
    (docs/cli.md, "Exit codes")."""
    from .process import EXIT_MEMORY, EXIT_PIPE, Interrupted, interruptible

    interruptible()  # (the ``dotr`` command did already, before importing this module)
    # rdflib warns of each IRI it finds odd (an escaped '>'): dotr writes such IRIs escaped
    logging.getLogger("rdflib.term").setLevel(logging.ERROR)
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except Interrupted as stop:
        print("dotr: interrupted", file=sys.stderr)
        return stop.code
    except MemoryError:
        print("dotr: out of memory (a time point that makes too much: see --max-derived)", file=sys.stderr)
        return EXIT_MEMORY
    except BrokenPipeError:  # the reader of standard output went away (dotr run | head): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (so that flushing at exit raises nothing)
        return EXIT_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
