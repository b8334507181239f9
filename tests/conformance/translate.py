"""Translate the conformance cases of other LARS reasoners into dotr's rule language.

Sources (copied from ``shared/conformance`` into ``data/``): Laser (Python), Laser++, ARES and
Ticker. Each case becomes a :class:`Case` with the program as ``.dotr`` text, the stream as
``(t, [fact, ...])`` in arrival order, and the expected output; cases this project cannot or
deliberately does not run carry ``skip`` with the precise reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from dotr.pipeline.io import _split_facts

DATA = Path(__file__).with_name("data")


@dataclass
class Case:
    source: str  # laser_py | laserpp | ares | ticker
    name: str
    program: str  # dotr rule text
    stream: list[tuple[int, list[str]]] = field(default_factory=list)
    background: list[str] = field(default_factory=list)
    expected: dict[int, set[str]] | None = None  # t -> atoms derived at t (laser, laser++, ares)
    horizon: tuple[int, int] | None = None  # first and last time point to evaluate
    holds: dict[str, list[int]] | None = None  # ticker: atom -> every t in the horizon it holds
    script: list | None = None  # ticker scripted cases
    skip: str | None = None

    @property
    def id(self) -> str:
        return f"{self.source}:{self.name}"


class Untranslatable(Exception):
    """The case uses something outside dotr's language; the message is the reason."""


# --------------------------------------------------------------------------------- term syntax

_TOKEN = re.compile(r"\s*('(?:[^'\\]|\\.)*'|\?[!<>=]+|[!<>=]+|[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|[-+*/]|[(),@$#\[\]])")


