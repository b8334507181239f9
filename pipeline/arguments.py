"""The ``dotr`` command's options: the parser of its subcommands (``check``, ``run``, ``serve``,
``explain``); the format choices come from the input and output registries.

>>> args = build_parser().parse_args(["run", "--rules", "r.dotr", "--output", "out.trig"])
>>> args.command, args.format, args.input_format
('run', 'auto', 'auto')
"""

from __future__ import annotations

import argparse

from dotr import __version__
from dotr.rules.engine.guard import DEFAULT_MAX_DERIVED

from .files import MAX_RECORD_SIZE
from .sinks.formats import FORMATS as OUTPUTS
from .sources.formats import FORMATS as INPUTS


def _follow_imports(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--follow-imports", nargs="?", const="local", choices=["local", "remote"], metavar="WHERE",
                        help="read the owl:imports of the ontologies: local files (the default WHERE), or 'remote': "
                             "HTTP(S) too (without it, an import is named on standard error and not read)")


def _count(text: str) -> int:
    """A count of at least 0 (an argparse type)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a count (0 or more): {text!r}")
    return value


def _conf(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key.strip(), value


def _run_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``dotr run`` (``dotr serve`` takes them too)."""
    parser.add_argument("--rules", required=True, help="the rule file (.dotr)")
    parser.add_argument("--ontology", action="append", default=[], help="a background file (repeatable)")
    _follow_imports(parser)
    parser.add_argument("--input", default="-", help="JSON Lines stream: a file, - for standard input (the default), "
                                                    "or mqtt://HOST:PORT/TOPIC (one record per message)")
    parser.add_argument("--output", default="-", help="where to write: a file, - for standard output (the default), "
                                                     "or mqtt://HOST:PORT/TOPIC (one message per time point)")
    parser.add_argument("--format", default="auto", choices=["auto", *(f.name for f in OUTPUTS.values() if f.writer)],
                        help="output format (auto: by --output's extension, .trig, .nq for N-Quads, else JSON Lines)")
    parser.add_argument("--full-iris", action="store_true",
                        help="JSON Lines in the canonical form for scripts: full IRIs, rdf:type triples, graphs as "
                             "N-Triples strings (default: the rule file's prefixes, :C(:x), graphs as [s, p, o] lists)")
    parser.add_argument("--input-format", default="auto", choices=["auto", *INPUTS],
                        help="input format (auto: by extension, .trig, .txt for Laser++, .csv, else JSON Lines)")
    parser.add_argument("--mapping", metavar="MAP.toml",
                        help="with a CSV input: how its rows become records (time column, subjects, predicates)")
    parser.add_argument("--replay", type=float, default=0.0, metavar="SPEED",
                        help="with a CSV input: pace its rows by their times, SPEED times real time (1: as they "
                             "happened; default: as fast as they are read)")
    parser.add_argument("--on-error", default="stop", choices=["stop", "skip"],
                        help="stop at a bad record (exit 3; the time points before it are written) or skip "
                             "bad records into a rejects file")
    parser.add_argument("--rejects", help="the rejects file (default: OUTPUT.rejects.jsonl)")
    parser.add_argument("--max-record-size", type=int, default=MAX_RECORD_SIZE, metavar="BYTES",
                        help="a longer record (line) is a bad record (default 16 MiB; 0: no bound)")
    parser.add_argument("--max-gap", type=_count, default=None, metavar="N",
                        help="a record whose time is more than N after the previous record's is a bad record "
                             "(default 1000000 ticks, or 10000000000 ms with @timeunit ms; 0: no bound)")
    parser.add_argument("--max-derived", type=_count, default=DEFAULT_MAX_DERIVED, metavar="N",
                        help="the facts and answers one time point may make (default %(default)s; 0: no bound): "
                             "a time point that makes more stops the run (exit 4)")
    parser.add_argument("--reorder-within", type=int, default=0, metavar="N",
                        help="sort records arriving up to N time units late (later ones are rejected)")
    parser.add_argument("--changes", action="store_true",
                        help="print only the facts added (facts) and removed (removed) since the previous time point")
    parser.add_argument("--all-time-points", action="store_true", help="print time points with nothing derived too")
    parser.add_argument("--watch", action="store_true",
                        help="a live view on the terminal (standard error): rates, conclusions per pattern, event, "
                             "query and predicate, the latest conclusions")
    parser.add_argument("--stats", metavar="FILE", help="write the run's summary (counts, throughput, slowest time "
                                                        "point) to FILE as JSON")
    parser.add_argument("--include-background", action="store_true",
                        help="print conclusions that follow from the background alone too")
    parser.add_argument("--snapshot", metavar="FILE", help="at the end, save the state to continue from")
    parser.add_argument("--resume", metavar="FILE", help="continue from a --snapshot (--ontology is not needed)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary on standard error")
    parser.add_argument("--engine", default="embedded", choices=["embedded", "spark"],
                        help="the embedded pipeline (one process) or a Spark Structured Streaming job")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (with --engine spark)")
    parser.add_argument("--conf", action="append", type=_conf, metavar="KEY=VALUE",
                        help="a Spark setting (with --engine spark; repeatable), e.g. spark.ui.enabled=false")
    parser.add_argument("--checkpoint", metavar="DIR",
                        help="commit the output with the state here; the same command run again continues from the "
                             "last commit (embedded and Spark)")
    parser.add_argument("--history", type=_count, metavar="N",
                        help="keep at most N time units of the stream for a program change (default: as far as the "
                             "program reaches back, at most 10000 ticks or an hour in ms)")
    parser.add_argument("--upgrade", action="store_true",
                        help="with --checkpoint: a rule file or ontology changed since the last commit is evaluated "
                             "from the next time point on, over the stream history kept (a program change)")
    parser.add_argument("--commit-every", type=int, default=1000, metavar="N",
                        help="with --checkpoint: commit at least every N time points (default 1000) ...")
    parser.add_argument("--commit-seconds", type=float, default=10.0, metavar="S",
                        help="... and every S seconds (default 10)")
    parser.add_argument("--follow", action="store_true",
                        help="keep reading --input as it grows (as tail -F: a truncated or rotated file is read "
                             "from its start), until interrupted")
    parser.add_argument("--trigger", default="available-now", metavar="WHEN",
                        help="Spark trigger: available-now (process the input, then stop) or an interval such as "
                             "'5 seconds' (watch --input, a directory, until interrupted)")
    mqtt = parser.add_argument_group("MQTT (--input or --output mqtt://HOST:PORT/TOPIC; docs/deployment.md)")
    mqtt.add_argument("--mqtt-username", metavar="NAME", help="log in as NAME (default: $DOTR_MQTT_USERNAME)")
    mqtt.add_argument("--mqtt-password-file", metavar="FILE",
                      help="the password, the first line of FILE (default: $DOTR_MQTT_PASSWORD)")
    mqtt.add_argument("--mqtt-tls", action="store_true", help="connect with TLS (as mqtts://, default port 8883)")
    mqtt.add_argument("--mqtt-ca", metavar="FILE",
                      help="with TLS: the CA certificates to trust (default: the system's)")
    mqtt.add_argument("--mqtt-cert", metavar="FILE", help="with TLS: a client certificate (PEM) ...")
    mqtt.add_argument("--mqtt-key", metavar="FILE", help="... and its private key")


