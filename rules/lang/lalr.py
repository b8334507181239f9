"""A lean LALR driver over the tables lark builds from ``grammar.lark``.

lark stays the single source of the grammar: its LALR table, its per-state (contextual) lexer
regexes, its keyword handling and its tree-building callbacks are reused as they are. What this
module replaces is only lark's general-purpose driver loop, whose per-token overhead made 10,000
rules take seconds. Any input the driver cannot parse is handed back to the caller, which reruns
lark itself to get lark's exact syntax error; the tests check that both agree on valid input.
"""

from __future__ import annotations

from typing import Any

import re

from lark import Lark, Transformer
from lark.lexer import UnlessCallback
from lark.parse_tree_builder import ParseTreeBuilder
from lark.parsers.lalr_analysis import Shift


class DriverError(Exception):
    """The input is not in the language; rerun lark for the diagnostic."""


#: What the grammar ignores (WS and COMMENT in grammar.lark), skipped before matching a token.
_SKIP = re.compile(r"(?:\s+|%[^\n]*|//[^\n]*)+")


class _Tok(str):
    """A lexed token: lighter than lark's Token, with the attributes the IR builder reads."""

    type: str
    line: int
    column: int
    end_line: int
    end_column: int
    start_pos: int


class _Lexers(dict):
    """state -> (the state's scanner regexes, keyword table, newline terminals), built the first
    time the parser is in the state (lark's contextual lexer has about a hundred scanners, 6 ms
    each to compile, and a rule file reaches a few of them)."""

    def __init__(self, lexers: dict):
        super().__init__()
        self._by_state = lexers
        self._shared: dict[int, tuple] = {}  # states with the same terminals share a lexer

    def __missing__(self, state: int) -> tuple:
        lexer = self._by_state[state]
        built = self._shared.get(id(lexer))
        if built is None:
            scanner = lexer.scanner  # built lazily by lark
            keywords = {
                name: {t.pattern.value: t.name for t in cb.scanner.terminals}
                for name, cb in lexer.callback.items()
                if isinstance(cb, UnlessCallback)
            }
            built = self._shared[id(lexer)] = (scanner._mres, keywords, lexer.newline_types)
        self[state] = built
        return built


class FastLALR:
    """Parses with ``lark_parser``'s tables; ``parse(text, callbacks)`` returns the start value."""

    def __init__(self, lark_parser: Lark):
        frontend = lark_parser.parser
        table = frontend.parser.parser.parse_table
        self._rules = list(lark_parser.rules)
        self._start: int = table.start_states["start"]
        self._end: int = table.end_states["start"]
        self._ignore = frozenset(lark_parser.lexer_conf.ignore)
        # actions[state][terminal] = next state (shift) or -(rule index + 1) (reduce);
        # gotos[state][nonterminal] = next state; rule_info[i] = (size, nonterminal)
        rule_index = {rule: i for i, rule in enumerate(self._rules)}
        self._rule_info = [(len(r.expansion), str(r.origin.name)) for r in self._rules]
        self._actions: dict[int, dict[str, int]] = {}
        self._gotos: dict[int, dict[str, int]] = {}
        for state, row in table.states.items():
            actions, gotos = {}, {}
            for symbol, (kind, arg) in row.items():
                symbol = str(symbol)
                if kind is Shift:
                    (actions if symbol.isupper() or symbol == "$END" else gotos)[symbol] = arg
                else:
                    actions[symbol] = -rule_index[arg] - 1
            self._actions[state], self._gotos[state] = actions, gotos
        self._lexers = _Lexers(frontend.lexer.lexers)

    def callbacks(self, transformer: Transformer) -> list:
        """The reduce callbacks (lark's own tree-building rules) calling ``transformer``."""
        by_rule = ParseTreeBuilder(self._rules, None, False, False, False).create_callback(transformer)
        return [by_rule[r] for r in self._rules]

    def parse(self, text: str, callbacks: list) -> Any:
        actions, gotos, rule_info = self._actions, self._gotos, self._rule_info
        lexers, ignore, end = self._lexers, self._ignore, self._end
        stack = [self._start]
        values: list[Any] = []
        pos, line, line_start, n = 0, 1, 0, len(text)
        while True:
            if pos < n and text[pos] in " \n\t\r%/":
                m = _SKIP.match(text, pos)
                if m:
                    skipped = text.count("\n", pos, m.end())
                    if skipped:
                        line += skipped
                        line_start = text.rindex("\n", pos, m.end()) + 1
                    pos = m.end()
            if pos < n:
                mres, keywords, newline_types = lexers[stack[-1]]
                for mre in mres:
                    m = mre.match(text, pos)
                    if m:
                        break
                else:
                    raise DriverError(pos)
                type_ = m.lastgroup
                value = m.group()
                new_pos = m.end()
                if type_ in newline_types and "\n" in value:
                    end_line = line + value.count("\n")
                    end_line_start = pos + value.rindex("\n") + 1
                else:
                    end_line, end_line_start = line, line_start
                if type_ in ignore:
                    pos, line, line_start = new_pos, end_line, end_line_start
                    continue
                if type_[0] == "_":  # filtered out by the tree builder: no token object needed
                    token = value
                else:
                    kw = keywords.get(type_)
                    if kw is not None:
                        type_ = kw.get(value, type_)
                    token = _Tok(value)
                    token.type = type_
                    token.line = line
                    token.column = pos - line_start + 1
                    token.end_line = end_line
                    token.end_column = new_pos - end_line_start + 1
                    token.start_pos = pos
                start_pos = pos
                pos, line, line_start = new_pos, end_line, end_line_start
            else:
                type_, token, start_pos = "$END", None, n
            while True:
                code = actions[stack[-1]].get(type_)
                if code is None:
                    raise DriverError(start_pos)
                if code >= 0:
                    stack.append(code)
                    values.append(token)
                    break
                rule = -code - 1
                size, origin = rule_info[rule]
                if size:
                    children = values[-size:]
                    del stack[-size:]
                    del values[-size:]
                else:
                    children = []
                values.append(callbacks[rule](children))
                stack.append(gotos[stack[-1]][origin])
                if token is None and stack[-1] == end:
                    return values[-1]
