"""The ``dotr`` command.

>>> main(["check", "--quiet", "examples/fire/rules.dotr"])
0
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from rules import check, format_diagnostic
from rules.loader import CheckResult


def _summary(path: str, result: CheckResult) -> str:
    a, p = result.analysis, result.program
    return (
        f"{path}: ok\n"
        f"  rules: {len(a.ontological)} ontological, {len(a.temporal)} temporal, "
        f"{a.stratum_count} strat{'um' if a.stratum_count == 1 else 'a'}\n"
        f"  facts: {len(p.facts)}, events: {len(p.events)}, patterns: {len(p.patterns)}, "
        f"queries: {len(p.queries)}, time unit: {p.timeunit}"
        + (f", profiles: {', '.join(p.profiles)}" if p.profiles else "")
    )


def cmd_check(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        result = check(path)
        if result.ok:
            if not args.quiet:
                print(_summary(path, result))
            continue
        status = 2
        for diag in result.diagnostics:
            source = result.sources.get(diag.span.path) if diag.span else None
            print(format_diagnostic(diag, source), file=sys.stderr)
        errors = sum(d.severity == "error" for d in result.diagnostics)
        print(f"{path}: {errors} error{'s' if errors != 1 else ''}", file=sys.stderr)
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dotr", description="dotr: a stream reasoner (docs/cli.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    p_check = sub.add_parser("check", help="parse and validate rule files; print a summary or every error")
    p_check.add_argument("files", nargs="+", metavar="FILE", help="rule files (.dotr)")
    p_check.add_argument("-q", "--quiet", action="store_true", help="print nothing for valid files")
    p_check.set_defaults(func=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