def build_parser() -> argparse.ArgumentParser:
    """The ``dotr`` command's parser: ``args.command`` names the subcommand."""
    parser = argparse.ArgumentParser(prog="dotr", description="dotr: a stream reasoner (docs/cli.md).")
    parser.add_argument("--version", action="version", version=f"dotr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_check = sub.add_parser("check", help="parse and validate rule files; print a summary or every error")
    p_check.add_argument("files", nargs="+", metavar="FILE", help="rule files (.dotr)")
    p_check.add_argument("-q", "--quiet", action="store_true", help="print nothing for valid files")
    p_check.add_argument("--graph", metavar="FILE.dot",
                         help="write the predicate dependency graph in Graphviz's DOT language")
    p_run = sub.add_parser("run", help="evaluate a stream with the rules; print what is derived at each time point")
    _run_options(p_run)
    p_serve = sub.add_parser("serve", help="dotr run, and an HTTP service beside it: SPARQL over what holds at the "
                                           "last time point, each time point as an event, metrics, health")
    _run_options(p_serve)
    p_serve.add_argument("--http", default="127.0.0.1:8080", metavar="HOST:PORT",
                         help="where to listen (default 127.0.0.1:8080, the loopback only; port 0: any free port)")
    p_explain = sub.add_parser("explain", help="why a fact holds, or a graph was built, at a time point")
    p_explain.add_argument("--rules", required=True)
    p_explain.add_argument("--ontology", action="append", default=[])
    _follow_imports(p_explain)
    p_explain.add_argument("--input", default="-", help="the stream (a file, or - for standard input)")
    p_explain.add_argument("--input-format", default="auto", choices=["auto", *INPUTS],
                           help="as dotr run's (auto: by extension, else JSON Lines)")
    p_explain.add_argument("--mapping", help="a CSV input's mapping (as dotr run's)")
    p_explain.add_argument("--at", type=int, required=True, help="the time point")
    p_explain.add_argument("what", help="a fact as printed (such as 'steam(120)'), or a graph's index at that time")
    return parser
