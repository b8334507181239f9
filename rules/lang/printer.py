"""Write the IR back as rule-language text; ``parse(format_program(p)) == p``.

>>> from dotr.rules.lang.parser import parse
>>> src = '@prefix : <http://ex.org/> . @T hot(R) :- [5] @T :temp(R, V), V >= (40 + 2) * 2.'
>>> print(format_program(parse(src)), end="")
@prefix : <http://ex.org/> .
@T hot(R) :- [5] @T :temp(R, V), V >= (40 + 2) * 2 .
>>> parse(format_program(parse(src))) == parse(src)
True
"""

from __future__ import annotations

import math

import re

from . import ir

_LOCAL = re.compile(r"(?:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)?")
_PREFIX = re.compile(r"(?:[A-Za-z][A-Za-z0-9_\-]*)?")
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "mod": 2}
_ESCAPE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class Printer:
    """Formats IR nodes; IRIs are shortened with the prefixes in ``prefixes``."""

    def __init__(self, prefixes: dict[str, str] | None = None):
        self.prefixes = dict(ir.DEFAULT_PREFIXES if prefixes is None else prefixes)

    # ------------------------------------------------------------------------------- terms
    def iri(self, value: str) -> str:
        best = None
        for prefix, base in self.prefixes.items():
            if value.startswith(base) and _LOCAL.fullmatch(value[len(base):]) and _PREFIX.fullmatch(prefix):
                if best is None or len(base) > len(self.prefixes[best]):
                    best = prefix
        if best is not None:
            return f"{best}:{value[len(self.prefixes[best]):]}"
        return f"<{value}>"

    def term(self, t) -> str:
        if isinstance(t, ir.Var):
            return t.name
        if isinstance(t, ir.Name):
            return t.value
        if isinstance(t, ir.Num):
            return number(t.value)
        if isinstance(t, ir.Iri):
            return self.iri(t.value)
        if isinstance(t, ir.Literal):
            text = '"' + "".join(_ESCAPE.get(c, c) for c in t.lexical) + '"'
            if t.datatype is not None:
                return f"{text}^^{self.iri(t.datatype)}"
            return f"{text}@{t.lang}" if t.lang else text
        raise TypeError(f"not a term: {t!r}")

    def expr(self, e, parent: int = 0, right: bool = False) -> str:
        if isinstance(e, ir.BinOp):
            level = _PRECEDENCE[e.op]
            text = f"{self.expr(e.left, level)} {e.op} {self.expr(e.right, level, True)}"
            return f"({text})" if level < parent or (right and level == parent) else text
        if isinstance(e, ir.AttrRef):
            return f"{e.event}.{e.attr}"
        if isinstance(e, ir.Aggregate):
            target = e.event + self.constraints(e.constraints)
            if e.attr is not None:
                target = f"{target}.{e.attr}" if e.constraints else f"{e.event}.{e.attr}"
            return f"{e.func}({target} {self.scope(e.scope)})"
        return self.term(e)

    # ------------------------------------------------------------------------------ rules
    def atom(self, a: ir.Atom) -> str:
        pred = a.pred.value if isinstance(a.pred, ir.Name) else a.pred.name if isinstance(a.pred, ir.Var) \
            else self.iri(a.pred.value)
        if not a.args:
            return pred
        return f"{pred}({', '.join(self.term(t) for t in a.args)})"

    def window(self, w: ir.Window) -> str:
        size = number(w.size)
        if w.tuple:
            return f"[{size} #]"
        return f"[{size} {w.unit}]" if w.unit else f"[{size}]"

    def literal(self, lit) -> str:
        if isinstance(lit, ir.Comparison):
            return f"{self.expr(lit.left)} {lit.op} {self.expr(lit.right)}"
        neg = "not " if lit.negated else ""
        if isinstance(lit, ir.AtomLiteral):
            return neg + self.atom(lit.atom)
        op = lit.op
        op_text = "<>" if isinstance(op, ir.Diamond) else "[]" if isinstance(op, ir.Box) else f"@{self.term(op.time)}"
        window = self.window(lit.window) + " " if lit.window is not None else ""
        return f"{neg}{window}{op_text} {self.atom(lit.atom)}"

    def body(self, body) -> str:
        return ", ".join(self.literal(lit) for lit in body)

    def rule(self, r: ir.Rule) -> str:
        head = (f"@{self.term(r.at)} " if r.at is not None else "") + self.atom(r.head)
        return f"{head} :- {self.body(r.body)} ." if r.body else f"{head} ."

    # --------------------------------------------------------------------------- patterns
    def constraints(self, items) -> str:
        if not items:
            return ""
        return "(" + ", ".join(f"{c.attr} {c.op} {self.expr(c.value)}" for c in items) + ")"

    def scope(self, s) -> str:
        if isinstance(s, ir.Within):
            unit = f" {s.unit}" if s.unit else ""
            return f"within {number(s.duration)}{unit} from {s.ref}"
        return f"between {s.start} and {s.end}"

    def event_ref(self, ref: ir.EventRef) -> str:
        text = ref.event + self.constraints(ref.constraints)
        if ref.alias:
            text += f" as {ref.alias}"
        if ref.selection is not None:
            text = f"{ref.selection} {text}"
        if ref.scope is not None:
            text += " " + self.scope(ref.scope)
        return text

    def pattern(self, p: ir.PatternDecl) -> str:
        lines = [f"pattern {p.name}", f"  from {self.event_ref(p.terminator)}"]
        lines += [f"   and {self.event_ref(item)}" for item in p.items]
        if p.where:
            lines.append("  where " + ", ".join(self.literal(c) for c in p.where))
        if p.construct is not None:
            lines.append(f"  construct {p.construct.text}")
        if p.bindings:
            lines.append("  with " + ", ".join(f"{b.name} = {self.expr(b.value)}" for b in p.bindings))
        if p.emit is not None:
            args = ", ".join(f"{b.name} = {self.expr(b.value)}" for b in p.emit.bindings)
            lines.append(f"  emit {p.emit.event}({args})")
        if p.consuming:
            lines.append("  consuming " + ", ".join(p.consuming))
        return "\n".join(lines) + " ."

    # -------------------------------------------------------------------------- statements
    def statement(self, s) -> str:
        if isinstance(s, ir.Rule):
            return self.rule(s)
        if isinstance(s, ir.PrefixDecl):
            self.prefixes[s.prefix] = s.iri
            return f"@prefix {s.prefix}: <{s.iri}> ."
        if isinstance(s, ir.TimeUnitDecl):
            return f"@timeunit {s.unit} ."
        if isinstance(s, ir.ProfileDecl):
            return f"@profile {s.profile} ."
        if isinstance(s, ir.ImportDecl):
            return f'@import "{s.path}" .'
        if isinstance(s, ir.OutputDecl):
            preds = ", ".join(p.value if isinstance(p, ir.Name) else self.iri(p.value) for p in s.preds)
            return f"@output {preds} ."
        if isinstance(s, ir.EventDecl):
            params = ", ".join(v.name for v in s.params)
            definition = s.query.text if s.query is not None else self.body(s.body)
            return f"event {s.name}({params}) := {definition} ."
        if isinstance(s, ir.PatternDecl):
            return self.pattern(s)
        if isinstance(s, ir.QueryDecl):
            return f"query {s.name} := {s.query.text} ."
        raise TypeError(f"not a statement: {s!r}")


def number(value: int | float, double: str = "xsd:double") -> str:
    """A number as written in the rule language; infinity and NaN, which have no numeral, as
    xsd:double literals (``double`` is how the datatype is written).

    >>> number(3), number(2.5), number(float("-inf")), number(float("nan"), "<d>")
    ('3', '2.5', '"-INF"^^xsd:double', '"NaN"^^<d>')
    """
    if isinstance(value, float) and not math.isfinite(value):
        return f'"{"NaN" if value != value else "INF" if value > 0 else "-INF"}"^^{double}'
    return str(value) if isinstance(value, int) else repr(float(value))


def format_program(program: ir.Program) -> str:
    """The program as rule-language text, one statement per line (patterns on several)."""
    printer = Printer()
    return "\n".join(printer.statement(s) for s in program.statements) + "\n"


def format_rule(rule: ir.Rule, prefixes: dict[str, str] | None = None) -> str:
    """One rule as text, IRIs shortened with ``prefixes`` (default: rdf, rdfs, xsd, owl)."""
    return Printer(prefixes).rule(rule)