def _tokens(text: str) -> list[str]:
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise Untranslatable(f"cannot read {text[pos:]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def _term_tree(tokens: list[str], i: int = 0):
    """``name(args)`` trees: (name, [args]) for compounds, the token itself for atoms."""
    head = tokens[i]
    if i + 1 < len(tokens) and tokens[i + 1] == "(":
        args, j = [], i + 2
        if tokens[j] == ")":
            return (head, []), j + 1
        while True:
            arg, j = _term_tree(tokens, j)
            args.append(arg)
            if tokens[j] == ",":
                j += 1
                continue
            if tokens[j] == ")":
                return (head, args), j + 1
            raise Untranslatable(f"unexpected {tokens[j]!r}")
    return head, i + 1


def _name(token: str) -> str:
    """A predicate or constant name in dotr: quoted names become IRIs."""
    if token.startswith("'"):
        return f"<{token[1:-1]}>"
    return token


def _atom(tree) -> str:
    if isinstance(tree, str):
        return _name(tree)
    name, args = tree
    return f"{_name(name)}({', '.join(_atom(a) for a in args)})"


# ------------------------------------------------------------------------------ Laser (Python)

_OPS = {"+", "-", "*", "/"}


def _laser_formula(tree, window: str = "", negated: bool = False) -> list[str]:
    if isinstance(tree, tuple):
        name, args = tree
        if name == "not":
            return _laser_formula(args[0], window, not negated)
        if name == "time_win":
            return _laser_formula(args[-1], f"[{args[0]}] ", negated)
        if name == "tuple_win":
            return _laser_formula(args[-1], f"[{args[0]} #] ", negated)
        if name in ("diamond", "box"):
            if isinstance(args[0], tuple) and args[0][0] == "not":
                raise Untranslatable(f"'{name}(not(p))' (negation inside a window operator) is not in "
                                     "the language: dotr negates whole window atoms, 'not [n] <> p'")
            op = "<>" if name == "diamond" else "[]"
            return [("not " if negated else "") + f"{window}{op} {_atom(args[0])}"]
        if name == "@":
            return [("not " if negated else "") + f"{window}@{_atom(args[0])} {_atom(args[1])}"]
        if name == "COMP":
            return [f"{_atom(args[1])} {args[0]} {_atom(args[2])}"]
        if name == "MATH":
            return [f"{_atom(args[1])} = {_atom(args[2])} {args[0]} {_atom(args[3])}"]
    # a plain atom; a window over a plain atom restricts the stream, the atom still holds at t
    return [("not " if negated else "") + _atom(tree)]


def _laser_rule(text: str) -> str:
    head_text, body_text = text.split(":-")
    head_tree, _ = _term_tree(_tokens(head_text))
    head = f"@{_atom(head_tree[1][0])} {_atom(head_tree[1][1])}" if isinstance(head_tree, tuple) and head_tree[0] == "@" \
        else _atom(head_tree)
    literals = []
    for conjunct in re.split(r"\band\b", body_text):
        tree, _ = _term_tree(_tokens(conjunct))
        literals += _laser_formula(tree)
    return f"{head} :- {', '.join(literals)} ."


def _laser_fact(text: str) -> str:
    m = re.fullmatch(r"(\w+://[^()]*)\((.*)\)", text.strip())
    if m:  # an unquoted IRI predicate
        return _normal(f"<{m.group(1)}>({m.group(2)})")
    return _normal(_atom(_term_tree(_tokens(text))[0]))


def laser_py_cases() -> list[Case]:
    cases = []
    for raw in json.loads((DATA / "laser_py_cases.json").read_text()):
        case = Case("laser_py", raw["name"], "", horizon=tuple(raw["timeline"]))
        case.stream = [(int(t), [_laser_fact(f) for f in facts if f.strip()])
                       for t, facts in sorted(raw["stream"].items(), key=lambda kv: int(kv[0]))]
        case.expected = {}
        for check in raw["checks"]:
            for t, atoms in check["tuples"].items():
                case.expected.setdefault(int(t), set()).update(_normal(a) for a in atoms)
        try:
            case.program = "\n".join(_laser_rule(r) for r in raw["rules"]) + "\n"
        except Untranslatable as why:
            case.skip = str(why)
        cases.append(case)
    return cases


# ----------------------------------------------------------------------------- Laser++ / ARES

_LPP_WINDOWS = [
    (re.compile(r"\[\s*\$\s*,\s*(\d+)\s*\]"), r"[\1] "),
    (re.compile(r"\[\s*#\s*,\s*(\d+)\s*\]"), r"[\1 #] "),
    (re.compile(r"\[\s*@\s*,\s*([A-Za-z0-9_]+)\s*\]"), r"@\1 "),
    (re.compile(r"\[D\]"), "<> "),
    (re.compile(r"\[B\]"), "[] "),
]
_LPP_BUILTIN = re.compile(r"^\s*(\?)?(>=|<=|!=|=|>|<|\+|-|\*|/)\s*\((.*)\)\s*$")


def _lpp_literal(text: str) -> str:
    text = text.strip()
    m = _LPP_BUILTIN.match(re.sub(r"^(\[[^\]]*\]\s*)+", "", text))
    if m:  # a window over a built-in holds or not independently of time: keep the built-in
        check, op, args = m.groups()
        parts = [a.strip() for a in args.split(",")]
        if op in "+-*/":
            return f"{parts[0]} = {parts[1]} {op} {parts[2]}"
        return f"{parts[0]} {op} {parts[1]}"
    for pattern, repl in _LPP_WINDOWS:
        text = pattern.sub(repl, text)
    text = re.sub(r" +", " ", text)
    if re.match(r"^\[\d+ #\] +(?![<\[@])", text):
        raise Untranslatable("a tuple window over a bare atom (no [D], [B] or [@, T]) has no "
                             "counterpart in dotr's language")
    # a bare time window over an atom restricts the stream; the atom still holds at t
    return re.sub(r"^\[(\d+)\] +(?![<\[@])", "", text).strip()


def _lpp_rules(rule_string: str) -> list[str]:
    rules = []
    for line in rule_string.splitlines():
        if not line.strip():
            continue
        if ":=" not in line:
            raise Untranslatable(f"cannot read rule {line!r}")
        head_text, body_text = line.split(":=")
        body = [_lpp_literal(b) for b in body_text.split("&&")]
        body_vars = set(re.findall(r"\b[A-Z][A-Za-z0-9_]*\b", " ".join(body)))
        for head in head_text.split("&&"):  # a conjunctive head is one rule per conjunct
            head = _lpp_literal(head)
            if set(re.findall(r"\b[A-Z][A-Za-z0-9_]*\b", head)) - body_vars:
                raise Untranslatable("existential rule (a head variable not in the body): the chase "
                                     "is out of scope")
            rules.append(f"{head} :- {', '.join(body)} .")
    return rules


def _lpp_stream(stream_string: str) -> tuple[list[tuple[int, list[str]]], tuple[int, int]]:
    lines = [l for l in stream_string.splitlines() if l.strip()]
    first_left, _, first_facts = lines[0].partition(":")
    start, end, t0 = (int(x) for x in first_left.split())
    merged: dict[int, list[str]] = {}
    for i, line in enumerate(lines):
        left, _, facts = line.partition(":")
        t = t0 if i == 0 else int(left)
        facts = re.sub(r"\)\s+(?=[A-Za-z_])", "), ", facts)  # some streams separate atoms by spaces
        atoms = [_normal(a) for a in _split_facts(facts)]
        merged.setdefault(t, []).extend(atoms)
    return sorted(merged.items()), (start, end)


def _lpp_cases(file: str, source: str) -> list[Case]:
    cases = []
    for raw in json.loads((DATA / file).read_text()):
        case = Case(source, f"{raw['suite']}.{raw['name']}", "")
        if raw["suite"] in ("RestrictedChaseTest", "SkolemChaseTest"):
            case.skip = "existential rules (restricted and Skolem chase) are out of scope"
        elif "<http:" in raw["stream_string"] + raw["rule_string"] and raw["suite"] == "RDFTest":
            case.skip = "the transcribed case is truncated at '<http:' (the IRIs were lost)"
        if case.skip is None:
            try:
                case.program = "\n".join(_lpp_rules(raw["rule_string"])) + "\n"
                case.stream, case.horizon = _lpp_stream(raw["stream_string"])
                case.background = [_normal(a) for a in _split_facts(raw.get("background_string", ""))]
            except Untranslatable as why:
                case.skip = str(why)
        case.expected = {int(t): {_normal(a) for a in atoms} for t, atoms in raw["expected"].items()}
        cases.append(case)
    return cases


def laserpp_cases() -> list[Case]:
    return _lpp_cases("laserpp_cases.json", "laserpp")


def ares_cases() -> list[Case]:
    return _lpp_cases("ares_cases.json", "ares")


# -------------------------------------------------------------------------------------- Ticker

_TICKER_ATOM = r"[a-z_][A-Za-z0-9_]*(?:\([^)]*\))?"


def _ticker_literal(text: str) -> str:
    text = text.strip()
    negated = text.startswith("not ")
    if negated:
        text = text[4:].strip()
    m = re.fullmatch(rf"({_TICKER_ATOM})(?:\s+(always|at\s+\S+))?(?:\s+\[(\d+)(\s*#)?\])?", text)
    if not m:
        raise Untranslatable(f"cannot read {text!r}")
    atom, op, size, tuple_mark = m.groups()
    window = f"[{size}{' #' if tuple_mark else ''}] " if size else ""
    if op is None:
        lit = f"{window}<> {atom}" if window else atom
    elif op == "always":
        lit = f"{window}[] {atom}"
    else:
        lit = f"{window}@{op.split()[1]} {atom}"
    return ("not " if negated else "") + lit


def _ticker_rule(text: str) -> str:
    text = text.strip().rstrip(".")
    if ":-" not in text:
        return f"{text} ."
    head, body = text.split(":-")
    literals = [_ticker_literal(b) for b in _split_facts(body)]
    m = re.fullmatch(rf"\s*({_TICKER_ATOM})\s+at\s+([A-Za-z0-9_]+)\s*([-+]\s*\d+)?\s*", head)
    if m:
        atom, time, offset = m.groups()
        if offset:
            literals.append(f"Thead = {time} {offset[0]} {offset[1:].strip()}")
            time = "Thead"
        return f"@{time} {atom} :- {', '.join(literals)} ."
    return f"{head.strip()} :- {', '.join(literals)} ."


def ticker_cases() -> list[Case]:
    cases = []
    for raw in json.loads((DATA / "ticker_cases.json").read_text()):
        case = Case("ticker", raw["name"], "")
        case.program = "\n".join(_ticker_rule(r) for r in raw["program"]) + "\n"
        if "stream" in raw:
            merged: dict[int, list[str]] = {}
            for t, atom in raw["stream"]:
                merged.setdefault(int(t), []).append(atom)
            case.stream = sorted(merged.items())
            case.horizon = tuple(raw["horizon"])
            case.holds = raw["holds_exactly_at"]
        else:
            case.script = raw["script"]
        cases.append(case)
    return cases


def _normal(atom: str) -> str:
    """An atom in dotr's canonical output form: no spaces outside quotes."""
    return re.sub(r'\s+(?=(?:[^"]*"[^"]*")*[^"]*$)', "", atom.strip())


def all_cases() -> list[Case]:
    return laser_py_cases() + laserpp_cases() + ares_cases() + ticker_cases()
