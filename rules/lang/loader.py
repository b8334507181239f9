"""Loading rule files: parsing, resolving ``@import``, validating; the ``dotr check`` core.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "common.dotr").write_text("located(S, R) :- attached(S, D), in_room(D, R).")
>>> _ = (d / "main.dotr").write_text('@import "common.dotr" .\\nhot(R) :- [3] [] located(S, R).')
>>> result = check(d / "main.dotr")
>>> result.ok, len(result.program.rules), len(result.analysis.ontological)
(True, 2, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import ir
from .analysis import Analysis
from .collector import paused
from .errors import Diagnostic, RuleError
from .parser import parse_with_diagnostics
from .queries import ParsedQueries
from .validate import validate


@dataclass
class CheckResult:
    """A program with its imports spliced in, its analysis, every diagnostic, and the sources
    (path -> text) the diagnostics point into."""

    program: ir.Program
    analysis: Analysis
    diagnostics: list[Diagnostic]
    sources: dict[str, str] = field(default_factory=dict)
    #: the parsed query texts (events, C-SPARQL, EP-SPARQL, construct templates), for the engines
    queries: ParsedQueries = field(default_factory=ParsedQueries)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    def raise_for_errors(self) -> None:
        if not self.ok:
            raise RuleError(self.diagnostics, self.sources)


def _read(path: Path, diagnostics: list[Diagnostic], sources: dict[str, str],
          stack: tuple[Path, ...], done: set[Path], span: ir.Span | None) -> list[ir.Statement]:
    resolved = path.resolve()
    if resolved in stack:
        diagnostics.append(Diagnostic("E002", f"import cycle: {' -> '.join(str(p) for p in (*stack, resolved))}",
                                      span, "remove one of the @import declarations"))
        return []
    if resolved in done:  # imported twice along different paths: its statements are in already
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        diagnostics.append(Diagnostic("E002", f"cannot read {path}: {err.strerror or err}", span,
                                      "@import paths are relative to the importing file" if span else None))
        return []
    done.add(resolved)
    sources[str(path)] = text
    program, diags = parse_with_diagnostics(text, str(path))
    diagnostics.extend(diags)
    statements: list[ir.Statement] = []
    for stmt in program.statements:
        if isinstance(stmt, ir.ImportDecl):
            statements.extend(_read(path.parent / stmt.path, diagnostics, sources,
                                    (*stack, resolved), done, stmt.span))
        else:
            statements.append(stmt)
    return statements


def check_text(text: str, path: str = "<string>") -> CheckResult:
    """Parse and validate rule text that has no imports."""
    with paused():
        program, diagnostics = parse_with_diagnostics(text, path)
        queries = ParsedQueries()
        analysis, more = validate(program, queries)
    return CheckResult(program, analysis, _in_order(diagnostics + more), {path: text}, queries)


def check(path: str | Path) -> CheckResult:
    """Parse ``path`` and its imports and validate the whole; never raises on bad rules."""
    path = Path(path)
    diagnostics: list[Diagnostic] = []
    sources: dict[str, str] = {}
    with paused():
        statements = _read(path, diagnostics, sources, (), set(), None)
        program = ir.Program(tuple(statements), path=str(path))
        queries = ParsedQueries()
        analysis, more = validate(program, queries)
    return CheckResult(program, analysis, _in_order(diagnostics + more), sources, queries)


def _in_order(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.span.path, d.span.line, d.span.column) if d.span else ("", 0, 0))


def load(path: str | Path) -> CheckResult:
    """Like :func:`check`, but raise :class:`RuleError` (with every diagnostic) on errors."""
    result = check(path)
    result.raise_for_errors()
    return result
